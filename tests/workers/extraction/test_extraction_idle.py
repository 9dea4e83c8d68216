"""Issue 39, eleventh round, "no work without a use": with no model configured the extraction
worker derives nothing, so the server delivers it none of the events (it paid ~1 ms of CPU an
event to take, decode and ack each just to ignore it); the briefing still finds it caught up, and
a model configured later reads the windows from its start on — not the history it slept
through. Real workers, a real nats-server, the real anthropic SDK against a fake transport."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx2
import nats
from cortex_testkit import briefed, caught_up, drained, wait_for
from llm_fakes import Asked, good_answer, is_openai, tool_reply

from shared.config import load_settings
from shared.kv import kv_read
from shared.names import BUCKET_CHECKPOINTS, EVENTS_STREAM
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs

PATTERNS = ("threads", "decisions", "knowledge")


def session(name: str, said: list[str], agent: str = "ada") -> list[tuple[str, dict[str, Any]]]:
    base = {"agent": agent, "session": name}
    events = [(f"cortex.session.{agent}.start", {**base, "id": f"{name}-start", "ts": "2026-03-02T09:00:00Z"})]
    events += [(f"cortex.msg.{agent}.received", {**base, "id": f"{name}-m{i}", "ts": f"2026-03-02T09:0{i}:00Z",
                                                  "role": "user", "sender": "albert", "content": text})
               for i, text in enumerate(said, 1)]
    return [*events, (f"cortex.session.{agent}.end", {**base, "id": f"{name}-end", "ts": "2026-03-02T09:30:00Z"})]


class Reader:
    """The model: records what each window's reading was asked; answers like the real one."""

    def __init__(self) -> None:
        self.readings: list[str] = []

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        asked = Asked(json.loads(request.content), is_openai(request))
        if asked.tool != "record_reading":
            return httpx2.Response(200, json=good_answer(asked))
        self.readings.append(asked.prompt)
        return httpx2.Response(200, json=tool_reply("record_reading", {"missed": {}, "wrong": []}, asked.openai))


async def test_extraction_without_a_model_is_delivered_nothing_and_a_model_later_reads_from_then(
        nats_url: str, tmp_path: Path) -> None:
    env = {"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path), "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
           "CORTEX_BOOT_WAIT_MS": "3000"}
    idle = load_settings(env)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    specs = all_specs()
    try:
        await provision(js, idle, consumer_specs())  # `cortex init`: every consumer whole
        whole = sorted((await js.consumer_info(EVENTS_STREAM, "extraction")).config.filter_subjects or [])
        assert any(".msg." in s for s in whole)
        for subject, payload in session("s1", ["The audit trail goes into Postgres from now on."]):
            await js.publish(subject, json.dumps(payload).encode())
        before = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)

        host = WorkerHost(idle, [specs[n] for n in (*PATTERNS, "extraction", "boot")], __version__)
        task = asyncio.create_task(host.run())
        try:
            async def narrowed() -> bool:
                info = await js.consumer_info(EVENTS_STREAM, "extraction")
                raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "extraction")
                return raw is not None and ".msg." not in " ".join(info.config.filter_subjects or [])

            await wait_for(narrowed, within=30)
            raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "extraction")
            assert int(raw or b"0") == before
            for subject, payload in session("s2", ["We ship the exporter on Monday."]):
                await js.publish(subject, json.dumps(payload).encode())
            await js.publish("cortex.session.ada.start", json.dumps(
                {"agent": "ada", "session": "s3", "id": "s3-start", "ts": "2026-03-02T10:00:00Z"}).encode())

            # the briefing of s3 waits (3 s) for the workers not run here and names them; not extraction
            boot = await wait_for(lambda: briefed(js, "ada", "s3", PATTERNS), within=60)
        finally:
            host.stop.set()
            await asyncio.wait_for(task, timeout=30)
        assert boot.lagging and not any("extraction" in source for source in boot.lagging), boot.lagging
        info = await js.consumer_info(EVENTS_STREAM, "extraction")
        # only the model's late answers: the server delivered it none of the events; its checkpoint
        # stands at the stream's end as of its start, and as of its stop (it derives nothing from them)
        assert all(".feedback." in s and s.endswith(".llm_answer") for s in info.config.filter_subjects or [])
        assert (info.delivered.consumer_seq or 0) == 0 and await caught_up(js, "extraction")
        raw, _ = await kv_read(await js.key_value(BUCKET_CHECKPOINTS), "extraction")
        assert int(raw or b"0") == int((await js.stream_info(EVENTS_STREAM)).state.last_seq) > before
        raw, _ = await kv_read(await js.key_value("cortex_extraction"), "ada")
        assert raw is None  # nothing derived, as before

        # a model configured later: its start widens the consumer; the model reads the windows
        # from then on, not s1's or s2's
        reader = Reader()
        model = load_settings({**env, "ANTHROPIC_API_KEY": "sk-test"})
        extras = {"llm_http_client": httpx2.AsyncClient(transport=httpx2.MockTransport(reader.handle))}
        host = WorkerHost(model, [specs[n] for n in (*PATTERNS, "extraction")], __version__, extras=extras)
        task = asyncio.create_task(host.run())
        try:
            async def widened() -> bool:
                info = await js.consumer_info(EVENTS_STREAM, "extraction")
                return sorted(info.config.filter_subjects or []) == whole

            await wait_for(widened, within=30)
            for subject, payload in session("s4", ["Invoices are archived for ten years."])[1:]:
                await js.publish(subject, json.dumps(payload).encode())

            async def read() -> bool:
                return bool(reader.readings) and await drained(js, (*PATTERNS, "extraction"))

            await wait_for(read, within=60)
        finally:
            host.stop.set()
            await asyncio.wait_for(task, timeout=30)
        said = " ".join(reader.readings)
        assert "archived for ten years" in said
        assert not re.search(r"audit trail|exporter on Monday", said)
    finally:
        await nc.close()
