"""`cortex index --summarize` (issue 23; the semantic-memory design's indexer option): one
sentence per section of at least 20 words, by Claude through the real SDK against a fake
HTTP transport, published as a `remember` event the recall worker stores like any memory."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import msgspec
import pytest
from nats.aio.client import Client

from schemas.events import FeedbackEvent, NoteEvent
from shared.config import load_settings
from shared.llm import LlmClient
from shared.provision import provision
from workers.cli.base import CliError
from workers.cli.memory import cmd_index, summarize_notes
from workers.recall.markdown import needs_summary, summary_id, summary_text

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
LONG = " ".join(["The production deploy window is Tuesday morning and needs a second reviewer"] * 2)


def note(i: int, headings: list[str]) -> NoteEvent:
    return NoteEvent(id=f"note:{i:032x}", agent="ida", ts=T0, path="projects/cortex.md", headings=headings,
                     content=LONG)


def test_what_gets_a_summary_and_what_it_reads() -> None:
    assert needs_summary(LONG) and not needs_summary("Too short to summarize.")
    assert summary_id("note:" + "a" * 32) == "summary:" + "a" * 32
    assert summary_text("p.md", ["Ops", "Deploys"], "\n Deploys are on Tuesday mornings.\nmore") == (
        "[Summary] p.md › Ops › Deploys: Deploys are on Tuesday mornings.")
    assert summary_text("p.md", [], "  ") is None
    assert len(summary_text("p.md", [], "x" * 1000) or "") == 400


async def test_each_section_gets_claudes_sentence_as_a_remember_event_and_a_rerun_asks_the_cache(
    nc: Client, tmp_path: Path
) -> None:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path), "ANTHROPIC_API_KEY": "sk-test"})
    js = nc.jetstream()
    await provision(js, settings, [])
    asked: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        asked.append(prompt)
        text = "" if "Refused" in prompt else "Deploys happen on Tuesday mornings with a reviewer."
        return httpx2.Response(200, json={
            "id": "m", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 50, "output_tokens": 12}})

    llm = LlmClient(settings, js, http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    published: list[FeedbackEvent] = []

    async def publish(event: FeedbackEvent) -> None:
        published.append(event)

    notes = [note(1, ["Ops", "Deploys"]), note(2, ["Refused"])]
    done, missed = await summarize_notes(llm, notes, publish)
    assert (done, missed) == ([summary_id(notes[0].id)], 1)
    (event,) = published
    assert event.kind == "remember" and event.ts == T0 and '<section path="projects/cortex.md › Ops › Deploys">' in \
        asked[0]
    assert msgspec.convert(event.value, dict) == {
        "content": "[Summary] projects/cortex.md › Ops › Deploys: Deploys happen on Tuesday mornings with a reviewer.",
        "type": "fact", "scope": "permanent"}
    await summarize_notes(llm, notes[:1], publish)
    assert len(asked) == 2  # the same section again: the LLM cache answers
    await llm.aclose()


async def test_summarize_without_a_key_is_one_line_before_anything_is_published(nc: Client, tmp_path: Path,
                                                                               nats_url: str) -> None:
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path)})
    await provision(nc.jetstream(), settings, [])
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "ops.md").write_text(f"# Ops\n{LONG}\n")
    args = argparse.Namespace(dir=str(tmp_path / "memory"), agent="ida", summarize=True, nats_url=nats_url)
    with pytest.raises(CliError, match="ANTHROPIC_API_KEY"):
        await cmd_index(args, settings)
    assert (await nc.jetstream().stream_info("CORTEX_EVENTS")).state.messages == 0
