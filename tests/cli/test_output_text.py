"""What the commands write is written for whoever reads it (issue 44 item 6): no `\\r` progress
in a log, and a rejected line explained in the terms the line used."""

from __future__ import annotations

import json
from pathlib import Path

from cortex_testkit import cortex

BASE = {"id": "x", "agent": "bob", "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user", "content": "hi"}


def test_index_off_a_terminal_prints_no_progress_lines(nats_url: str, tmp_path: Path) -> None:
    """Before: `index: 50/82 sectionsindex: 82/82` — `\\r`-redrawn progress in a log file."""
    assert cortex("init", url=nats_url).returncode == 0
    notes = tmp_path / "memory"
    notes.mkdir()
    (notes / "topics.md").write_text("".join(f"# Topic {i}\n\nSomething about topic {i}.\n\n" for i in range(60)))
    done = cortex("index", str(notes), "--agent", "bob", url=nats_url, CORTEX_DATA_DIR=str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    assert done.stdout.strip() == f"indexed 60 sections from {notes}: 60 new, 0 unchanged"


def test_publish_names_what_the_line_said_not_the_stored_subject(nats_url: str, tmp_path: Path) -> None:
    """Before: `subject 'cortex.msg.20.bob.recieved': expected cortex.msg.<slot>.<agent>.(…)` for a
    line that said `"type": "msg.recieved"` — a subject the user never wrote, with a slot token."""
    assert cortex("init", url=nats_url).returncode == 0
    lines = [{**BASE, "type": "msg.recieved"},
             {"id": "k", "agent": "bob", "ts": "2026-02-17T10:00:00Z", "kind": "nope"},
             {**BASE, "type": "msg.received", "agent": "b.ob"},
             {**BASE, "subject": "cortex.msg.bob.weird"},
             {**BASE, "type": "msg.received", "id": "ok"}]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = cortex("publish", str(path), url=nats_url)
    assert done.returncode == 1 and "published 1, duplicates 0, rejected 4 (lines 1, 2, 3, 4)" in done.stdout
    said = done.stderr.splitlines()
    assert said[0].startswith('line 1: rejected: "type": "msg.recieved" is not an event type (did you mean '
                              "msg.received? one of msg.received, msg.sent, session.end"), said[0]
    assert said[1].startswith('line 2: rejected: "kind": "nope" is no feedback kind (one of commitment_done'), said[1]
    assert said[2] == 'line 3: rejected: "agent": "b.ob" is no agent id (expected ^[A-Za-z0-9_-]{1,64}$)'
    assert said[3].startswith('line 4: rejected: "subject": "cortex.msg.bob.weird" is no event subject'), said[3]
    assert "<slot>" not in done.stderr and ".20." not in done.stderr  # bob's stored slot is 20
