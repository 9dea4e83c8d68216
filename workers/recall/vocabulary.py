"""The static embedder's words, kept per agent beside the agent's memories.

A process embeds each new word with e5 once (~12-14 ms of CPU here); a restarted worker
would pay that again for every word it meets. So the words an agent's texts brought are
kept in a file of that agent's (``<store>/<collection>.vocabulary/<hash of the agent>``):
each word with its weight and its float16 vector, exactly as the table holds them, so a
restarted process embeds every text byte for byte as before without e5.

The forget rule stands: the file goes with the agent's memories. ``cortex forget AGENT``
deletes it with the agent's points (the store's ``delete_agent``, whichever path runs it),
and forgetting some of an agent's memories deletes the agent's whole file (its words are
learnt again as they come: a forgotten text leaves no word behind). Words another agent
said too stay in that agent's file: they are that agent's words.

A file is only appended to; a record cut short by a crash is the end of what is read.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from schemas.events import FeedbackEvent, MessageEvent, NoteEvent
from shared.codec import Envelope
from workers.recall.embedders import StaticE5Embedder

_HEAD = struct.Struct("<Hf")  # the word's UTF-8 length, its weight


class WordRecords:
    """Words with their weights and float16 vectors (one row each)."""

    def __init__(self, words: list[str], weights: npt.NDArray[np.float32], vectors: npt.NDArray[np.float16]) -> None:
        self.words = words
        self.weights = weights
        self.vectors = vectors


def vocabulary_dir(store_dir: Path, collection: str) -> Path:
    return store_dir / f"{collection}.vocabulary"


def agent_file(directory: Path, agent: str) -> Path:
    """The agent's file (named by a hash: an agent id is not a file name)."""
    return directory / hashlib.sha256(agent.encode()).hexdigest()[:32]


def forget(directory: Path, agent: str) -> None:
    agent_file(directory, agent).unlink(missing_ok=True)


def encode(words: Sequence[str], weights: Sequence[float], vectors: npt.NDArray[np.float16]) -> bytes:
    out = bytearray()
    for word, weight, vector in zip(words, weights, vectors, strict=True):
        raw = word.encode()
        out += _HEAD.pack(len(raw), float(weight)) + raw + np.asarray(vector, dtype="<f2").tobytes()
    return bytes(out)


def decode(data: bytes, dim: int) -> WordRecords:
    """The whole records of ``data`` (a record cut short ends it)."""
    words: list[str] = []
    weights: list[float] = []
    rows: list[bytes] = []
    size, at = 2 * dim, 0
    while at + _HEAD.size <= len(data):
        length, weight = _HEAD.unpack_from(data, at)
        end = at + _HEAD.size + length + size
        if end > len(data):
            break
        try:
            words.append(data[at + _HEAD.size: at + _HEAD.size + length].decode())
        except UnicodeDecodeError:
            break  # not ours: what follows cannot be trusted either
        weights.append(weight)
        rows.append(data[end - size: end])
        at = end
    vectors = np.frombuffer(b"".join(rows), dtype="<f2").reshape(len(rows), dim).astype(np.float16)
    return WordRecords(words, np.asarray(weights, dtype=np.float32), vectors)


def append(directory: Path, agent: str, records: WordRecords) -> None:
    if not records.words:
        return
    directory.mkdir(parents=True, exist_ok=True)
    with agent_file(directory, agent).open("ab") as f:
        f.write(encode(records.words, records.weights.tolist(), records.vectors))


def load(directory: Path, dim: int) -> Iterator[tuple[str, WordRecords]]:
    """Every agent file's records, by file name (unreadable files are skipped: a cache)."""
    if not directory.is_dir():
        return
    for path in sorted(directory.iterdir()):
        try:
            yield path.name, decode(path.read_bytes(), dim)
        except (OSError, ValueError):
            continue


NAMES_KEPT = 65_536  # agents whose file names are kept (then forgotten all at once, and made again)


class KeptWords:
    """The word files of one store, kept with a static embedder's table: ``restore`` fills
    the table from them at start; ``saw`` notes the words each agent's new texts bring (and
    drops what a forget in the batch came after); ``save`` appends them at the commit."""

    def __init__(self, directory: Path, embedder: StaticE5Embedder) -> None:
        self._dir = directory
        self._embedder = embedder
        self._kept: dict[str, set[str]] = {}  # an agent's file name -> the words it holds
        # agent -> its file's name (a hash: ~30 µs an event when made at each event on the event loop)
        self._names: dict[str, str] = {}
        self._new: dict[str, dict[str, None]] = {}  # agent -> words to append, in order
        self._forgotten: set[str] = set()  # agents whose file goes before the next append
        # ``save`` runs in a thread (the recall worker's sync, a timer's too) while the loop's
        # thread may note the next batch's words: what is noted meanwhile waits for it
        self._saving = threading.Lock()

    def restore(self) -> int:
        """Every kept word into the embedder's table; the number of words read."""
        read = 0
        for name, records in load(self._dir, self._embedder.dim):
            self._embedder.table.add(records.words, records.weights, records.vectors)
            self._kept.setdefault(name, set()).update(records.words)
            read += len(records.words)
        return read

    def _kept_by(self, agent: str) -> set[str]:
        name = self._names.get(agent)
        if name is None:
            if len(self._names) >= NAMES_KEPT:
                self._names.clear()
            name = self._names[agent] = agent_file(self._dir, agent).name
        return self._kept.setdefault(name, set())

    def saw(self, envs: Sequence[Envelope]) -> list[str]:
        """Note the words of ``envs``' texts; returns them all, in order (for the embedder's
        ``prefetch_words``: each text's words are read once)."""
        with self._saving:
            return self._saw(envs)

    def _saw(self, envs: Sequence[Envelope]) -> list[str]:
        seen: list[str] = []
        for env in envs:
            event = env.event
            if isinstance(event, FeedbackEvent) and event.kind == "memory_forget":
                # a forgotten text leaves no word behind: the agent's file starts again
                self._new.pop(env.agent, None)
                self._kept_by(env.agent).clear()
                self._forgotten.add(env.agent)
            elif isinstance(event, MessageEvent | NoteEvent):
                kept = self._kept_by(env.agent)
                new = self._new.setdefault(env.agent, {})
                words = self._embedder.words(event.content)
                new.update((w, None) for w in words if w not in kept)
                seen += words
        return seen

    def prefetch(self, words: Sequence[str]) -> None:
        """The embedder's background learning of ``words`` (what ``saw`` returned)."""
        self._embedder.prefetch_words(words)

    def save(self) -> None:
        """The files of agents forgotten since the last save deleted, then the new words
        appended (those the table still holds; an evicted one comes again later)."""
        with self._saving:
            self._save()

    def _save(self) -> None:
        for agent in sorted(self._forgotten):
            forget(self._dir, agent)
        self._forgotten.clear()
        for agent, words in sorted(self._new.items()):
            found, weights, vectors = self._embedder.table.find(list(words))
            append(self._dir, agent, WordRecords(found, weights, vectors.astype(np.float16)))
            self._kept_by(agent).update(found)
        self._new.clear()
