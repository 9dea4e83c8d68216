"""Channel-aware context: layers, summaries and the boot document's Channels section."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import ALL, cortex, drained

from schemas.docs import BootDoc, ChannelsDoc
from shared.kv import kv_read


def events() -> list[dict[str, Any]]:
    base = {"agent": "main", "session": "s1"}

    def msg(i: int, ts: str, channel: str, content: str) -> dict[str, Any]:
        return {**base, "type": "msg.received", "id": f"ch-{i}", "ts": ts, "role": "user", "sender": "albert",
                "channel": channel, "content": content}

    return [
        msg(1, "2026-02-14T09:00:00Z", "whatsapp", "Regarding the garden party planning: we need chairs first."),
        msg(2, "2026-02-17T07:00:00Z", "telegram", "Back to the invoice export, the CSV columns are wrong."),
        msg(3, "2026-02-17T07:05:00Z", "telegram", "We decided to use semicolons as the CSV separator."),
        msg(4, "2026-02-17T09:00:00Z", "webchat", "Now about the login page redesign, it needs a dark mode."),
        {**base, "type": "session.start", "id": "ch-5", "ts": "2026-02-17T09:30:00Z", "channel": "webchat"},
        # a second trigger that leaves every summary as it was
        {**base, "type": "session.start", "id": "ch-6", "ts": "2026-02-17T09:31:00Z", "channel": "webchat"},
    ]


async def test_three_channels_give_layers_summaries_and_a_boot_section(
    nats_url: str, tmp_path: Path, workers_procs: Any, wait_for: Any
) -> None:
    assert cortex("init", url=nats_url).returncode == 0
    for name in ALL:
        workers_procs.start(name, nats_url)
    path = tmp_path / "channels.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events()) + "\n")
    assert cortex("publish", str(path), url=nats_url).returncode == 0
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await wait_for(lambda: drained(js), within=90)
        raw, _ = await kv_read(await js.key_value("cortex_channels"), "main")
        doc = msgspec.json.decode(raw, type=ChannelsDoc)
        layers = {c.channel: c.layer for c in doc.channels}
        assert layers == {"webchat": "foreground", "telegram": "background", "whatsapp": "archived"}
        # every message and trigger counts, also a trigger that changed no summary: the count
        # must not depend on which revision of the sources a summary read (workers/channels/worker.py)
        assert (doc.integrity.events, doc.integrity.last_seq) == (6, 6)
        telegram = next(c for c in doc.channels if c.channel == "telegram")
        assert telegram.messages == 2
        assert "invoice export" in telegram.summary and "decided: We decided to use semicolons" in telegram.summary

        raw, _ = await kv_read(await js.key_value("cortex_boot"), "main")
        boot = msgspec.json.decode(raw, type=BootDoc)
        section = boot.markdown.split("## 📡 Other Channels", 1)[1].split("\n## ", 1)[0]
        assert "[telegram] invoice export" in section and "(last: 2026-02-17T07:05:00Z)" in section
        assert "whatsapp" not in boot.markdown and "garden party" not in section
    finally:
        await nc.close()
