"""A proposal approved a few messages on (issue 37, twenty-fifth round): in a meeting the group agrees over
several turns — "We could make two buttons out of that." … "Yeah. That's really a good idea, I think." — and a
judgement of the idea, unlike the listener's bare "Yeah.", agrees with it. Made-up sentences, every language
pack with the phrasing; each caught case decides nothing on main."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from schemas.docs import DecisionsDoc
from schemas.events import MessageEvent
from shared.config import DecisionsSettings, parse_languages
from workers.conversation.patterns import get_patterns, prepare_text
from workers.conversation.statements import is_approval
from workers.decisions import apply_message

ALL = get_patterns(parse_languages("all"))
SETTINGS = DecisionsSettings()
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
_ids = itertools.count()


def _talk(*turns: tuple[str, str]) -> DecisionsDoc:
    doc: DecisionsDoc | None = None
    for minute, (sender, content) in enumerate(turns):
        event = MessageEvent(agent="agent", session="s", ts=T0 + timedelta(minutes=minute), role="user",
                             id=f"a{next(_ids)}", sender=sender, content=content)
        doc = apply_message(doc, event, SETTINGS, ALL, ZoneInfo("UTC"))
    assert doc is not None
    return doc


def _decided(*turns: tuple[str, str]) -> list[tuple[str, str]]:
    return [(d.what, d.who) for d in _talk(*turns).decisions]


@pytest.mark.parametrize(("turns", "what"), [
    pytest.param([("ana", "We could print the labels on recycled paper."), ("ben", "Mm-hmm."),
                  ("ana", "It would cost about the same."), ("ben", "Yeah. That's a really good idea, I think.")],
                 "We could print the labels on recycled paper", id="en-three-on"),
    pytest.param([("ana", "What about a monthly newsletter for the volunteers?"), ("ben", "I agree.")],
                 "What about a monthly newsletter for the volunteers", id="en-i-agree"),
    pytest.param([("ana", "We could move the standup to ten. And the retro could go to Friday."),
                  ("cem", "Good idea, let's try that.")],
                 "We could move the standup to ten. And the retro could go to Friday", id="en-goes-on"),
    pytest.param([("ana", "Wir könnten die Etiketten auf Recyclingpapier drucken."), ("ben", "Hm."),
                  ("ana", "Das kostet fast gleich viel."), ("ben", "Ja. Ich finde, das ist eine wirklich gute Idee.")],
                 "Wir könnten die Etiketten auf Recyclingpapier drucken", id="de-three-on"),
    pytest.param([("ana", "Wir sollten die Besprechung auf zehn Uhr legen."), ("ben", "Ich stimme dir zu.")],
                 "Wir sollten die Besprechung auf zehn Uhr legen", id="de-zustimmen"),
    pytest.param([("ana", "Podríamos imprimir las etiquetas en papel reciclado."),
                  ("ben", "Sí. Me parece una muy buena idea.")],
                 "Podríamos imprimir las etiquetas en papel reciclado", id="es"),
    pytest.param([("ana", "On pourrait imprimer les étiquettes sur du papier recyclé."),
                  ("ben", "Oui. C'est une très bonne idée.")],
                 "On pourrait imprimer les étiquettes sur du papier recyclé", id="fr"),
    pytest.param([("ana", "Potremmo stampare le etichette su carta riciclata."), ("ben", "Sì. È un'ottima idea.")],
                 "Potremmo stampare le etichette su carta riciclata", id="it"),
    pytest.param([("ana", "Poderíamos imprimir as etiquetas em papel reciclado."),
                  ("ben", "Sim. Acho que é uma ótima ideia.")],
                 "Poderíamos imprimir as etiquetas em papel reciclado", id="pt"),
    pytest.param([("ana", "Давайте напечатаем этикетки на переработанной бумаге."), ("ben", "Да. Это отличная идея.")],
                 "Давайте напечатаем этикетки на переработанной бумаге", id="ru"),
])
def test_a_proposal_approved_by_another_speaker_is_a_decision(turns: list[tuple[str, str]], what: str) -> None:
    assert _decided(*turns) == [(what, turns[-1][0])]


PROPOSED = ("ana", "We could print the labels on recycled paper.")


@pytest.mark.parametrize("turns", [
    pytest.param([PROPOSED, ("ben", "That's a good idea, but it costs too much.")], id="objection"),
    pytest.param([PROPOSED, ("ben", "Is that a good idea?")], id="question"),
    pytest.param([PROPOSED, ("ben", "Good idea?")], id="question-bare"),
    pytest.param([PROPOSED, ("ben", "Maybe that's a good idea.")], id="hedge-before"),
    pytest.param([PROPOSED, ("ben", "That's a good idea for later, maybe.")], id="hedge-after"),
    pytest.param([PROPOSED, ("ben", "I think that's a good idea if the price is right.")], id="condition"),
    pytest.param([PROPOSED, ("ben", "No. That's a good idea for next year.")], id="no-first"),
    pytest.param([PROPOSED, ("ben", "Yeah.")], id="back-channel"),
    pytest.param([PROPOSED, ("ben", "Well, the printer is in the basement. That's a good idea though.")],
                 id="approval-not-first"),
    pytest.param([PROPOSED, ("ana", "I think that's a good idea.")], id="own-approval"),
    pytest.param([PROPOSED, ("ben", "Hm."), ("ana", "Or not."), ("ben", "Hm."), ("ben", "That's a good idea.")],
                 id="four-on"),
    pytest.param([("ana", "Let's keep spreading the word about the fundraiser."), ("ben", "I totally agree!")],
                 id="only-going-on"),
    pytest.param([("ana", "Wir könnten die Etiketten auf Recyclingpapier drucken."),
                  ("ben", "Gute Idee, aber zu teuer.")], id="de-objection"),
    pytest.param([("ana", "Wir könnten die Etiketten auf Recyclingpapier drucken."),
                  ("ben", "Ist das eine gute Idee?")], id="de-question"),
    pytest.param([("ana", "Wir könnten die Etiketten auf Recyclingpapier drucken."),
                  ("ben", "Vielleicht eine gute Idee.")], id="de-hedge"),
    pytest.param([("ana", "Lass uns weiter so machen."), ("ben", "Ich stimme dir zu.")], id="de-only-going-on"),
    pytest.param([("ana", "Podríamos imprimir las etiquetas en papel reciclado."),
                  ("ben", "Buena idea, pero es caro.")], id="es-objection"),
    pytest.param([("ana", "On pourrait imprimer les étiquettes sur du papier recyclé."),
                  ("ben", "Bonne idée, mais c'est cher.")], id="fr-objection"),
    pytest.param([("ana", "Potremmo stampare le etichette su carta riciclata."),
                  ("ben", "Buona idea, ma costa troppo.")], id="it-objection"),
    pytest.param([("ana", "Poderíamos imprimir as etiquetas em papel reciclado."),
                  ("ben", "Boa ideia, mas é caro.")], id="pt-objection"),
    pytest.param([("ana", "Давайте напечатаем этикетки на переработанной бумаге."),
                  ("ben", "Хорошая идея, но дорого.")], id="ru-objection"),
])
def test_an_objection_question_hedge_or_late_answer_decides_nothing(turns: list[tuple[str, str]]) -> None:
    assert _decided(*turns) == []


def test_the_proposal_waits_three_messages_and_no_longer() -> None:
    """The document keeps the proposal while an approval may still answer it, then lets it go: the next
    proposal replaces it, and a decision consumes it."""
    doc = _talk(PROPOSED)
    assert doc.proposal is not None and doc.proposal.after == 0
    doc = _talk(PROPOSED, ("ben", "Hm."), ("ana", "Or not."))
    assert doc.proposal is not None and doc.proposal.after == 2
    assert _talk(PROPOSED, ("ben", "Hm."), ("ana", "Or not."), ("ben", "Hm.")).proposal is None
    doc = _talk(PROPOSED, ("ben", "Hm."), ("cem", "We could use the old printer."))
    assert doc.proposal is not None and doc.proposal.after == 0 and doc.proposal.by == "cem"
    assert _talk(PROPOSED, ("ben", "I agree.")).proposal is None


def test_a_plain_approval_with_no_proposal_before_decides_nothing() -> None:
    assert _decided(("ana", "The printer is in the basement."), ("ben", "That's a good idea.")) == []


@pytest.mark.parametrize(("text", "approves"), [
    ("Yeah. That's really a good good idea, I think.", True),
    ("Yes, I agree with you.", True),
    ("Sounds good.", True),
    ("Mm-hmm. I like that idea.", True),
    ("Yeah, maybe that's good idea, yeah. But it won't last.", False),
    ("I think it's a good idea, but we need to think about it.", False),
    ("Nope. Good idea for later.", False),
])
def test_is_approval(text: str, approves: bool) -> None:
    assert is_approval(prepare_text(text), ALL) is approves


def test_an_approved_alternative_for_a_case_decides_nothing() -> None:
    """"If the printer breaks, we could use the copy shop." — "Good idea.": a choice for a case that may never
    come is none yet."""
    assert _decided(("ana", "Fine. If the printer breaks, we could use the copy shop."), ("ben", "Hm."),
                    ("ben", "Yes, I agree.")) == []
