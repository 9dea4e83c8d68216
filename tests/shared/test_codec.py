"""Decoding at the boundary: every kind of bad input becomes a Rejection with a readable reason."""

from __future__ import annotations

import msgspec
import pytest

from schemas.events import MessageEvent, RunEvent, ToolEvent
from shared.codec import (
    Envelope,
    Limits,
    Rejection,
    Subject,
    decode_event,
    event_subject,
    parse_subject,
    subject_agent,
)
from shared.names import published_form, slot_of, stored_form

GOOD = {"id": "e1", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z", "role": "user", "content": "hi"}


def decode(subject: str, payload: object, limits: Limits | None = None) -> Envelope | Rejection:
    """Decode what a publish to ``subject`` is stored as (the stream's slot transform)."""
    data = payload if isinstance(payload, bytes) else msgspec.json.encode(payload)
    return decode_event("cortex", stored_form("cortex", subject), 7, data, limits or Limits())


def test_a_note_on_the_contracts_three_token_subject_decodes_as_its_stored_copy() -> None:
    """CORTEX_NOTES's copy of ``cortex.notes.<agent>`` is stored as ``….section``."""
    env = decode("cortex.notes.main", {**GOOD, "path": "memory/a.md", "headings": ["A"]})
    assert isinstance(env, Envelope)
    assert (env.family, env.kind, env.agent, env.subject) == ("notes", "section", "main", "cortex.notes.8.main.section")


def test_good_message_decodes_into_an_envelope() -> None:
    env = decode("cortex.msg.main.received", GOOD)
    assert isinstance(env, Envelope)
    assert (env.family, env.kind, env.agent, env.seq) == ("msg", "received", "main", 7)
    assert isinstance(env.event, MessageEvent)


@pytest.mark.parametrize(
    ("subject", "payload", "reason"),
    [
        ("cortex.msg.main.received", b"{not json", "malformed JSON"),
        ("cortex.msg.main.received", b"", "malformed JSON"),
        ("cortex.msg.main.received", b"[1,2]", "invalid msg event"),
        ("cortex.msg.main.received", {**GOOD, "content": 42}, "Expected `str`"),
        ("cortex.msg.main.received", {k: v for k, v in GOOD.items() if k != "content"}, "missing required field"),
        ("cortex.msg.main.received", {**GOOD, "agent": "other"}, "agent mismatch"),
        ("cortex.msg.main.received", {**GOOD, "agent": "ma.in"}, "agent"),
        ("cortex.msg.main.received", {**GOOD, "agent": "main\n"}, "invalid agent id"),
        ("cortex.msg.main.received", {**GOOD, "id": "has space"}, "id"),
        ("cortex.msg.main.received", {**GOOD, "ts": "2026-02-17T10:30:00"}, "timezone"),
        ("cortex.msg.main.shouted", GOOD, "expected cortex.msg.<slot>.<agent>.(received|sent)"),
        ("cortex.unknown.main.x", GOOD, "unknown subject"),
        ("cortex.msg.mä.received", {**GOOD, "agent": "mä"}, "invalid agent token"),
        ("cortex.notes.main.extra", {**GOOD, "path": "p"}, "expected cortex.notes.<slot>.<agent>.(section)"),
        ("cortex.session.main", GOOD, "expected cortex.session.<slot>.<agent>.<kind>"),
        ("cortex.feedback.main.thread_close",
         {"id": "f", "agent": "main", "ts": "2026-02-17T10:30:00Z", "kind": "memory_pin"}, "kind mismatch"),
    ],
)
def test_bad_input_is_rejected_with_a_reason(subject: str, payload: object, reason: str) -> None:
    result = decode(subject, payload)
    assert isinstance(result, Rejection)
    assert reason in result.reason


FEEDBACK = {"id": "f1", "agent": "main", "ts": "2026-02-17T10:30:00Z"}


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        ("remember", {"value": {"content": "Albert prefers tea"}}),
        ("remember", {"value": {"content": "Never deploy on Fridays", "type": "rule", "scope": "permanent"}}),
        ("fact_access", {"value": ["fact:1", "fact:2"]}),
        ("fact_access", {"target": "fact:1"}),
        ("operation_seen", {"value": ["call-1", "call-2"]}),
        ("operation_seen", {"target": "call-1"}),
    ],
)
def test_the_new_feedback_kinds_decode(kind: str, extra: dict[str, object]) -> None:
    env = decode(f"cortex.feedback.main.{kind}", {**FEEDBACK, "kind": kind, **extra})
    assert isinstance(env, Envelope), env
    assert env.kind == kind


@pytest.mark.parametrize(
    ("kind", "extra", "reason"),
    [
        ("remember", {}, "invalid remember value: Expected `object`, got `null`"),
        ("remember", {"value": "just a string"}, "invalid remember value: Expected `object`, got `str`"),
        ("remember", {"value": {"type": "rule"}}, "invalid remember value: Object missing required field `content`"),
        ("remember", {"value": {"content": ""}}, "invalid remember value: Expected `str` of length >= 1"),
        ("remember", {"value": {"content": "x", "type": "wish"}}, "Invalid enum value 'wish' - at `$.type`"),
        ("remember", {"value": {"content": "x", "scope": "forever"}}, "at `$.scope`"),
        ("fact_access", {}, "fact_access names no fact id"),
        ("fact_access", {"value": "fact:1"}, "expected a list of fact ids"),
        ("fact_access", {"value": ["fact:1", 2]}, "expected a list of fact ids"),
        ("operation_seen", {}, "operation_seen names no operation id"),
        ("operation_seen", {"value": {"id": "call-1"}}, "expected a list of operation ids"),
    ],
)
def test_a_feedback_value_of_the_wrong_shape_is_bad_input(kind: str, extra: dict[str, object], reason: str) -> None:
    result = decode(f"cortex.feedback.main.{kind}", {**FEEDBACK, "kind": kind, **extra})
    assert isinstance(result, Rejection)
    assert reason in result.reason, result.reason


MEMORY = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        ("recall_access", {"value": [MEMORY, "0f8fad5b-d9cb-469f-a165-70867728950e"]}),
        ("recall_access", {"target": MEMORY}),
        ("memory_pin", {"target": MEMORY.upper()}),  # any case: the same UUID
        ("memory_forget", {"target": MEMORY}),
        ("memory_forget", {"target": MEMORY, "value": [MEMORY]}),
        ("memory_forget", {"value": "all"}),  # `cortex forget AGENT`'s marker: every memory of the agent
        ("memory_forget", {"value": "all", "actor": "cortex-forget"}),
    ],
)
def test_memory_feedback_naming_memory_ids_decodes(kind: str, extra: dict[str, object]) -> None:
    env = decode(f"cortex.feedback.main.{kind}", {**FEEDBACK, "kind": kind, **extra})
    assert isinstance(env, Envelope), env


@pytest.mark.parametrize(
    ("kind", "extra", "reason"),
    [
        ("memory_forget", {"target": "nonexistent"}, "memory_forget: 'nonexistent' is not a memory id"),
        ("recall_access", {"value": ["not-a-uuid"]}, "recall_access: 'not-a-uuid' is not a memory id"),
        ("recall_access", {"value": [MEMORY, "1b4e28ba"]}, "'1b4e28ba' is not a memory id"),  # a short id
        ("memory_pin", {"target": "42"}, "memory_pin: '42' is not a memory id"),
        ("memory_pin", {"target": "{" + MEMORY + "}"}, "is not a memory id"),  # uuid.UUID would take it
        ("memory_pin", {"target": MEMORY.replace("-", "")}, "is not a memory id"),
        ("memory_pin", {"target": ""}, "memory_pin: '' is not a memory id"),
        ("memory_forget", {"target": "x" * 200}, "'" + "x" * 80 + "…' is not a memory id"),
        ("memory_forget", {"target": "all"}, "memory_forget: 'all' is not a memory id"),
        ("memory_forget", {}, "memory_forget names no memory id"),
        ("memory_pin", {"value": []}, "memory_pin names no memory id"),
        ("memory_pin", {"value": "all"}, "invalid memory_pin value: expected a list of memory ids"),
        ("recall_access", {"value": MEMORY}, "invalid recall_access value: expected a list of memory ids"),
        ("recall_access", {"value": [MEMORY, 7]}, "expected a list of memory ids (strings)"),
        ("memory_forget", {"value": "everything"}, "expected a list of memory ids"),
    ],
)
def test_memory_feedback_naming_anything_but_memory_ids_is_bad_input(kind: str, extra: dict[str, object],
                                                                     reason: str) -> None:
    """One of these crashed the recall worker's store at commit, on every restart."""
    result = decode(f"cortex.feedback.main.{kind}", {**FEEDBACK, "kind": kind, **extra})
    assert isinstance(result, Rejection)
    assert reason in result.reason, result.reason


def test_an_oversize_remembered_content_is_rejected_with_its_size() -> None:
    payload = {**FEEDBACK, "kind": "remember", "value": {"content": "ü" * 600}}
    result = decode("cortex.feedback.main.remember", payload, Limits(max_content_bytes=1024))
    assert isinstance(result, Rejection)
    assert "value.content too large: 1200 bytes > 1024" in result.reason


def test_oversize_content_is_rejected_with_its_size() -> None:
    result = decode("cortex.msg.main.received", {**GOOD, "content": "x" * 2000}, Limits(max_content_bytes=1024))
    assert isinstance(result, Rejection)
    assert "content too large: 2000 bytes > 1024" in result.reason


def test_content_limit_counts_utf8_bytes_not_characters() -> None:
    result = decode("cortex.msg.main.received", {**GOOD, "content": "ü" * 600}, Limits(max_content_bytes=1024))
    assert isinstance(result, Rejection)
    assert "1200 bytes" in result.reason


def test_too_many_compaction_messages_are_rejected() -> None:
    payload = {"id": "c", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z",
               "messages": [{"role": "user", "content": "m"}] * 6}
    result = decode("cortex.compaction.main.before", payload, Limits(max_compaction_messages=5))
    assert isinstance(result, Rejection)
    assert "too many compaction messages: 6 > 5" in result.reason


TOOL = {"id": "t1", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z", "tool": "exec",
        "params": {"command": "ls"}}
RUN = {"id": "r1", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z", "run_id": "run-1"}


def test_tool_and_run_events_are_contract_events() -> None:
    tool = decode("cortex.tool.main.result", {**TOOL, "result": {"ok": True}, "duration_ms": 12})
    run = decode("cortex.run.main.error", {**RUN, "success": False, "error": "timeout"})
    assert isinstance(tool, Envelope) and isinstance(tool.event, ToolEvent)
    assert (tool.family, tool.kind, tool.event.duration_ms) == ("tool", "result", 12)
    assert isinstance(run, Envelope) and isinstance(run.event, RunEvent)
    assert (run.family, run.kind, run.event.error) == ("run", "error", "timeout")


@pytest.mark.parametrize(
    ("subject", "payload", "reason"),
    [
        ("cortex.tool.main.done", TOOL, "expected cortex.tool.<slot>.<agent>.(call|result)"),
        ("cortex.run.main.failed", RUN, "expected cortex.run.<slot>.<agent>.(end|error|start)"),
        ("cortex.tool.main.call", {k: v for k, v in TOOL.items() if k != "tool"}, "missing required field `tool`"),
        ("cortex.tool.main.call", {**TOOL, "duration_ms": "fast"}, "Expected `int | null`"),
        ("cortex.run.main.end", {**RUN, "success": "yes"}, "Expected `bool | null`"),
        ("cortex.run.main.start", {**RUN, "agent": "viola"}, "agent mismatch"),
    ],
)
def test_bad_tool_and_run_events_are_rejected(subject: str, payload: object, reason: str) -> None:
    result = decode(subject, payload)
    assert isinstance(result, Rejection)
    assert reason in result.reason


def test_oversize_tool_result_and_run_prompt_are_rejected_with_the_field() -> None:
    limits = Limits(max_content_bytes=1024)
    tool = decode("cortex.tool.main.result", {**TOOL, "result": {"text": "x" * 2000}}, limits)
    run = decode("cortex.run.main.start", {**RUN, "prompt": "p" * 3000}, limits)
    assert isinstance(tool, Rejection) and "result too large" in tool.reason
    assert isinstance(run, Rejection) and "prompt too large: 3000 bytes > 1024" in run.reason


def test_parse_subject_reads_the_stored_layout_with_its_slot_token() -> None:
    assert slot_of("a") == 44
    assert parse_subject("cortex", "cortex.session.44.a.start") == Subject("session", "a", "start")
    assert parse_subject("cortex", "cortex.notes.44.a.section") == Subject("notes", "a", "section")
    assert parse_subject("cortex", "cortex.openclaw.44.a.msg_in") == Subject("msg", "a", "received", "msg_in")
    assert "stored without a slot" in str(parse_subject("cortex", "cortex.session.a.start"))  # a '*' token
    assert "expected" in str(parse_subject("cortex", "cortex.session.64.a.start"))  # no such slot
    assert "expected" in str(parse_subject("cortex", "cortex.session.x.a.start"))
    assert "unknown subject" in str(parse_subject("cortex", "other.session.44.a.start"))


def test_a_stored_subject_goes_back_to_what_was_published() -> None:
    assert published_form("cortex", "cortex.msg.44.a.received") == "cortex.msg.a.received"
    # a note as its producer published it: the contract's notes subject, not CORTEX_NOTES's copy
    assert published_form("cortex", stored_form("cortex", "cortex.notes.a")) == "cortex.notes.a"
    assert published_form("cortex", stored_form("cortex", "cortex.notes.a.section")) == "cortex.notes.a"
    assert published_form("cortex", "cortex.msg.a.received") == "cortex.msg.a.received"


def test_a_dead_letters_original_subject_names_its_agent_in_either_layout() -> None:
    assert subject_agent("cortex", "cortex.msg.44.a.received") == "a"  # stored now
    assert subject_agent("cortex", "cortex.msg.a.received") == "a"  # a dead letter from before a migration
    assert subject_agent("cortex", "cortex.notes.a") == "a"
    assert subject_agent("cortex", "other.msg.a.received") is None


@pytest.mark.parametrize(
    ("payload", "subject"),
    [
        ({**GOOD, "type": "msg.sent"}, "cortex.msg.main.sent"),
        ({**GOOD, "role": "assistant"}, "cortex.msg.main.sent"),
        (GOOD, "cortex.msg.main.received"),
        ({"agent": "main", "type": "session.end"}, "cortex.session.main.end"),
        ({"agent": "main", "kind": "thread_close"}, "cortex.feedback.main.thread_close"),
        ({"agent": "main", "path": "x.md"}, "cortex.notes.main"),
        ({"agent": "main", "messages": []}, "cortex.compaction.main.before"),
        ({"agent": "main", "type": "tool.result", "tool": "exec"}, "cortex.tool.main.result"),
        ({"agent": "main", "tool": "exec", "params": {}}, "cortex.tool.main.call"),
        ({"agent": "main", "tool": "exec", "result": "ok"}, "cortex.tool.main.result"),
        ({"agent": "main", "tool": "exec", "error": "boom"}, "cortex.tool.main.result"),
        ({"agent": "main", "run_id": "r", "prompt": "hi"}, "cortex.run.main.start"),
        ({"agent": "main", "run_id": "r", "success": True, "duration_ms": 5}, "cortex.run.main.end"),
        ({"agent": "main", "run_id": "r", "success": False}, "cortex.run.main.error"),
        ({"no": "agent"}, None),
    ],
)
def test_event_subject_is_derived_from_the_payload(payload: dict[str, object], subject: str | None) -> None:
    assert event_subject("cortex", payload) == subject


# --------------------------------------------------------------------------- totality (issue 15, items 1, 2, 3, 9)

def raw_message(extra: bytes = b"", **over: str) -> bytes:
    """A MessageEvent as raw bytes, so that a test can put bytes no encoder would write."""
    fields = {**GOOD, **over}
    body = b",".join(b'"%s":"%s"' % (k.encode(), v.encode()) for k, v in fields.items())
    return b"{" + body + extra + b"}"


def test_an_event_nested_1000_deep_is_rejected_not_raised() -> None:
    """Issue 15 item 1: a RecursionError used to escape decode_event and kill every worker."""
    deep = raw_message(b',"extra":' + b"[" * 1000 + b"]" * 1000)
    result = decode("cortex.msg.main.received", deep)
    assert isinstance(result, Rejection)
    assert "nested too deeply: 1001 levels > 64" in result.reason  # the object itself is one


def test_nesting_up_to_the_limit_decodes() -> None:
    result = decode("cortex.msg.main.received", raw_message(b',"extra":' + b"[" * 63 + b"]" * 63))
    assert isinstance(result, Envelope)


def test_invalid_utf8_is_rejected_not_raised() -> None:
    """Issue 15 item 2: a UnicodeDecodeError used to escape decode_event."""
    data = raw_message().replace(b'"hi"', b'"bad \xff\xfe utf8"')
    result = decode("cortex.msg.main.received", data)
    assert isinstance(result, Rejection)
    assert "invalid UTF-8" in result.reason


@pytest.mark.parametrize("ts", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_a_timestamp_whose_utc_time_overflows_is_rejected(ts: str) -> None:
    """Issue 15 item 9: such timestamps passed validation and then failed in the workers."""
    result = decode("cortex.msg.main.received", {**GOOD, "ts": ts})
    assert isinstance(result, Rejection)
    assert "ts" in result.reason and "out of range" in result.reason


@pytest.mark.parametrize("ts", ["1899-12-31T23:59:59Z", "9000-01-01T00:00:00Z", "0001-01-02T00:00:00Z"])
def test_timestamps_outside_the_supported_years_are_rejected(ts: str) -> None:
    result = decode("cortex.msg.main.received", {**GOOD, "ts": ts})
    assert isinstance(result, Rejection)
    assert "out of range: expected 1900-01-01 to 9000-01-01 (UTC)" in result.reason


def test_a_compaction_message_timestamp_is_checked_too() -> None:
    payload = {"id": "c", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z",
               "messages": [{"role": "user", "content": "m", "ts": "9999-12-31T23:59:59-12:00"}]}
    result = decode("cortex.compaction.main.before", payload)
    assert isinstance(result, Rejection)
    assert "messages[0].ts" in result.reason


@pytest.mark.parametrize(
    ("subject", "payload", "field"),
    [
        ("cortex.msg.main.received", {**GOOD, "channel": "c" * 60000}, "channel too long: 60000 characters > 256"),
        ("cortex.msg.main.received", {**GOOD, "sender": "s" * 257}, "sender too long: 257 characters > 256"),
        ("cortex.session.main.start", {**GOOD, "workspace": "w" * 1025}, "workspace too long"),
        ("cortex.notes.main.section", {**GOOD, "path": "p" * 1025}, "path too long"),
        ("cortex.notes.main.section", {**GOOD, "path": "p", "headings": ["h", "h" * 1025]}, "headings too long"),
        ("cortex.feedback.main.memory_pin",
         {"id": "f", "agent": "main", "ts": "2026-02-17T10:30:00Z", "kind": "memory_pin", "actor": "a" * 300},
         "actor too long"),
        ("cortex.feedback.main.memory_pin",
         {"id": "f", "agent": "main", "ts": "2026-02-17T10:30:00Z", "kind": "memory_pin", "target": "t" * 300},
         "target too long"),
        ("cortex.feedback.main.memory_pin",
         {"id": "f", "agent": "main", "ts": "2026-02-17T10:30:00Z", "kind": "memory_pin",
          "value": {"content": "v" * 70000}}, "value.content too large"),
        ("cortex.feedback.main.memory_pin",
         {"id": "f", "agent": "main", "ts": "2026-02-17T10:30:00Z", "kind": "memory_pin",
          "value": ["v" * 1000] * 70}, "value too large: 70211 bytes > 66560"),
        ("cortex.compaction.main.before",
         {"id": "c", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z",
          "messages": [{"role": "r" * 300, "content": "m"}]}, "messages[0].role too long"),
    ],
)
def test_every_string_field_has_a_size_limit(subject: str, payload: dict[str, object], field: str) -> None:
    """Issue 15 item 3: an unbounded channel grew documents past the server's max payload."""
    result = decode(subject, payload)
    assert isinstance(result, Rejection)
    assert field in result.reason


def test_a_matrix_sender_and_a_long_but_sane_channel_decode() -> None:
    result = decode("cortex.msg.main.received",
                    {**GOOD, "sender": "matrix:@albert:example.org", "channel": "c" * 256})
    assert isinstance(result, Envelope)
    assert result.event.sender == "matrix:@albert:example.org"


def test_the_limits_follow_the_settings() -> None:
    from shared.codec import event_limits
    from shared.config import load_settings

    limits = event_limits(load_settings({"CORTEX_RUNTIME_MAX_LABEL_CHARS": "512"}))
    assert limits.max_label_chars == 512
    assert isinstance(decode("cortex.msg.main.received", {**GOOD, "channel": "c" * 500}, limits), Envelope)


def test_total_turns_any_exception_into_a_rejection() -> None:
    """The one place that catches: a decoder added tomorrow that raises something unforeseen
    still yields a Rejection (what an OpenClaw envelope decoder builds on)."""
    from shared.codec import total

    def broken() -> Envelope | Rejection:
        raise OverflowError("date value out of range")

    result = total(9, "cortex.msg.main.received", broken)
    assert result == Rejection(seq=9, subject="cortex.msg.main.received",
                               reason="undecodable event: OverflowError: date value out of range")


@pytest.mark.parametrize(
    ("data", "depth"),
    [(b"", 0), (b"1", 0), (b"{}", 1), (b'{"a":[1,[2]]}', 3), (b'{"a":"[[[["}', 1),
     (b'{"a":"\\"[[", "b":[{}]}', 3), (b"[" * 500, 500), (b"]]]", 0)],
)
def test_nesting_depth_ignores_brackets_inside_strings(data: bytes, depth: int) -> None:
    from shared.codec import nesting_depth

    assert nesting_depth(data) == depth


@pytest.mark.parametrize("counts", [{"message_count": -5}, {"compacting_count": -1}])
def test_a_negative_compaction_count_is_bad_input(counts: dict[str, int]) -> None:
    """Issue 44 item 9: 'Compaction: -1 of -5 messages compacted' reached the narrative."""
    payload = {"id": "c", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z", **counts}
    result = decode("cortex.compaction.main.after", payload)
    assert isinstance(result, Rejection) and "Expected `int` >= 0" in result.reason, result
    assert isinstance(decode("cortex.compaction.main.after", {**payload, **dict.fromkeys(counts, 0)}), Envelope)


def test_a_subject_is_parsed_once_and_a_bad_one_is_rejected_each_time_without_being_kept() -> None:
    """``_Subjects``: a subject that passes is kept as ``parse_subject`` answers it; one whose agent
    token is no agent id is rejected with the same reason each time and never kept; bounded."""
    from shared.codec import _SUBJECTS

    _SUBJECTS.by_subject.clear()
    env = decode("cortex.msg.main.received", GOOD)
    stored = stored_form("cortex", "cortex.msg.main.received")
    assert isinstance(env, Envelope)
    assert _SUBJECTS.by_subject == {("cortex", stored): parse_subject("cortex", stored)}
    again = decode("cortex.msg.main.received", {**GOOD, "id": "e2"})
    assert isinstance(again, Envelope) and (again.family, again.kind, again.agent) == ("msg", "received", "main")
    bad = f"cortex.msg.{slot_of('main')}.ma!n.received"
    data = msgspec.json.encode(GOOD)
    reasons = [decode_event("cortex", bad, 7, data, Limits()) for _ in range(2)]
    assert all(isinstance(r, Rejection) and r.reason == "invalid agent token 'ma!n' in subject" for r in reasons)
    assert ("cortex", bad) not in _SUBJECTS.by_subject
    assert decode_event("other", stored, 7, data, Limits()) == Rejection(
        seq=7, subject=stored, reason=f"unknown subject {stored!r}")  # the prefix is part of the key
    for i in range(_SUBJECTS.LIMIT + 5):
        _SUBJECTS.parsed("cortex", stored_form("cortex", f"cortex.msg.a{i}.received"))
    assert 0 < len(_SUBJECTS.by_subject) <= _SUBJECTS.LIMIT


@pytest.mark.parametrize("size", [255, 256, 257])
def test_a_label_at_its_limit_passes_and_one_character_more_is_rejected(size: int) -> None:
    """The labels within their characters pass on the spot (``_check_struct``): the bound is the same."""
    found = decode("cortex.msg.main.received", {**GOOD, "sender": "s" * size, "channel": "c" * size})
    if size <= 256:
        assert isinstance(found, Envelope)
    else:
        assert isinstance(found, Rejection) and found.reason == f"sender too long: {size} characters > 256"
