"""What the multi-day e2e tests share (tests/e2e/test_multiday.py, test_toolday.py): every
worker its own process, a day's events published with ``cortex publish``, a briefing's
section, and the agent's documents rebuilt by ``cortex replay`` byte for byte."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import ALL, OWNED_BUCKETS, cortex, differences, drained, snapshot_docs
from nats.js.client import JetStreamContext

from schemas.docs import BootDoc
from shared.kv import kv_read


async def start_pipeline(nats_url: str, workers_procs: Any) -> Any:
    """Streams and consumers made, every worker started; a connection (close it)."""
    assert cortex("init", url=nats_url).returncode == 0
    for name in ALL:
        workers_procs.start(name, nats_url, CORTEX_BOOT_WAIT_MS="10000")
    return await nats.connect(nats_url)


def publish(url: str, path: Path, batch: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in batch))
    published = cortex("publish", str(path), url=url)
    assert published.returncode == 0, published.stderr


def section(markdown: str, heading: str) -> str:
    """The text under ``heading`` up to the next section ("" when there is no such section)."""
    return markdown.split(heading, 1)[1].split("\n## ", 1)[0] if heading in markdown else ""


async def assert_replay_reproduces(js: JetStreamContext, url: str, tmp: Path, agent: str, wait_for: Any) -> None:
    """Once the pipeline is at rest, the agent's documents are wiped and rebuilt by `cortex replay
    --agent`: every one byte for byte as the live workers made it."""

    async def settled() -> bool:
        raw, _ = await kv_read(await js.key_value("cortex_boot"), agent)
        return await drained(js) and raw is not None and not msgspec.json.decode(raw, type=BootDoc).lagging

    await wait_for(settled, within=180)
    before = await snapshot_docs(js, [agent])
    for bucket in OWNED_BUCKETS:
        await (await js.key_value(bucket)).delete(agent)
    replayed = cortex("replay", "--agent", agent, url=url, CORTEX_RUNTIME_LEASE_TTL_S="2",
                      CORTEX_BOOT_WAIT_MS="10000", CORTEX_DATA_DIR=str(tmp / "replay-data"))
    assert replayed.returncode == 0, replayed.stderr
    await wait_for(settled, within=180)
    after = await snapshot_docs(js, [agent])
    assert after == before, differences(before, after)
