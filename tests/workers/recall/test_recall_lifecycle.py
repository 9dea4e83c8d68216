"""Lifecycle and tiering, deterministic in event time.

TTL, session-decay and dry-run cases ported from the semantic-memory design's Go tests
(ajitpratap0/openclaw-cortex ``tests/lifecycle_test.go``); consolidation, pinning and
tiering cases are ours (consolidation's are in ``test_recall_consolidation``). The dry run
is checked against the real embedded store.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import msgspec

from workers.recall.embedders import HashingEmbedder
from workers.recall.lifecycle import (
    LifecyclePolicy,
    TieringPolicy,
    apply_lifecycle,
    is_decayed,
    is_expired,
    merge_duplicate,
    plan_lifecycle,
    plan_tiering,
    record_hit,
    select_hot,
)
from workers.recall.models import Memory
from workers.recall.store import MemoryPoint

MakeMemory = Callable[..., Memory]
OpenStore = Callable[..., Any]


def test_ttl_memory_of_one_hour_created_two_hours_ago_expires(make_memory: MakeMemory, now: datetime) -> None:
    expired = make_memory("This should expire", scope="ttl", ttl_hours=1, hours_ago=2)
    fresh = make_memory("This should stay", scope="ttl", ttl_hours=1, hours_ago=10 / 60)
    permanent = make_memory("Permanent memory", hours_ago=720 * 2)
    report = plan_lifecycle([expired, fresh, permanent], now)
    assert report.expired == (expired.id,)
    assert report.deletions == (expired.id,)


def test_ttl_defaults_to_720_hours(make_memory: MakeMemory, now: datetime) -> None:
    assert not is_expired(make_memory("x", scope="ttl", hours_ago=719), now)
    assert is_expired(make_memory("x", scope="ttl", hours_ago=721), now)
    assert is_expired(make_memory("x", scope="ttl", hours_ago=25), now, ttl_hours=24)


def test_session_memory_idle_48_hours_decays(make_memory: MakeMemory, now: datetime) -> None:
    old = make_memory("Old session data", type="episode", scope="session", hours_ago=48)
    recent = make_memory("Recent session data", type="episode", scope="session", hours_ago=1)
    report = plan_lifecycle([old, recent], now)
    assert report.decayed == (old.id,)


def test_session_decay_counts_from_the_last_access(make_memory: MakeMemory, now: datetime) -> None:
    reread = make_memory("created long ago, read an hour ago", scope="session", hours_ago=100, idle_hours=1)
    assert not is_decayed(reread, now)


def test_pinned_memories_never_expire_or_decay(make_memory: MakeMemory, now: datetime) -> None:
    ttl = make_memory("pinned ttl", scope="ttl", ttl_hours=1, hours_ago=5000, pinned=True)
    session = make_memory("pinned session", scope="session", hours_ago=5000, pinned=True)
    assert plan_lifecycle([ttl, session], now).deletions == ()


def test_dry_run_reports_but_deletes_nothing(
    open_store: OpenStore, embedder: HashingEmbedder, make_memory: MakeMemory, now: datetime
) -> None:
    store = open_store()
    expired = make_memory("Should not be deleted in dry run", scope="ttl", ttl_hours=1, hours_ago=2)
    store.upsert([MemoryPoint(expired, embedder.embed_query(expired.content))])
    report = apply_lifecycle(store, "alice", plan_lifecycle([expired], now, LifecyclePolicy(dry_run=True)))
    assert report.dry_run and report.expired == (expired.id,)
    assert store.get("alice", [expired.id]) == [expired]
    apply_lifecycle(store, "alice", plan_lifecycle([expired], now))
    assert store.get("alice", [expired.id]) == []


def test_merge_never_moves_times_backwards(make_memory: MakeMemory) -> None:
    kept = make_memory("a", hours_ago=1, idle_hours=0, position=1)
    older = make_memory("a", hours_ago=100, position=2, pinned=True, tags=("x",))
    merged = merge_duplicate(kept, older)
    assert merged.last_accessed == kept.last_accessed
    assert merged.pinned and merged.tags == ("x",)


def test_the_same_inputs_plan_the_same_way(make_memory: MakeMemory, now: datetime) -> None:
    memories = [make_memory(f"m{i}", scope="ttl", ttl_hours=1, hours_ago=i, position=i) for i in range(5)]
    assert plan_lifecycle(memories, now) == plan_lifecycle(list(reversed(memories)), now)


# --- tiering ---------------------------------------------------------------------------


def test_hot_tier_is_top_n_by_hits_then_last_access(make_memory: MakeMemory, now: datetime) -> None:
    busy = make_memory("busy", access_count=9, idle_hours=30 * 24, position=1)
    recent = make_memory("recent", access_count=3, idle_hours=1, position=2)
    stale = make_memory("stale", access_count=3, idle_hours=5, position=3)
    assert select_hot([stale, busy, recent], now, TieringPolicy(hot_size=2)) == {busy.id, recent.id}


def test_idle_memory_with_few_hits_is_demoted_to_cold(make_memory: MakeMemory, now: datetime) -> None:
    idle = make_memory("idle", access_count=2, idle_hours=15 * 24, tier="hot", position=1)
    idle_but_popular = make_memory("popular", access_count=3, idle_hours=15 * 24, tier="hot", position=2)
    pinned = make_memory("pinned", access_count=0, idle_hours=100 * 24, tier="cold", pinned=True, position=3)
    plan = plan_tiering([idle, idle_but_popular, pinned], now)
    assert plan.demote == (idle.id,)
    assert plan.promote == (pinned.id,)


def test_thresholds_are_parameters(make_memory: MakeMemory, now: datetime) -> None:
    idle = make_memory("idle", access_count=2, idle_hours=3 * 24, tier="hot")
    assert plan_tiering([idle], now).demote == ()
    assert plan_tiering([idle], now, TieringPolicy(cold_idle_days=2)).demote == (idle.id,)
    assert plan_tiering([idle], now, TieringPolicy(cold_idle_days=2, cold_min_hits=1)).demote == ()


def test_a_hit_promotes_and_counts_in_event_time(make_memory: MakeMemory, now: datetime) -> None:
    cold = make_memory("cold", tier="cold", access_count=1, idle_hours=48)
    hit = record_hit(cold, now)
    assert (hit.tier, hit.access_count, hit.last_accessed) == ("hot", 2, now)
    late = record_hit(hit, now - timedelta(hours=1))  # an older feedback event arrives late
    assert late.last_accessed == now
    assert msgspec.structs.replace(late, access_count=2) == hit
