"""A message with an attachment, as OpenClaw's media understanding hands it to the agent
("[Image]" / "User text:" / "Description:"): its turn is what the person said, what the
attachment shows is a memory of its own beside it (``[image: …]``), the block labels are
no words of either, the description is findable, and only the person's own words are
read for rules and preferences."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from schemas.events import MessageEvent
from shared.codec import Envelope
from shared.config import RecallSettings
from workers.recall.apply import StoreApplier
from workers.recall.capture import (
    SHOWN_POSITION,
    capture_message,
    is_context_memory,
    is_shown_memory,
    is_turn_memory,
    is_window_memory,
)
from workers.recall.embedders import HashingEmbedder
from workers.recall.media import MediaText, media_text, turn_text
from workers.recall.models import memory_id
from workers.recall.store import MemoryStore

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
SAID = "Here's our latest work from last weekend."
PHOTO = f"[Image]\nUser text:\n{SAID}\nDescription:\na photo of a painting of a sunset over a lake"


def test_an_image_body_splits_into_what_was_said_and_what_the_photo_shows() -> None:
    parts = media_text(PHOTO)
    assert parts == MediaText(said=SAID, attachments=(("image", "a painting of a sunset over a lake"),))
    assert (parts.turn(), parts.shown()) == (SAID, "[image: a painting of a sunset over a lake]")


def test_several_attachments_keep_their_order_and_the_text_said_once() -> None:
    body = ("User text:\nlook at these\n\n[Image 1/2]\nDescription:\nThe image shows a red bike\n\n[Audio]\n"
            "Transcript:\nsee you at\nnine\n\n[Video 2/2]\nDescription: a dog on a beach")
    parts = media_text(body)
    assert parts.said == "look at these"
    assert parts.shown() == "[image: a red bike] [audio: see you at nine] [video: a dog on a beach]"


def test_a_photo_without_words_is_its_description() -> None:
    assert turn_text("[Image]\nDescription:\na cat asleep on a keyboard") == "[image: a cat asleep on a keyboard]"


def test_anything_else_is_what_was_said_unchanged() -> None:
    for text in ("We deploy on Fridays.\nDescription: later", "[Image] look at this", "User text: hi",
                 "Description:\na plan", "[Image]\nUser text:\nno description came back", "  two\nlines  "):
        assert media_text(text) == MediaText(said=text.strip()), text
        assert turn_text(text) == text.strip()


def test_capture_keeps_the_turn_and_what_it_shows_apart_and_reads_cues_in_the_person_s_words_only() -> None:
    body = "[Image]\nDescription:\na sign saying we must always wear helmets on site"
    memories = capture_message(MessageEvent(id="m-1", agent="a", session="s", ts=T0, role="user",
                                            sender="Melanie", content=body))
    assert [m.content for m in memories] == ["Melanie: [image: a sign saying we must always wear helmets on site]"]
    said = "[Image]\nUser text:\nWe must always wear helmets on site.\nDescription:\na yellow helmet"
    episode, shown, rule = capture_message(MessageEvent(id="m-2", agent="a", session="s", ts=T0, role="user",
                                                        sender="Melanie", content=said))
    assert episode.content == "Melanie: We must always wear helmets on site." and is_turn_memory(episode)
    assert shown.content == "Melanie: [image: a yellow helmet]" and shown.id == memory_id("a", "m-2", SHOWN_POSITION)
    assert is_shown_memory(shown) and is_context_memory(shown) and not is_shown_memory(episode)
    assert (shown.source_event, shown.sender, shown.type) == ("m-2", "Melanie", "episode")
    assert (rule.type, rule.content) == ("rule", "We must always wear helmets on site.")


def test_a_described_photo_is_found_by_what_it_shows_and_never_folded(store: MemoryStore) -> None:
    embedder = HashingEmbedder(256)
    turns = [("Caroline", "What have you been up to?"), ("Melanie", PHOTO), ("Caroline", "Wow, the colours!"),
             ("Melanie", PHOTO.replace(SAID, "And one more from today."))]  # the same picture again
    envs = [Envelope(seq=i + 1, subject="cortex.msg.alice.received", family="msg", kind="received", agent="alice",
                     event=MessageEvent(id=f"m{i}", agent="alice", session="s1", ts=T0 + timedelta(seconds=30 * i),
                                        role="user", sender=sender, content=text))
            for i, (sender, text) in enumerate(turns)]
    StoreApplier(store, embedder, RecallSettings(), ("en",)).apply_batch(envs)
    stored = list(store.scroll("alice"))
    assert not any("User text" in m.content or "Description:" in m.content for m in stored)
    assert sorted(m.source_event for m in stored if is_shown_memory(m)) == ["m1", "m3"]  # two messages, two memories
    query = "painting of a sunset"
    top = store.search("alice", embedder.embed_query(query), text=query, limit=2)
    assert {hit.memory.source_event for hit in top} == {"m1", "m3"} and all(is_shown_memory(h.memory) for h in top)
    (after,) = [m for m in stored if is_window_memory(m) and m.source_event == "m2"]
    assert f"Melanie: {SAID}" in after.content.split("\n")  # windows quote what was said
