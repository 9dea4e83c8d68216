"""Upkeep from what changed since the last one (``workers.recall.upkeep``) stores what upkeep
over every memory of the agent stores, byte for byte: on a stream of two agents' sessions
with repeated and paraphrased turns, near-duplicate statements of several types said across
session starts, hits, pins, forgets and memories that expire, decay or go cold — in one
batch, event by event, restarted midway, and against a run that reads every memory at
every upkeep (as before, and as a restarted process's first upkeep does)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from schemas.events import FeedbackEvent, MessageEvent, SessionEvent
from schemas.types import FeedbackKind
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall import apply
from workers.recall.apply import StoreApplier
from workers.recall.embedders import Embedder, make_embedder
from workers.recall.lifecycle import TieringPolicy, plan_tiering
from workers.recall.models import Memory, memory_id
from workers.recall.store import MemoryFilter, MemoryStore
from workers.recall.upkeep import AgentMemo

OpenStore = Callable[..., MemoryStore]
T0 = datetime(2026, 4, 1, 8, 0, tzinfo=UTC)
AGENTS = ("alice", "bob")
SETTINGS = RecallSettings(hot_size=4, cold_idle_days=3, cold_min_hits=2, session_decay_hours=30, ttl_hours=100)

TURNS = ["Thanks!", "thanks", "Thank you so much!", "I finished the migration.", "Finished the migration!",
         "Deploying the release now.", "Is the build green?", "The build is green.", "Ok.", "ok",
         "Server alpha is down.", "Server beta is down.", "We always deploy on Tuesdays.",
         "We never deploy on Fridays.", "The standup moved to 10:00.", "The standup is at 9:30."]
REMEMBERED = [("Remember: always run the migrations before the deploy.", "procedure", "permanent"),
              ("Always run the migrations before deploying.", "rule", "permanent"),
              ("The staging database runs on port 5433.", "fact", "permanent"),
              ("The staging database runs on port 5433", "fact", "permanent"),
              ("Staging's database listens on port 5433.", "fact", "permanent"),
              ("Always review the pull request before merging.", "rule", "permanent"),
              ("Review every pull request before it is merged.", "procedure", "permanent"),
              ("The demo link works until Friday.", "fact", "ttl"),
              ("I am on call this session.", "fact", "session")]


def _envelope(seq: int, agent: str, family: str, kind: str, event: Any) -> Envelope:
    return Envelope(seq=seq, subject=f"cortex.{family}.{agent}.{kind}", family=family, kind=kind, agent=agent,
                    event=event)


def stream(seed: int = 7, length: int = 160) -> list[Envelope]:
    """Two agents' sessions over about two months of event time (deterministic)."""
    rng = random.Random(seed)
    hours = 0.0
    sessions = dict.fromkeys(AGENTS, 0)
    said: dict[str, list[str]] = {a: [] for a in AGENTS}  # the agents' memory ids so far
    out: list[Envelope] = []
    for seq in range(1, length + 1):
        hours += rng.choice([0.05, 0.2, 1.0, 5.0, 20.0, 60.0])
        ts = T0 + timedelta(hours=hours)
        agent = rng.choice(AGENTS)
        roll = rng.random()
        if roll < 0.1:
            sessions[agent] += 1
            out.append(_envelope(seq, agent, "session", "start",
                                 SessionEvent(id=f"s{seq}", agent=agent, session=f"s{sessions[agent]}", ts=ts)))
        elif roll < 0.25:
            text, mtype, scope = rng.choice(REMEMBERED)
            out.append(_envelope(seq, agent, "feedback", "remember", FeedbackEvent(
                id=f"r{seq}", agent=agent, ts=ts, kind="remember", value={"content": text, "type": mtype,
                                                                          "scope": scope})))
            said[agent].append(memory_id(agent, f"r{seq}", 0))
        elif roll < 0.38 and said[agent]:
            kind: FeedbackKind = rng.choice(["recall_access", "recall_access", "recall_access", "memory_pin",
                                             "memory_forget"])
            ids = rng.sample(said[agent], min(len(said[agent]), rng.choice([1, 2, 3])))
            value: Any = ids if kind == "recall_access" else None
            out.append(_envelope(seq, agent, "feedback", kind, FeedbackEvent(
                id=f"f{seq}", agent=agent, ts=ts, kind=kind, value=value,
                target=None if kind == "recall_access" else ids[0])))
        else:
            out.append(_envelope(seq, agent, "msg", "received", MessageEvent(
                id=f"m{seq}", agent=agent, session=f"s{sessions[agent]}", ts=ts, role="user",
                sender=rng.choice(["al", "al", "bo"]), content=rng.choice(TURNS))))
            said[agent].append(memory_id(agent, f"m{seq}", 0))
    return out


def snapshot(store: MemoryStore) -> list[bytes]:
    return sorted(msgspec.json.encode(m) for agent in AGENTS for m in store.scroll(agent))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The agents whose upkeep read every memory (``plan_maintenance``), in order."""
    full: list[str] = []
    plan = apply.plan_maintenance

    def counting(store: MemoryStore, agent: str, *args: Any, **kwargs: Any) -> Any:
        full.append(agent)
        return plan(store, agent, *args, **kwargs)

    monkeypatch.setattr(apply, "plan_maintenance", counting)
    yield full


def _applier(store: MemoryStore, embedder: Embedder, *, memos: bool = True) -> StoreApplier:
    app = StoreApplier(store, embedder, SETTINGS, ("en", "de"))
    if not memos:
        app.memos.limit = 0  # no memo is kept: every upkeep reads every memory, as before
    return app


def test_upkeep_from_the_changes_stores_what_upkeep_over_everything_stores(
    open_store: OpenStore, counted: list[str]
) -> None:
    events = stream()
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    outcome = _applier(store, embedder, memos=False).apply_batch(events)
    assert outcome.consolidated >= 5 and outcome.expired >= 2 and outcome.demoted >= 5  # the stream exercises it
    everything = snapshot(store)
    ran = {e.seq for e in events if e.family == "session"} | {e.seq for e in outcome.upkeep}
    starts = [e.agent for e in events if e.seq in ran]  # session starts, and messages due for upkeep
    assert counted == starts  # every upkeep read every memory
    counted.clear()

    store.delete_agent("alice")
    store.delete_agent("bob")
    incremental = _applier(store, embedder)
    assert incremental.apply_batch(events).consolidated == outcome.consolidated
    assert snapshot(store) == everything
    assert counted == list(dict.fromkeys(starts))  # only each agent's first upkeep read them all
    counted.clear()
    later = events[-1].event.ts
    for agent in AGENTS:  # the RecallDoc's counts from the memo, as the store counts them
        assert incremental.memos.peek(agent) is not None
        assert incremental.key_memories(agent, later) == _applier(store, embedder).key_memories(agent, later)

    for agent in AGENTS:
        store.delete_agent(agent)
    one_by_one = _applier(store, embedder)
    for env in events[:90]:
        one_by_one.apply_batch([env])
    restarted = _applier(store, embedder)  # a new process: its first upkeep of each agent reads everything
    for first in range(90, len(events), 7):
        restarted.apply_batch(events[first: first + 7])
    assert snapshot(store) == everything


def test_a_replay_over_the_store_in_the_same_process_stores_what_upkeep_over_everything_does(
    open_store: OpenStore
) -> None:
    """The applier's memos were kept through the first run; a replay's upkeeps at earlier
    sequences read everything again (a memo only plans an upkeep after its own), and the
    store ends as without memos. (Not as after the first run: a replay's tiering sees the
    memories the first run made after it — the store's state before this change too.)"""
    events = stream(seed=11, length=100)
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    replays = []
    for memos in (False, True):
        app = _applier(store, embedder, memos=memos)
        app.apply_batch(events)
        app.apply_batch(events)
        replays.append(snapshot(store))
        for agent in AGENTS:
            store.delete_agent(agent)
    assert replays[0] == replays[1]


def test_a_lookup_by_id_asks_the_store_only_for_what_the_agents_memo_holds(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's memo holds every memory of the agent as stored (its counts are read from
    it): a lookup by id answers the ids it does not hold without the store (a step's new
    memories, the read before their first write), and the others as the store does."""
    events = stream(seed=5, length=80)
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    app = _applier(store, embedder)
    app.apply_batch(events)
    real = store.get
    asked: list[list[str]] = []
    monkeypatch.setattr(store, "get", lambda agent, ids: (asked.append(list(ids)), real(agent, ids))[1])
    for agent in AGENTS:
        memo = app.memos.peek(agent)
        assert memo is not None
        held = sorted(m.id for m in store.scroll(agent))
        assert sorted(memo.kept) == held and len(held) >= 5
        new = [str(uuid.uuid4()) for _ in range(3)]
        asked.clear()
        assert app.store.get(agent, new) == [] and asked == []
        other = "bob" if agent == "alice" else "alice"  # another agent's memory is not this one's
        mixed = [*new, *held[:5], sorted(m.id for m in store.scroll(other))[0]]
        assert sorted(m.id for m in app.store.get(agent, mixed)) == held[:5]
        assert app.store.get(agent, mixed) == real(agent, mixed)
        assert asked[0] == held[:5]


def test_the_memo_knows_the_memories_a_claim_scroll_finds(open_store: OpenStore) -> None:
    """What a step reads of the memories a new statement may supersede (its claims' current
    memories and those superseded by the step's candidates) is what the two scrolls by claim
    find, taken from the agent's memo (tests/workers/recall/test_recall_supersede.py runs
    the supersedes themselves through it)."""
    events = stream(seed=5, length=160)
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    app = _applier(store, embedder)
    app.apply_batch(events)
    for agent in AGENTS:
        memo = app.memos.peek(agent)
        assert memo is not None and memo.claims
        claims = sorted(memo.claims)
        superseding = sorted({m.superseded_by for m in store.scroll(agent) if m.superseded_by is not None})
        for keys, by in [(claims, ()), (claims, superseding), (claims[:1], superseding[:1]), (["no such claim"], ())]:
            current = MemoryFilter(claims=tuple(keys), current=True)
            by_them = MemoryFilter(claims=tuple(keys), superseded_by=tuple(by))
            scrolled = {m.id for m in [*store.scroll(agent, flt=current), *store.scroll(agent, flt=by_them)]}
            found = app.tracked.claimed_ids(agent, keys, by)
            assert found is not None and sorted(found) == sorted(scrolled)
    assert app.tracked.claimed_ids("nobody", claims, ()) is None  # no memo: the scrolls


def test_a_failed_batch_drops_the_memos(open_store: OpenStore) -> None:
    """A batch that fails may have planned an upkeep it did not write, or written part of
    one: the next upkeep of every agent reads everything."""
    events = stream(seed=3, length=60)
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    app = _applier(store, embedder)
    app.apply_batch(events)
    assert any(app.memos.get(agent) is not None for agent in AGENTS)
    store.close()  # the next batch fails
    with pytest.raises(Exception):  # noqa: B017 - whichever error the closed engine raises
        app.apply_batch([_envelope(61, "alice", "msg", "received", MessageEvent(
            id="m61", agent="alice", session="s9", ts=T0 + timedelta(days=90), role="user", sender="al",
            content="One more thing."))])
    assert all(app.memos.get(agent) is None for agent in AGENTS)


def test_the_memos_ranking_plans_the_tiers_as_sorting_every_memory_does() -> None:
    """Hits, pins, equal access times and idle runs at every hit count, writes and deletes in
    between: the ranking's hot set is ``select_hot``'s at every time and size asked."""
    rng = random.Random(5)
    memo = AgentMemo(seq=1)
    for step in range(400):
        memory_no = rng.randrange(120)
        if rng.random() < 0.15:
            memo.remove(memory_id("alice", f"e{memory_no}", 0))
            continue
        accessed = T0 + timedelta(hours=rng.choice([0, 0, 5, 30, 200, 400]) + rng.randrange(3))
        memo.put(Memory(id=memory_id("alice", f"e{memory_no}", 0), agent="alice", content=f"m{step}", type="fact",
                        scope="permanent", confidence=0.5, source_event=f"e{memory_no}", created_at=T0,
                        last_accessed=accessed, access_count=rng.choice([0, 0, 1, 2, 3, 7]),
                        pinned=rng.random() < 0.05, tier=rng.choice(["hot", "cold"])))
        if step % 20 == 0:
            for now_days, size, hits in [(1, 4, 2), (10, 10, 3), (30, 50, 0), (3, 0, 1)]:
                policy = TieringPolicy(hot_size=size, cold_idle_days=now_days // 2 + 1, cold_min_hits=hits)
                now = T0 + timedelta(days=now_days)
                assert memo.tiering(now, policy) == plan_tiering(list(memo.kept.values()), now, policy)


def _agent_forget(seq: int, agent: str, ts: datetime) -> Envelope:
    """`cortex forget AGENT`'s marker: every memory of the agent goes."""
    return _envelope(seq, agent, "feedback", "memory_forget", FeedbackEvent(
        id=f"forget-{seq}", agent=agent, ts=ts, kind="memory_forget", value="all"))


def _stream_with_a_forget() -> list[Envelope]:
    """200 events of seed 11 as envelopes, with a forget of the whole of alice at the 121st."""
    events = stream(seed=11, length=200)
    at = 120
    events = [*events[:at], _agent_forget(0, "alice", events[at].event.ts + timedelta(seconds=1)), *events[at:]]
    return [_envelope(n, e.agent, e.family, e.kind, e.event) for n, e in enumerate(events, 1)]


def test_the_memos_are_the_store_after_every_event(open_store: OpenStore) -> None:
    """What a memo says after each event — the agent's memories, the hot tier, the RecallDoc's
    hot and total counts — is what the store holds then: merges, supersessions, pins, forgets
    (one of the whole agent among them), expiry and tier moves, event by event."""
    events = _stream_with_a_forget()
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    app = _applier(store, embedder)
    compared = 0
    for env in events:
        app.apply_batch([env])
        for agent in AGENTS:
            memo = app.memos.peek(agent)
            if memo is None:
                continue  # none yet (or dropped by the forget): the counts come from the store itself
            compared += 1
            assert set(memo.kept) == {m.id for m in store.scroll(agent)}, env.seq
            assert memo.hot == {m.id for m in store.scroll(agent, flt=MemoryFilter(tier="hot"))}, env.seq
            shown = app.key_memories(agent, env.event.ts)
            assert (shown.hot, shown.hot + shown.cold) == (store.count(agent, MemoryFilter(tier="hot")),
                                                           store.count(agent)), env.seq
    assert compared > 200


def test_the_counts_kept_without_a_memo_are_the_store_and_an_access_asks_it_nothing(
        open_store: OpenStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """No memo kept (an agent upkeep has not met, or one past the memos' bound): the RecallDoc's
    total is the applier's count, kept from its writes — new turns and windows, redeliveries,
    merges, forgets (of the whole agent too) — and equal to the store's after every event; a
    batch of accesses alone (a query's) asks the store for no exact count of the agent."""
    events = _stream_with_a_forget()
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    app = _applier(store, embedder, memos=False)
    for i, env in enumerate(events):
        app.apply_batch(events[i - 1: i + 1] if i % 7 == 3 else [env])  # a redelivery now and then
        for agent in AGENTS:
            shown = app.key_memories(agent, env.event.ts)
            assert shown.hot + shown.cold == store.count(agent), env.seq
    exact: list[str] = []
    counting = store.count
    monkeypatch.setattr(store, "count", lambda agent, flt=None: (flt is None and exact.append(agent),
                                                                 counting(agent, flt))[1])
    ids = [m.id for m in store.scroll("bob")][:3]
    access = FeedbackEvent(id="f-last", agent="bob", ts=events[-1].event.ts, kind="recall_access", value=ids)
    app.apply_batch([_envelope(len(events) + 1, "bob", "feedback", "recall_access", access)])
    assert app.key_memories("bob", access.ts).hot + app.key_memories("bob", access.ts).cold == counting("bob")
    assert ids and exact == []


def test_an_agents_summary_reads_are_kept_until_a_write_may_change_them_and_equal_the_stores(
    open_store: OpenStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a live rate each batch holds a few events and every agent it touches has its summary
    (``key_memories``) made again: its two scrolls (current rules, recalled hot memories) are
    kept until a write may change them (``TrackedStore.shown``). Batch by batch over a stream
    of turns, remembered rules, hits, pins, forgets and session starts (tiering, consolidation),
    every summary equals one read from the store afresh — and a batch of plain turns asks the
    store nothing for it."""
    events = stream(seed=3, length=200)
    embedder = make_embedder("default")
    store = open_store(embedder.name, embedder.dim)
    app = _applier(store, embedder)
    real = store.scroll
    asked: list[str] = []

    def scroll(agent: str, *, flt: MemoryFilter | None = None, page_size: int = 256) -> Any:
        if flt is not None and (flt.types == ("rule",) or flt.accessed):
            asked.append(agent)
        return real(agent, flt=flt, page_size=page_size)

    monkeypatch.setattr(store, "scroll", scroll)
    kept_reads = 0
    for first in range(0, len(events), 3):
        batch = events[first: first + 3]
        app.apply_batch(batch)
        now = batch[-1].event.ts
        for agent in sorted({e.agent for e in batch}):
            asked.clear()
            summary = app.key_memories(agent, now)
            kept_reads += not asked
            assert summary == _applier(store, embedder).key_memories(agent, now), (first, agent)
        for agent in AGENTS:  # what is kept is what the store holds, shown or not
            shown = app.tracked.shown(agent)
            assert (shown.rules, shown.hot) == (
                list(real(agent, flt=MemoryFilter(types=("rule",), current=True))),
                list(real(agent, flt=MemoryFilter(tier="hot", current=True, accessed=True)))), (first, agent)
    assert kept_reads >= 20  # most summaries read nothing again
    rules = [m for agent in AGENTS for m in real(agent, flt=MemoryFilter(types=("rule",), current=True))]
    accessed = [m for agent in AGENTS for m in real(agent, flt=MemoryFilter(accessed=True))]
    assert rules and accessed  # the stream exercises both lists
    for agent in AGENTS:  # plain turns: the summary is not read again
        app.key_memories(agent, events[-1].event.ts)
        seq = events[-1].seq + (1 if agent == "alice" else 2)
        turn = _envelope(seq, agent, "msg", "received", MessageEvent(
            id=f"late-{agent}", agent=agent, session="s-late", ts=events[-1].event.ts, role="user", sender="al",
            content="The new dashboard loads much faster now."))
        app.apply_batch([turn])
        asked.clear()
        summary = app.key_memories(agent, turn.event.ts)
        assert asked == []  # its memories: no rule, never recalled
        assert summary == _applier(store, embedder).key_memories(agent, turn.event.ts)
