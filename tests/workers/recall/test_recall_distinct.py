"""Distinct statements: what keeps two near-duplicate texts from folding into one memory."""

from __future__ import annotations

import pytest

from workers.recall.distinct import distinct, same_word, specifics


@pytest.mark.parametrize(("a", "b"), [
    ("Server alpha has the IP address 10.0.0.11", "Server beta has the IP address 10.0.0.12"),
    ("Server alpha is in rack 3", "Server beta is in rack 3"),
    ("The release is on 2026-03-05", "The release is on 2026-03-06"),
    ("Our deploy day is Tuesday", "Our deploy day is Thursday"),
    ("Email maria@acme.example for access", "Email jonas@acme.example for access"),
    ("The docs live at https://wiki.example/a", "The docs live at https://wiki.example/b"),
    ("Alice prefers tea", "Alice prefers coffee"),
    ("We deploy on Fridays", "We never deploy on Fridays"),
    ("The team lead is Maria", "The team lead is Jonas"),
    ("Der Server steht in Frankfurt", "Der Server steht in Berlin"),
    ("El servidor está en Madrid", "El servidor no está en Madrid"),
    ("Le mot de passe est « hunter2 »", "Le mot de passe est « hunter3 »"),
    ("サーバーのIPは10.0.0.12です", "サーバーのIPは10.0.0.13です"),
])
def test_statements_that_differ_in_what_they_say_are_distinct(a: str, b: str) -> None:
    assert distinct(a, b) and distinct(b, a)


@pytest.mark.parametrize(("a", "b"), [
    ("The staging database lives on db-2.", "The staging database lives on DB-2"),
    ("Remember: always run the migrations before the deploy.", "Always run the migrations before deploying."),
    ("Bob prefers code reviews on Friday afternoons.", "Bob prefers code reviews on Friday afternoons, always"),
    ("We expand the volume on db-2", "The expansion of the volume on db-2"),
])
def test_the_same_statement_in_other_forms_is_not_distinct(a: str, b: str) -> None:
    assert not distinct(a, b) and not distinct(b, a)


def test_a_capital_opening_a_sentence_is_no_name_but_one_inside_it_is() -> None:
    assert specifics("Remember the Tuesday call with Maria.") == {"tuesday", "maria"}
    assert same_word("deploy", "deploying") and same_word("migration", "migrations")
    assert not same_word("contact", "contract") and not same_word("alpha", "beta")
