"""The scout's pure parts: its filter without the noisy agents, and what it keeps or passes."""

from __future__ import annotations

from shared.names import OPENCLAW_SESSION_AGENT, SLOTS, slot_of
from shared.scout import Passing, scout_filters


def _agent_in(slot: int, other_than: str = "") -> str:
    return next(f"a{i}" for i in range(10_000) if slot_of(f"a{i}") == slot and f"a{i}" != other_than)


def test_the_noisy_agents_slot_is_left_out_and_its_other_known_agents_named() -> None:
    noisy = _agent_in(5)
    neighbour = _agent_in(5, other_than=noisy)
    filters = scout_filters(["cortex.msg.*.*.*", "cortex.openclaw.*.*.msg_in", "cortex.msg.*.*"], {noisy},
                            {5: {noisy, neighbour}})
    assert "cortex.msg.5.*.*" not in filters and f"cortex.msg.5.{noisy}.*" not in filters
    assert f"cortex.msg.5.{neighbour}.*" in filters and f"cortex.openclaw.5.{neighbour}.msg_in" in filters
    assert {f"cortex.msg.{slot}.*.*" for slot in range(SLOTS) if slot != 5} <= set(filters)
    assert "cortex.msg.*.*" in filters  # the first layout's subjects, as the durable reads them
    assert len(filters) == 2 * (SLOTS - 1) + 2 + 1


def test_a_filter_naming_its_slot_and_agent_is_kept_only_for_a_quiet_agent() -> None:
    noisy = _agent_in(7)
    quiet = _agent_in(7, other_than=noisy)
    assert scout_filters([f"cortex.openclaw.7.{noisy}.msg_in", "cortex.msg.3.*.*"], {noisy}, {7: {noisy, quiet}}) \
        == ["cortex.msg.3.*.*"]
    assert scout_filters([f"cortex.openclaw.7.{quiet}.msg_in"], {noisy}, {7: {noisy, quiet}}) \
        == [f"cortex.openclaw.7.{quiet}.msg_in"]


def test_once_an_agents_message_is_passed_every_later_one_is() -> None:
    passing = Passing("cortex", start=101, quota=3, noisy={"noisy"})
    held = {"busy": 2, "quiet": 0}
    assert passing.sort("cortex.msg.1.noisy.received", 101, held.get) is None
    assert passing.sort("cortex.msg.2.quiet.received", 102, held.get) == "quiet"
    assert passing.sort("cortex.msg.3.busy.received", 103, held.get) == "busy"
    held["busy"] = 3  # its share of the read-ahead reached: passed, and blocked from now on
    assert passing.sort("cortex.msg.3.busy.received", 104, held.get) is None
    held["busy"] = 0
    assert passing.sort("cortex.msg.3.busy.received", 105, held.get) is None
    # an OpenClaw store event under the agent's own id is kept (its duplicate window is the agent's) ...
    assert passing.sort("cortex.openclaw.2.quiet.msg_in", 106, held.get) == "quiet"
    # ... one under the session token is the agent's its session key names (or no agent's: passed)
    session_subject = f"cortex.openclaw.38.{OPENCLAW_SESSION_AGENT}.msg_in"
    assert passing.sort(session_subject, 107, held.get, filed="quiet") == "quiet"
    assert passing.sort(session_subject, 108, held.get, filed="noisy") is None
    assert passing.sort(session_subject, 109, held.get) is None
    held["quiet"] = 3
    assert passing.sort("cortex.msg.2.quiet.received", 110, held.get) is None
    held["quiet"] = 0
    assert passing.sort(session_subject, 111, held.get, filed="quiet") is None
    assert passing.sort("cortex.msg.quiet.received", 112, held.get) is None  # no slot: no agent's lane
    assert passing.top == 112 and passing.blocked == {"noisy", "busy", "quiet"}


def test_a_durable_reading_only_the_noisy_agents_slot_leaves_the_scout_nothing_to_read() -> None:
    """An empty filter would be the whole stream (other workers' events too): the scout does not open."""
    noisy = _agent_in(9)
    assert scout_filters(["cortex.msg.9.*.*"], {noisy}, {9: {noisy}}) == []


def test_in_the_session_tokens_slot_the_token_is_always_named_for_the_store_s_events() -> None:
    """OpenClaw 2026.9 files any agent's messages under the session token: the scout must see
    them (to pass the agent each turns out to be), known to the stream or not, noisy or not."""
    slot = slot_of(OPENCLAW_SESSION_AGENT)
    noisy = _agent_in(slot)
    filters = scout_filters(["cortex.msg.*.*.*", "cortex.openclaw.*.*.msg_in"], {noisy}, {slot: {noisy}})
    assert f"cortex.openclaw.{slot}.{OPENCLAW_SESSION_AGENT}.msg_in" in filters
    assert not any(f".{slot}." in f for f in filters if f.startswith("cortex.msg."))
    assert f"cortex.openclaw.{slot}.{OPENCLAW_SESSION_AGENT}.msg_in" in scout_filters(
        ["cortex.openclaw.*.*.msg_in"], {OPENCLAW_SESSION_AGENT}, {slot: {OPENCLAW_SESSION_AGENT}})
