"""The contract's names are written once: feedback kinds, API and feedback subjects."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import msgspec
import pytest

from schemas.events import FeedbackEvent
from schemas.types import FeedbackKind
from shared.codec import Subject, parse_subject
from shared.names import KINDS, api_endpoint_subject, api_subject, feedback_subject, stored_form

ROOT = Path(__file__).resolve().parents[2]
FAMILY = r"(msg|session|compaction|notes|feedback|tool|run|api|dlq|openclaw)"
# A subject assembled by hand: f"{…prefix…}.<family>." or f"cortex.<family>.{…}" (a message
# naming a pattern, ``{prefix}.notes.<agent>``, is text, not a subject).
HAND_BUILT = re.compile(r"""f["'][^"']*(\{[^}]*prefix[^}]*\}|\bcortex)\.""" + FAMILY + r"""\.\{""")
# Lines that look like a subject and are none, with the reason.
NOT_SUBJECTS = {"workers/bench/budget.py": "the bench report's row labels, the APIs as docs/BENCHMARKS.md names them"}


def test_feedback_kinds_are_the_schema_literal() -> None:
    """The decoder's allowed feedback kinds, the event's type and its JSON Schema agree."""
    kinds = set(get_args(FeedbackKind))
    assert set(KINDS["feedback"]) == kinds
    schema = msgspec.json.schema(FeedbackEvent)
    kind_schema = schema["$defs"]["FeedbackEvent"]["properties"]["kind"]
    assert set(kind_schema["enum"]) == kinds


@pytest.mark.parametrize("kind", sorted(get_args(FeedbackKind)))
def test_feedback_subject_is_what_the_decoder_reads(kind: str) -> None:
    subject = feedback_subject("cortex", "alice", kind)
    assert subject == f"cortex.feedback.alice.{kind}"
    parsed = parse_subject("cortex", stored_form("cortex", subject))
    assert isinstance(parsed, Subject)
    assert (parsed.family, parsed.agent, parsed.kind) == ("feedback", "alice", kind)


def test_api_subjects() -> None:
    assert api_subject("acme", "recall", "alice") == "acme.api.recall.alice"
    assert api_endpoint_subject("acme", "recall") == "acme.api.recall.*"


def test_no_module_builds_a_subject_by_hand() -> None:
    """Every subject comes from shared.names (``published_subject``, ``api_subject``,
    ``feedback_subject``, ``dlq_subject``, …), as its docstring says."""
    found = []
    for folder in ("shared", "workers", "schemas", "deploy"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "shared/names.py" or rel in NOT_SUBJECTS:
                continue
            found += [f"{rel}:{n}" for n, line in enumerate(path.read_text().splitlines(), 1)
                      if HAND_BUILT.search(line)]
    assert found == []


@pytest.mark.parametrize("line", ['f"{prefix}.msg.{agent}.*"', 'f"{self._ctx.settings.prefix}.feedback.{a}.k"',
                                  'f"cortex.api.{service}"', "f'{settings.prefix}.dlq.{worker}'"])
def test_the_check_sees_a_subject_built_by_hand(line: str) -> None:
    assert HAND_BUILT.search(line)
    assert not HAND_BUILT.search('f"notes published to {prefix}.notes.<agent> go to CORTEX_NOTES"')
