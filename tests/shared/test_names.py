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
# A subject of the api or feedback family assembled by hand: f"{…prefix…}.api." / ".feedback.".
HAND_BUILT = re.compile(r"""f["'][^"']*\{[^}]*prefix[^}]*\}\.(api|feedback)\.""")
# Not ours to edit while issue 20's larger part lands (workers/boot, deploy/gen_manifests.py).
NOT_YET: frozenset[str] = frozenset({"workers/boot/worker.py", "deploy/gen_manifests.py"})


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


def test_no_module_builds_api_or_feedback_subjects_by_hand() -> None:
    """Every api/feedback subject comes from shared.names (``api_subject``, ``feedback_subject``)."""
    found = []
    for folder in ("shared", "workers", "schemas", "deploy"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel == "shared/names.py" or rel in NOT_YET:
                continue
            found += [f"{rel}:{n}" for n, line in enumerate(path.read_text().splitlines(), 1)
                      if HAND_BUILT.search(line)]
    assert found == []
