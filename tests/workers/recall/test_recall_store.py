"""The store suite, run against the embedded Qdrant Edge engine and, when
``CORTEX_QDRANT_URL`` is set, a Qdrant server. Real engines only: nothing is mocked."""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from qdrant_edge import QueryRequest

from workers.recall.embedders import HashingEmbedder
from workers.recall.models import Memory, SearchHit
from workers.recall.store import (
    CollectionMismatch,
    DimensionMismatch,
    MemoryFilter,
    MemoryPoint,
    MemoryStore,
    StoreError,
    StoreUnavailable,
    open_store,
)
from workers.recall.store_edge import READ_KEYS, SHARES_KEPT, EdgeMemoryStore, MemoryMemo

MakeMemory = Callable[..., Memory]  # fixtures from conftest (importlib mode: not importable)
OpenStore = Callable[..., Any]


def points(embedder: HashingEmbedder, *memories: Memory) -> list[MemoryPoint]:
    vectors = embedder.embed_documents([m.content for m in memories])
    return [MemoryPoint(m, v) for m, v in zip(memories, vectors, strict=True)]


def test_upsert_then_search_finds_the_closest_memory(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    berlin = make_memory("Caroline moved to Berlin in May", position=1)
    pizza = make_memory("Melanie likes pineapple pizza", position=2)
    store.upsert(points(embedder, berlin, pizza))
    hits = store.search("alice", embedder.embed_query("Where did Caroline move?"), text="Where did Caroline move?")
    assert hits[0].memory == berlin
    assert hits[0].similarity > hits[-1].similarity
    assert hits[0].fused > 0
    # each hit reports its exact dense cosine beside the fused score
    query = embedder.embed_query("Where did Caroline move?")
    stored = {m.id: v for m, v in zip((berlin, pizza), embedder.embed_documents([berlin.content, pizza.content]),
                                      strict=True)}
    assert [h.similarity for h in hits] == pytest.approx([float(query @ stored[h.memory.id]) for h in hits], abs=1e-5)
    assert {h.memory.id for h in hits} == {berlin.id, pizza.id}


def test_each_hit_reports_its_bm25_score(store: MemoryStore, embedder: HashingEmbedder,
                                         make_memory: MakeMemory) -> None:
    """The fused score is a rank; the ranking's lexical term needs each hit's BM25 score
    itself (ranking.py, "Lexical weight")."""
    berlin = make_memory("Caroline moved to Berlin in May", position=1)
    pizza = make_memory("Melanie likes pineapple pizza", position=2)
    both = make_memory("Caroline moved, Berlin was her choice, Berlin in May", position=3)
    store.upsert(points(embedder, berlin, pizza, both))
    query = "Where did Caroline move to Berlin?"
    hits = {h.memory.id: h for h in store.search("alice", embedder.embed_query(query), text=query)}
    assert hits[pizza.id].lexical == 0.0  # no shared term
    assert hits[berlin.id].lexical > 0.0
    assert hits[both.id].lexical > 0.0
    dense_only = store.search("alice", embedder.embed_query(query))
    assert {h.lexical for h in dense_only} == {0.0}


def test_agent_never_sees_another_agents_memories(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    mine = make_memory("The launch code is blue", agent="alice")
    theirs = make_memory("The launch code is blue", agent="bob")
    store.upsert(points(embedder, mine, theirs))
    query = embedder.embed_query("launch code")
    assert [h.memory.id for h in store.search("alice", query, text="launch code")] == [mine.id]
    assert [h.memory.id for h in store.search("bob", query, text="launch code")] == [theirs.id]
    # Not even by id: a get, count or delete for alice cannot reach bob's point.
    assert store.get("alice", [theirs.id]) == []
    store.delete("alice", [theirs.id])
    assert store.get("bob", [theirs.id]) == [theirs]
    assert store.count("alice") == 1 and store.count("bob") == 1


def test_filter_narrows_by_type_scope_and_project(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    rule = make_memory("Never deploy on Fridays", type="rule", position=1)
    episode = make_memory("Alice: never deploy on Fridays", type="episode", position=2)
    scoped = make_memory("Deploys of cortex go through staging", type="rule", scope="project", project="cortex")
    store.upsert(points(embedder, rule, episode, scoped))
    query = embedder.embed_query("deploy")
    only_rules = store.search("alice", query, text="deploy", flt=MemoryFilter(types=("rule",)))
    assert {h.memory.id for h in only_rules} == {rule.id, scoped.id}
    assert store.count("alice", MemoryFilter(project="cortex")) == 1
    assert store.count("alice", MemoryFilter(scopes=("permanent",))) == 2


def test_upsert_by_deterministic_id_is_idempotent(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    memory = make_memory("Standup is at 9:30")
    store.upsert(points(embedder, memory))
    store.upsert(points(embedder, memory))
    again = msgspec.structs.replace(memory, access_count=3)
    store.upsert(points(embedder, again))
    assert store.count("alice") == 1
    assert store.get("alice", [memory.id]) == [again]


def test_get_scroll_and_vectors_round_trip_the_memory(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    memories = [make_memory(f"note number {i}", position=i, tags=("x", f"t{i}")) for i in range(7)]
    store.upsert(points(embedder, *memories))
    assert store.get("alice", [memories[3].id, memories[1].id]) == [memories[3], memories[1]]
    assert sorted(m.id for m in store.scroll("alice", page_size=2)) == sorted(m.id for m in memories)
    vectors = store.vectors("alice", [memories[0].id])
    expected = embedder.embed_documents([memories[0].content])[0]
    assert float(vectors[memories[0].id] @ expected) == pytest.approx(1.0, abs=1e-5)


def test_update_payloads_changes_payload_not_vectors(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    memory = make_memory("Ship on Tuesdays")
    store.upsert(points(embedder, memory))
    pinned = msgspec.structs.replace(memory, pinned=True, access_count=5)
    store.update_payloads([pinned])
    assert store.get("alice", [memory.id]) == [pinned]
    hits = store.search("alice", embedder.embed_query("Ship on Tuesdays"))
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_set_tier_moves_the_agents_memories_and_every_read_and_filter_takes_it(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """Tiering moves many memories in one operation on the ``tier`` key alone: reads (get,
    scroll, search) and the tier filter agree with it; another agent's memory never moves."""
    a1, a2, a3 = (make_memory(f"fact {i}", position=i) for i in (1, 2, 3))
    b1 = make_memory("fact 1", agent="bob", position=1)
    store.upsert(points(embedder, a1, a2, a3, b1))
    store.set_tier("alice", [a1.id, a2.id, b1.id], "cold")
    assert [m.tier for m in store.get("alice", [a1.id, a2.id, a3.id])] == ["cold", "cold", "hot"]
    assert sorted(m.id for m in store.scroll("alice", flt=MemoryFilter(tier="cold"))) == sorted([a1.id, a2.id])
    assert store.count("alice", MemoryFilter(tier="hot")) == 1
    assert {h.memory.id: h.memory.tier for h in store.search("alice", embedder.embed_query("fact 1"))}[a1.id] == "cold"
    assert store.get("bob", [b1.id])[0].tier == "hot"
    store.set_tier("alice", [a1.id], "hot")
    assert store.get("alice", [a1.id]) == [a1]


def test_delete_by_ids_and_by_agent(store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory) -> None:
    a1, a2 = make_memory("first", position=1), make_memory("second", position=2)
    b1 = make_memory("first", agent="bob")
    store.upsert(points(embedder, a1, a2, b1))
    store.delete("alice", [a1.id])
    assert [m.id for m in store.scroll("alice")] == [a2.id]
    store.delete_agent("alice")
    assert store.count("alice") == 0
    assert store.count("bob") == 1


def test_every_write_reaches_the_reads_that_rank_after_they_have_read_the_memory(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """The embedded store keeps the memories its searches decode (``MemoryMemo``): each
    kind of write must show in search, nearest and similar once they have read the memory
    before it; another agent's search never gets a memory of this one."""
    query = embedder.embed_query("Ship on Tuesdays")

    def reads() -> list[list[Memory]]:
        return [[h.memory for h in hits] for hits in (
            store.search("alice", query, text="Ship on Tuesdays"), store.nearest("alice", query, limit=8),
            store.similar("alice", query, threshold=0.5))]

    ship, other = make_memory("Ship on Tuesdays", position=1), make_memory("Ship on Tuesdays mostly", position=2)
    store.upsert(points(embedder, ship, other))
    assert all(ship in found for found in reads())
    pinned = msgspec.structs.replace(ship, pinned=True, access_count=3)
    store.update_payloads([pinned])
    assert all(pinned in found and ship not in found for found in reads())
    store.set_tier("alice", [ship.id], "cold")
    assert all(msgspec.structs.replace(pinned, tier="cold") in found for found in reads())
    edited = msgspec.structs.replace(ship, content="Ship on Tuesdays, reviewed")
    store.upsert(points(embedder, edited))
    assert all(edited in found for found in reads())
    store.delete("alice", [ship.id])
    assert all(found == [other] for found in reads())
    assert store.search("bob", query, text="Ship on Tuesdays") == []
    store.delete_agent("alice")
    assert reads() == [[], [], []]
    store.upsert(points(embedder, ship))
    assert all(found == [ship] for found in reads())


def test_every_write_reaches_the_lookups_by_id_after_they_have_read_the_memory(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """The embedded store's lookups by id (``get``, ``get_many``) answer from the memo the
    memories they or an upsert put there: each kind of write must show in them once they have
    read the memory before it; an agent never gets another agent's memory by its id."""
    ship, other = make_memory("Ship on Tuesdays", position=1), make_memory("Ship on Tuesdays mostly", position=2)
    bobs = make_memory("Ship on Tuesdays", agent="bob", position=3)

    def reads() -> list[list[Memory]]:
        many = store.get_many({"alice": [ship.id, other.id, bobs.id], "bob": [ship.id, bobs.id]})
        return [store.get("alice", [ship.id, other.id]), many["alice"], many["bob"]]

    store.upsert(points(embedder, ship, other, bobs))
    assert reads() == [[ship, other], [ship, other], [bobs]]
    pinned = msgspec.structs.replace(ship, pinned=True, access_count=3)
    store.update_payloads([pinned])
    assert reads() == [[pinned, other], [pinned, other], [bobs]]
    store.set_tier("alice", [ship.id], "cold")
    cold = msgspec.structs.replace(pinned, tier="cold")
    assert reads() == [[cold, other], [cold, other], [bobs]]
    edited = msgspec.structs.replace(ship, content="Ship on Tuesdays, reviewed")
    store.upsert(points(embedder, edited))
    assert reads() == [[edited, other], [edited, other], [bobs]]
    store.delete("alice", [ship.id])
    assert reads() == [[other], [other], [bobs]]
    store.delete_agent("alice")
    assert reads() == [[], [], [bobs]]
    store.upsert(points(embedder, ship))
    assert reads() == [[ship], [ship], [bobs]]


def test_a_lookup_by_id_reads_from_the_engine_only_what_the_memo_lacks(
    tmp_path: Path, embedder: HashingEmbedder, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What an upsert wrote is looked up again without the engine (the next batch's step
    restates the turn its reply window holds, or supersedes a claim's memory), and a memory
    read once is not read again until a write changes it; what the memo gives is what the
    engine holds, byte for byte (a store opened afresh reads it from the engine)."""
    store = _edge_store(tmp_path)
    notes = [make_memory(f"Ship the release {i} on Tuesdays", position=i, access_count=i) for i in range(4)]
    store.upsert(points(embedder, *notes))
    engine = EngineCalls(store, monkeypatch)
    ids = [n.id for n in notes]
    written = store.get_many({"alice": ids})["alice"]
    assert written == notes and engine.take() == []
    store.close()
    store = _edge_store(tmp_path)
    engine = EngineCalls(store, monkeypatch)
    read = store.get_many({"alice": ids})["alice"]
    assert engine.take() == [("retrieve", 4)]
    assert [msgspec.json.encode(m) for m in read] == [msgspec.json.encode(m) for m in written]
    assert store.get_many({"alice": ids, "bob": ids}) == {"alice": read, "bob": []}
    assert engine.take() == []
    store.set_tier("alice", ids[:1], "cold")
    engine.take()
    assert store.get_many({"alice": ids})["alice"][0] == msgspec.structs.replace(notes[0], tier="cold")
    assert engine.take() == [("retrieve", 1)]
    store.close()


def test_the_memo_keeps_nothing_a_read_overlapping_a_write_read_and_no_more_than_its_size(
    make_memory: MakeMemory,
) -> None:
    first, second, third = (make_memory(f"fact {i}", position=i) for i in (1, 2, 3))
    memo = MemoryMemo(capacity=2)
    began = memo.generation
    memo.drop([1])  # a write lands while the read is under way
    memo.keep({1: first}, began)
    assert memo.get(1) is None
    memo.keep({1: first, 2: second}, memo.generation)
    memo.keep({3: third}, memo.generation)
    assert (memo.get(1), memo.get(2), memo.get(3)) == (None, second, third)  # the oldest went first
    memo.drop(None)
    assert memo.get(2) is None and memo.get(3) is None


class EngineCalls:
    """The store's engine calls as they pass (each still goes to the real engine): what
    each was, and the payloads a query asked for or the number of points a read read."""

    def __init__(self, store: EdgeMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, object]] = []
        call = store._call

        def recording(what: str, operation: Any, *args: Any) -> Any:
            first: Any = args[0] if args else None
            if isinstance(first, QueryRequest):
                self.calls.append((what, first.with_payload))
            else:
                self.calls.append((what, len(first) if what == "retrieve" else None))
            return call(what, operation, *args)

        monkeypatch.setattr(store, "_call", recording)

    def take(self) -> list[tuple[str, object]]:
        taken, self.calls = self.calls, []
        return taken


def by_id(hits: list[SearchHit]) -> list[SearchHit]:
    """Hits in id order (the engine orders equal fused scores arbitrarily)."""
    return sorted(hits, key=lambda h: h.memory.id)


def _edge_store(tmp_path: Path) -> EdgeMemoryStore:
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    assert isinstance(store, EdgeMemoryStore)
    return store


def test_a_cold_search_takes_the_payloads_with_the_query_and_a_warm_one_reads_only_what_the_memo_lacks(
    tmp_path: Path, embedder: HashingEmbedder, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The memo pays only once it holds enough of a search's hits: an agent's first search
    (a fresh process), and the first after a write emptied the memo, is the query with its
    payloads and the hits' scores (two engine calls, no read after); once the memo held
    enough of the agent's last hits, the query asks for ids only and reads just the missing."""
    store = _edge_store(tmp_path)
    notes = [make_memory(f"Ship the release {i} on Tuesdays", position=i) for i in range(6)]
    store.upsert(points(embedder, *notes, make_memory("Ship the release on Tuesdays", agent="bob")))
    store.close()
    store = _edge_store(tmp_path)  # a fresh process: the memo holds nothing (an upsert keeps what it wrote)
    engine = EngineCalls(store, monkeypatch)
    query, text = embedder.embed_query("Ship the release on Tuesdays"), "ship release Tuesdays"
    cold = [("search", READ_KEYS), ("search", None)]  # the query with its payloads; the hits' scores (one batch)
    first = store.search("alice", query, text=text)
    assert engine.take() == cold and len(first) == 6
    assert by_id(store.search("alice", query, text=text)) == by_id(first)
    assert engine.take() == cold  # the memo held none of the hits of the last search
    assert by_id(store.search("alice", query, text=text)) == by_id(first)
    assert engine.take() == [("search", False), ("search", None)]
    assert store.search("bob", query, text=text)[0].memory.agent == "bob"  # warm is per agent
    assert engine.take() == cold
    pinned = msgspec.structs.replace(notes[2], pinned=True)
    store.update_payloads([pinned])  # one memory leaves the memo: a warm search reads it alone
    engine.take()
    assert pinned in [h.memory for h in store.search("alice", query, text=text)]
    assert engine.take() == [("search", False), ("search", None), ("retrieve", 1)]
    store.delete_agent("bob")  # a write of memories not named one by one empties the memo
    engine.take()
    assert by_id(store.search("alice", query, text=text)) == by_id(
        [msgspec.structs.replace(h, memory=pinned) if h.memory.id == pinned.id else h for h in first])
    assert engine.take() == cold
    store.close()


def test_a_search_whose_hits_the_memo_mostly_lacks_turns_cold_again(
    tmp_path: Path, embedder: HashingEmbedder, make_memory: MakeMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewrites of all of a warm agent's memories: the next search reads them (ids only,
    as the memo said), finds it held none, and the one after takes the payloads again."""
    store = _edge_store(tmp_path)
    notes = [make_memory(f"Ship the release {i} on Tuesdays", position=i) for i in range(6)]
    store.upsert(points(embedder, *notes))
    engine = EngineCalls(store, monkeypatch)
    query, text = embedder.embed_query("Ship the release on Tuesdays"), "ship release Tuesdays"
    for _ in range(2):
        store.search("alice", query, text=text)
    edited = [msgspec.structs.replace(n, access_count=4) for n in notes]
    store.update_payloads(edited)
    engine.take()
    assert set(edited) <= {h.memory for h in store.search("alice", query, text=text)}
    assert engine.take() == [("search", False), ("search", None), ("retrieve", 6)]
    assert set(edited) <= {h.memory for h in store.search("alice", query, text=text)}
    assert engine.take() == [("search", READ_KEYS), ("search", None)]
    store.close()


def test_cold_and_warm_searches_find_the_same_hits(
    tmp_path: Path, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """The same memories, cosines, BM25 scores and fused scores whichever way the payloads
    came (a fresh store against one whose memo holds every hit), with filters and limits."""
    texts = [f"{who} talked about {what} on day {i}" for i, (who, what) in enumerate(
        (w, t) for w in ("Caroline", "Melanie", "Jolene") for t in ("painting", "the lake", "pottery", "adoption"))]
    store = _edge_store(tmp_path)
    store.upsert(points(embedder, *(make_memory(t, position=i, type=("fact", "episode")[i % 2])
                                    for i, t in enumerate(texts))))
    asks = [("What did Caroline paint?", None, 50), ("pottery", MemoryFilter(types=("episode",)), 5),
            ("the lake with Jolene", None, 3)]

    def searches() -> list[list[Any]]:
        return [store.search("alice", embedder.embed_query(q), text=q, flt=flt, limit=limit) for q, flt, limit in asks]

    def above_the_cut(hits: list[Any]) -> dict[str, Any]:
        """The hits by id above the lowest fused score (the engine orders equal fused scores
        arbitrarily and may cut a tie at the limit either way)."""
        return {h.memory.id: h for h in hits if h.fused > hits[-1].fused}

    cold = searches()
    store.close()
    store = _edge_store(tmp_path)
    for _ in range(3):
        warm = searches()
    assert store._memo.warm("alice") and all(cold)
    for cold_hits, warm_hits in zip(cold, warm, strict=True):
        assert above_the_cut(cold_hits) == above_the_cut(warm_hits) and len(cold_hits) == len(warm_hits)
        warm_by_id = {h.memory.id: h for h in warm_hits}
        assert all(warm_by_id[h.memory.id] == h for h in cold_hits if h.memory.id in warm_by_id)
    store.close()


def test_the_memo_remembers_a_bounded_number_of_agents_warm(make_memory: MakeMemory) -> None:
    memo = MemoryMemo()
    memo.note("alice", 30, 50)
    memo.note("bob", 4, 50)  # below WARM_SHARE
    assert memo.warm("alice") and not memo.warm("bob") and not memo.warm("carol")
    for i in range(SHARES_KEPT - 1):
        memo.note(f"agent-{i}", 50, 50)
    assert not memo.warm("alice") and memo.warm("agent-0")  # the oldest went first
    memo.note("agent-0", 0, 0)  # a search that found nothing
    assert not memo.warm("agent-0")
    memo.drop(None)
    assert not memo.warm("agent-1")


def test_a_point_of_the_first_payload_layout_is_found_whole(
    tmp_path: Path, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """Points written before the memory was packed into one key (every field a key of its
    own) are still read by the searches, which ask the engine for the packed key only."""
    from qdrant_edge import Point, SparseVector, UpdateOperation

    store = open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    old = make_memory("Caroline moved to Berlin in May", position=1)
    assert isinstance(store, EdgeMemoryStore)
    dense, indices, values = store._point_vectors(MemoryPoint(old, embedder.embed_query(old.content)))
    payload = msgspec.to_builtins(old)
    store._shard.update(UpdateOperation.upsert_points(
        [Point(old.id, {"dense": dense, "bm25": SparseVector(indices, values)}, payload)]))
    query = embedder.embed_query("Where did Caroline move?")
    assert [h.memory for h in store.search("alice", query, text="Where did Caroline move?")] == [old]
    assert [h.memory for h in store.nearest("alice", query)] == [old]
    store.close()


def test_bm25_matches_a_name_the_dense_vector_misses(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """A dense query for one thing plus text naming a person: fusion brings the person's turn in."""
    filler = [make_memory(f"we talked about topic {i} at length", position=i) for i in range(30)]
    named = make_memory("Jolene: my snake is called Susie", position=99)
    store.upsert(points(embedder, *filler, named))
    dense_only = store.search("alice", embedder.embed_query("we talked about topic"), limit=5)
    assert named.id not in {h.memory.id for h in dense_only}
    fused = store.search("alice", embedder.embed_query("we talked about topic"), text="Jolene", limit=5)
    assert named.id in {h.memory.id for h in fused}


def test_reopening_with_another_dimension_is_refused(open_store: OpenStore) -> None:
    first = open_store("hashing-v1-256", 256)
    first.close()
    with pytest.raises(DimensionMismatch, match="256-dimensional"):
        open_store("hashing-v1-128", 128)


def test_reopening_with_another_embedder_is_refused(open_store: OpenStore) -> None:
    open_store("hashing-v1-256", 256).close()
    with pytest.raises(CollectionMismatch, match="embedded with hashing-v1-256"):
        open_store("some-other-model", 256)


def test_reopening_with_another_bm25_setting_is_refused(open_store: OpenStore) -> None:
    open_store(languages=("en", "de")).close()
    with pytest.raises(CollectionMismatch, match="BM25"):
        open_store(languages=("de",))


def test_reopening_with_the_same_settings_keeps_the_points(
    open_store: OpenStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    store = open_store()
    store.upsert(points(embedder, make_memory("persisted")))
    store.flush()
    store.close()
    assert open_store().count("alice") == 1


def test_a_vector_of_the_wrong_dimension_is_refused(store: MemoryStore, make_memory: MakeMemory) -> None:
    with pytest.raises(DimensionMismatch):
        store.upsert([MemoryPoint(make_memory("short"), [0.1] * 8)])
    with pytest.raises(DimensionMismatch):
        store.search("alice", [0.1] * 8)


# --- embedded-engine specifics ---------------------------------------------------------


def test_a_second_process_on_the_same_directory_is_told_to_wait(tmp_path: Path) -> None:
    first = open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    try:
        with pytest.raises(StoreUnavailable, match="WouldBlock"):
            open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    finally:
        first.close()
    # Once the active instance lets go, the standby opens it.
    open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256).close()


def test_the_writability_asked_at_every_commit_makes_no_path_and_looks_for_a_directory_only_when_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``writable`` runs at every commit (a batch of one to three events at a live rate): one
    ``access(2)`` per directory, a directory looked for only when refused (a missing one is not in
    the way: nothing to write there yet), no ``Path`` made or asked."""
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    try:
        assert isinstance(store, EdgeMemoryStore)
        shard = tmp_path / "qdrant" / store._name
        dirs = [str(tmp_path / "qdrant"), str(shard), str(shard / "wal"), str(shard / "segments")]
        asked: list[str] = []
        looked: list[str] = []
        access, exists = os.access, os.path.exists
        refused: set[str] = set()
        missing: set[str] = set()

        def fake_access(path: Any, mode: int) -> bool:
            asked.append(str(path))
            return str(path) not in refused and access(path, mode)

        def fake_exists(path: Any) -> bool:
            looked.append(str(path))
            return str(path) not in missing and exists(path)

        def no_path(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a Path asked at a commit")

        monkeypatch.setattr(os, "access", fake_access)
        monkeypatch.setattr(os.path, "exists", fake_exists)
        monkeypatch.setattr(pathlib.Path, "exists", no_path)
        monkeypatch.setattr(pathlib.Path, "__truediv__", no_path)
        assert store.writable()
        assert asked == dirs and looked == []  # every directory asked once, none looked for
        asked.clear()
        refused.add(dirs[2])
        assert not store.writable()  # the write-ahead log's directory refuses
        assert looked == [dirs[2]]
        missing.add(dirs[2])
        assert store.writable()  # refused because it is not there: nothing in the way
        refused.add(dirs[0])
        missing.clear()
        assert not store.writable()
    finally:
        monkeypatch.undo()
        store.close()


def test_an_unwritable_data_dir_is_transient(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data dir should be")
    with pytest.raises(StoreUnavailable):
        open_store(url=None, data_dir=str(blocker), embedder_name="hashing-v1-256", dim=256)


def test_an_immutable_store_is_transient_at_open(tmp_path: Path) -> None:
    """``chattr +i`` (EPERM, where permission bits give EACCES) is an operator's "not now" too.
    (A store made immutable under a running engine is not survivable: its memory-mapped
    writes die with SIGBUS; docs/reliability.md.)"""
    open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256).close()
    store_dir = str(tmp_path / "qdrant")
    if subprocess.run(["chattr", "-R", "+i", store_dir], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (needs CAP_LINUX_IMMUTABLE and an ext4/xfs-like filesystem)")
    try:
        with pytest.raises(StoreUnavailable, match="Operation not permitted"):
            open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    finally:
        subprocess.run(["chattr", "-R", "-i", store_dir], check=True)
    open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256).close()


def test_open_store_without_url_is_the_embedded_engine_under_the_data_dir(tmp_path: Path) -> None:
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    try:
        assert isinstance(store, EdgeMemoryStore)
        assert (tmp_path / "qdrant" / "cortex_memories.json").exists()
        assert store.info.dim == 256 and store.info.embedder == "hashing-v1-256"
    finally:
        store.close()


def test_metadata_without_a_shard_is_completed_on_open(tmp_path: Path) -> None:
    """A crash between writing the metadata and creating the shard is not fatal."""
    open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256).close()
    shutil.rmtree(tmp_path / "qdrant" / "cortex_memories")
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)
    try:
        assert store.count("alice") == 0
    finally:
        store.close()


def test_a_shard_without_metadata_is_refused(tmp_path: Path) -> None:
    open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256).close()
    (tmp_path / "qdrant" / "cortex_memories.json").unlink()
    with pytest.raises(StoreError, match=r"without cortex_memories\.json"):
        open_store(url=None, data_dir=str(tmp_path), embedder_name="hashing-v1-256", dim=256)


def test_an_id_that_is_not_a_uuid_is_bad_input(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="not a memory id"):
        store.get("alice", ["../../etc/passwd"])


def test_nearest_is_the_dense_search_with_its_cosines(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """A near-duplicate's lookup: one dense query, the same memories and cosines as the
    fused search without text, of the agent and the filter only."""
    memories = [make_memory(text, position=i, type="rule" if i % 2 else "fact") for i, text in enumerate(
        ["deploy on Fridays", "never deploy on Fridays", "deploy on Mondays", "the cache is Redis", "ship it"])]
    store.upsert(points(embedder, *memories, make_memory("deploy on Fridays", agent="bob")))
    query = embedder.embed_query("deploy on Fridays")
    for flt in (None, MemoryFilter(types=("fact",))):
        near = store.nearest("alice", query, flt=flt, limit=3)
        fused = store.search("alice", query, flt=flt, limit=3)
        assert [h.memory for h in near] == [h.memory for h in fused]
        assert [h.similarity for h in near] == pytest.approx([h.similarity for h in fused], abs=1e-6)
        assert all(h.memory.agent == "alice" for h in near) and near[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_similar_finds_every_memory_at_the_threshold_by_exact_search(
    store: MemoryStore, embedder: HashingEmbedder, make_memory: MakeMemory
) -> None:
    """Upkeep's neighbours (``workers.recall.upkeep``): all of the agent's memories the
    filter selects at the threshold or above, most similar first, and only those."""
    texts = ["deploy on Fridays", "never deploy on Fridays", "deploy on Mondays", "the cache is Redis", "ship it"]
    memories = [make_memory(text, position=i) for i, text in enumerate(texts)]
    store.upsert(points(embedder, *memories, make_memory("deploy on Fridays", agent="bob")))
    query = embedder.embed_query("deploy on Fridays")
    every = store.nearest("alice", query, limit=10)
    for threshold in (-1.0, 0.3, 0.99):
        found = store.similar("alice", query, threshold=threshold)
        assert [h.memory for h in found] == [h.memory for h in every if h.similarity >= threshold]
    assert len(store.similar("alice", query, threshold=-1.0, limit=2)) == 2
    assert store.similar("alice", query, threshold=-1.0, flt=MemoryFilter(types=("rule",))) == []


_WRITE_THEN_DIE = """
import os, signal, sys
from datetime import UTC, datetime
from workers.recall.embedders import HashingEmbedder
import msgspec
from workers.recall.models import Memory, memory_id
from workers.recall.store import MemoryPoint, open_store

store = open_store(url=None, data_dir=sys.argv[1], embedder_name="hashing-v1-256", dim=256)
embedder = HashingEmbedder(256)
ts = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
memories = [Memory(id=memory_id("alice", f"evt-{i}", 0), agent="alice", content=f"memory number {i} about deploys",
                   type="fact", scope="permanent", confidence=0.9, source_event=f"evt-{i}", created_at=ts,
                   last_accessed=ts, last_seq=i) for i in range(40)]
ids = [m.id for m in memories]
vectors = embedder.embed_documents([m.content for m in memories])
store.upsert([MemoryPoint(m, v) for m, v in zip(memories, vectors, strict=True)])
store.set_tier("alice", ids[:10], "cold")
store.update_payloads([msgspec.structs.replace(m, access_count=3) for m in memories[10:15]])
store.delete("alice", ids[35:])
if sys.argv[2] == "sync":
    store.flush()
    store.close()
else:
    os.kill(os.getpid(), signal.SIGKILL)  # no sync, no close: what the engine's log holds
"""


def _written(tmp_path: Path, how: str) -> list[Any]:
    """The store a process left behind after the same writes: synced and closed, or killed
    right after them without a sync."""
    data_dir = tmp_path / how
    proc = subprocess.run([sys.executable, "-c", _WRITE_THEN_DIE, str(data_dir), how], capture_output=True)
    assert proc.returncode == (0 if how == "sync" else -signal.SIGKILL), proc.stderr.decode()[-2000:]
    store = open_store(url=None, data_dir=str(data_dir), embedder_name="hashing-v1-256", dim=256)
    try:
        return sorted((m.id, msgspec.json.encode(m)) for m in store.scroll("alice"))
    finally:
        store.close()


def test_writes_a_killed_process_never_synced_are_all_there_when_the_store_is_opened_again(tmp_path: Path) -> None:
    """What lets the recall worker sync its shard only every few seconds while busy: each write
    is in the engine's write-ahead log when the call returns, and a process killed before any
    sync leaves a store that opens with every write (upserts, tier moves, payload rewrites,
    deletes) exactly as a synced one."""
    synced = _written(tmp_path, "sync")
    killed = _written(tmp_path, "kill")
    assert len(synced) == 35 and killed == synced
    assert sum(b'"tier":"cold"' in m for _, m in killed) == 10
    assert sum(b'"access_count":3' in m for _, m in killed) == 5
