"""Composed documents made for a trigger (a compaction's snapshot and narrative, a session
end's narrative) are revisions of their own, however the stream was batched: the boot
document made for the next trigger reads them as of that trigger (``shared.asof``), and a
trigger right behind them in the same batch must not replace them unseen (issue 18: the
session start right after a session end had no narrative)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import nats

from schemas.docs import NarrativeDoc, SnapshotDoc
from shared.asof import DocReader
from shared.config import load_settings
from shared.names import EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

T0 = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)
NAMES = ["threads", "decisions", "snapshot", "narrative"]


def events(agent: str) -> list[tuple[str, bytes]]:
    def body(name: str, seconds: int, **extra: Any) -> bytes:
        ts = (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return msgspec.json.encode({"id": f"{agent}-{name}", "agent": agent, "session": "s1", "ts": ts, **extra})

    def message(name: str, seconds: int, content: str) -> tuple[str, bytes]:
        return f"cortex.msg.{agent}.received", body(name, seconds, role="user", sender="albert", content=content)

    def compaction(name: str, seconds: int, content: str) -> tuple[str, bytes]:
        return f"cortex.compaction.{agent}.before", body(name, seconds, message_count=4, compacting_count=2,
                                                         messages=[{"role": "user", "content": content}])

    return [
        (f"cortex.session.{agent}.start", body("start", 0)),
        message("m1", 60, "Let's get back to the billing rewrite, the invoice job is too slow."),
        compaction("c1", 120, "the first compaction's hot zone"),
        message("m2", 180, "We decided to move invoice rendering to a queue because month end blocks the API."),
        compaction("c2", 240, "the second compaction's hot zone"),
        (f"cortex.session.{agent}.end", body("end", 300)),
        (f"cortex.session.{agent}.start", body("start2", 303)),
    ]


async def test_each_trigger_of_one_batch_leaves_its_own_snapshot_and_narrative(
    nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "10000"})
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        await provision(js, settings, consumer_specs())
        # a backlog: each worker takes all of it in one batch
        seq = {name: (await js.publish(subject, data)).seq
               for name, (subject, data) in zip(["start", "m1", "c1", "m2", "c2", "end", "start2"], events("ada"),
                                                 strict=True)}

        async def drained() -> bool:
            for name in NAMES:
                info = await js.consumer_info(EVENTS_STREAM, name)
                if info.num_pending or info.num_ack_pending:
                    return False
            return True

        host = WorkerHost(settings, [all_specs()[n] for n in NAMES], __version__)
        task = asyncio.create_task(host.run())
        try:
            await wait_for(drained, within=60)
        finally:
            host.stop.set()
            await asyncio.wait_for(task, timeout=60)
        reader = DocReader(js)

        async def made_for(bucket: str, doc_type: type[Any], trigger: str) -> Any:
            """What the boot document for ``trigger`` reads: the document made for it."""
            found, complete = await reader.as_of(bucket, "ada", doc_type, seq[trigger] + 1)
            assert complete
            return found

        first: SnapshotDoc = await made_for("cortex_snapshots", SnapshotDoc, "c1")
        assert first is not None and first.integrity.last_seq == seq["c1"]
        assert "the first compaction's hot zone" in first.markdown
        for trigger in ("c1", "c2", "end", "start2"):
            narrative: NarrativeDoc = await made_for("cortex_narratives", NarrativeDoc, trigger)
            assert narrative is not None and narrative.integrity.last_seq == seq[trigger], trigger
        # the session start reads the narrative as it was just before it: the one made at the end
        before_start, _ = await reader.as_of("cortex_narratives", "ada", NarrativeDoc, seq["start2"])
        assert before_start is not None and before_start.ts == T0 + timedelta(seconds=300)
    finally:
        await nc.close()
