"""The new-field trap: a document field the cores do not name survives every change.

Cores change documents with ``msgspec.structs.replace``; one that rebuilt a document field
by field would silently reset a field added later (with a default) on every event. Each
case here gives a core a document of a subclass with one more field, set, and checks the
result still has it — so a field added to any document tomorrow is covered without
editing this test. ``integrity`` is the shell's (``shared.projection``): a core carries
it over untouched, never copies it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
import pytest

from schemas.docs import (
    DOCUMENTS,
    BootDoc,
    ChannelsDoc,
    CommitmentsDoc,
    DecisionsDoc,
    ExtractionDoc,
    Integrity,
    KnowledgeDoc,
    NarrativeDoc,
    OperationsDoc,
    RecallDoc,
    SnapshotDoc,
    ThreadsDoc,
    TraceDoc,
)
from schemas.events import FeedbackEvent, MessageEvent, SessionEvent, ToolEvent
from shared.codec import Envelope
from shared.config import (
    CommitmentsSettings,
    DecisionsSettings,
    KnowledgeSettings,
    Settings,
    ThreadsSettings,
    TracesSettings,
    parse_languages,
)
from shared.projection import _stamp
from workers.channels import core as channels
from workers.conversation.patterns import get_patterns
from workers.decisions import commitments
from workers.decisions import core as decisions
from workers.extraction import core as extraction
from workers.extraction import model as extraction_model
from workers.knowledge import core as knowledge
from workers.knowledge.llm import LlmEntity, LlmFact, LlmKnowledge
from workers.narrative.worker import NarrativeInputs, NarrativeRule
from workers.threads import core as threads
from workers.traces.config import trace_config
from workers.traces.core import apply_event
from workers.traces.operations import apply_operation_event, operations_config

T0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
PATTERNS = get_patterns(parse_languages("both"))
TZ = ZoneInfo("UTC")
TRACES = TracesSettings()


def message(n: int, content: str, channel: str | None = "ops") -> MessageEvent:
    return MessageEvent(id=f"m{n}", agent="a", session="s", ts=T0 + timedelta(minutes=n), role="user",
                        sender="sam", content=content, channel=channel)


def feedback(n: int, kind: Any, target: str | None = None, value: Any = None) -> FeedbackEvent:
    return FeedbackEvent(id=f"f{n}", agent="a", ts=T0 + timedelta(minutes=n), kind=kind, target=target, value=value)


def tool(n: int, kind: str, error: str | None = None) -> ToolEvent:
    extra: dict[str, Any] = (
        {"params": {"q": 1}} if kind == "call" else {"error": error, "result": None if error else "ok"})
    return ToolEvent(id=f"t{n}", agent="a", session="s", ts=T0 + timedelta(minutes=n), tool="search",
                     call_id=f"c{n // 2}", **extra)


TALK = [
    "Let's talk about the auth migration to OAuth2.",
    "We decided to use Postgres for the auth migration because it is what we run.",
    "I will send the migration plan by Friday.",
    "Alice works at Acme GmbH in Berlin.",
]


def _run(step: Callable[[Any, int, str], Any]) -> Any:
    doc = None
    for n, text in enumerate(TALK):
        doc = step(doc, n, text)
    return doc


def _narrative(doc: NarrativeDoc | None, n: int) -> NarrativeDoc:
    env = Envelope(seq=n + 1, subject="cortex.session.a.start", family="session", kind="start", agent="a",
                   event=SessionEvent(id=f"s{n}", agent="a", session="s", ts=T0 + timedelta(minutes=n)))
    # the narrative's pure rule, as the worker's projection and its derivation both run it
    return NarrativeRule(Settings()).compose(doc, env, NarrativeInputs())


def _traces(doc: TraceDoc | None, n: int) -> TraceDoc | None:
    config = trace_config(TRACES, ("en",))
    kind = "call" if n % 2 == 0 else "result"
    return apply_event(doc, tool(n, kind, error=None if kind == "call" else "boom: no such index"), kind, config)


READING = extraction_model.parse_answer(
    '{"missed": {"decisions": [{"what": "Ship on Monday"}]}, "wrong": ["x"]}', ["x"])
# Document type → how to make one (from nothing) → each change a core makes to it.
Change = Callable[[Any], Any]
CASES: dict[type[msgspec.Struct], tuple[Callable[[], Any], dict[str, Change]]] = {
    ThreadsDoc: (
        lambda: _run(lambda d, n, t: threads.apply_message(d, message(n, t), ThreadsSettings(), PATTERNS)),
        {
            "message": lambda d: threads.apply_message(d, message(9, "The auth migration is done."), ThreadsSettings(),
                                                       PATTERNS),
            "feedback": lambda d: threads.apply_feedback(d, feedback(9, "thread_priority", d.threads[0].id, "high"),
                                                         ThreadsSettings()),
        },
    ),
    DecisionsDoc: (
        lambda: _run(lambda d, n, t: decisions.apply_message(d, message(n, t), DecisionsSettings(), PATTERNS, TZ)),
        {"message": lambda d: decisions.apply_message(d, message(9, "We decided to ship on Monday."),
                                                      DecisionsSettings(), PATTERNS, TZ)},
    ),
    CommitmentsDoc: (
        lambda: _run(lambda d, n, t: commitments.apply_message(d, message(n, t), CommitmentsSettings(), PATTERNS)),
        {
            "message": lambda d: commitments.apply_message(d, message(9, "I'll review the plan tomorrow."),
                                                           CommitmentsSettings(), PATTERNS),
            "feedback": lambda d: commitments.apply_feedback(
                d, feedback(9, "commitment_done", d.commitments[0].id)),
            "overdue": lambda d: commitments.apply_feedback(
                d, FeedbackEvent(id="f-late", agent="a", ts=T0 + timedelta(days=30), kind="commitment_done",
                                 target="none")),
        },
    ),
    ChannelsDoc: (
        lambda: _run(lambda d, n, t: channels.apply_message(d, message(n, t, channel=f"c{n % 2}"))),
        {"message": lambda d: channels.apply_message(d, message(9, "hello", channel="c1"))},
    ),
    KnowledgeDoc: (
        lambda: _run(lambda d, n, t: knowledge.apply_message(d, message(n, t), KnowledgeSettings())),
        {
            "message": lambda d: knowledge.apply_message(d, message(9, "Bob works at Initech in Paris."),
                                                         KnowledgeSettings()),
            "llm": lambda d: knowledge.merge_llm_result(
                d, LlmKnowledge(entities=[LlmEntity(type="person", value="Carol")],
                                facts=[LlmFact(subject="Carol", predicate="works at", object="Acme")]),
                T0 + timedelta(minutes=9), KnowledgeSettings()),
            "access": lambda d: knowledge.apply_access(d, [f.id for f in d.facts], T0 + timedelta(minutes=9),
                                                       KnowledgeSettings()),
        },
    ),
    TraceDoc: (
        lambda: _traces(_traces(None, 0), 1),
        {"event": lambda d: _traces(_traces(d, 2), 3)},
    ),
    OperationsDoc: (
        lambda: apply_operation_event(None, tool(0, "call"), "call", operations_config(TRACES)),
        {"event": lambda d: apply_operation_event(d, tool(1, "result"), "result", operations_config(TRACES))},
    ),
    NarrativeDoc: (
        lambda: _narrative(None, 0),
        {"trigger": lambda d: _narrative(d, 1)},
    ),
    ExtractionDoc: (
        lambda: extraction.with_message(extraction.with_message(None, message(0, TALK[0]), T0), message(1, TALK[1]),
                                        T0),
        {
            "message": lambda d: extraction.with_message(d, message(9, "One more."), T0 + timedelta(minutes=9)),
            "window": lambda d: extraction.read_window(d, [READING], T0 + timedelta(minutes=9)),
            "answer": lambda d: extraction.merge_reading(d, READING, T0 + timedelta(minutes=9), "m1"),
        },
    ),
}

# Documents no core changes: each is made whole again from its inputs (and, where an
# earlier one is rewritten, by ``msgspec.structs.replace`` too: boot's completion, recall).
EXEMPT: dict[type[msgspec.Struct], str] = {
    SnapshotDoc: "a new snapshot at every compaction, from the compaction's messages",
    BootDoc: "a new briefing at every trigger, from the sources (workers.boot.complete replaces)",
    RecallDoc: "written by the recall worker's batch over the stored one with replace (workers.recall.worker)",
}


def test_every_document_type_is_covered_or_exempt() -> None:
    assert set(DOCUMENTS) == set(CASES) | set(EXEMPT), "a new document type: add its cores to CASES"


def with_probe(doc: msgspec.Struct) -> Any:
    """``doc`` as an instance of its type with one more field (set): a field no core knows."""
    probed = msgspec.defstruct(f"Probed{type(doc).__name__}", [("probe", str, "")], bases=(type(doc),), kw_only=True)
    return probed(**msgspec.structs.asdict(doc), probe="kept")


CHANGES = [(doc_type, name) for doc_type, (_, changes) in CASES.items() for name in changes]


@pytest.mark.parametrize(("doc_type", "change"), CHANGES, ids=[f"{t.__name__}-{n}" for t, n in CHANGES])
def test_a_field_no_core_names_survives_every_change(doc_type: type[msgspec.Struct], change: str) -> None:
    make, changes = CASES[doc_type]
    doc = make()
    assert isinstance(doc, doc_type)
    before = with_probe(msgspec.structs.replace(doc, integrity=Integrity(last_seq=7, events=3, producer="p")))
    encoded = msgspec.json.encode(before)
    after = changes[change](before)
    assert after is not None, "the case must change the document"
    assert after != before, "the case must change the document"
    assert type(after) is type(before) and after.probe == "kept"
    assert after.integrity is before.integrity  # the shell's: carried over, never copied or set
    assert msgspec.json.encode(before) == encoded  # the input is never mutated


def test_the_shell_stamps_a_new_document_keeping_every_field() -> None:
    doc = with_probe(threads.empty_threads_doc(T0))
    env = Envelope(seq=5, subject="cortex.msg.a.received", family="msg", kind="received", agent="a",
                   event=message(1, "hi"))
    stamped = _stamp(doc, None, env, "threads@1+abc")
    assert stamped.probe == "kept" and type(stamped) is type(doc)
    assert stamped.integrity == Integrity(last_seq=5, last_event_ts=env.event.ts, events=1, producer="threads@1+abc")
    assert doc.integrity == Integrity()  # the core's document is not written in place
