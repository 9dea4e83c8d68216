"""Every ``CORTEX_<SECTION>_ENABLED=false`` is honoured: the section's worker keeps consuming
(composed workers wait on its checkpoint) but makes no document, dead-letters nothing, and a
disabled recall opens no store and answers its API with one clear error. Two runs on the demo
conversation split the eight sections so each is seen both off and on."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import CONSUMING, cortex, demo_file, drained

from schemas.api import ErrorReply
from shared.config import load_settings
from shared.kv import kv_read
from shared.names import DLQ_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

# section -> the bucket its worker writes
SECTIONS = {"threads": "cortex_threads", "decisions": "cortex_decisions", "commitments": "cortex_commitments",
            "precompaction": "cortex_snapshots", "narrative": "cortex_narratives", "boot": "cortex_boot",
            "knowledge": "cortex_knowledge", "recall": "cortex_recall"}
RUNS = [("threads", "commitments", "precompaction", "knowledge"), ("decisions", "narrative", "boot", "recall")]


@pytest.mark.parametrize("disabled", RUNS, ids=["-".join(r) for r in RUNS])
async def test_a_disabled_section_makes_no_document_and_the_others_do(
    disabled: tuple[str, ...], nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    env = {"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"), "CORTEX_EMBEDDER": "hashing",
           "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", **{f"CORTEX_{s.upper()}_ENABLED": "false" for s in disabled}}
    settings = load_settings(env)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, list(all_specs().values()), __version__)
    task = asyncio.create_task(host.run())
    try:
        assert cortex("publish", str(demo_file(tmp_path)), url=nats_url).returncode == 0
        await wait_for(lambda: drained(js, CONSUMING), within=90)
        present = {s for s, bucket in SECTIONS.items()
                   if (await kv_read(await js.key_value(bucket), "main"))[0] is not None}
        assert present == set(SECTIONS) - set(disabled)
        assert (await js.stream_info(DLQ_STREAM)).state.messages == 0
        reply = await nc.request("cortex.api.recall.main", b'{"query": "auth migration"}', timeout=10)
        if "recall" in disabled:
            error = msgspec.json.decode(reply.data, type=ErrorReply).error
            assert (error.code, error.message) == (503, "recall is disabled (CORTEX_RECALL_ENABLED=false)")
            assert not (tmp_path / "data" / "qdrant").exists() and not (tmp_path / "data" / "edge").exists()
        else:
            assert b'"memories"' in reply.data
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
