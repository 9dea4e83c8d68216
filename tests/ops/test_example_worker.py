"""Adding a composed worker (issue 20) takes its module, one registry line, its document
Struct and its settings Struct — nothing else. The worker below is such a worker, defined here and not shipped: a
"topics" document per agent, the open threads' titles as of each session end, composed from
the threads worker's document, and shown in the agent's briefing as a section of its own
(``WorkerSpec.briefing``). Registered with one line (``workers.registry.SPECS``):

* the manifest generator makes its StatefulSet, its kustomization entry, its absent-worker
  alert and its NATS user, whose permissions follow from its ``WorkerSpec`` (its consumer,
  its bucket, history reads of its source's bucket, its source's consumer state) — and the
  boot worker's user may read its bucket and its consumer's state;
* the checkout as the generators leave it (``deploy/gen_manifests.py``,
  ``deploy/gen_settings_doc.py``) needs no hand edit: both overlays render its StatefulSet
  (dev with one replica, prod with two) logging in with its password, which the dev Secret
  and the NATS container have; the README lists it among the workers and the backup loop of
  docs/operations.md its bucket;
* ``cortex init``'s provisioning makes its consumer and its bucket (with history);
* it runs under exactly its generated user on a real nats-server, beside the threads worker
  under its own, and its documents come out as of each trigger, with the lag of its source;
* the BOOTSTRAP ``cortex.api.boot.<agent>`` serves (boot under its generated user) shows
  them as the section it declares, after Active Threads; so does the one boot stores at a
  trigger, waiting on the example worker like on its own sources and reading its document
  as of the trigger, and ``cortex replay boot`` makes that one byte for byte;
* ``cortex replay topics`` rebuilds them;
* its knobs are ``CORTEX_TOPICS_<KNOB>`` (``WorkerSpec.config``): validated when its host
  starts, in its producer's hash and in the settings reference of docs/operations.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import gen_manifests as gen
import gen_settings_doc
import msgspec
import nats
import nats.errors
import pytest
import yaml
from cortex_testkit import wait_for, wait_listening
from ops_support import ROOT, kustomize, nats_conf

from schemas.docs import BootDoc, Integrity, ThreadsDoc
from shared.asof import DocReader
from shared.briefing import BriefingSection
from shared.codec import Envelope
from shared.config import Settings, SettingsError, load_settings
from shared.embedded import free_port, nats_server_binary
from shared.footprint import Source
from shared.inputs import ComposedProjection, Reading
from shared.kv import kv_read
from shared.names import BUCKET_THREADS
from shared.projection import ProjectionHandler
from shared.provision import provision
from shared.runtime import WorkerContext, WorkerHost, WorkerSpec, producer_id
from workers import __version__, registry

# ------------------------------------------------------------------ the example worker (its module)

BUCKET = "cortex_topics"


class TopicsDoc(msgspec.Struct, kw_only=True):
    """The open threads' titles as of the agent's last session end."""

    agent: str
    open_threads: list[str]
    lagging: list[str]
    integrity: Integrity


SOURCES = (Source("threads", "threads", BUCKET_THREADS, ThreadsDoc),)


class TopicsSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Its knobs, read from CORTEX_TOPICS_<KNOB> (``WorkerSpec.config``)."""

    max_topics: Annotated[int, msgspec.Meta(ge=1, le=100)] = 20


class TopicsProjection(ComposedProjection[TopicsDoc]):
    bucket = BUCKET
    doc_type = TopicsDoc

    def __init__(self, ctx: WorkerContext) -> None:
        super().__init__(ctx, SOURCES)
        self.max_topics = ctx.settings.section(ctx.worker, TopicsSettings).max_topics

    def accepts(self, env: Envelope) -> bool:
        return (env.family, env.kind) == ("session", "end")

    def compose(self, doc: TopicsDoc | None, env: Envelope, inputs: Reading) -> TopicsDoc:
        threads = inputs.docs["threads"]
        titles = sorted(t.title for t in threads.threads if t.status == "open") if threads is not None else []
        titles = titles[:self.max_topics]
        return TopicsDoc(agent=env.agent, open_threads=titles, lagging=inputs.lagging, integrity=Integrity())


async def build(ctx: WorkerContext) -> ProjectionHandler:
    return ProjectionHandler(ctx.js, ctx.worker, ctx.producer, [TopicsProjection(ctx)],
                             bucket_names={BUCKET: ctx.bucket(BUCKET)}, cut_on_triggers=True)


def briefing_lines(doc: TopicsDoc) -> list[str]:
    """Its section of the briefing: one line per open thread (none: no section)."""
    return [f"- {title}" for title in doc.open_threads]


# placed after Active Threads (300), before Pending Operations (400)
BRIEFING = BriefingSection("🗂️ Open Topics", BUCKET, TopicsDoc, briefing_lines, chars=400, order=350)

SPEC = WorkerSpec(name="topics", families=("session",), build=build, buckets=(BUCKET,), sources=SOURCES,
                  briefing=(BRIEFING,), config=TopicsSettings)

# ------------------------------------------------------------------ the tests


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one registry line."""
    monkeypatch.setattr(registry, "SPECS", [*registry.SPECS, SPEC])


@pytest.mark.usefixtures("registered")
def test_the_generator_makes_its_manifest_its_kustomization_entry_and_its_user() -> None:
    files = gen.outputs()
    manifest = files[gen.WORKERS_DIR / "topics.yaml"]
    assert 'args: ["worker", "topics"]' in manifest and "value: cortex-topics" in manifest
    assert "ANTHROPIC_API_KEY" not in manifest and "image: cortex\n" in manifest  # no LLM, no recall stack
    assert "\n  - workers/topics.yaml\n" in files[gen.KUSTOMIZATION_FILE]
    assert "user: cortex-topics" in files[gen.NATS_VALUES_FILE]
    for alerts in (files[gen.ALERTS_FILE], files[gen.PROMETHEUS_RULE_FILE]):  # watched for disappearing
        assert 'worker=~"topics(-.+)?"}), "worker", "topics"' in alerts
    publish = gen.all_permissions()["workers"]["topics"]["publish"]
    assert "$JS.API.CONSUMER.MSG.NEXT.CORTEX_EVENTS.topics" in publish  # its own consumer
    assert f"$KV.{BUCKET}.>" in publish  # its own bucket
    assert "$JS.API.CONSUMER.CREATE.KV_cortex_threads" in publish  # its source's history, for as-of reads
    assert "$JS.API.CONSUMER.INFO.CORTEX_EVENTS.threads" in publish  # its source's watermark
    assert not any("cortex_decisions" in s or s.startswith("$KV.cortex_threads") for s in publish)
    boot = gen.all_permissions()["workers"]["boot"]["publish"]  # the briefing reads its section's document
    assert {f"$JS.API.DIRECT.GET.KV_{BUCKET}.>", f"$JS.API.CONSUMER.CREATE.KV_{BUCKET}",  # latest, and as of
            "$JS.API.CONSUMER.INFO.CORTEX_EVENTS.topics"} <= set(boot)  # a trigger (after its watermark)
    assert not any(s.startswith(f"$KV.{BUCKET}") for s in boot)  # and never writes it


def generated_checkout(tmp: Path) -> Path:
    """The parts of the checkout the generators write (k8s/, the README, docs/operations.md),
    copied to ``tmp`` and regenerated there: what adding a worker leaves once they have run."""
    shutil.copytree(ROOT / "k8s", tmp / "k8s")
    (tmp / "docs").mkdir()
    for relative in ("README.md", "docs/operations.md"):
        shutil.copy(ROOT / relative, tmp / relative)
    for path, text in {**gen.outputs(), **gen_settings_doc.outputs()}.items():
        target = tmp / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return tmp


def by_kind(rendered: str, kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in yaml.safe_load_all(rendered) if r and r["kind"] == kind}


@pytest.mark.usefixtures("registered")
def test_the_overlays_and_the_docs_need_no_hand_edit(tmp_path: Path) -> None:
    """Every list that names each worker, user or bucket is generated: with nothing edited by
    hand, every registered worker (the example among them) is deployed by both overlays and
    named by the docs. A list left to a hand edit misses the example and fails here."""
    root = generated_checkout(tmp_path)
    workers = list(registry.all_specs())
    assert "topics" in workers
    users = gen.all_users(gen.all_permissions())
    for overlay, replicas in (("dev", 1), ("prod", 2)):
        rendered = kustomize(root / "k8s" / "overlays" / overlay)
        sets = by_kind(rendered, "StatefulSet")
        assert set(sets) == {f"cortex-{w}" for w in workers}, overlay
        for name, sts in sets.items():
            assert sts["spec"]["replicas"] == replicas, (overlay, name)
            env = {e["name"]: e for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]}
            assert env["CORTEX_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] == gen.secret_key(name)
        if overlay == "dev":  # the example Secret: a password for every user
            keys = set(by_kind(rendered, "Secret")[gen.USERS_SECRET]["stringData"])
            assert keys == {gen.secret_key(u) for u in users} and "topics" in keys
    nats_values = yaml.safe_load((root / "k8s/helm/nats-values.yaml").read_text())
    assert set(nats_values["container"]["env"]) == {gen.password_env(u) for u in users}  # each password it refers to
    assert "CORTEX_NATS_PW_TOPICS" in nats_values["container"]["env"]
    readme = (root / "README.md").read_text()
    assert "(the Kubernetes entrypoint): " + ", ".join(workers) + " |" in readme  # the example last
    loop = re.search(r"^for b in ([a-z_ ]+); do$", (root / "docs/operations.md").read_text(), flags=re.M)
    assert loop is not None and "topics" in loop.group(1).split()


@pytest.mark.usefixtures("registered")
def test_its_settings_are_its_own_variables_with_no_edit_of_the_settings_module() -> None:
    assert load_settings({"CORTEX_TOPICS_MAX_TOPICS": "3"}).section("topics", TopicsSettings).max_topics == 3
    assert load_settings({}).section("topics", TopicsSettings) == TopicsSettings()
    assert (producer_id(SPEC, load_settings({"CORTEX_TOPICS_MAX_TOPICS": "3"}), __version__)
            != producer_id(SPEC, load_settings({}), __version__))  # its documents say which settings made them
    with pytest.raises(SettingsError, match="CORTEX_TOPICS_MAX_TOPICS='0': expected an integer between 1 and 100"):
        WorkerHost(load_settings({"CORTEX_TOPICS_MAX_TOPICS": "0"}), [SPEC], __version__)  # refused at start
    assert "| `CORTEX_TOPICS_MAX_TOPICS` | `20` | an integer between 1 and 100 |" in gen_settings_doc.settings_table()


T0 = datetime(2026, 3, 4, 14, 0, tzinfo=UTC)


def events(agent: str) -> list[tuple[str, bytes]]:
    def at(minutes: int) -> str:
        return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def session(kind: str, name: str, minutes: int) -> tuple[str, bytes]:
        body = {"id": f"{agent}-{name}-{kind}", "agent": agent, "session": name, "ts": at(minutes)}
        return f"cortex.session.{agent}.{kind}", msgspec.json.encode(body)

    def message(i: int, content: str) -> tuple[str, bytes]:
        body = {"id": f"{agent}-m{i}", "agent": agent, "session": "s1", "ts": at(i + 1), "role": "user",
                "sender": "albert", "channel": "webchat", "content": content}
        return f"cortex.msg.{agent}.received", msgspec.json.encode(body)

    return [session("start", "s1", 0),
            message(1, "Let's talk about the billing rewrite: the invoice generator is too slow for month end."),
            message(2, "Also the search latency regression is back, p95 doubled since Monday."),
            session("end", "s1", 10)]


@contextlib.contextmanager
def permissioned_server(tmp: Path, perms: dict[str, Any]) -> Iterator[tuple[str, dict[str, str]]]:
    """A nats-server with exactly the generated users and permissions (as the helm values have them)."""
    passwords = {u: secrets.token_hex(12) for u in gen.all_users(perms)}
    port = free_port()
    conf = tmp / "nats.conf"
    conf.write_text(nats_conf({"accounts": gen.nats_accounts(perms)},
                              {"host": "127.0.0.1", "port": port, "jetstream": {"store_dir": str(tmp / "js")}}))
    log = tmp / "nats-server.log"
    env = {**os.environ, **{gen.password_env(u): p for u, p in passwords.items()}}
    server = subprocess.Popen([nats_server_binary(), "-c", str(conf), "-l", str(log)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_listening(server, port, log)
        yield f"nats://127.0.0.1:{port}", passwords
    finally:
        server.terminate()
        server.wait(10)


def settings_as(url: str, user: str, password: str, tmp: Path) -> Settings:
    return load_settings({"CORTEX_NATS_URL": url, "CORTEX_NATS_USER": user, "CORTEX_NATS_PASSWORD": password,
                          "CORTEX_DATA_DIR": str(tmp / "data"), "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100",
                          "CORTEX_BOOT_WAIT_MS": "10000"})


@contextlib.asynccontextmanager
async def hosted(settings: Settings, *specs: WorkerSpec) -> AsyncIterator[WorkerHost]:
    host = WorkerHost(settings, list(specs), __version__, catalog=registry.all_specs().values())
    task = asyncio.create_task(host.run())
    try:
        yield host
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=60)


def boot_api() -> WorkerSpec:
    """The boot worker's API alone (its consume loop would wait on the workers not run here)."""
    return dataclasses.replace(registry.all_specs()["boot"], build=None, families=(), buckets=())


async def ask_boot(nc: nats.NATS, agent: str) -> BootDoc | None:
    try:
        reply = await nc.request(f"cortex.api.boot.{agent}", b"{}", timeout=5)
    except (nats.errors.NoRespondersError, nats.errors.TimeoutError):
        return None  # not serving yet
    return msgspec.json.decode(reply.data, type=BootDoc)


@pytest.mark.usefixtures("registered")
async def test_it_is_provisioned_and_runs_under_exactly_its_generated_user(tmp_path: Path) -> None:
    with permissioned_server(tmp_path, gen.all_permissions()) as (url, passwords):
        admin = settings_as(url, gen.ADMIN_USER, passwords[gen.ADMIN_USER], tmp_path)
        nc = await nats.connect(url, user=gen.ADMIN_USER, password=passwords[gen.ADMIN_USER])
        try:
            js = nc.jetstream()
            await provision(js, admin, registry.consumer_specs(), registry.doc_buckets())  # what `cortex init` does
            assert (await js.consumer_info("CORTEX_EVENTS", "topics")).config.filter_subjects
            ends = {}
            for agent in ("ada", "bob"):
                for subject, data in events(agent):
                    ends[agent] = (await js.publish(subject, data)).seq  # the last: the session end
            threads = settings_as(url, "cortex-threads", passwords["cortex-threads"], tmp_path)
            topics = settings_as(url, "cortex-topics", passwords["cortex-topics"], tmp_path)
            async with hosted(threads, registry.all_specs()["threads"]), hosted(topics, SPEC):
                kv = await js.key_value(BUCKET)

                async def made(agent: str) -> TopicsDoc | None:
                    raw, _ = await kv_read(kv, agent)
                    return msgspec.json.decode(raw, type=TopicsDoc) if raw is not None else None

                docs = {agent: await wait_for(lambda a=agent: made(a), within=60) for agent in ("ada", "bob")}
            boot = settings_as(url, "cortex-boot", passwords["cortex-boot"], tmp_path)
            async with hosted(boot, boot_api()):
                briefing = await wait_for(lambda: ask_boot(nc, "ada"), within=60)
            expected = {}
            for agent in docs:  # the threads document as it was just before the session end
                before, _ = await DocReader(js).as_of(BUCKET_THREADS, agent, ThreadsDoc, ends[agent])
                assert before is not None
                expected[agent] = (ends[agent], sorted(t.title for t in before.threads if t.status == "open"))
        finally:
            await nc.close()
    for agent, doc in docs.items():
        end, titles = expected[agent]
        assert doc.agent == agent and doc.lagging == [] and doc.integrity.last_seq == end
        assert doc.open_threads == titles and titles
        assert doc.integrity.producer.startswith("topics@")
    section = "## 🗂️ Open Topics\n" + "".join(f"- {title}\n" for title in expected["ada"][1])
    assert section in briefing.markdown  # its own section, after Active Threads
    assert briefing.markdown.index("## 🧵 Active Threads") < briefing.markdown.index(section)
    assert "topics" not in briefing.lagging
    log = (tmp_path / "nats-server.log").read_text()
    assert "Violation" not in log, [line for line in log.splitlines() if "Violation" in line]


@pytest.mark.usefixtures("registered")
async def test_a_replay_rebuilds_its_documents(nats_url: str, tmp_path: Path) -> None:
    """``cortex replay topics`` resets the bucket its spec owns and derives the documents again:
    a document left wrong in the bucket (with the watermark of the right one) is rebuilt."""
    from shared.replay import run_replay

    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "10000"})
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await provision(js, settings, registry.consumer_specs(), registry.doc_buckets())
        for subject, data in events("ada"):
            await js.publish(subject, data)
        kv = await js.key_value(BUCKET)

        async def made() -> bytes | None:
            return (await kv_read(kv, "ada"))[0]

        async with hosted(settings, registry.all_specs()["threads"], SPEC):
            right = await wait_for(made, within=60)
        doc = msgspec.json.decode(right, type=TopicsDoc)
        await kv.put("ada", msgspec.json.encode(msgspec.structs.replace(doc, open_threads=["a stale title"])))
        await run_replay(WorkerHost(settings, [SPEC], __version__, catalog=registry.all_specs().values()),
                         js, [SPEC], None, False, lambda progress: None)
        replayed = await wait_for(made, within=60)
        assert msgspec.json.decode(replayed, type=TopicsDoc).open_threads == doc.open_threads
        assert replayed == right
    finally:
        await nc.close()


@pytest.mark.usefixtures("registered")
async def test_boot_briefs_it_as_of_each_trigger_and_a_replay_makes_the_same_briefing(
        nats_url: str, tmp_path: Path) -> None:
    """Every worker in one process (as ``cortex up`` runs them), the example among them: the
    BOOTSTRAP boot stores at the next session's start waited on it like on its own sources
    and shows its document as of that start; ``cortex replay boot`` makes it byte for byte."""
    from shared.replay import run_replay

    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "10000",
                              "CORTEX_EMBEDDER": "hashing"})
    start = {"id": "ada-s2-start", "agent": "ada", "session": "s2", "ts": "2026-03-04T14:30:00Z"}
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await provision(js, settings, registry.consumer_specs(), registry.doc_buckets())
        for subject, data in [*events("ada"), ("cortex.session.ada.start", msgspec.json.encode(start))]:
            await js.publish(subject, data)
        boot_kv, topics_kv = await js.key_value("cortex_boot"), await js.key_value(BUCKET)

        async def briefed() -> bytes | None:
            # complete: the early path waits for a busy throughput worker (recall embedding the
            # backlog published before the workers started) only a moment, names it lagging and
            # completes the document once it has caught up (CI of 11-30, loaded: lagging recall)
            raw, _ = await kv_read(boot_kv, "ada")
            doc = msgspec.json.decode(raw, type=BootDoc) if raw is not None else None
            return raw if doc is not None and doc.session == "s2" and not doc.lagging else None

        async with hosted(settings, *registry.all_specs().values()):
            stored = await wait_for(briefed, within=120)
        doc = msgspec.json.decode(stored, type=BootDoc)
        revision = (await kv_read(boot_kv, "ada"))[1]
        topics = msgspec.json.decode((await kv_read(topics_kv, "ada"))[0] or b"", type=TopicsDoc)
        boot = registry.all_specs()["boot"]
        await run_replay(WorkerHost(settings, [boot], __version__, catalog=registry.all_specs().values()),
                         js, [boot], None, False, lambda progress: None)
        replayed = await wait_for(briefed, within=60)
        assert (await kv_read(boot_kv, "ada"))[1] > revision  # written again
    finally:
        await nc.close()
    assert doc.trigger == "session_start" and doc.lagging == []
    assert topics.open_threads and topics.integrity.last_seq < doc.integrity.last_seq  # made at s1's end
    assert "## 🗂️ Open Topics\n" + "".join(f"- {t}\n" for t in topics.open_threads) in doc.markdown
    assert replayed == stored
