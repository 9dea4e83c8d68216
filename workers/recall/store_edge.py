"""Embedded backend: the in-process Qdrant Edge engine (``qdrant-edge-py``) under a directory.

Layout under the store directory::

    cortex_memories/        the Edge shard (segments + WAL)
    cortex_memories.json    CollectionInfo: embedder, dimension, BM25 setting
    cortex_memories.build-<id>/, .old/, .trash/
                            only while the vector index is built beside the store
                            (``workers.recall.store_index``)

and likewise ``cortex_shadow_memories/`` and its ``.json`` for a worker in shadow mode
(each collection's shard has its own WAL lock: a live and a shadow worker both run).

The shard takes an exclusive lock on its WAL, so a second process opening the same
directory gets :class:`StoreUnavailable` (it is a standby; it retries until the active
instance lets go). Calls are serialised by a lock: the worker may call from threads.
Writes and flushes also hold a second lock, which the copy for an index build holds
instead of the first (reads go on meanwhile): ``workers.recall.store_index``.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from qdrant_edge import CountRequest as EdgeCountRequest
from qdrant_edge import (
    EdgeShard,
    FacetRequest,
    FieldCondition,
    Filter,
    Fusion,
    HasIdCondition,
    IdfParams,
    IsEmptyCondition,
    KeywordIndexParams,
    MatchAny,
    MatchValue,
    PayloadSchemaType,
    Point,
    Prefetch,
    Query,
    QueryBatchRequest,
    QueryRequest,
    RangeFloat,
    ScoredPoint,
    ScrollRequest,
    SearchParams,
    SparseVector,
    UpdateOperation,
)

from workers.recall import store_index, vocabulary
from workers.recall.models import PACKED, Memory, SearchHit, Tier, memory_from_payload, memory_to_payload
from workers.recall.store_base import (
    DENSE,
    INDEXED_FIELDS,
    RANGE_FIELDS,
    RRF_K,
    SPARSE,
    AtLeast,
    CollectionInfo,
    Condition,
    DimensionMismatch,
    FloatVector,
    LexicalEncoder,
    MemoryFilter,
    MemoryPoint,
    StoreBase,
    StoreError,
    StoreUnavailable,
    by_similarity,
    check_compatible,
    conditions,
    engine_id,
    point_ids,
    point_uuid,
)
from workers.recall.store_index import IndexPolicy

log = logging.getLogger(__name__)

# Engine errors are plain ``Exception``s; these message fragments mean "not now" rather
# than "never": a held lock, permissions (EACCES; EPERM for immutable files), a full or
# read-only disk.
_TRANSIENT_MARKERS = ("WouldBlock", "Permission denied", "Operation not permitted", "Read-only file system",
                      "No space left", "Resource busy")

# Decoded memories a store keeps by point id (a LoCoMo memory ~2-3 KB in Python: ~40 MB at most).
MEMO_SIZE = 16_384
# A search asks for ids only (and reads just the payloads the memo lacks) when the memo held
# at least this share of the hits of the agent's last search; below it the payloads come
# with the query, one engine call less. The break-even is near a tenth (CPU per search over
# LoCoMo 0-4's 760 dev questions, payloads with the query / ids only: none held 2 549 /
# 2 603 µs, a tenth 2 492 / 2 471, a third 2 404 / 2 304, all 2 090 / 1 643).
WARM_SHARE = 0.1
# Agents whose last share the memo remembers (oldest first out; an agent not among them is cold).
SHARES_KEPT = 4_096
# The payload keys a search decodes a memory from (``memory_from_payload``).
READ_KEYS = [PACKED, "tier", "agent"]


class MemoryMemo:
    """Decoded memories by point id (the id's integer), for the reads that rank: a query's
    hits are found without their payloads and only the memories missing here are read
    (a payload costs ~8 µs to read out of the engine and ~4 µs to decode, 50 of them a
    query, and the same memories come back query after query) — once the memo is warm for
    the agent (``warm``: it held enough of the hits of the agent's last search); a cold search
    (a fresh process, a new agent, after a burst of writes) takes the payloads with the
    query, as one call, and fills the memo from them.

    The lookups by id (``get_many``: a step's candidates, the turn a reply window restates, the
    memories a claim may supersede) answer from it too and keep what they read, and an upsert
    keeps the memories it wrote (what the payload decodes to: the next batch reads them).

    Sound because the shard is this store's alone (the engine locks its directory, even
    against a second opening in the same process) and every write goes through the store,
    which drops what it changed once the engine has it. A read that overlapped a write
    keeps nothing it read (``generation``), so nothing stale is ever kept. Oldest kept
    first out."""

    def __init__(self, capacity: int = MEMO_SIZE) -> None:
        self._capacity = capacity
        # oldest first; an OrderedDict: a dict's first key, after many deletions at its front,
        # is found by skipping their slots (~20 µs a kept memory once writes keep theirs)
        self._memories: OrderedDict[int, Memory] = OrderedDict()
        self._shares: dict[str, float] = {}
        self._lock = threading.Lock()
        self.generation = 0

    def get(self, key: int) -> Memory | None:
        return self._memories.get(key)

    def warm(self, agent: str) -> bool:
        """Did the memo hold enough of the hits of ``agent``'s last search to pay?"""
        return self._shares.get(agent, 0.0) >= WARM_SHARE

    def note(self, agent: str, held: int, hits: int) -> None:
        """``agent``'s search just found ``hits`` points, ``held`` of them here."""
        with self._lock:
            self._shares.pop(agent, None)
            if len(self._shares) >= SHARES_KEPT:
                del self._shares[next(iter(self._shares))]
            self._shares[agent] = held / hits if hits else 0.0

    def keep(self, found: dict[int, Memory], generation: int) -> None:
        """Keep ``found``, read since ``generation``, unless a write came in between."""
        with self._lock:
            if generation != self.generation:
                return
            for key, memory in list(found.items())[: self._capacity]:
                if key not in self._memories and len(self._memories) >= self._capacity:
                    self._memories.popitem(last=False)
                self._memories[key] = memory

    def drop(self, keys: Iterable[int] | None) -> None:
        """Forget the memories of ``keys`` (None: every one, and every agent is cold again):
        they have just been written."""
        with self._lock:
            self.generation += 1
            if keys is None:
                self._memories.clear()
                self._shares.clear()
            for key in keys or ():
                self._memories.pop(key, None)


def _translate(exc: Exception, what: str) -> StoreError:
    text = str(exc)
    if isinstance(exc, OSError) or any(marker in text for marker in _TRANSIENT_MARKERS):
        return StoreUnavailable(f"embedded qdrant: {what}: {text}")
    if "dimension" in text.lower():
        return DimensionMismatch(f"embedded qdrant: {what}: {text}")
    return StoreError(f"embedded qdrant: {what}: {text}")


def _filter(conds: list[Condition], ids: Sequence[str | int | uuid.UUID] | None = None) -> Filter:
    must: list[Any] = []
    for key, value in conds:
        if value is None:
            must.append(IsEmptyCondition(key))
            continue
        if isinstance(value, AtLeast):
            must.append(FieldCondition(key=key, range=RangeFloat(gte=value.value)))
            continue
        match = MatchAny(list(value)) if isinstance(value, tuple) else MatchValue(value)
        must.append(FieldCondition(key=key, match=match))
    if ids is not None:
        try:
            # the engine's own ids (``ScoredPoint.id``) as they are; a string must be a UUID
            must.append(HasIdCondition({engine_id(i) if isinstance(i, str) else i for i in ids}))
        except ValueError as exc:  # as point_ids: a memory id is a UUID
            raise StoreError(f"not a memory id (expected a UUID): {exc}") from exc
    return Filter(must=must)


def _key(point_id: int | uuid.UUID | str) -> int:
    """A point's key in the memo: its UUID's integer (a memory's id is a UUID: ``point_ids``)."""
    if isinstance(point_id, uuid.UUID):
        return point_id.int
    raise StoreError(f"not a memory point (expected a UUID id): {point_id!r}")


class _Build:
    """An index build under way: its child process, the copy it indexes, the points the copy
    held, and the store's writes since the copy (applied to it again when it is put in place).
    A thread starts the child, waits for it and calls ``done(self, error)``: the child dies
    with that thread (``store_index.die_with_parent``: the kernel's parent-death signal names
    the thread that started a child), which outlives the child unless the process dies."""

    def __init__(self, command: list[str], copy: Path, points: int,
                 done: Callable[[_Build, str | None], None]) -> None:
        self.copy = copy
        self.points = points
        self.writes: list[UpdateOperation] = []
        self.stopped = False  # by the store's close: neither put in place nor a failure
        self.child: subprocess.Popen[bytes] | None = None
        self._started = threading.Event()
        self.waiter = threading.Thread(target=self._wait, args=(command, done), name="recall-index-build", daemon=True)
        self.waiter.start()

    def _wait(self, command: list[str], done: Callable[[_Build, str | None], None]) -> None:
        try:
            self.child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE)
        except OSError as exc:
            done(self, f"not started: {exc}")
            return
        finally:
            self._started.set()
        log.info("recall store: indexing a copy of %d points (pid %d)", self.points, self.child.pid)
        _, stderr = self.child.communicate()
        error = None if self.child.returncode == 0 else \
            f"exit {self.child.returncode}: {stderr.decode(errors='replace')[-500:]}"
        done(self, error)

    def stop(self) -> None:
        """Stop the child and wait for the waiter (which then drops the copy)."""
        self.stopped = True
        self._started.wait()
        if self.child is not None and self.child.poll() is None:
            self.child.terminate()
        self.waiter.join()


def edge_collection_exists(directory: str, collection: str) -> bool:
    """Has a store under ``directory`` made ``collection`` (its metadata or its shard)?"""
    root = Path(directory)
    return (root / f"{collection}.json").exists() or (root / collection).exists()


class EdgeMemoryStore(StoreBase):
    """``MemoryStore`` over a Qdrant Edge shard in ``directory``."""

    def __init__(self, directory: str, wanted: CollectionInfo, lexical: LexicalEncoder,
                 index: IndexPolicy | None = None) -> None:
        self._root = Path(directory)
        self._info = wanted
        self._name = wanted.collection
        # the directories a sync writes in (``writable``, asked at every commit), made once
        shard = os.path.join(self._root, self._name)
        self._sync_dirs = (str(self._root), shard, os.path.join(shard, "wal"), os.path.join(shard, "segments"))
        self._lexical = lexical
        self._lock = threading.Lock()  # every engine call
        self._writing = threading.Lock()  # writes and flushes (taken before ``_lock``), and a build's copy
        self._closed = False
        self._shard = self._open()
        self._memo = MemoryMemo()
        self._index = index or IndexPolicy()
        self._build: _Build | None = None
        # the points the store held when its last build failed (a full disk, …): it is tried
        # again once the store has grown by the full-scan threshold since (None: none failed)
        self._failed_at: int | None = None
        # points written since the last look at the shard: the first flush looks (not the
        # open: ``cortex forget`` opens a store for one delete)
        self._since_check = self._index.check_every
        self._indexed = self.indexed_points()

    # --- opening -------------------------------------------------------------------

    def _meta_path(self) -> Path:
        return self._root / f"{self._name}.json"

    @property
    def _shard_dir(self) -> Path:
        return self._root / self._name

    def _open(self) -> EdgeShard:
        # The metadata is written before the shard is created, so a crash in between
        # leaves metadata and no shard (created on the next open), never the reverse.
        shard_dir = self._shard_dir
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            store_index.recover(shard_dir)  # what a crash during an index build left
        except OSError as exc:
            raise StoreUnavailable(f"embedded qdrant: cannot create {self._root}: {exc}") from exc
        meta = self._meta_path()
        has_shard = shard_dir.exists() and any(shard_dir.iterdir())
        if meta.exists():
            check_compatible(self._read_meta(meta), self._info, str(meta))
        elif has_shard:
            raise StoreError(f"embedded qdrant: {shard_dir} exists without {meta.name}; refusing to guess its vectors")
        else:
            self._write_meta(meta)
        try:
            return self._load(shard_dir) if has_shard else self._create(shard_dir)
        except Exception as exc:
            raise _translate(exc, f"open {shard_dir}") from exc

    @staticmethod
    def _read_meta(meta: Path) -> CollectionInfo:
        try:
            return msgspec.json.decode(meta.read_bytes(), type=CollectionInfo)
        except OSError as exc:
            raise StoreUnavailable(f"embedded qdrant: cannot read {meta}: {exc}") from exc
        except msgspec.DecodeError as exc:
            raise StoreError(f"embedded qdrant: {meta} is not collection metadata: {exc}") from exc

    def _write_meta(self, meta: Path) -> None:
        tmp = meta.with_suffix(".json.tmp")
        try:
            tmp.write_bytes(msgspec.json.encode(self._info))
            os.replace(tmp, meta)  # the metadata appears whole or not at all
        except OSError as exc:
            raise StoreUnavailable(f"embedded qdrant: cannot write {meta}: {exc}") from exc

    def _create(self, shard_dir: Path) -> EdgeShard:
        shard = EdgeShard.create(str(shard_dir), store_index.shard_config(self._info.dim))
        for field in INDEXED_FIELDS:
            schema = KeywordIndexParams(is_tenant=True) if field == "agent" else PayloadSchemaType.Keyword
            shard.update(UpdateOperation.create_field_index(field, schema))
        self._index_ranges(shard)
        return shard

    def _load(self, shard_dir: Path) -> EdgeShard:
        shard = EdgeShard.load(str(shard_dir), store_index.shard_config(self._info.dim))
        self._index_ranges(shard)  # a shard made before an index was added gets it now
        return shard

    @staticmethod
    def _index_ranges(shard: EdgeShard) -> None:
        missing = [f for f in RANGE_FIELDS if f not in shard.info().payload_schema]
        for field in missing:
            shard.update(UpdateOperation.create_field_index(field, PayloadSchemaType.Integer))
        shard.flush()

    # --- helpers -------------------------------------------------------------------

    def _call(self, what: str, operation: Any, *args: Any) -> Any:
        """``operation`` (an ``EdgeShard`` method, unbound) on the shard of the moment: an
        index build may put another in place while a call waits for the lock."""
        with self._lock:
            try:
                return operation(self._shard, *args)
            except Exception as exc:
                raise _translate(exc, what) from exc

    def _point(self, item: MemoryPoint) -> Point:
        """The engine's point: a list of floats for the dense vector (a numpy array costs the
        engine ~13 µs more to read), the BM25 vector as the encoder made it, a UUID id."""
        vectors: dict[str, Any] = {DENSE: self._point_dense(item).tolist()}
        sparse = self._lexical.document_vector(item.memory.content)
        if sparse is not None:
            vectors[SPARSE] = sparse
        return Point(point_uuid(item.memory.id), vectors, memory_to_payload(item.memory))

    def _records(self, conds: list[Condition], ids: Sequence[str] | None, with_vector: bool,
                 page_size: int = 256) -> Iterator[Any]:
        flt = _filter(conds, ids)
        offset: Any = None
        while True:
            request = ScrollRequest(
                offset=offset,
                limit=page_size,
                filter=flt,
                with_payload=True,
                with_vector=[DENSE] if with_vector else False,
            )
            records, offset = self._call("scroll", EdgeShard.scroll, request)
            yield from records
            if offset is None:
                return

    def _retrieve(self, agent: str, ids: Sequence[str], with_vector: bool) -> Iterator[Any]:
        """A lookup by id (a filtered scroll cost ~0.3 ms a call, the recall worker's
        biggest cost when it read each memory before writing it); a point of another
        agent is left out here, as the scroll's filter would."""
        wanted = [engine_id(i) for i in point_ids(ids)]
        for start in range(0, len(wanted), 256):
            records = self._call("retrieve", EdgeShard.retrieve, wanted[start: start + 256], True,
                                 [DENSE] if with_vector else False)
            yield from (r for r in records if r.payload and r.payload.get("agent") == agent)

    def get_many(self, wanted: Mapping[str, Sequence[str]]) -> dict[str, list[Memory]]:
        """``{agent: get(agent, ids)}`` in one lookup by id for all the agents (a step's
        agents cost one engine call, not one each: ~8 an event's step at a live rate); each
        record goes to the agent its payload names, when that agent asked for it. The memo
        answers first (the memories a step restates or may supersede were often read by the
        batch before: a payload read out of the engine and decoded costs ~12 µs), and keeps
        what was read."""
        asked = {agent: set(ids) for agent, ids in wanted.items() if ids}
        found: dict[str, dict[str, Memory]] = {agent: {} for agent in asked}
        every = list(dict.fromkeys(i for ids in wanted.values() for i in ids))
        generation = self._memo.generation
        unread: list[uuid.UUID] = []
        for point in (engine_id(i) for i in point_ids(every)):
            memory = self._memo.get(point.int)
            if memory is None:
                unread.append(point)
            elif memory.agent in asked and memory.id in asked[memory.agent]:
                found[memory.agent][memory.id] = memory
        read: dict[int, Memory] = {}
        for start in range(0, len(unread), 256):
            records = self._call("retrieve", EdgeShard.retrieve, unread[start: start + 256], True, False)
            for record in records:
                owner = record.payload.get("agent") if record.payload else None
                if isinstance(owner, str) and owner in asked:
                    memory = memory_from_payload(record.payload)
                    read[_key(record.id)] = memory
                    if memory.id in asked[owner]:
                        found[owner][memory.id] = memory
        if read:
            self._memo.keep(read, generation)
        return {agent: [found[agent][i] for i in ids if i in found.get(agent, {})] for agent, ids in wanted.items()}

    # --- writes --------------------------------------------------------------------

    def upsert(self, points: Sequence[MemoryPoint]) -> None:
        if points:
            operation = UpdateOperation.upsert_points([self._point(p) for p in points])
            self._write("upsert", operation, [p.memory.id for p in points], [p.memory for p in points])
            self._since_check += len(points)

    def update_payloads(self, memories: Sequence[Memory]) -> None:
        for memory in memories:
            flt = _filter(conditions(memory.agent, None), [memory.id])
            operation = UpdateOperation.overwrite_payload_by_filter(flt, memory_to_payload(memory))
            self._write("update payload", operation, [memory.id])

    def set_tier(self, agent: str, ids: Sequence[str], tier: Tier) -> None:
        if ids:
            operation = UpdateOperation.set_payload_by_filter(_filter(conditions(agent, None), ids), {"tier": tier})
            self._write("set tier", operation, ids)

    def delete(self, agent: str, ids: Sequence[str]) -> None:
        if ids:
            operation = UpdateOperation.delete_points_by_filter(_filter(conditions(agent, None), ids))
            self._write("delete", operation, ids)

    def delete_agent(self, agent: str) -> None:
        operation = UpdateOperation.delete_points_by_filter(_filter(conditions(agent, None)))
        self._write("delete agent", operation, None)
        try:
            vocabulary.forget(self.vocabulary, agent)  # the agent's words go with its memories
        except OSError as exc:
            raise StoreUnavailable(f"embedded qdrant: cannot delete {agent}'s word file: {exc}") from exc

    def _write(self, what: str, operation: Any, ids: Sequence[str] | None,
               written: Sequence[Memory] = ()) -> None:
        """One engine write; the memories it changes (``ids``; None: any) leave the memo once
        the engine has them, or once it failed (part of it may have been applied). The
        memories an upsert wrote (``written``) are kept as they were written, once the engine
        has them: the next batch restates or supersedes them (the reply window's turn, a
        claim's memory), and the payload read back decodes to the same memory."""
        with self._writing:  # the memo changes with the engine, no other write between them
            try:
                self._call(what, EdgeShard.update, operation)
                if self._build is not None:
                    self._build.writes.append(operation)  # applied again to the index's copy
            finally:
                self._memo.drop(None if ids is None else [_key(engine_id(i)) for i in point_ids(ids)])
            if written:
                self._memo.keep({engine_id(m.id).int: m for m in written}, self._memo.generation)

    @property
    def vocabulary(self) -> Path:
        return vocabulary.vocabulary_dir(self._root, self._name)

    def flush(self) -> None:
        with self._writing:
            self._call("flush", EdgeShard.flush)
        self._consider_index()

    def writable(self) -> bool:
        """May this process still create, rename and write files in the store's directories
        (``access(2)``: permissions, a read-only file system; ~1 µs each)? What a sync needs
        besides the write-ahead log's open file, which takes appends whatever the directory's
        mode. Asked at every commit (at a live rate, a batch of one to three events each): the
        paths are made once, and a directory is looked for only when ``access`` refuses it (one
        missing is not in the way): 4 system calls, not 8, and no ``Path`` made (19.6 µs a commit
        before, most of it ``pathlib``)."""
        mode = os.W_OK | os.X_OK
        return all(os.access(d, mode) or not os.path.exists(d) for d in self._sync_dirs)

    def close(self) -> None:
        """Release the shard (and its directory lock); closing twice is harmless. A build
        under way is abandoned (its child stopped, its copy deleted)."""
        build = self._build
        if build is not None:
            build.stop()
        with self._writing, self._lock:
            if not self._closed:
                self._closed = True
                self._shard.close()

    # --- the vector index (workers.recall.store_index) -----------------------------

    @property
    def building(self) -> bool:
        """Is an index build under way?"""
        return self._build is not None

    def await_index(self, timeout: float | None = None) -> None:
        """Until a build under way (if any) is in place (the bench waits for it after a fill)."""
        build = self._build
        if build is not None:
            build.waiter.join(timeout)

    def indexed_points(self) -> int:
        """Points in indexed segments: the engine counts a point's sparse vector as indexed
        on insert, its dense one once an optimizer built the index."""
        info = self._call("info", EdgeShard.info)
        return max(0, int(info.indexed_vectors_count) - int(info.points_count))

    def _consider_index(self) -> None:
        """Start a build if :func:`store_index.due` says so (looked at, at a flush, every
        ``check_every`` points written); a failure to look or to start is logged, never
        raised: the store works without its index."""
        if self._build is not None or self._since_check < self._index.check_every:
            return
        self._since_check = 0
        try:
            info = self._call("info", EdgeShard.info)
            if self._failed_at is not None and \
                    int(info.points_count) < self._failed_at + self._index.full_scan_points(self._info.dim):
                return
            top = self._call("facet", EdgeShard.facet, FacetRequest(key="agent", limit=1)).hits
            largest = int(top[0].count) if top else 0
            if store_index.due(self._index, self._info.dim, points=int(info.points_count), indexed=self._indexed,
                               largest_agent=largest):
                self._start_build(int(info.points_count))
        except (StoreError, OSError) as exc:
            log.warning("recall store: no index build: %s", exc)

    def _start_build(self, points: int) -> None:
        """Copy the shard (writes wait, reads go on) and start the child that indexes the copy."""
        copy = store_index.new_copy(self._shard_dir)
        with self._writing:
            self._call("flush", EdgeShard.flush)
            shutil.copytree(self._shard_dir, copy)
            self._build = _Build(store_index.child_command(copy, self._info.dim, self._index), copy, points,
                                 self._finish_build)

    def _finish_build(self, build: _Build, error: str | None) -> None:
        """The child is done: put its copy in place with the writes made since (or drop it)."""
        try:
            if error is None and not build.stopped:
                self._swap(build)
                self._indexed = build.points
                self._failed_at = None
                log.info("recall store: index in place (%d points at the copy, %d writes after it)",
                         build.points, len(build.writes))
            elif not build.stopped:
                self._failed_at = build.points
                log.warning("recall store: index build failed (tried again once the store has grown): %s", error)
        except (StoreError, OSError) as exc:
            self._failed_at = build.points
            log.warning("recall store: index build not put in place: %s", exc)
        finally:
            with self._writing:  # once the store has recorded the build (``_start_build`` holds this until then)
                self._build = None
            shutil.rmtree(build.copy, ignore_errors=True)
            shutil.rmtree(store_index.aside(self._shard_dir, "trash"), ignore_errors=True)

    def _swap(self, build: _Build) -> None:
        """The live shard aside, the copy in its place with the writes since the copy applied;
        the old directory goes only once the new one is flushed (``store_index.recover``)."""
        live, old = self._shard_dir, store_index.aside(self._shard_dir, "old")
        with self._writing, self._lock:
            if self._closed:
                return
            self._shard.flush()
            self._shard.close()
            os.replace(live, old)
            os.replace(build.copy, live)
            try:
                shard = self._load(live)
                for operation in build.writes:
                    shard.update(operation)
                shard.flush()
            except Exception as exc:
                shutil.rmtree(live, ignore_errors=True)
                os.replace(old, live)
                self._shard = self._load(live)
                raise _translate(exc, "index swap") from exc
            self._shard = shard
            self._memo.drop(None)
            os.replace(old, store_index.aside(live, "trash"))

    # --- reads ---------------------------------------------------------------------

    def count(self, agent: str, flt: MemoryFilter | None = None) -> int:
        return int(
            self._call("count", EdgeShard.count, EdgeCountRequest(exact=True, filter=_filter(conditions(agent, flt))))
        )

    def search(
        self,
        agent: str,
        vector: FloatVector | Sequence[float],
        *,
        text: str | None = None,
        flt: MemoryFilter | None = None,
        limit: int = 50,
    ) -> list[SearchHit]:
        query_unit = self._query_unit(vector)
        warm = self._memo.warm(agent)
        qfilter = _filter(conditions(agent, flt))
        prefetch_limit = max(limit * 2, 20)
        prefetches = [
            Prefetch(limit=prefetch_limit, query=Query.Nearest(query_unit.tolist(), using=DENSE), filter=qfilter)
        ]
        indices, values = self._lexical.query(text) if text else ([], [])
        # IDF over this agent's points only: another tenant's vocabulary must not shape our ranking.
        idf = SearchParams(idf=IdfParams(corpus=_filter(conditions(agent, None))))
        sparse = Query.Nearest(SparseVector(indices, values), using=SPARSE)
        if indices:
            prefetches.append(Prefetch(limit=prefetch_limit, query=sparse, filter=qfilter, params=idf))
        request = QueryRequest(
            limit=limit,
            prefetches=prefetches,
            # The stub types ``query`` as ``Fusion``; ``Fusion.Rrf`` is its (nested-class) variant.
            query=Fusion.Rrf(k=RRF_K),  # type: ignore[arg-type]
            filter=qfilter,
            # warm: the memories come from the memo, the engine's payloads only for the rest
            with_payload=False if warm else READ_KEYS,
            with_vector=False,
        )
        generation = self._memo.generation
        points: list[ScoredPoint] = self._call("search", EdgeShard.query, request)
        if not points:
            return []
        # Each hit's dense cosine and BM25 score (the fused scores are ranks): one exact query
        # of each kind over just these points, in one batch (~0.2 ms, the filter built once).
        # Carrying the vectors into Python for the cosines cost ~1 ms a search.
        ids = [p.id for p in points]  # the engine's own ids (each read of ``p.id`` builds one anew)
        hits_filter = _filter(conditions(agent, flt), ids)
        scored = [QueryRequest(limit=len(points), query=Query.Nearest(query_unit.tolist(), using=DENSE),
                               filter=hits_filter, with_payload=False, with_vector=False)]
        if indices:
            scored.append(QueryRequest(limit=len(points), query=sparse, filter=hits_filter, params=idf,
                                       with_payload=False, with_vector=False))
        results: list[list[ScoredPoint]] = self._call("search", EdgeShard.query_batch, QueryBatchRequest(scored))
        cosines = {_key(p.id): float(p.score) for p in results[0]}
        lexical = {_key(p.id): float(p.score) for p in results[1]} if indices else {}
        keys = [_key(i) for i in ids]
        memories = self._memories(agent, ids, keys, generation, self._read) if warm else \
            self._memories(agent, points, keys, generation, self._decode)
        return [SearchHit(memory=memory, similarity=cosines.get(key, 0.0), fused=float(p.score),
                          lexical=lexical.get(key, 0.0))
                for p, key in zip(points, keys, strict=True) if (memory := memories.get(key)) is not None]

    def nearest(self, agent: str, vector: FloatVector | Sequence[float], *, flt: MemoryFilter | None = None,
                limit: int = 4) -> list[SearchHit]:
        """One dense query (a fused search costs two more: the fusion and the hits' cosines);
        the engine's score is the cosine, as ``search``'s second query computes it. Exact, never
        the approximate index: what the worker writes depends on it (capture's near-duplicates),
        so it must not depend on when the index was built (``store_index``)."""
        request = QueryRequest(limit=limit, query=Query.Nearest(self._query_unit(vector).tolist(), using=DENSE),
                               filter=_filter(conditions(agent, flt)), params=SearchParams(exact=True),
                               with_payload=True, with_vector=False)
        return self._payload_hits(request)

    def similar(self, agent: str, vector: FloatVector | Sequence[float], *, threshold: float,
                flt: MemoryFilter | None = None, limit: int = 64) -> list[SearchHit]:
        """An exact search (never the approximate index: upkeep must find every neighbour)
        for the memories at ``threshold`` or above, most similar first."""
        request = QueryRequest(limit=limit, query=Query.Nearest(self._query_unit(vector).tolist(), using=DENSE),
                               filter=_filter(conditions(agent, flt)), score_threshold=threshold,
                               params=SearchParams(exact=True), with_payload=True, with_vector=False)
        return self._payload_hits(request)

    def _payload_hits(self, request: QueryRequest) -> list[SearchHit]:
        """The points a dense query finds with their payloads. The indexing path's reads (dedup,
        upkeep): their few hits are mostly memories not yet read, so the memo would add a call
        (~50 µs a read with 4 hits) rather than save one."""
        points: list[ScoredPoint] = self._call("search", EdgeShard.query, request)
        return by_similarity([SearchHit(memory=memory_from_payload(p.payload or {}), similarity=float(p.score),
                                        fused=0.0) for p in points])

    def _memories(self, agent: str, found_as: Sequence[Any], keys: list[int], generation: int,
                  decode: Callable[[str, list[Any]], dict[int, Memory]]) -> dict[int, Memory]:
        """The memories of the points a search found (``keys``, their ids' integers), the
        search having begun at memo ``generation``: from the memo, the rest by ``decode`` of
        their ``found_as`` — the points with their payloads (a cold search: ``_decode``) or
        the engine's ids (``_read``) — and kept, unless a write came in since."""
        found: dict[int, Memory] = {}
        missing: list[Any] = []
        for point, key in zip(found_as, keys, strict=True):
            memory = self._memo.get(key)
            if memory is None:
                missing.append(point)
            else:
                found[key] = memory
        self._memo.note(agent, len(found), len(keys))
        if missing:
            read = decode(agent, missing)
            self._memo.keep(read, generation)
            found.update(read)
        return found

    def _read(self, agent: str, ids: list[Any]) -> dict[int, Memory]:
        """The memories of the points ``ids`` that are ``agent``'s: their packed memory and
        tier keys only (~8 µs a point less than the whole payload)."""
        return self._decode(agent, self._call("retrieve", EdgeShard.retrieve, ids, READ_KEYS, False))

    def _decode(self, agent: str, records: Sequence[Any]) -> dict[int, Memory]:
        """The memories of ``records`` (points or records with their ``READ_KEYS``) that are
        ``agent``'s; a point of the first layout (no packed memory) is read whole."""
        first_layout = [r.id for r in records if r.payload and PACKED not in r.payload]
        if first_layout:
            records = [*(r for r in records if r.payload and PACKED in r.payload),
                       *self._call("retrieve", EdgeShard.retrieve, first_layout, True, False)]
        return {_key(r.id): memory_from_payload(r.payload) for r in records
                if r.payload and r.payload.get("agent") == agent}
