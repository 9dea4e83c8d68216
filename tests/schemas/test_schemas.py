"""The contract's payloads as Structs: examples decode, identity rules reject, schemas don't drift."""

from __future__ import annotations

import msgspec
import pytest

from schemas.events import (
    CompactionEvent,
    FeedbackEvent,
    MessageEvent,
    NoteEvent,
    RunEvent,
    SessionEvent,
    ToolEvent,
    is_valid_agent,
    is_valid_event_id,
)
from schemas.export import JSON_DIR, rendered

EXAMPLES: list[tuple[type[msgspec.Struct], bytes]] = [
    (MessageEvent, b'{"id":"e1","agent":"main","session":"s1","ts":"2026-02-17T10:30:00Z","role":"user",'
                   b'"sender":"albert","content":"We decided to use TypeScript","channel":"webchat"}'),
    (MessageEvent, b'{"id":"e2","agent":"main","session":"s1","ts":"2026-02-17T10:30:00+01:00","role":"assistant",'
                   b'"content":"ok"}'),
    (SessionEvent, b'{"id":"s-1","agent":"main","session":"s1","ts":"2026-02-17T10:30:00Z","channel":"webchat",'
                   b'"workspace":"/home/agent"}'),
    (CompactionEvent, b'{"id":"c-1","agent":"main","session":"s1","ts":"2026-02-17T10:30:00Z","message_count":40,'
                      b'"compacting_count":30,"messages":[{"role":"user","content":"hi","ts":"2026-02-17T10:00:00Z"},'
                      b'{"role":"assistant","content":"hello"}]}'),
    (NoteEvent, b'{"id":"n:1","agent":"main","ts":"2026-02-17T10:30:00Z","path":"memory/2026-02-17.md",'
                b'"headings":["Day","Work"],"content":"Shipped the auth migration."}'),
    (FeedbackEvent, b'{"id":"f.1","agent":"main","ts":"2026-02-17T10:30:00Z","kind":"thread_priority",'
                    b'"target":"t1","value":"high","actor":"albert"}'),
    (ToolEvent, b'{"id":"t:1","agent":"main","session":"s1","ts":"2026-02-17T10:30:00Z","tool":"exec",'
                b'"call_id":"call_7","params":{"command":"ls"}}'),
    (ToolEvent, b'{"id":"t:2","agent":"main","session":"s1","ts":"2026-02-17T10:30:01Z","tool":"exec",'
                b'"params":{"command":"ls"},"result":{"content":[{"type":"text","text":"a.md"}]},"duration_ms":35}'),
    (RunEvent, b'{"id":"r:1","agent":"main","session":"s1","ts":"2026-02-17T10:30:00Z","run_id":"run-9",'
               b'"prompt":"What is open?"}'),
    (RunEvent, b'{"id":"r:2","agent":"main","session":"s1","ts":"2026-02-17T10:30:09Z","run_id":"run-9",'
               b'"success":false,"error":"model timeout","duration_ms":9000}'),
]


@pytest.mark.parametrize(("cls", "raw"), EXAMPLES)
def test_contract_examples_decode(cls: type[msgspec.Struct], raw: bytes) -> None:
    event = msgspec.json.decode(raw, type=cls)
    assert event.agent == "main"  # type: ignore[attr-defined]


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    raw = (b'{"id":"e1","agent":"main","session":"s","ts":"2026-02-17T10:30:00Z","role":"user",'
           b'"content":"x","future_field":{"nested":true}}')
    assert msgspec.json.decode(raw, type=MessageEvent).content == "x"


@pytest.mark.parametrize("agent", ["main", "a", "A-b_9", "x" * 64])
def test_valid_agent_ids_pass(agent: str) -> None:
    assert is_valid_agent(agent)


@pytest.mark.parametrize("agent", ["", "a.b", "a*", "a>", "..", "a b", "ümlaut", "x" * 65, "main\n", "a/b"])
def test_agent_id_rule_rejects_bad_ids(agent: str) -> None:
    assert not is_valid_agent(agent)


@pytest.mark.parametrize("event_id", ["", "a b", "a/b", "x" * 129, "id\n", "ä"])
def test_event_id_rule_rejects_bad_ids(event_id: str) -> None:
    assert not is_valid_event_id(event_id)


@pytest.mark.parametrize("ts", ["2026-02-17T10:30:00", "2026-02-17", "yesterday", "2026-13-01T00:00:00Z"])
def test_timestamps_without_offset_or_invalid_are_rejected(ts: str) -> None:
    raw = msgspec.json.encode({"id": "e", "agent": "a", "session": "s", "ts": ts, "role": "user", "content": ""})
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(raw, type=MessageEvent)


def test_session_longer_than_128_characters_is_rejected() -> None:
    raw = msgspec.json.encode({"id": "e", "agent": "a", "session": "s" * 129, "ts": "2026-02-17T10:30:00Z"})
    with pytest.raises(msgspec.ValidationError, match="length"):
        msgspec.json.decode(raw, type=SessionEvent)


def test_wrong_role_is_rejected() -> None:
    raw = msgspec.json.encode({"id": "e", "agent": "a", "session": "s", "ts": "2026-02-17T10:30:00Z",
                               "role": "robot", "content": "x"})
    with pytest.raises(msgspec.ValidationError, match="role"):
        msgspec.json.decode(raw, type=MessageEvent)


def test_tool_event_needs_a_tool_name() -> None:
    raw = msgspec.json.encode({"id": "t", "agent": "a", "session": "s", "ts": "2026-02-17T10:30:00Z", "tool": ""})
    with pytest.raises(msgspec.ValidationError, match="tool"):
        msgspec.json.decode(raw, type=ToolEvent)


def test_checked_in_json_schemas_match_the_structs() -> None:
    """Drift check: regenerate with `python -m schemas.export` after changing a Struct."""
    expected = rendered()
    on_disk = {p.name: p.read_bytes() for p in JSON_DIR.glob("*.schema.json")}
    assert sorted(on_disk) == sorted(expected), "schema files added or removed: run python -m schemas.export"
    for name, data in expected.items():
        assert on_disk[name] == data, f"{name} drifted from its Struct: run python -m schemas.export"
