"""Hostile input, property-based: random and adversarial payloads on random and contract
subjects go through decode → the pure cores → encode.

No exception escapes; every ``Rejection`` carries a non-empty reason; every document the
cores make encodes and decodes back to itself. Feedback the cores cannot apply raises
``FeedbackError`` with a message (the consume loop dead-letters it after its retries)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import msgspec
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from schemas.docs import ChannelsDoc, CommitmentsDoc, DecisionsDoc, ThreadsDoc
from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope, Limits, Rejection, decode_event
from shared.config import CommitmentsSettings, DecisionsSettings, ThreadsSettings, parse_languages
from shared.names import KINDS
from workers.channels.core import apply_message as channels_apply
from workers.conversation import get_patterns
from workers.conversation.feedback import FeedbackError
from workers.decisions import commitments
from workers.decisions.core import apply_message as decisions_apply
from workers.threads.core import apply_feedback as threads_feedback
from workers.threads.core import apply_message as threads_apply

PATTERNS = get_patterns(parse_languages("all"))
UTC_ZONE = ZoneInfo("UTC")
LIMITS = Limits(max_content_bytes=4096, max_compaction_messages=20)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# words that make the extraction patterns fire, in several languages, plus hostile text
TRIGGERS = ["decided", "we'll use", "beschlossen", "I'll", "I will", "promise", "tomorrow", "waiting for",
            "warten auf", "let's get back to", "regarding", "zurück zu", "fixed", "done", "✅", "🚀", "urgent",
            "blocker", "?", "!!!", "\u202e", "\x00", "\ud7ff", "<script>", "${jndi:x}", "'; DROP TABLE", "\\",
            "\n\n", "a" * 300, "need " * 40 + "first", "é" * 50]
AGENTS = ["alice", "bob", "a-b_c", "x" * 64, "x" * 65, "a.b", "*", ">", "..", "a b", "älice", "", "alice\n"]
text = st.lists(st.one_of(st.sampled_from(TRIGGERS), st.text(max_size=40)), max_size=25).map(" ".join)
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                      st.floats(allow_nan=True), text, st.sampled_from(AGENTS))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                             st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=12)
timestamps = st.one_of(st.sampled_from(["2026-02-17T10:30:00Z", "2026-02-17T10:30:00+05:45", "1970-01-01T00:00:00Z",
                                        "9999-12-31T23:59:59Z", "2026-02-30T10:00:00Z", "2026-02-17T10:30:00",
                                        "yesterday", ""]),
                       st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                                    timezones=st.just(UTC)).map(lambda d: d.isoformat()))


def subjects(agent: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    contract = [(family, kind) for family, kinds in KINDS.items() for kind in (sorted(kinds) if kinds else [None])]

    def build(pair: tuple[str, str | None], who: str) -> str:
        family, kind = pair
        return f"cortex.{family}.{who}" + (f".{kind}" if kind else "")

    odd = st.sampled_from(["cortex", "cortex.msg", "cortex.msg.a.b.c.d", "x.msg.a.sent"])
    return st.one_of(st.builds(build, st.sampled_from(contract), agent), st.text(max_size=40), odd)


def mostly(draw: st.DrawFn, good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> Any:
    """A good value four times in five, so that many events get through to the cores."""
    return draw(good) if draw(st.integers(0, 4)) != 4 else draw(bad)


@st.composite
def event_payloads(draw: st.DrawFn) -> tuple[str, bytes]:
    """A contract-shaped event on its subject, then, one time in three, mutated: fields replaced,
    dropped or added, the subject's agent or kind changed, the encoding broken."""
    family = draw(st.sampled_from(["msg", "msg", "msg", "feedback", "session", "compaction", "notes"]))
    kinds = KINDS[family]
    agent = mostly(draw, st.sampled_from(["alice", "bob"]), st.sampled_from(AGENTS))
    event: dict[str, Any] = {
        "id": mostly(draw, st.from_regex(r"[A-Za-z0-9_.:-]{1,20}", fullmatch=True), st.text(max_size=10)),
        "agent": agent, "session": draw(st.text(max_size=20)),
        "ts": mostly(draw, st.sampled_from(["2026-02-17T10:30:00Z", "2026-02-18T23:59:59+05:45"]), timestamps),
        "role": mostly(draw, st.sampled_from(["user", "assistant", "system", "tool"]), st.text(max_size=6)),
        "content": draw(text), "sender": draw(st.one_of(st.none(), st.text(max_size=10))),
        "channel": draw(st.one_of(st.none(), st.sampled_from(["webchat", "telegram", ""]), st.text(max_size=10))),
        "kind": draw(st.sampled_from(sorted(KINDS["feedback"] or []))),
        "target": draw(st.one_of(st.none(), st.text(max_size=20))), "value": draw(json_value),
        "path": draw(st.text(max_size=20)), "headings": draw(st.lists(st.text(max_size=10), max_size=3)),
        "messages": draw(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                                         "content": text}), max_size=25)),
    }
    kind = event["kind"] if family == "feedback" else (draw(st.sampled_from(sorted(kinds))) if kinds else None)
    who = agent
    if draw(st.integers(0, 2)) == 2:
        for key in draw(st.lists(st.sampled_from(sorted(event)), min_size=1, max_size=3)):
            if draw(st.booleans()):
                event.pop(key, None)
            else:
                event[key] = draw(json_value)
        event[draw(st.text(max_size=8))] = draw(json_value)
        who = draw(st.sampled_from([agent, *AGENTS]))
        kind = draw(st.sampled_from([kind, "nope", *sorted(KINDS["feedback"] or [])]))
    subject = f"cortex.{family}.{who}" + (f".{kind}" if kinds is not None else "")
    raw = msgspec.json.encode(event)
    if draw(st.integers(0, 9)) == 9:  # now and then a broken encoding
        cut = draw(st.integers(0, len(raw)))
        raw = raw[:cut] + draw(st.binary(max_size=8))
    return subject, raw


class Docs:
    def __init__(self) -> None:
        self.threads: ThreadsDoc | None = None
        self.decisions: DecisionsDoc | None = None
        self.commitments: CommitmentsDoc | None = None
        self.channels: ChannelsDoc | None = None


def roundtrip(doc: Any) -> None:
    encoded = msgspec.json.encode(doc)
    assert msgspec.json.encode(msgspec.json.decode(encoded, type=type(doc))) == encoded


def run_cores(env: Envelope, docs: Docs) -> None:
    event = env.event
    if isinstance(event, MessageEvent):
        docs.threads = threads_apply(docs.threads, event, ThreadsSettings(), PATTERNS)
        docs.decisions = decisions_apply(docs.decisions, event, DecisionsSettings(), PATTERNS, UTC_ZONE)
        docs.commitments = commitments.apply_message(docs.commitments, event, CommitmentsSettings(), PATTERNS)
        docs.channels = channels_apply(docs.channels, event)
    elif isinstance(event, FeedbackEvent):
        try:
            docs.threads = threads_feedback(docs.threads, event, ThreadsSettings())
            docs.commitments = commitments.apply_feedback(docs.commitments, event, CommitmentsSettings())
        except FeedbackError as exc:  # a permanent, explained refusal
            assert str(exc).strip()
    for doc in (docs.threads, docs.decisions, docs.commitments, docs.channels):
        if doc is not None:
            roundtrip(doc)


def decode(subject: str, seq: int, raw: bytes) -> Envelope | Rejection:
    result = decode_event("cortex", subject, seq, raw, LIMITS)
    event(type(result).__name__ if isinstance(result, Rejection) else type(result.event).__name__)
    if isinstance(result, Rejection):
        assert isinstance(result.reason, str) and result.reason.strip(), result
        assert result.seq == seq and result.subject == subject
    return result


@FUZZ
@given(subject=st.one_of(subjects(st.sampled_from(AGENTS)), st.text(max_size=30)), raw=st.binary(max_size=200))
def test_random_bytes_on_any_subject_are_rejected_with_a_reason(subject: str, raw: bytes) -> None:
    result = decode(subject, 1, raw)
    if isinstance(result, Envelope):  # the odd valid JSON event: it must survive the cores too
        run_cores(result, Docs())


@FUZZ
@given(payload=event_payloads())
def test_adversarial_events_decode_or_reject_and_cores_never_raise(payload: tuple[str, bytes]) -> None:
    subject, raw = payload
    result = decode(subject, 7, raw)
    if isinstance(result, Envelope):
        assert result.agent == result.event.agent and result.subject == subject
        run_cores(result, Docs())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(event_payloads(), min_size=5, max_size=40))
def test_a_hostile_stream_for_one_agent_folds_into_valid_documents(batch: list[tuple[str, bytes]]) -> None:
    docs = Docs()
    for seq, (subject, raw) in enumerate(batch, start=1):
        result = decode(subject, seq, raw)
        if isinstance(result, Envelope) and result.agent == "alice":
            run_cores(result, docs)
