"""The embedded shard's vector index (issue 39, ``workers.recall.store_index``): built by a child
process on a copy of the shard and put in place with the writes made meanwhile; queries are
answered during the build; what the worker writes does not depend on whether or when it was
built. The thresholds are lowered (``IndexPolicy``) so that a few hundred points are enough."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import numpy as np
import pytest
from cortex_testkit import wait_until

from schemas.events import MessageEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall import store_edge, store_index
from workers.recall.apply import StoreApplier
from workers.recall.embedders import HashingEmbedder
from workers.recall.models import Memory, SearchHit
from workers.recall.store import CollectionInfo, LexicalEncoder, MemoryFilter, MemoryPoint
from workers.recall.store_base import by_similarity
from workers.recall.store_edge import EdgeMemoryStore
from workers.recall.store_index import IndexPolicy, aside, due, new_copy

DIM = 256
# 256 floats are 1 KB: the full-scan threshold in KB is the number of points
SMALL = IndexPolicy(full_scan_kb=150, indexing_kb=1, check_every=100)
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _store(directory: Path, policy: IndexPolicy | None = None) -> EdgeMemoryStore:
    lexical = LexicalEncoder(("en",))
    info = CollectionInfo(embedder="hashing-v1-256", dim=DIM, lexical=lexical.signature)
    return EdgeMemoryStore(str(directory), info, lexical, index=policy)


def _memory(i: int, agent: str = "alice") -> Memory:
    return Memory(id=f"00000000-0000-4000-8000-{i:012d}", agent=agent, content=f"note {i} about topic {i % 37}",
                  type="fact", scope="permanent", confidence=0.9, source_event=f"e{i}",
                  created_at=T0 + timedelta(minutes=i), last_accessed=T0 + timedelta(minutes=i))


def _points(store: EdgeMemoryStore, agent: str, count: int, start: int = 0) -> list[MemoryPoint]:
    embedder = HashingEmbedder(DIM)
    memories = [_memory(i, agent) for i in range(start, start + count)]
    vectors = embedder.embed_documents([m.content for m in memories])
    return [MemoryPoint(m, v) for m, v in zip(memories, vectors, strict=True)]


def _everything(store: EdgeMemoryStore, agent: str) -> list[tuple[bytes, bytes]]:
    """Every point of ``agent``: its memory and its dense vector, byte for byte."""
    memories = sorted(store.scroll(agent), key=lambda m: m.id)
    vectors = store.vectors(agent, [m.id for m in memories])
    return [(msgspec.json.encode(m), np.asarray(vectors[m.id], dtype=np.float32).tobytes()) for m in memories]


def _leftovers(live: Path) -> list[Path]:
    """Anything a build leaves beside the live shard's directory (copies, the old one, a trash)."""
    return sorted(p for p in live.parent.glob(f"{live.name}.*")
                  if p.name.rsplit(".", 1)[1] in ("old", "trash") or ".build-" in p.name)


def test_the_rule_builds_only_for_an_agent_past_the_full_scan_threshold_and_grows_by_half() -> None:
    assert SMALL.full_scan_points(DIM) == 150
    assert not due(SMALL, DIM, points=10_000, indexed=0, largest_agent=149)  # many small agents: never
    assert due(SMALL, DIM, points=150, indexed=0, largest_agent=150)
    assert not due(SMALL, DIM, points=1_400, indexed=1_000, largest_agent=1_400)  # +400 < half of 1 000
    assert due(SMALL, DIM, points=1_500, indexed=1_000, largest_agent=1_500)
    default = IndexPolicy()
    assert default.full_scan_points(384) == 6_666  # Qdrant's 10 000 KB of 384 floats


def test_a_store_past_the_threshold_gets_its_index_and_keeps_every_point(tmp_path: Path) -> None:
    store = _store(tmp_path, SMALL)
    store.upsert(_points(store, "alice", 400))
    store.upsert(_points(store, "bob", 20, start=1_000))
    before = _everything(store, "alice"), _everything(store, "bob")
    assert store.indexed_points() == 0
    store.flush()
    assert store.building
    store.await_index(timeout=120)
    assert not store.building
    assert store.indexed_points() == 420  # the dense vectors are in an indexed segment now
    assert (_everything(store, "alice"), _everything(store, "bob")) == before
    assert _leftovers(tmp_path / store.info.collection) == []
    store.close()
    reopened = _store(tmp_path, SMALL)  # the index is the store's own, on disk
    assert reopened.indexed_points() == 420
    assert (_everything(reopened, "alice"), _everything(reopened, "bob")) == before
    reopened.close()


def test_many_small_agents_get_no_index(tmp_path: Path) -> None:
    store = _store(tmp_path, SMALL)
    for n in range(4):
        store.upsert(_points(store, f"agent-{n}", 100, start=n * 1_000))
    store.flush()
    assert not store.building
    store.close()


def _querying(store: EdgeMemoryStore, vector: np.ndarray) -> tuple[Callable[[], int], list[Exception]]:
    """Search in a thread, one query after the other, for as long as a build is under way."""
    answers: list[int] = []
    failed: list[Exception] = []

    def loop() -> None:
        while store.building:
            try:
                answers.append(len(store.search("alice", vector, limit=5)))
            except Exception as exc:  # the test asserts there is none
                failed.append(exc)

    thread = threading.Thread(target=loop)
    thread.start()

    def answered() -> int:
        thread.join()
        return len(answers)

    return answered, failed


def test_queries_and_writes_go_on_during_the_build_and_the_writes_are_kept(tmp_path: Path) -> None:
    store = _store(tmp_path, SMALL)
    store.upsert(_points(store, "alice", 400))
    store.flush()
    assert store.building
    embedder = HashingEmbedder(DIM)
    hits = store.search("alice", embedder.embed_query("note 7 about topic 7"), text="note 7 about topic 7", limit=5)
    assert hits and hits[0].memory.content == "note 7 about topic 7"
    store.upsert(_points(store, "alice", 5, start=5_000))  # made during the build: applied to the copy too
    store.delete("alice", [_memory(3).id])
    store.set_tier("alice", [_memory(4).id], "cold")
    assert store.building  # all of the above happened while the child was indexing
    during = _everything(store, "alice")
    answered, failed = _querying(store, embedder.embed_query("note 9 about topic 9"))  # until it is in place
    store.await_index(timeout=120)
    assert answered() > 0 and failed == []  # a query waiting while the copy was put in place reads the new shard
    assert store.indexed_points() >= 400
    assert _everything(store, "alice") == during
    assert store.count("alice") == 404
    assert [m.id for m in store.scroll("alice", flt=MemoryFilter(tier="cold"))] == [_memory(4).id]
    store.close()


def test_a_crash_in_the_middle_of_the_swap_leaves_the_whole_old_shard(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.upsert(_points(store, "alice", 30))
    store.flush()
    before = _everything(store, "alice")
    live = tmp_path / store.info.collection
    store.close()
    # the swap had moved the live shard aside and put a copy in place that lacks later writes
    shutil.move(live, aside(live, "old"))
    live.mkdir()
    (live / "junk").write_text("half a shard")
    new_copy(live).mkdir()
    aside(live, "trash").mkdir()
    assert len(_leftovers(live)) == 3
    reopened = _store(tmp_path)
    assert _everything(reopened, "alice") == before
    assert _leftovers(live) == []
    reopened.close()


def _said(seq: int, text: str) -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent="alice", session="s1", ts=T0 + timedelta(minutes=seq), role="user",
                         sender="al", content=text)
    return Envelope(seq=seq, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                    event=event)


def _conversation(count: int) -> list[Envelope]:
    """Statements that are near-duplicates of one another often (capture folds them)."""
    rng = random.Random(3)
    subjects = ["the deploy", "our standup", "the staging cluster", "the release", "the backup job"]
    says = ["Always check {s} before lunch.", "Remember that {s} runs on Fridays.", "I prefer {s} in the morning.",
            "We decided {s} moves to Thursday.", "Never skip {s}."]
    return [_said(i + 1, rng.choice(says).format(s=rng.choice(subjects)) + f" Note {rng.randrange(40)}.")
            for i in range(count)]


def test_what_the_worker_writes_does_not_depend_on_the_index(tmp_path: Path) -> None:
    """The same events into a store indexed half-way and into one never indexed: the same
    points, byte for byte (capture's near-duplicate lookup is exact, ties ordered by id)."""
    events = _conversation(160)
    indexed, plain = _store(tmp_path / "indexed", SMALL), _store(tmp_path / "plain")
    applier = StoreApplier(indexed, HashingEmbedder(DIM), RecallSettings(), ("en",))
    applier.apply_batch(events[:100])
    indexed.flush()
    assert indexed.building
    indexed.await_index(timeout=120)
    assert indexed.indexed_points() > 0
    applier.apply_batch(events[100:])
    StoreApplier(plain, HashingEmbedder(DIM), RecallSettings(), ("en",)).apply_batch(events)
    assert plain.indexed_points() == 0
    assert _everything(indexed, "alice") == _everything(plain, "alice")
    assert any(m.merged_from for m in plain.scroll("alice"))  # near-duplicates were folded
    indexed.close()
    plain.close()


def test_the_near_duplicate_lookup_is_exact_on_an_indexed_store(tmp_path: Path) -> None:
    """Random vectors are where an HNSW index is most approximate: ``nearest`` (what capture's
    dedup reads) finds exactly the brute-force nearest there, indexed or not."""
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((3_000, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store = _store(tmp_path, SMALL)
    store.upsert([MemoryPoint(_memory(i), vectors[i]) for i in range(len(vectors))])
    store.flush()
    store.await_index(timeout=300)
    assert store.indexed_points() == 3_000
    queries = rng.standard_normal((40, DIM)).astype(np.float32)
    for query in queries:
        expected = [_memory(int(i)).id for i in np.argsort(-(vectors @ (query / np.linalg.norm(query))))[:4]]
        assert [hit.memory.id for hit in store.nearest("alice", query, limit=4)] == expected
    store.close()


def test_equally_similar_hits_are_ordered_by_id() -> None:
    hits = [SearchHit(memory=_memory(i), similarity=s, fused=0.0) for i, s in ((5, 0.9), (2, 0.95), (9, 0.9), (1, 0.9))]
    assert [h.memory.id for h in by_similarity(hits)] == [_memory(i).id for i in (2, 1, 5, 9)]


# A worker as the store starts a build: a thread starts the child and waits for it. The child
# asks to die with it, then waits for a signal (the one its parent's death sends), outliving
# any build (a build of a few hundred points ends too soon to be caught running).
_PARENT = """
import subprocess, sys, threading
child = "import signal, sys; from workers.recall.store_index import die_with_parent; " \\
        "die_with_parent(int(sys.argv[1])); print('ready', flush=True); signal.pause()"
def start():
    proc = subprocess.Popen([sys.executable, "-c", child, str(__import__("os").getpid())], stdout=subprocess.PIPE)
    proc.stdout.readline()
    print(proc.pid, flush=True)
    proc.wait()
threading.Thread(target=start).start()
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its new parent to reap it is dead)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
def test_a_build_dies_with_the_worker_that_started_it_even_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert _alive(child)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        wait_until(lambda: not _alive(child), within=30)
    finally:
        parent.kill()
        parent.wait()


def test_a_build_whose_worker_is_gone_before_it_asked_exits() -> None:
    """The signal is asked for after the start: a parent that died in between is seen."""
    other = os.getppid()  # not the child's parent (this process)
    gone = subprocess.run([sys.executable, "-c", "from workers.recall.store_index import die_with_parent; "
                           f"die_with_parent({other})"], capture_output=True, text=True)
    assert gone.returncode == 1 and f"the worker {other} that started this build is gone" in gone.stderr


def test_a_failed_build_is_tried_again_once_the_store_has_grown(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A build that fails (the engine refused it: a full disk, …) leaves the store unindexed
    and working; it is not tried at every look, but again once the store has grown by the
    full-scan threshold since, and then put in place."""
    real = store_index.child_command
    monkeypatch.setattr(store_index, "child_command", lambda *args: [sys.executable, "-c", "raise SystemExit(3)"])
    store = _store(tmp_path, SMALL)
    store.upsert(_points(store, "alice", 400))
    store.flush()
    assert store.building
    store.await_index(timeout=120)
    assert not store.building and store.indexed_points() == 0
    monkeypatch.setattr(store_index, "child_command", real)
    store.upsert(_points(store, "alice", 100, start=400))  # a look, below the threshold since: no build
    store.flush()
    assert not store.building
    store.upsert(_points(store, "alice", 100, start=500))  # 200 more points since the failure (threshold 150)
    store.flush()
    assert store.building
    store.await_index(timeout=120)
    assert store.indexed_points() == 600 and len(list(store.scroll("alice"))) == 600
    assert _leftovers(tmp_path / store.info.collection) == []
    store.close()


def test_a_build_whose_child_cannot_start_is_over_even_when_its_thread_ends_before_the_store_records_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's thread starts the child: one that cannot start (no such program, no memory
    to fork) ends the build at once, from that thread — possibly before the store has
    recorded the build it began (the worker's thread descheduled meanwhile, as under load:
    played here by waiting for the thread first). The store must not be left "building" for
    ever, recording every later write for a copy nobody puts in place and never indexing."""
    monkeypatch.setattr(store_index, "child_command", lambda *args: [str(tmp_path / "no-such-program")])
    begin = store_edge._Build.__init__

    def thread_first(build: store_edge._Build, *args: object) -> None:
        begin(build, *args)  # type: ignore[arg-type]
        build.waiter.join(timeout=1.0)  # the thread ends first, when nothing makes it wait for the store

    monkeypatch.setattr(store_edge._Build, "__init__", thread_first)
    store = _store(tmp_path, SMALL)
    store.upsert(_points(store, "alice", 200))  # past the full-scan threshold (150): a build is due
    store.flush()
    store.await_index(timeout=30)
    assert not store.building
    store.upsert(_points(store, "alice", 1, start=200))
    assert len(list(store.scroll("alice"))) == 201
    store.close()
