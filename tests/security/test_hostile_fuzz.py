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
from shared.names import KINDS, stored_form
from workers.channels.core import apply_message as channels_apply
from workers.conversation.feedback import FeedbackError
from workers.conversation.patterns import get_patterns
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
    contract = [(family, kind) for family, kinds in KINDS.items() for kind in sorted(kinds)]

    def build(pair: tuple[str, str], who: str) -> str:
        family, kind = pair
        return f"cortex.{family}.{who}.{kind}"

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
        "kind": draw(st.sampled_from(sorted(KINDS["feedback"]))),
        "target": draw(st.one_of(st.none(), st.text(max_size=20))), "value": draw(json_value),
        "path": draw(st.text(max_size=20)), "headings": draw(st.lists(st.text(max_size=10), max_size=3)),
        "messages": draw(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                                         "content": text}), max_size=25)),
    }
    kind = event["kind"] if family == "feedback" else draw(st.sampled_from(sorted(kinds)))
    who = agent
    if draw(st.integers(0, 2)) == 2:
        for key in draw(st.lists(st.sampled_from(sorted(event)), min_size=1, max_size=3)):
            if draw(st.booleans()):
                event.pop(key, None)
            else:
                event[key] = draw(json_value)
        event[draw(st.text(max_size=8))] = draw(json_value)
        who = draw(st.sampled_from([agent, *AGENTS]))
        kind = draw(st.sampled_from([kind, "nope", *sorted(KINDS["feedback"])]))
    subject = f"cortex.{family}.{who}.{kind}"
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
            docs.commitments = commitments.apply_feedback(docs.commitments, event)
        except FeedbackError as exc:  # a permanent, explained refusal
            assert str(exc).strip()
    for doc in (docs.threads, docs.decisions, docs.commitments, docs.channels):
        if doc is not None:
            roundtrip(doc)


def decode(published: str, seq: int, raw: bytes) -> Envelope | Rejection:
    subject = stored_form("cortex", published)  # what the stream stores a publish to it as
    result = decode_event("cortex", subject, seq, raw, LIMITS)
    event(type(result).__name__ if isinstance(result, Rejection) else type(result.event).__name__)
    if isinstance(result, Rejection):
        assert isinstance(result.reason, str) and result.reason.strip(), result
        assert result.seq == seq and result.subject == stored_form("cortex", subject)
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
        assert result.agent == result.event.agent and result.subject == stored_form("cortex", subject)
        run_cores(result, Docs())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(event_payloads(), min_size=5, max_size=40))
def test_a_hostile_stream_for_one_agent_folds_into_valid_documents(batch: list[tuple[str, bytes]]) -> None:
    docs = Docs()
    for seq, (subject, raw) in enumerate(batch, start=1):
        result = decode(subject, seq, raw)
        if isinstance(result, Envelope) and result.agent == "alice":
            run_cores(result, docs)


# --------------------------------------------------------------------------- hostile bytes at the decode boundary
# Issue 15: a payload nested 1000 deep, one invalid UTF-8 byte, a 60 000-character channel or
# a timestamp whose UTC time overflows used to raise out of decode_event (or pass it and fail
# in every worker). Here every field of every family gets each kind of hostile value, written
# as raw bytes (so that no encoder can tidy it up): decoding never raises, a rejection says
# why, and an accepted event is within every limit and goes through the cores.

BOUNDARY_LIMITS = Limits()  # the defaults the workers run with
GOOD_EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "msg": ("cortex.msg.alice.received", {"id": "e1", "agent": "alice", "session": "s", "ts": "2026-02-17T10:30:00Z",
                                          "role": "user", "content": "we decided to use postgres",
                                          "sender": "matrix:@albert:example.org", "channel": "webchat"}),
    "session": ("cortex.session.alice.start", {"id": "e1", "agent": "alice", "session": "s",
                                               "ts": "2026-02-17T10:30:00Z", "channel": "webchat", "workspace": "w"}),
    "compaction": ("cortex.compaction.alice.before",
                   {"id": "e1", "agent": "alice", "session": "s", "ts": "2026-02-17T10:30:00Z", "message_count": 1,
                    "compacting_count": 1,
                    "messages": [{"role": "user", "content": "I'll fix it", "ts": "2026-02-17T10:29:00Z"}]}),
    "notes": ("cortex.notes.alice.section", {"id": "e1", "agent": "alice", "ts": "2026-02-17T10:30:00Z", "path": "a.md",
                                     "headings": ["A"], "content": "a note"}),
    "feedback": ("cortex.feedback.alice.thread_close", {"id": "e1", "agent": "alice", "ts": "2026-02-17T10:30:00Z",
                                                        "kind": "thread_close", "target": "t1", "value": None,
                                                        "actor": "albert"}),
    "tool": ("cortex.tool.alice.result", {"id": "e1", "agent": "alice", "session": "s", "ts": "2026-02-17T10:30:00Z",
                                          "tool": "exec", "call_id": "c1", "params": {"cmd": "ls"},
                                          "result": {"ok": True}, "error": "none", "duration_ms": 12}),
    "run": ("cortex.run.alice.end", {"id": "e1", "agent": "alice", "session": "s", "ts": "2026-02-17T10:30:00Z",
                                     "run_id": "r1", "prompt": "fix it", "success": True, "error": "none",
                                     "duration_ms": 40}),
    # the OpenClaw event store's envelopes as CORTEX_EVENTS stores them (tests/fixtures/openclaw/)
    "openclaw-v0.2": ("cortex.openclaw.alice.msg_in",
                      {"id": "3b0f8a52-9f0e-4a6c-8a8e-2f1c7e5b9d10", "ts": 1771318803000, "agent": "alice",
                       "session": "alice:matrix:albert", "type": "msg.in",
                       "payload": {"from": "matrix:@albert:example.org", "content": "we decided to use postgres",
                                   "timestamp": 1771318800000, "channel": "matrix", "metadata": {}}}),
    "openclaw-v1": ("cortex.openclaw.alice.tool_result",
                    {"id": "evt-4f1c2d3e4f5a6b7c", "ts": 1771318803000, "agent": "alice", "session": "agent:alice:x",
                     "type": "tool.result", "canonicalType": "tool.call.failed", "legacyType": "tool.result",
                     "schemaVersion": 1, "source": {"plugin": "nats-eventstore"}, "actor": {"agentId": "alice"},
                     "scope": {"sessionKey": "agent:alice:x", "runId": "r1", "toolCallId": "toolu_1"},
                     "trace": {"correlationId": "r1"}, "visibility": "confidential",
                     "payload": {"toolName": "read", "params": {"path": "a.md"}, "error": "ENOENT",
                                 "durationMs": 3}}),
    "openclaw-sync": ("cortex.openclaw.alice.conversation_message_out",
                      {"id": "3f1d2c9e-0005kx9q", "timestamp": 1771318865000, "agent": "alice",
                       "session": "agent:alice:3f1d2c9e", "type": "conversation.message.out",
                       "visibility": "internal",
                       "payload": {"role": "assistant", "text_preview": [{"type": "text", "text": "I'll fix it"}],
                                   "content_length": 11, "sessionId": "3f1d2c9e"},
                       "meta": {"source": "session-sync", "seq": 5}}),
}


def _sized_text(draw: st.DrawFn) -> bytes:
    """A JSON string around one of the limits, in characters that encode to 1–4 bytes."""
    limit = draw(st.sampled_from([BOUNDARY_LIMITS.max_label_chars, BOUNDARY_LIMITS.max_path_chars,
                                  BOUNDARY_LIMITS.max_content_bytes // 4, BOUNDARY_LIMITS.max_content_bytes, 60000]))
    size = max(0, limit + draw(st.integers(-2, 2)))
    char = draw(st.sampled_from(["x", "é", "€", "🚀"]))
    return msgspec.json.encode(char * size)


@st.composite
def hostile_values(draw: st.DrawFn) -> bytes:
    """One raw JSON value (or something that is not one) meant to break a field."""
    attack = draw(st.sampled_from(["deep", "deep_objects", "utf8", "sized", "time", "number", "json", "garbage"]))
    if attack == "deep":
        n = draw(st.integers(1, 3000))
        return b"[" * n + b"]" * n
    if attack == "deep_objects":
        n = draw(st.integers(1, 1500))
        return b'{"a":' * n + b"1" + b"}" * n
    if attack == "utf8":  # valid JSON framing around raw, mostly invalid, UTF-8
        junk = draw(st.binary(min_size=1, max_size=12).filter(lambda b: b'"' not in b and b"\\" not in b))
        return b'"bad ' + junk + b' utf8"'
    if attack == "sized":
        return _sized_text(draw)
    if attack == "time":
        moment = draw(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)))
        minutes = draw(st.integers(-(24 * 60 - 1), 24 * 60 - 1))
        sign, offset = ("-" if minutes < 0 else "+"), abs(minutes)
        return f'"{moment:%Y-%m-%dT%H:%M:%S}{sign}{offset // 60:02d}:{offset % 60:02d}"'.encode()
    if attack == "number":
        return draw(st.sampled_from([b"1e400", b"-1e400", b"NaN", b"10" + b"0" * 400, b"-0", b"1.5", b"2e-400"]))
    if attack == "json":
        return msgspec.json.encode(draw(json_value))
    return draw(st.binary(max_size=40))


def raw_event(fields: dict[str, bytes]) -> bytes:
    return b"{" + b",".join(msgspec.json.encode(k) + b":" + v for k, v in fields.items()) + b"}"


@st.composite
def hostile_events(draw: st.DrawFn) -> tuple[str, bytes]:
    """A good event of any family with one or two of its fields (or a new one) made hostile."""
    family = draw(st.sampled_from(sorted(GOOD_EVENTS)))
    subject, good = GOOD_EVENTS[family]
    fields = {k: msgspec.json.encode(v) for k, v in good.items()}
    inner_payload = [f"payload.{k}" for k in good.get("payload", {})]  # an OpenClaw envelope's payload
    for name in draw(st.lists(st.sampled_from([*sorted(good), "extra", "messages.content", "messages.ts",
                                               *inner_payload]), min_size=1, max_size=2)):
        value = draw(hostile_values())
        if name.startswith("messages.") and family == "compaction":
            inner = {k: msgspec.json.encode(v) for k, v in good["messages"][0].items()}
            inner[name.split(".")[1]] = value
            fields["messages"] = b"[" + raw_event(inner) + b"]"
        elif name.startswith("payload.") and name in inner_payload:
            inner = {k: msgspec.json.encode(v) for k, v in good["payload"].items()}
            inner[name.split(".", 1)[1]] = value
            fields["payload"] = raw_event(inner)
        elif not name.startswith("messages."):
            fields[name] = value
    return subject, raw_event(fields)


def assert_within_limits(env: Envelope, limits: Limits) -> None:
    """What an accepted event promises the workers (and the documents they write)."""
    from shared.codec import TS_MAX, TS_MIN, check_event

    assert check_event(env.event, limits, 1 << 30) is None
    assert TS_MIN <= env.event.ts.astimezone(UTC) < TS_MAX
    channel, sender = getattr(env.event, "channel", None), getattr(env.event, "sender", None)
    assert channel is None or len(channel) <= limits.max_label_chars
    assert sender is None or len(sender) <= limits.max_label_chars
    msgspec.json.encode(env.event)  # and it encodes again (no lone surrogates, no unencodable values)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(payload=hostile_events())
def test_hostile_bytes_in_any_field_are_decoded_or_rejected_never_raised(payload: tuple[str, bytes]) -> None:
    subject, raw = payload
    result = decode_event("cortex", stored_form("cortex", subject), 3, raw, BOUNDARY_LIMITS)
    event(type(result).__name__)
    if isinstance(result, Rejection):
        assert result.reason.strip() and result.seq == 3 and result.subject == stored_form("cortex", subject)
        return
    assert_within_limits(result, BOUNDARY_LIMITS)
    run_cores(result, Docs())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(payloads=st.lists(hostile_events(), min_size=1, max_size=6), good_first=st.booleans())
def test_cortex_publish_reports_hostile_lines_and_keeps_the_good_ones(
        payloads: list[tuple[str, bytes]], good_first: bool) -> None:
    """``cortex publish`` validates every line with the workers' decoder and never raises:
    each hostile line is rejected with a reason, every good line is kept."""
    from shared.config import load_settings
    from workers.cli.publish import PublishReport, prepare_lines

    good = msgspec.json.encode({"type": "msg.received", **GOOD_EVENTS["msg"][1]})
    lines = [raw for _, raw in payloads]
    lines = [good, *lines] if good_first else [*lines, good]
    report = PublishReport()
    prepared = list(prepare_lines(lines, load_settings({}), report))
    good_line = 1 if good_first else len(lines)
    assert good_line in [number for number, *_ in prepared]
    assert len(prepared) + len(report.rejected) == len(lines)
    assert all(reason.strip() for _, reason in report.rejected)


# ------------------------------------------------------------------------ hostile bytes at the document-read boundary
# Issue 15 item 4: a stored document is untrusted bytes too. Whatever a bucket holds, reading
# it either yields a valid document (which the cores then take like any other) or fails in a
# way the owner classifies as "unreadable: delete and rebuild" — never as a transient store
# failure (that was retried forever) — and another worker's reader sees it as missing.

def _seed_documents() -> dict[str, tuple[type[Any], dict[str, Any]]]:
    """One real document of each event-derived kind, made by the cores from one message."""
    docs = Docs()
    good = decode_event("cortex", stored_form("cortex", GOOD_EVENTS["msg"][0]), 1,
                        msgspec.json.encode(GOOD_EVENTS["msg"][1]), LIMITS)
    assert isinstance(good, Envelope)
    run_cores(good, docs)
    made = {"threads": docs.threads, "decisions": docs.decisions, "commitments": docs.commitments,
            "channels": docs.channels}
    return {name: (type(doc), msgspec.to_builtins(doc)) for name, doc in made.items() if doc is not None}


SEED_DOCUMENTS = _seed_documents()


@st.composite
def stored_documents(draw: st.DrawFn) -> tuple[str, bytes]:
    """A real stored document with fields (top-level or inside its first list item) made
    hostile, cut short, or replaced by random bytes."""
    name = draw(st.sampled_from(sorted(SEED_DOCUMENTS)))
    _, builtins = SEED_DOCUMENTS[name]
    attack = draw(st.sampled_from(["field", "field", "item", "cut", "random"]))
    fields = {k: msgspec.json.encode(v) for k, v in builtins.items()}
    if attack == "field":
        fields[draw(st.sampled_from([*sorted(fields), "extra"]))] = draw(hostile_values())
    elif attack == "item":
        lists = [k for k, v in builtins.items() if isinstance(v, list) and v and isinstance(v[0], dict)]
        if lists:
            key = draw(st.sampled_from(lists))
            item = {k: msgspec.json.encode(v) for k, v in builtins[key][0].items()}
            item[draw(st.sampled_from([*sorted(item), "extra"]))] = draw(hostile_values())
            fields[key] = b"[" + raw_event(item) + b"]"
    raw = raw_event(fields)
    if attack == "cut":
        raw = raw[:draw(st.integers(0, len(raw)))] + draw(st.binary(max_size=6))
    elif attack == "random":
        raw = draw(st.binary(max_size=200))
    return name, raw


def apply_good_message(name: str, doc: Any) -> Any:
    """What the owning core makes of a readable stored document and the next message."""
    good = decode_event("cortex", stored_form("cortex", GOOD_EVENTS["msg"][0]), 2,
                        msgspec.json.encode(GOOD_EVENTS["msg"][1]), LIMITS)
    assert isinstance(good, Envelope) and isinstance(good.event, MessageEvent)
    if name == "threads":
        return threads_apply(doc, good.event, ThreadsSettings(), PATTERNS)
    if name == "decisions":
        return decisions_apply(doc, good.event, DecisionsSettings(), PATTERNS, UTC_ZONE)
    if name == "commitments":
        return commitments.apply_message(doc, good.event, CommitmentsSettings(), PATTERNS)
    return channels_apply(doc, good.event)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(stored=stored_documents())
def test_a_hostile_stored_document_is_read_or_classified_unreadable_never_transient(stored: tuple[str, bytes]) -> None:
    from shared.asof import DocReader
    from shared.repair import decode_document, invalid_times, unreadable_reason

    name, raw = stored
    doc_type, _ = SEED_DOCUMENTS[name]
    try:
        doc = decode_document([raw], msgspec.json.Decoder(doc_type))
    except Exception as exc:
        event("unreadable")
        assert unreadable_reason(exc), f"{type(exc).__name__} would be retried as transient"
        assert DocReader(None)._decode([raw], doc_type, "cortex_x", "alice") is None  # type: ignore[arg-type]
        return
    event("readable")
    assert invalid_times(doc) is None
    roundtrip(doc)
    roundtrip(apply_good_message(name, doc))
