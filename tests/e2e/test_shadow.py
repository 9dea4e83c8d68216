"""Shadow mode and channel modes: shadow workers write only cortex_shadow_* buckets, live
documents stay byte-identical to a run without them, `off` channels change nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import nats
from cortex_testkit import cortex

from schemas.docs import ThreadsDoc
from shared.embedded import EmbeddedNats
from shared.kv import kv_read

MODES = "webchat=live,whatsapp=shadow,cron=off"


def conversation(tmp: Path) -> Path:
    base = {"type": "msg.received", "agent": "main", "session": "s", "role": "user", "sender": "albert"}
    lines = [
        {**base, "id": "sh-1", "ts": "2026-02-17T09:00:00Z", "channel": "webchat",
         "content": "Let's get back to the search index rebuild."},
        {**base, "id": "sh-2", "ts": "2026-02-17T09:01:00Z", "channel": "webchat",
         "content": "Jetzt zu dem Datenbank-Umzug, der ist dringend."},
        {**base, "id": "sh-3", "ts": "2026-02-17T09:02:00Z", "channel": "whatsapp",
         "content": "Back to the billing export for the accountants."},
        {**base, "id": "sh-4", "ts": "2026-02-17T09:03:00Z", "channel": "cron",
         "content": "Back to the nightly cleanup job."},
    ]
    path = tmp / "shadow.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


async def idle(js: Any, names: list[str]) -> bool:
    for n in names:
        info = await js.consumer_info("CORTEX_EVENTS", n)
        if info.num_pending or info.num_ack_pending:
            return False
    return True


async def threads_of(js: Any, bucket: str) -> ThreadsDoc:
    raw, _ = await kv_read(await js.key_value(bucket), "main")
    assert raw is not None, bucket
    return msgspec.json.decode(raw, type=ThreadsDoc)


async def live_run(url: str, tmp: Path, procs: Any, wait_for: Any, with_shadow: bool) -> tuple[bytes, Any]:
    assert cortex("init", url=url, CORTEX_MODE="shadow").returncode == 0  # live and shadow buckets
    assert cortex("init", url=url).returncode == 0
    procs.start("threads", url, CORTEX_LANGUAGE="en", CORTEX_CHANNEL_MODES=MODES)
    names = ["threads"]
    if with_shadow:
        procs.start("threads", url, CORTEX_MODE="shadow", CORTEX_LANGUAGE="both", CORTEX_CHANNEL_MODES=MODES)
        names.append("threads-shadow")
    assert cortex("publish", str(conversation(tmp)), url=url).returncode == 0
    nc = await nats.connect(url)
    js = nc.jetstream()
    await wait_for(lambda: _exists(js, names), within=30)
    await wait_for(lambda: idle(js, names), within=60)
    raw, _ = await kv_read(await js.key_value("cortex_threads"), "main")
    assert raw is not None
    return raw, nc


async def _exists(js: Any, names: list[str]) -> bool:
    try:
        for n in names:
            await js.consumer_info("CORTEX_EVENTS", n)
        return True
    except Exception:
        return False


async def test_shadow_workers_show_what_would_change_and_leave_live_documents_alone(
    nats_url: str, tmp_path: Path, workers_procs: Any, wait_for: Any
) -> None:
    live_raw, nc = await live_run(nats_url, tmp_path, workers_procs, wait_for, with_shadow=True)
    try:
        js = nc.jetstream()
        live = msgspec.json.decode(live_raw, type=ThreadsDoc)
        shadow = await threads_of(js, "cortex_shadow_threads")
        live_titles = {t.title for t in live.threads}
        shadow_titles = {t.title for t in shadow.threads}
        assert any("search index" in t for t in live_titles)
        assert not any("Datenbank" in t or "billing" in t or "cleanup" in t for t in live_titles)
        assert any("Datenbank" in t for t in shadow_titles)  # the new pattern set (German)
        assert any("billing" in t for t in shadow_titles)  # the shadow channel, live only in shadow
        assert not any("cleanup" in t for t in shadow_titles)  # an off channel: nowhere

        diff = cortex("diff", "shadow", "--agent", "main", url=nats_url)
        assert diff.returncode == 0, diff.stderr
        assert "cortex_threads/main:" in diff.stdout and "added" in diff.stdout and "Datenbank" in diff.stdout
    finally:
        await nc.close()

    with EmbeddedNats(str(tmp_path / "clean")) as clean:
        workers_procs.stop_all()
        clean_raw, clean_nc = await live_run(clean.url, tmp_path, workers_procs, wait_for, with_shadow=False)
        await clean_nc.close()
    assert clean_raw == live_raw  # byte-identical to a run without the shadow worker
