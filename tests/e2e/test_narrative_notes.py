"""Daily notes in the narrative's timeline (issue 23), end to end: `cortex index`'s
NoteEvents of a `memory/YYYY-MM-DD.md` file reach the narrative worker, and the narrative a
session end makes lists their sections; other notes do not appear."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

import nats
import pytest

from schemas.docs import NarrativeDoc
from shared.asof import DocReader
from shared.config import load_settings
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.cli import build_parser
from workers.cli.query import cmd_narrative
from workers.registry import all_specs, consumer_specs


def cli(*argv: str) -> argparse.Namespace:
    """The arguments as the command line parses them (a hand-made namespace misses new options)."""
    return build_parser().parse_args(list(argv))


def note(i: int, path: str, headings: list[str], ts: str) -> bytes:
    return json.dumps({"id": f"n{i}", "agent": "nia", "ts": ts, "path": path, "headings": headings,
                       "content": "text"}).encode()


async def test_a_daily_notes_sections_are_in_the_next_narratives_timeline(
    nats_url: str, tmp_path: Path, wait_for: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """And `cortex narrative AGENT` prints it; `--fresh` makes one now from the latest
    documents (the same timeline)."""
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "200"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, [s for s in consumer_specs() if s.name == "narrative"])
    host = WorkerHost(settings, [all_specs()["narrative"]], __version__)
    task = asyncio.create_task(host.run())
    reader = DocReader(js)
    try:
        at = "2026-03-05T08:00:00Z"
        await js.publish("cortex.notes.nia.section", note(1, "memory/2026-03-05.md", ["2026-03-05", "Standup"], at))
        await js.publish("cortex.notes.nia.section", note(2, "memory/projects.md", ["Projects"], at))
        end = {"id": "e1", "agent": "nia", "session": "s1", "ts": "2026-03-05T10:00:00Z"}
        await js.publish("cortex.session.nia.end", json.dumps(end).encode())

        async def narrative() -> NarrativeDoc | None:
            doc = await reader.latest("cortex_narratives", "nia", NarrativeDoc)
            return doc if doc is not None and doc.markdown else None

        doc = await wait_for(narrative, within=30)
        assert "Daily note: Standup" in doc.markdown and "Projects" not in doc.markdown

        capsys.readouterr()
        assert await cmd_narrative(cli("narrative", "nia", "--nats-url", nats_url), settings) == 0
        assert capsys.readouterr().out == doc.markdown.rstrip("\n") + "\n"
        later = {"id": "n3", "agent": "nia", "ts": "2026-03-05T10:30:00Z", "path": "memory/2026-03-05.md",
                 "headings": ["2026-03-05", "Lunch"], "content": "text"}
        await js.publish("cortex.notes.nia.section", json.dumps(later).encode())

        async def fresh() -> str | None:
            assert await cmd_narrative(cli("narrative", "nia", "--fresh", "--nats-url", nats_url), settings) == 0
            out = capsys.readouterr().out
            return out if "Daily note: Lunch" in out else None

        text = await wait_for(fresh, within=30)  # not in the stored narrative until the next trigger
        assert text.startswith("*Thursday, 05. March 2026") and "Daily note: Standup" in text
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
