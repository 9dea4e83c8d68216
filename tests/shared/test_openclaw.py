"""The OpenClaw event store's three envelopes, decoded through the one decode path into the
contract events the contract's mapping names (fixtures: tests/fixtures/openclaw/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

from schemas.events import CompactionEvent, MessageEvent, RunEvent, SessionEvent, ToolEvent
from shared.codec import Envelope, Limits, Rejection, Subject, decode_event, parse_subject
from shared.names import (
    OPENCLAW_IGNORED,
    OPENCLAW_SESSION_AGENT,
    OPENCLAW_TYPES,
    consumer_filter_subjects,
    openclaw_transform,
    slot_of,
    stored_form,
)
from shared.openclaw import contract_session, epoch_ms_to_datetime

FIXTURES = Path(__file__).parent.parent / "fixtures" / "openclaw"


def store(name: str) -> list[tuple[str, bytes]]:
    """(subject as CORTEX_EVENTS stores it, exact payload) of every line of a fixture."""
    lines = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines()]
    return [("cortex.openclaw." + line["subject"].removeprefix("openclaw.events."), line["data"].encode())
            for line in lines]


def decode(subject: str, data: bytes, limits: Limits | None = None) -> Envelope | Rejection:
    return decode_event("cortex", stored_form("cortex", subject), 11, data, limits or Limits())


def by_token(name: str) -> dict[str, list[Envelope | Rejection]]:
    out: dict[str, list[Envelope | Rejection]] = {}
    for subject, data in store(name):
        out.setdefault(subject.rsplit(".", 1)[1], []).append(decode(subject, data))
    return out


def envelope(result: Envelope | Rejection) -> Envelope:
    assert isinstance(result, Envelope), result
    return result


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@pytest.mark.parametrize("name", ["v0.2.jsonl", "v1.jsonl", "session-sync.jsonl"])
def test_every_conversation_line_of_every_envelope_maps_and_every_other_is_named(name: str) -> None:
    for subject, data in store(name):
        token = subject.rsplit(".", 1)[1]
        result = decode(subject, data)
        if token in OPENCLAW_TYPES:
            env = envelope(result)
            assert (env.family, env.kind) == OPENCLAW_TYPES[token]
            assert env.event.id == json.loads(data)["id"] and env.duplicate_key is not None
        else:
            assert token in OPENCLAW_IGNORED
            assert isinstance(result, Rejection) and "is not conversation" in result.reason


def test_v02_message_received_becomes_a_user_message_with_sender_channel_and_exact_time() -> None:
    """What the npm plugin 0.2.1 publishes for message_received (captured)."""
    env = envelope(by_token("v0.2.jsonl")["msg_in"][0])
    event = env.event
    assert isinstance(event, MessageEvent)
    assert (env.family, env.kind, env.agent) == ("msg", "received", "main")
    assert event.role == "user" and event.sender == "matrix:@albert:example.org"
    assert event.channel == "matrix" and event.session == "main:matrix:albert"
    assert event.content == "We decided to use Redis for the cache."
    assert event.ts == datetime(2026, 2, 17, 9, 0, 3, tzinfo=UTC)  # ts 1771318803000, not payload.timestamp


@pytest.mark.parametrize(("sender", "metadata", "person"), [
    # OpenClaw 2026.9: the sender id its prompt hooks call ctx.senderId (the gateway plugin's person)
    ("matrix:@albert:example.org", {"senderId": "@albert:example.org"}, "@albert:example.org"),
    ("", {"provider": "webchat", "senderId": "cli"}, "cli"),
    ("telegram:42", {"senderId": " 42 "}, "42"),
    # no sender id: the store's `from`; neither: none
    ("matrix:@albert:example.org", {}, "matrix:@albert:example.org"),
    ("matrix:@albert:example.org", {"senderId": ""}, "matrix:@albert:example.org"),
    ("", {}, None),
    # metadata of another shape loses the id only
    ("albert", {"senderId": 42}, "albert"),
    ("albert", "not an object", "albert"),
])
def test_a_received_message_s_sender_is_openclaw_s_sender_id(sender: str, metadata: Any, person: str | None) -> None:
    data = msgspec.json.encode({**GOOD, "payload": {"from": sender, "content": "hi", "metadata": metadata}})
    event = envelope(decode("cortex.openclaw.main.msg_in", data)).event
    assert isinstance(event, MessageEvent) and event.sender == person


def test_v02_sent_message_session_compaction_tool_and_run_events() -> None:
    tokens = by_token("v0.2.jsonl")
    sent = envelope(tokens["msg_out"][0]).event
    assert isinstance(sent, MessageEvent) and sent.role == "assistant" and sent.sender is None
    assert sent.content == "Noted. I will set up Redis by Friday."
    assert isinstance(envelope(tokens["session_start"][0]).event, SessionEvent)
    reset = envelope(tokens["session_reset"][0])
    assert (reset.family, reset.kind) == ("session", "end")
    before = envelope(tokens["session_compaction_start"][0])
    after = envelope(tokens["session_compaction_end"][0])
    assert isinstance(before.event, CompactionEvent) and isinstance(after.event, CompactionEvent)
    assert (before.kind, before.event.message_count, before.event.compacting_count, before.event.messages) == (
        "before", 40, 30, [])
    assert (after.kind, after.event.message_count, after.event.compacting_count) == ("after", 10, 30)
    result = envelope(tokens["tool_result"][0]).event
    assert isinstance(result, ToolEvent)
    assert (result.tool, result.params, result.duration_ms, result.error) == ("exec", {"command": "ls"}, 35, None)
    assert result.result == {"content": [{"type": "text", "text": "a.md"}]}
    failed = envelope(tokens["run_error"][0])
    assert isinstance(failed.event, RunEvent) and failed.kind == "error"
    assert (failed.event.success, failed.event.error, failed.event.duration_ms) == (False, "model timeout", 9000)
    assert envelope(tokens["run_start"][0]).event.prompt == "We decided to use Redis for the cache."  # type: ignore[union-attr]


def test_v02_second_agent_keeps_its_own_id_and_system_events_are_ignored() -> None:
    tokens = by_token("v0.2.jsonl")
    viola = envelope(tokens["msg_in"][1])
    assert viola.agent == "viola" and viola.event.channel == "telegram"  # type: ignore[union-attr]
    for token in ("gateway_start", "gateway_stop", "llm_input", "llm_output", "msg_sending"):
        assert isinstance(tokens[token][0], Rejection), token


def test_v1_envelope_reads_canonical_events_and_takes_ids_from_scope() -> None:
    """The schema-version-1 envelope: legacy type on the subject, runId / toolCallId in scope."""
    tokens = by_token("v1.jsonl")
    msg = envelope(tokens["msg_in"][0])
    assert msg.event.id.startswith("evt-") and msg.event.session == "agent:main:matrix:!room:example.org"
    assert msg.event.sender == "matrix:@albert:example.org"  # type: ignore[union-attr]
    call = envelope(tokens["tool_call"][0]).event
    assert isinstance(call, ToolEvent) and (call.tool, call.call_id) == ("read", "toolu_01")
    failed = envelope(tokens["tool_result"][0]).event
    assert isinstance(failed, ToolEvent) and failed.error == "ENOENT: no such file" and failed.result is None
    run = envelope(tokens["run_start"][0]).event
    assert isinstance(run, RunEvent) and run.run_id == "run-42"
    reset = envelope(tokens["session_reset"][0])  # canonical-only type: "session.reset"
    assert (reset.family, reset.kind) == ("session", "end")
    assert envelope(tokens["run_error"][0]).kind == "error"


def test_session_sync_messages_and_tools_map_from_their_own_shape() -> None:
    tokens = by_token("session-sync.jsonl")
    question = envelope(tokens["conversation_message_in"][0])
    assert (question.family, question.kind, question.agent) == ("msg", "received", "viola")
    assert question.event.content.startswith("Can you book the venue")  # type: ignore[union-attr]
    assert question.event.ts == at(1771318861000)
    tool_only, answer = (envelope(r).event for r in tokens["conversation_message_out"])
    assert isinstance(tool_only, MessageEvent) and tool_only.content == "" and tool_only.role == "assistant"
    assert isinstance(answer, MessageEvent) and answer.content == "I will book the Lisbon venue by Friday."
    call = envelope(tokens["conversation_tool_call"][0]).event
    assert isinstance(call, ToolEvent) and (call.tool, call.call_id, call.params) == (
        "web_search", "call_9", {"q": "Lisbon venues"})
    result = envelope(tokens["conversation_tool_result"][0]).event
    assert isinstance(result, ToolEvent) and result.error == "search quota exceeded"


GOOD: dict[str, Any] = {"id": "3b0f8a52-9f0e-4a6c-8a8e-2f1c7e5b9d10", "ts": 1771318803000, "agent": "main",
                        "session": "main:webchat:albert", "type": "msg.in",
                        "payload": {"from": "albert", "content": "hi", "channel": "webchat", "metadata": {}}}


def store_event(agent: str, session: str, **change: Any) -> bytes:
    """One v0.2 msg.in as the store publishes it: its agent, its session key."""
    return msgspec.json.encode({**GOOD, "agent": agent, "session": session, **change})


@pytest.mark.parametrize(("store_agent", "session", "filed"), [
    # OpenClaw 2026.9: every agent's messages (ctx without agentId) and everything of `main`
    ("agent", "agent:ops:telegram:direct:42", "ops"),
    ("agent", "agent:main:main", "main"),
    ("agent", "agent:support-2_x:openai-user:bob", "support-2_x"),
    # the store named the agent itself: its word stands
    ("ops", "agent:ops:main", "ops"),
    ("main", "agent:ops:main", "main"),
    ("viola", "viola:telegram:12345", "viola"),
    # `agent` with a session key that names no agent: the store's token stays the agent
    ("agent", "agent", "agent"),
    ("agent", "agent:", "agent"),
    ("agent", "agent:ops", "agent"),
    ("agent", "agent::main", "agent"),
    ("agent", "agents:ops:main", "agent"),
    ("agent", "unknown", "agent"),
])
def test_a_store_event_is_filed_under_the_agent_its_openclaw_session_key_names(store_agent: str, session: str,
                                                                               filed: str) -> None:
    env = envelope(decode(f"cortex.openclaw.{store_agent}.msg_in", store_event(store_agent, session)))
    assert (env.agent, env.event.agent, env.event.session) == (filed, filed, session)
    assert env.subject == stored_form("cortex", f"cortex.openclaw.{store_agent}.msg_in"), "the stored subject stays"


def test_every_envelope_and_type_filed_under_the_session_token_is_its_agents() -> None:
    """The v1 envelope and the run, tool and session events alike; the duplicate key is the
    store's event's (a second copy of it is still one)."""
    for name in ("v0.2.jsonl", "v1.jsonl"):
        for subject, data in store(name):
            token, event = subject.rsplit(".", 1)[1], json.loads(data)
            if token not in OPENCLAW_TYPES:
                continue
            moved = {**event, "agent": "agent", "session": "agent:ops:" + event["session"]}
            env = envelope(decode(f"cortex.openclaw.agent.{token}", msgspec.json.encode(moved)))
            assert (env.agent, env.event.agent, (env.family, env.kind)) == ("ops", "ops", OPENCLAW_TYPES[token])
            again = envelope(decode(f"cortex.openclaw.agent.{token}",
                                    msgspec.json.encode({**moved, "ts": moved.get("ts", 0) + 7})))
            assert again.duplicate_key == env.duplicate_key


@pytest.mark.parametrize(("subject", "data", "reason"), [
    # a session key that names no valid agent id: a dead letter that says so, never another tenant
    ("cortex.openclaw.agent.msg_in", store_event("agent", "agent:b@d:main"), "invalid agent id 'b@d'"),
    ("cortex.openclaw.agent.msg_in", store_event("agent", "agent:" + "x" * 65 + ":main"), "invalid agent id"),
    # the store's own agent must be its subject's, whatever the session key names
    ("cortex.openclaw.agent.msg_in", store_event("ops", "agent:ops:main"),
     "agent mismatch: store agent 'ops' != subject agent 'agent'"),
    ("cortex.openclaw.ops.msg_in", store_event("agent", "agent:ops:main"),
     "agent mismatch: store agent 'agent' != subject agent 'ops'"),
])
def test_a_store_event_filed_under_a_bad_agent_is_a_dead_letter(subject: str, data: bytes, reason: str) -> None:
    result = decode(subject, data)
    assert isinstance(result, Rejection) and reason in result.reason, result


@pytest.mark.parametrize(
    ("subject", "change", "reason"),
    [
        ("cortex.openclaw.main.msg_in", {"id": None}, "OpenClaw event without an id"),
        ("cortex.openclaw.main.msg_in", {"agent": None}, "OpenClaw event without an agent"),
        ("cortex.openclaw.main.msg_in", {"type": None}, "OpenClaw event without a type"),
        ("cortex.openclaw.main.msg_in", {"session": None}, "OpenClaw event without a session"),
        ("cortex.openclaw.main.msg_in", {"payload": None}, "OpenClaw event without a payload"),
        ("cortex.openclaw.main.msg_in", {"ts": None}, "without a time (ts or timestamp"),
        ("cortex.openclaw.main.msg_in", {"ts": -5}, "is not epoch milliseconds"),
        ("cortex.openclaw.main.msg_in", {"ts": 10**16}, "is not epoch milliseconds"),
        ("cortex.openclaw.main.msg_in", {"ts": "2026-02-17T10:30:00Z"}, "invalid OpenClaw envelope"),
        ("cortex.openclaw.main.msg_in", {"ts": True}, "invalid OpenClaw envelope"),
        ("cortex.openclaw.main.msg_in", {"id": 7}, "invalid OpenClaw envelope"),
        ("cortex.openclaw.main.msg_in", {"schemaVersion": 2}, "unknown OpenClaw envelope: schemaVersion 2"),
        ("cortex.openclaw.main.msg_out", {}, "type 'msg.in' does not match its subject's 'msg_out'"),
        ("cortex.openclaw.main.msg_in", {"agent": "viola"}, "agent mismatch"),
        ("cortex.openclaw.main.msg_in", {"id": "has space"}, "invalid event id"),
        ("cortex.openclaw.main.msg_in", {"payload": "hello"}, "invalid OpenClaw msg.in payload"),
        ("cortex.openclaw.main.msg_in", {"payload": {"content": 42}}, "invalid OpenClaw msg.in payload"),
        ("cortex.openclaw.a@b.msg_in", {"agent": "a@b"}, "invalid agent token"),
        ("cortex.openclaw.main.cron_run", {"type": "cron.run"}, "unknown OpenClaw event type 'cron_run'"),
        ("cortex.openclaw.main.llm_input", {"type": "llm.input"}, "is not conversation"),
        ("cortex.openclaw.main.tool_call", {"type": "tool.call", "payload": {"params": {}}},
         "without a tool name (payload.toolName)"),
        ("cortex.openclaw.main.msg_in.x", {}, "expected cortex.openclaw.<slot>.<agent>.<type>"),
    ],
)
def test_unmappable_store_events_are_rejected_with_a_readable_reason(subject: str, change: dict[str, Any],
                                                                     reason: str) -> None:
    payload = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    result = decode(subject, msgspec.json.encode(payload))
    assert isinstance(result, Rejection)
    assert reason in result.reason


@pytest.mark.parametrize("raw", [b"", b"{not json", b"[1,2]", b"null", b'"text"', b"\xff\xfe"])
def test_garbage_in_the_store_is_rejected_not_raised(raw: bytes) -> None:
    result = decode("cortex.openclaw.main.msg_in", raw)
    assert isinstance(result, Rejection) and result.reason


def test_store_content_over_the_limit_is_rejected_like_a_contract_event() -> None:
    payload = {**GOOD, "payload": {"content": "x" * 2000}}
    result = decode("cortex.openclaw.main.msg_in", msgspec.json.encode(payload), Limits(max_content_bytes=1024))
    assert isinstance(result, Rejection) and "content too large: 2000 bytes > 1024" in result.reason


def test_epoch_milliseconds_become_the_exact_utc_instant() -> None:
    assert epoch_ms_to_datetime(1771318803001) == datetime(2026, 2, 17, 9, 0, 3, 1000, tzinfo=UTC)
    assert epoch_ms_to_datetime(1) == datetime(1970, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)
    assert epoch_ms_to_datetime(1771318803001.5) == datetime(2026, 2, 17, 9, 0, 3, 1500, tzinfo=UTC)
    # the contract's RFC 3339 form of a converted time (what documents store)
    assert msgspec.json.encode(epoch_ms_to_datetime(1771318803000)) == b'"2026-02-17T09:00:03Z"'


def test_long_session_keys_are_shortened_the_same_way_every_time() -> None:
    key = "agent:main:matrix:channel:" + "!room" * 40
    short = contract_session(key)
    assert len(short) == 128 and short == contract_session(key) and short.startswith("agent:main:matrix")
    assert contract_session(key + "x") != short
    env = envelope(decode("cortex.openclaw.main.msg_in", msgspec.json.encode({**GOOD, "session": key})))
    assert env.event.session == short  # type: ignore[union-attr]


def test_a_second_copy_of_the_same_event_has_the_same_duplicate_key_whatever_its_ts() -> None:
    """The plugin publishes without Nats-Msg-Id; a re-fired hook re-stamps ts on the same event."""
    first = envelope(decode("cortex.openclaw.main.msg_in", msgspec.json.encode(GOOD)))
    again = envelope(decode("cortex.openclaw.main.msg_in", msgspec.json.encode({**GOOD, "ts": GOOD["ts"] + 5})))
    other_text = envelope(decode("cortex.openclaw.main.msg_in",
                                 msgspec.json.encode({**GOOD, "payload": {**GOOD["payload"], "content": "ho"}})))
    other_id = envelope(decode("cortex.openclaw.main.msg_in", msgspec.json.encode({**GOOD, "id": "e2"})))
    assert first.duplicate_key == again.duplicate_key
    assert first.duplicate_key not in (other_text.duplicate_key, other_id.duplicate_key)
    stored = stored_form("cortex", "cortex.msg.main.received")
    contract = envelope(decode_event("cortex", stored, 1, msgspec.json.encode(
        {"id": "e", "agent": "main", "session": "s", "ts": "2026-02-17T10:30:00Z", "role": "user", "content": "x"}),
        Limits()))
    assert contract.duplicate_key is None  # contract events: the stream's Nats-Msg-Id dedup


def test_under_the_session_token_a_copy_is_only_ever_of_the_same_agent() -> None:
    """OpenClaw 2026.9 files every agent's events under the session token ``agent``. Two agents'
    events with the same id, type and payload (a chat's message ids are small integers) are two
    events — the key names the agent the session key does — while a copy of one agent's is still
    a duplicate. So whether an event is a copy depends on its own agent's events only, which the
    consume loop's look past the read-ahead relies on (docs/operations.md, Fairness)."""
    def under_token(session: str, ts: int = 0) -> Envelope:
        data = {**GOOD, "agent": OPENCLAW_SESSION_AGENT, "session": session, "ts": GOOD["ts"] + ts}
        return envelope(decode(f"cortex.openclaw.{OPENCLAW_SESSION_AGENT}.msg_in", msgspec.json.encode(data)))

    ada, ada_again, bob = under_token("agent:ada:main"), under_token("agent:ada:main", 5), under_token("agent:bob:main")
    assert (ada.agent, bob.agent) == ("ada", "bob")
    assert ada.duplicate_key == ada_again.duplicate_key != bob.duplicate_key


def test_one_tool_called_twice_alike_in_a_run_is_two_events_though_the_v1_plugin_gives_one_id() -> None:
    """The v1 plugin derives ids from runId before toolCallId: a repeated identical call (the
    stuff of doom loops) shares id and payload; its scope.toolCallId tells the calls apart,
    while a re-fired hook for the same call (same scope) is still a duplicate."""
    call = {"id": "evt-1111222233334444", "ts": 1771318803000, "agent": "main", "session": "agent:main:x",
            "type": "tool.call", "canonicalType": "tool.call.requested", "legacyType": "tool.call", "schemaVersion": 1,
            "scope": {"sessionKey": "agent:main:x", "runId": "run-7", "toolCallId": "toolu_1"},
            "payload": {"toolName": "exec", "params": {"command": "ls"}}}
    again = {**call, "ts": call["ts"] + 1000, "scope": {**call["scope"], "toolCallId": "toolu_2"}}
    refired = {**call, "ts": call["ts"] + 5}
    first, second, third = (envelope(decode("cortex.openclaw.main.tool_call", msgspec.json.encode(c)))
                            for c in (call, again, refired))
    assert first.duplicate_key != second.duplicate_key
    assert first.duplicate_key == third.duplicate_key
    assert (first.event.call_id, second.event.call_id) == ("toolu_1", "toolu_2")  # type: ignore[union-attr]
    weird = envelope(decode("cortex.openclaw.main.tool_call", msgspec.json.encode({**call, "scope": [1, 2]})))
    assert weird.event.call_id is None  # type: ignore[union-attr]


def test_stored_subjects_are_parsed_in_one_place() -> None:
    assert slot_of("viola") == 38
    assert parse_subject("cortex", "cortex.openclaw.38.viola.msg_out") == Subject("msg", "viola", "sent", "msg_out")
    assert parse_subject("cortex", "cortex.msg.38.viola.sent") == Subject("msg", "viola", "sent")
    assert consumer_filter_subjects("cortex", ("compaction",), 1, 32) == [
        "cortex.compaction.1.*.*", "cortex.openclaw.1.*.session_compaction_end",
        "cortex.openclaw.1.*.session_compaction_start", "cortex.compaction.33.*.*",
        "cortex.openclaw.33.*.session_compaction_end", "cortex.openclaw.33.*.session_compaction_start",
        # the store's session token (slot 38): its events may be any partition's agents'
        "cortex.openclaw.38.agent.session_compaction_end", "cortex.openclaw.38.agent.session_compaction_start"]
    assert not any(".agent." in f for f in consumer_filter_subjects("cortex", ("compaction",), 6, 32)), \
        "partition 6 of 32 holds slot 38 already: an overlapping filter would be refused by the server"
    assert not any(".agent." in f for f in consumer_filter_subjects("cortex", ("compaction",)))
    assert openclaw_transform("cx", "oc.ev") == ("oc.ev.*.*", "cx.openclaw.{{wildcard(1)}}.{{wildcard(2)}}")


def test_a_store_compaction_with_a_negative_count_is_bad_input() -> None:
    subject, data = next((s, d) for s, d in store("v1.jsonl") if s.endswith("session_compaction_end"))
    event = json.loads(data)
    event["payload"] = {**event.get("payload", {}), "messageCount": -5, "compactedCount": -1}
    result = decode(subject, json.dumps(event).encode())
    assert isinstance(result, Rejection) and ">= 0" in result.reason, result
