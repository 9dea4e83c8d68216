"""The required-literal pre-check: it may only skip a regex that cannot match."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workers.conversation.languages import PACKS, UNIVERSAL_MOOD
from workers.conversation.triggers import required_literals


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("(?:decided|decision|agreed)", ("decided", "decision", "agreed")),
        (r"(?:^|\s)(?:it |that )works(?:\s|[.!]|$)", ("works",)),
        (r"(?:^|\s)(?:is |all )?(?:done|fixed)(?:\s|[.!]|$)", ("done", "fixed")),
        (r"need[^\n]{0,200}first", ("first",)),
        (r"let['’]?s do", ("s do",)),
        (r"bzgl\.?", ("bzgl",)),
        (r"a+bc", ("bc",)),
        ("✅", ("✅",)),
    ],
)
def test_required_literals_of_a_pattern(source: str, expected: tuple[str, ...]) -> None:
    assert required_literals(source) == expected


@pytest.mark.parametrize("source", [r"\w+", r"(\w[\w\s-]{3,40})", r"(?:a|\d)", r"x?", r"\u00e4"])
def test_required_literals_are_unknown_when_a_match_needs_no_literal(source: str) -> None:
    assert required_literals(source) is None


def _all_sources() -> list[str]:
    sources = [source for _, source in UNIVERSAL_MOOD]
    for pack in PACKS.values():
        sources += [*pack.decision, *pack.close, *pack.wait, *pack.topic, *pack.commitment, *pack.due]
        sources += [source for _, source in pack.mood]
    return sources


@pytest.mark.parametrize("source", _all_sources())
@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_language_pattern_contains_one_of_its_triggers(source: str, data: st.DataObject) -> None:
    """Soundness of the pre-check on the real packs: for generated texts that match the
    pattern, the matched text holds one of its triggers."""
    triggers = required_literals(source)
    assert triggers, source
    text = data.draw(st.from_regex(source, fullmatch=True))
    found = re.search(source, text)
    assert found is not None
    assert any(t in text for t in triggers), (source, text)
