"""The channels worker far behind its sources — what a broker restart or a SIGKILL under paced
load leaves (issue 44): threads and decisions apply the stream one event per batch, writing a
revision at nearly every event, and channels starts only when they are done, so at each of its
session triggers the sources' history no longer reaches back. The channel summaries must still
equal a clean run's: the reader derives the sources as of each trigger from the events.
Before, it read their latest documents (``history_too_short``) and the summaries differed."""

from __future__ import annotations

from typing import Any

import nats
import pytest

from schemas.docs import ThreadsDoc
from shared.asof import DocReader
from shared.names import BUCKET_THREADS, EVENTS_STREAM

pytestmark = pytest.mark.faults

WORKERS = ("channels", "threads", "decisions")
BUCKETS = ("cortex_channels",)
AGENT = "agent-0"


async def test_channel_summaries_made_far_behind_their_sources_equal_a_clean_run(
    nats_url: str, faults: Any, make_chat_events: Any
) -> None:
    # three session ends and starts, the last one 60 messages before the end: what the summaries
    # finally say is read as of it, the sources' history by then tens of revisions past it
    events = make_chat_events(300, 1, seed=13, triggers_every=80)
    expected = await faults.clean_documents(events, WORKERS, BUCKETS)
    summaries = [c for c in (expected[f"cortex_channels/{AGENT}"] or b"").split(b'"summary":')[1:]
                 if not c.startswith(b'""')]
    assert summaries, "the clean run's summaries should say something"

    faults.init(nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await faults.publish_all(js, events)
    one_per_batch = {"CORTEX_RUNTIME_BATCH_SIZE": "1"}  # a revision per event that changed a document
    for name in ("threads", "decisions"):
        faults.procs.start(name, nats_url, **one_per_batch)
    await faults.wait_caught_up(js, ("threads", "decisions"))

    last = int((await js.stream_info(EVENTS_STREAM)).state.last_seq)
    last_trigger = max(i + 1 for i, (subject, _, _) in enumerate(events) if ".session." in subject)
    _, exact = await DocReader(js).as_of(BUCKET_THREADS, AGENT, ThreadsDoc, last_trigger)
    assert not exact, "threads' history should no longer reach the last trigger: the test would prove nothing"

    faults.procs.start("channels", nats_url)
    assert await faults.wait_caught_up(js, ("channels",)) == last
    got = await faults.documents(js, BUCKETS, [AGENT])
    assert got == expected, faults.differences(got, expected)
    await nc.close()
