"""Issue 38: a model that cannot answer never stalls a worker. With the API unreachable, a key
revoked (401), an account closed (403), rate limited with Retry-After (429), failing (500),
too slow, or answering garbage, the knowledge, narrative, recall and extraction workers write
the structured documents within the call's bound and go on; once the model answers, each call
that fell back is asked again and its answer lands as an ``llm_answer`` event, a later
revision of the document — and a replay makes the same bytes without asking the model.

The real anthropic and openai SDKs against a fake HTTP transport (tests/support/llm_fakes.py:
the Messages API and Chat Completions); real nats-server, real workers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import cortex, drained
from cortex_testkit import wait_for as wait_until_true
from llm_fakes import CAPTURED, CAUSES, KNOWLEDGE_ANSWER, NARRATIVE_TEXT, PROVIDER_ENV, READ_DECISION, Model
from nats.aio.client import Client
from nats.js.client import JetStreamContext

from schemas.docs import ExtractionDoc, KnowledgeDoc, NarrativeDoc, RecallDoc
from schemas.events import FeedbackEvent
from shared.config import Settings, load_settings
from shared.kv import kv_keys, kv_read
from shared.llm import Later, LlmClient, LlmHealth
from shared.names import BUCKET_LLM_CACHE, EVENTS_STREAM, stored_subject
from shared.provision import provision
from shared.replay import run_replay
from shared.runtime import WorkerHost
from workers import __version__
from workers.registry import all_specs, consumer_specs, doc_buckets

# a short bound: 0.3 s a request, 1 s a call; the model probed again at most every 100 ms
QUICK = {"CORTEX_LLM_TIMEOUT_S": "0.3", "CORTEX_LLM_DEADLINE_S": "1", "CORTEX_LLM_RETRY_BASE_MS": "10",
         "CORTEX_LLM_PROBE_MAX_MS": "100"}
PROVIDERS = sorted(PROVIDER_ENV)


async def wait_for(predicate: Callable[[], Awaitable[Any]], within: float) -> Any:
    """``cortex_testkit.wait_for``, a poll the loaded server does not answer in time counting
    as "not yet" (the workers under test are what must keep up, not this test's reads)."""
    async def poll() -> Any:
        try:
            return await predicate()
        except nats.errors.TimeoutError:
            return None

    return await wait_until_true(poll, within=within)


def conversation(agent: str = "main") -> list[tuple[str, dict[str, Any]]]:
    base = {"agent": agent, "session": "s1", "role": "user", "sender": "albert"}
    texts = ["Let's get back to the auth migration now.",
             "Maria works at Acme Analytics GmbH and owns the rollout.",
             "For the auth migration we decided to roll out behind a flag."]
    return [*((f"cortex.msg.{agent}.received", {**base, "id": f"m{i}", "ts": f"2026-02-17T09:0{i}:00Z",
                                                "content": text}) for i, text in enumerate(texts, 1)),
            (f"cortex.session.{agent}.end", {"agent": agent, "session": "s1", "id": "end-1",
                                             "ts": "2026-02-17T09:30:00Z"})]


WORKERS = ("threads", "decisions", "narrative", "knowledge", "recall", "extraction")
LLM_WORKERS = ("knowledge", "narrative", "recall", "extraction")


def settings_for(url: str, tmp: Path, provider: str = "anthropic") -> Settings:
    return load_settings({"CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(tmp), **PROVIDER_ENV[provider],
                          "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_EMBEDDER": "hashing",
                          "CORTEX_KNOWLEDGE_LLM_BATCH_SIZE": "3", "CORTEX_RECALL_LLM_BATCH_SIZE": "3", **QUICK})


@asynccontextmanager
async def pipeline(url: str, tmp: Path, model: Model, provider: str = "anthropic") -> AsyncIterator[JetStreamContext]:
    settings = settings_for(url, tmp, provider)
    nc = await nats.connect(url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, [all_specs()[n] for n in WORKERS], __version__,
                      extras={"llm_http_client": model.client()})
    task = asyncio.create_task(host.run())
    try:
        yield js
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
        from workers.recall import worker as recall_worker

        recall_worker.HOLDER.close()


async def doc(js: JetStreamContext, bucket: str, kind: type[Any], agent: str = "main") -> Any:
    raw, _ = await kv_read(await js.key_value(bucket), agent)
    return msgspec.json.decode(raw, type=kind) if raw is not None else None


async def llm_entities(js: JetStreamContext) -> list[str]:
    knowledge = await doc(js, "cortex_knowledge", KnowledgeDoc)
    return [e.value for e in knowledge.entities if "llm" in e.source] if knowledge else []


async def read_by_model(js: JetStreamContext) -> list[str] | None:
    """The decisions the model's reading of the session window added (None: no window read)."""
    extraction = await doc(js, "cortex_extraction", ExtractionDoc)
    return None if extraction is None or extraction.window else [d.what for d in extraction.decisions]


async def health(js: JetStreamContext) -> dict[str, LlmHealth]:
    kv = await js.key_value(BUCKET_LLM_CACHE)
    return {key.removeprefix("health."): msgspec.json.decode((await kv_read(kv, key))[0] or b"", type=LlmHealth)
            for key in await kv_keys(js, BUCKET_LLM_CACHE, "health")}


async def fell_back(js: JetStreamContext) -> bool:
    """Every worker has applied everything, each document as the patterns made it."""
    if not await drained(js, WORKERS):
        return False
    narrative = await doc(js, "cortex_narratives", NarrativeDoc)
    recall = await doc(js, "cortex_recall", RecallDoc)
    knowledge = await doc(js, "cortex_knowledge", KnowledgeDoc)
    return (narrative is not None and narrative.ts == datetime(2026, 2, 17, 9, 30, tzinfo=UTC)
            and recall is not None and recall.integrity.events == 4 and knowledge is not None
            and await read_by_model(js) is not None)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("cause", CAUSES)
async def test_no_model_gives_the_structured_documents_and_the_answers_land_once_it_answers(
    cause: str, provider: str, nats_url: str, tmp_path: Path
) -> None:
    model = Model(cause)
    async with pipeline(nats_url, tmp_path, model, provider) as js:
        for subject, payload in conversation():
            await js.publish(subject, json.dumps(payload).encode())
        # no worker stalls: everything is applied while the model still fails
        await wait_for(lambda: fell_back(js), within=60)
        assert not model.back.is_set() and model.answered == 0
        knowledge = await doc(js, "cortex_knowledge", KnowledgeDoc)
        assert "Maria" in [e.value for e in knowledge.entities]  # the patterns' entities
        assert await llm_entities(js) == []
        recall = await doc(js, "cortex_recall", RecallDoc)
        assert CAPTURED not in recall.key_memories and recall.memories >= 1 and recall.llm_pending == []
        assert await read_by_model(js) == []  # the window was read at the session end: the patterns' alone
        narrative = await doc(js, "cortex_narratives", NarrativeDoc)
        if cause != "malformed":  # a narrative is free text: no answer of the model is "malformed"
            assert narrative.source == "structured" and "**Timeline:**" in narrative.markdown
            states = await health(js)
            assert {states[w].state for w in LLM_WORKERS} == {"unreachable"}
        if cause == "401" and provider == "anthropic":  # what an operator sees
            status = await asyncio.to_thread(cortex, "status", url=nats_url)
            [line] = [ln for ln in status.stdout.splitlines() if ln.strip().startswith("knowledge ")
                      and "LLM:" in ln]
            assert "LLM: unreachable since " in line and "(auth: HTTP 401), structured fallback" in line

        model.back.set()  # the model answers again: the calls that fell back are asked again

        async def enriched() -> bool:
            recall = await doc(js, "cortex_recall", RecallDoc)
            narrative = await doc(js, "cortex_narratives", NarrativeDoc)
            return (await llm_entities(js) == ["Cortex"] and CAPTURED in recall.key_memories
                    and narrative.source == "llm" and await read_by_model(js) == [READ_DECISION]
                    and await drained(js, WORKERS))

        await wait_for(enriched, within=60)
        narrative = await doc(js, "cortex_narratives", NarrativeDoc)
        assert narrative.markdown == NARRATIVE_TEXT
        # each provider's own wire format (Chat Completions: the system prompt is a message)
        assert {r["messages"][0]["role"] for r in model.requests} == {"system" if provider == "openai" else "user"}
        assert narrative.enhanced is not None  # the briefing's wording landed too
        extraction = await doc(js, "cortex_extraction", ExtractionDoc)  # dated by the message it was said in
        assert extraction.decisions[0].at == datetime(2026, 2, 17, 9, 1, tzinfo=UTC)
        assert [t.title for t in narrative.enhanced.threads.values()] == ["Auth migration to the key service"]
        kv = await js.key_value(BUCKET_LLM_CACHE)
        assert [k for k in await kv_keys(js, BUCKET_LLM_CACHE, "pending")] == []
        await wait_for(lambda: _all_ok(js), within=10)
        assert (await kv_read(kv, "health.knowledge"))[0] is not None


async def _all_ok(js: JetStreamContext) -> bool:
    states = await health(js)
    return all(states[w].state == "ok" for w in LLM_WORKERS)


async def test_a_replay_makes_the_enriched_documents_again_without_asking_the_model(
    nats_url: str, tmp_path: Path
) -> None:
    """The call that fell back is cached as "no model": the replay takes the structured path
    there, as the live run did; the answer that came later is an event in the stream, applied
    where it landed. The knowledge, narrative and extraction documents come out byte for byte (a
    whole-pipeline replay: the narrative is composed from threads and decisions)."""
    model = Model("unreachable")
    buckets = ("cortex_knowledge", "cortex_narratives", "cortex_threads", "cortex_decisions", "cortex_extraction")
    async with pipeline(nats_url, tmp_path, model) as js:
        for subject, payload in conversation():
            await js.publish(subject, json.dumps(payload).encode())
        await wait_for(lambda: fell_back(js), within=60)
        model.back.set()
        await wait_for(lambda: _landed(js), within=60)
        before = {b: (await kv_read(await js.key_value(b), "main"))[0] for b in buckets}
        answers = await _answer_events(js)
        assert sorted(answers) == ["briefing", "extract", "knowledge", "narrative", "recall"]
    asked = len(model.requests)

    nc = await nats.connect(nats_url)  # the workers are stopped: the replay is the only writer
    try:
        js = nc.jetstream()
        replayer = WorkerHost(settings_for(nats_url, tmp_path), [], __version__,
                              extras={"llm_http_client": model.client()}, catalog=all_specs().values())
        replayed = ("threads", "decisions", "narrative", "knowledge", "extraction")
        await run_replay(replayer, js, [all_specs()[n] for n in replayed],
                         None, False, lambda progress: None)
        after = {b: (await kv_read(await js.key_value(b), "main"))[0] for b in buckets}
        assert after == before
        assert len(model.requests) == asked  # every answer came from the cache or the stream
        assert sorted(await _answer_events(js)) == sorted(answers)  # and none was asked again
    finally:
        await nc.close()


async def _landed(js: JetStreamContext) -> bool:
    narrative = await doc(js, "cortex_narratives", NarrativeDoc)
    recall = await doc(js, "cortex_recall", RecallDoc)
    return (await llm_entities(js) == ["Cortex"] and narrative is not None and narrative.source == "llm"
            and narrative.enhanced is not None and recall is not None and CAPTURED in recall.key_memories
            and await read_by_model(js) == [READ_DECISION] and await drained(js, WORKERS))


async def _answer_events(js: JetStreamContext) -> list[str]:
    """The purposes of the llm_answer events in the stream: as many as the stream counts on
    their subject, each waited for (not "until none came for half a second": on a loaded
    machine the ordered consumer's first delivery can take longer, and the list came short)."""
    subject = stored_subject("cortex", "feedback", "main", "llm_answer")
    stored = sum(((await js.stream_info(EVENTS_STREAM, subjects_filter=subject)).state.subjects or {}).values())
    if not stored:
        return []
    sub = await js.subscribe(subject, stream=EVENTS_STREAM, ordered_consumer=True)
    try:
        return [msgspec.json.decode((await sub.next_msg(timeout=30)).data, type=FeedbackEvent).value["purpose"]
                for _ in range(stored)]
    finally:
        await sub.unsubscribe()


async def test_a_deferred_call_survives_a_restart_and_is_published_with_its_context(nc: Client) -> None:
    """The call that fell back is kept in cortex_llm_cache: an instance that takes over asks it
    again, and the answer is published on the agent's llm_answer subject with the context its
    caller gave, the call's event time, and the worker's name nowhere but in its id."""
    model = Model("500")
    js = nc.jetstream()
    settings = load_settings({"ANTHROPIC_API_KEY": "sk-test", **QUICK})
    await provision(js, settings, consumer_specs())
    when = datetime(2026, 2, 17, 9, tzinfo=UTC)
    first = LlmClient(settings, js, http_client=model.client(), name="knowledge", worker="knowledge")
    await first.start()
    got = await first.answer(agent="ada", purpose="knowledge", system="You extract entities", prompt="p", when=when,
                             later=Later({"batch": [1, 2]}))
    assert got.outcome == "unavailable" and first.deferred == 1
    await first.aclose()  # the instance goes away with the model still down
    assert len(await kv_keys(js, BUCKET_LLM_CACHE, "pending")) == 1

    model.back.set()
    second = LlmClient(settings, js, http_client=model.client(), name="knowledge", worker="knowledge")
    await second.start()
    subject = stored_subject("cortex", "feedback", "ada", "llm_answer")

    async def published() -> Any:
        try:
            return await js.get_last_msg(EVENTS_STREAM, subject)
        except nats.js.errors.NotFoundError:
            return None

    msg = await wait_for(published, within=10)
    event = msgspec.json.decode(msg.data, type=FeedbackEvent)
    assert (event.kind, event.ts, event.actor) == ("llm_answer", when, "cortex-llm")
    assert event.value == {"purpose": "knowledge", "text": KNOWLEDGE_ANSWER, "asked_at": "2026-02-17T09:00:00Z",
                           "context": {"batch": [1, 2]}}
    await wait_for(lambda: _no_pending(js), within=10)
    assert second.deferred == 0
    await second.aclose()


async def _no_pending(js: JetStreamContext) -> bool:
    return not await kv_keys(js, BUCKET_LLM_CACHE, "pending")


async def test_a_shadow_worker_defers_nothing(nc: Client) -> None:
    """Shadow workers read the same stream: they apply the live worker's late answers, and
    publishing their own would hand the live worker answers it never asked for."""
    from shared.health import Health
    from shared.llm import worker_llm
    from shared.runtime import WorkerContext

    js = nc.jetstream()
    settings = load_settings({"ANTHROPIC_API_KEY": "sk-test", **QUICK})
    await provision(js, settings, consumer_specs())
    model = Model("unreachable")
    ctx = WorkerContext(nc=nc, js=js, settings=settings, worker="knowledge", consumer="knowledge-shadow",
                        producer="p", health=Health("knowledge-shadow"), shadow=True,
                        extras={"llm_http_client": model.client()})
    llm = await worker_llm(ctx, "cortex_knowledge")
    got = await llm.answer(agent="ada", purpose="knowledge", system="s", prompt="p",
                           when=datetime(2026, 2, 17, tzinfo=UTC), later=Later())
    assert got.outcome == "unavailable" and llm.deferred == 0
    assert await kv_keys(js, BUCKET_LLM_CACHE, "pending") == []
    await llm.aclose()
    await ctx.aclose()


async def test_a_forget_purges_the_agents_deferred_calls_and_their_answers_never_land(nc: Client) -> None:
    """A deferred call holds the agent's text in its prompt: `cortex forget` purges it, and an
    asker that already holds it drops it instead of publishing what the model made of it."""
    from shared.forget import AgentForget

    model = Model("500")
    js = nc.jetstream()
    settings = load_settings({"ANTHROPIC_API_KEY": "sk-test", **QUICK})
    await provision(js, settings, consumer_specs())
    llm = LlmClient(settings, js, http_client=model.client(), name="knowledge", worker="knowledge")
    await llm.start()
    when = datetime(2026, 2, 17, 9, tzinfo=UTC)
    for agent in ("alice", "bob"):
        got = await llm.answer(agent=agent, purpose="knowledge", system="You extract entities",
                               prompt=f"what {agent} said", when=when, later=Later())
        assert got.outcome == "unavailable"

    async def no_store(modes: Any) -> str:
        return "no memory store here"

    record = await AgentForget(js, prefix="cortex", agent="bob", consumers=[], recall_consumer="", lease_ttl_s=1,
                               buckets=doc_buckets(), erase_memories=no_store).run(wait_s=0)
    assert record.report.llm_pending == 1
    model.back.set()

    async def alice_answered() -> Any:
        try:
            return await js.get_last_msg(EVENTS_STREAM, stored_subject("cortex", "feedback", "alice", "llm_answer"))
        except nats.js.errors.NotFoundError:
            return None

    await wait_for(alice_answered, within=10)

    async def settled() -> bool:
        return llm.deferred == 0

    await wait_for(settled, within=10)  # bob's was asked too, and dropped
    assert await _no_pending(js)
    with pytest.raises(nats.js.errors.NotFoundError):
        await js.get_last_msg(EVENTS_STREAM, stored_subject("cortex", "feedback", "bob", "llm_answer"))
    await llm.aclose()


async def test_without_a_provider_no_worker_asks_a_model(nats_url: str, tmp_path: Path) -> None:
    """The structured path is the default: with no provider configured (an OPENAI_API_KEY
    alone configures none, nor do model names) every worker runs the demo conversation —
    messages, a compaction, a session end, the next session's briefing — and no request
    reaches a model, nothing is cached or deferred, the extraction worker writes nothing."""
    from cortex_testkit import demo_file

    model = Model("unreachable")  # records whatever reaches it
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path),
                              "OPENAI_API_KEY": "sk-test", "CORTEX_LLM_MODEL_EXTRACTION": "gpt-4.1-mini",
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_EMBEDDER": "hashing",
                              "CORTEX_BOOT_WAIT_MS": "10000"})
    assert settings.model_provider is None
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await provision(js, settings, consumer_specs())
    host = WorkerHost(settings, list(all_specs().values()), __version__, extras={"llm_http_client": model.client()})
    task = asyncio.create_task(host.run())
    try:
        published = await asyncio.to_thread(cortex, "publish", str(demo_file(tmp_path)), url=nats_url)
        assert published.returncode == 0, published.stderr

        async def briefed() -> bool:
            return await drained(js) and (await kv_read(await js.key_value("cortex_boot"), "main"))[0] is not None

        await wait_for(briefed, within=120)
        assert model.requests == []
        assert (await kv_read(await js.key_value("cortex_extraction"), "main"))[0] is None
        assert await kv_keys(js, BUCKET_LLM_CACHE) == []
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()
        from workers.recall import worker as recall_worker

        recall_worker.HOLDER.close()
