"""Memory a mem0 or Zep user would trust (issue 41), end to end: a real nats-server, the
recall worker (and where a test needs them the knowledge and boot workers) in-process with
the embedded store and the default embedder."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import nats
import pytest
from cortex_testkit import caught_up
from nats.aio.client import Client

from schemas.api import RecallReply, RecallRequest
from shared.config import load_settings
from shared.provision import provision
from shared.runtime import WorkerHost
from workers import __version__
from workers.recall.capture import remembered_id
from workers.registry import all_specs, consumer_specs, consuming_workers

CONVERSATION = [
    ("Bob", "Can someone review my PR for the billing service?"),
    ("Alice", "Sure Bob, I will look at the code this afternoon."),
    ("Bob", "Thanks! Code reviews are always slow on Mondays."),
    ("Alice", "I prefer doing code reviews in the morning."),
    ("Bob", "I like reviews on Friday afternoons when it is quiet."),
    ("Alice", "Let's talk about the release checklist."),
    ("Bob", "The release is on Thursday."),
]


def message(agent: str, i: int, sender: str, content: str, *, day: int = 2, session: str = "s1") -> dict[str, Any]:
    return {"id": f"{agent}-m{i}", "agent": agent, "session": session,
            "ts": f"2026-03-{day:02d}T09:{i % 60:02d}:00Z", "role": "user", "sender": sender, "content": content}


@pytest.fixture
async def pipeline(nats_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """The recall worker, and the workers a test names (indirect param), on the default embedder."""
    names = getattr(request, "param", ("recall",))
    settings = load_settings({"CORTEX_NATS_URL": nats_url, "CORTEX_DATA_DIR": str(tmp_path / "data"),
                              "CORTEX_RUNTIME_FETCH_TIMEOUT_MS": "100", "CORTEX_BOOT_WAIT_MS": "200"})
    nc = await nats.connect(nats_url)
    await provision(nc.jetstream(), settings, consumer_specs())
    specs = all_specs()
    host = WorkerHost(settings, [specs[name] for name in names], __version__)
    task = asyncio.create_task(host.run())
    try:
        yield nc
    finally:
        host.stop.set()
        await asyncio.wait_for(task, timeout=30)
        await nc.close()


async def publish(nc: Client, family: str, event: dict[str, Any], kind: str) -> None:
    await nc.jetstream().publish(f"cortex.{family}.{event['agent']}.{kind}", json.dumps(event).encode(),
                                 headers={"Nats-Msg-Id": event["id"]})


async def settled(nc: Client, wait_for: Any, *workers: str) -> None:
    for worker in workers or ("recall",):
        await wait_for(lambda w=worker: caught_up(nc.jetstream(), w), within=60)
    await wait_for(lambda: serving(nc), within=30)


async def serving(nc: Client) -> bool:
    try:
        reply = await nc.request("cortex.api.recall.probe", b'{"query":"x"}', timeout=2)
    except Exception:
        return False
    return not (reply.headers and reply.headers.get("Nats-Service-Error"))


async def ask(nc: Client, agent: str, query: str, **kw: Any) -> RecallReply:
    raw = await nc.request(f"cortex.api.recall.{agent}", msgspec.json.encode(RecallRequest(query=query, **kw)),
                           timeout=10)
    assert not (raw.headers and raw.headers.get("Nats-Service-Error")), raw.data
    return msgspec.json.decode(raw.data, type=RecallReply)


def remember(agent: str, event_id: str, content: str, ts: str = "2026-03-02T09:30:00Z") -> dict[str, Any]:
    return {"id": event_id, "agent": agent, "ts": ts, "kind": "remember", "value": {"content": content},
            "actor": "mcp"}


async def test_a_remembered_memory_outranks_conversation_that_mentions_its_words(
    pipeline: Client, wait_for: Any
) -> None:
    """Issue 41: seven messages, then cortex_remember; recall with the memory's own words
    ranked it 6th of 6 under turns (a preference under episodes, the +0.2 of the sender Bob)."""
    nc = pipeline
    for i, (sender, text) in enumerate(CONVERSATION):
        await publish(nc, "msg", message("rita", i, sender, text), "received")
    await publish(nc, "feedback", remember("rita", "rem-bob", "Bob prefers code reviews on Friday afternoons."),
                  "remember")
    await settled(nc, wait_for)
    reply = await ask(nc, "rita", "Bob prefers code reviews on Friday afternoons.")
    assert reply.memories[0].id == remembered_id("rita", "rem-bob")


@pytest.mark.parametrize("pipeline", [("knowledge", "recall")], indirect=True)
async def test_a_fact_answers_the_question_it_answers(pipeline: Client, wait_for: Any) -> None:
    """"Maria works at Acme Analytics GmbH", a knowledge fact, was missing from the top for
    "where does Maria work?" under conversation that shares its words."""
    nc = pipeline
    chatter = ["Maria said the Acme Analytics dashboard is slow again.", "Where does the analytics job run?",
               "Maria will work on the GmbH paperwork next week.", "Maria Acme Analytics GmbH contract is in review.",
               "Maria works at Acme Analytics GmbH."]
    for i, text in enumerate(chatter):
        await publish(nc, "msg", message("omar", i, "Jonas", text), "received")
    start = {"id": "omar-s2", "agent": "omar", "session": "s2", "ts": "2026-03-03T09:00:00Z"}
    await settled(nc, wait_for, "knowledge")
    await publish(nc, "session", start, "start")  # the facts are mirrored as of it
    await settled(nc, wait_for)
    for question in ("where does Maria work?", "Maria Acme Analytics"):
        top = (await ask(nc, "omar", question)).memories[0]
        assert top.fact_id is not None and top.content == "Maria works at Acme Analytics GmbH", question


def cli(*args: str, url: str, data: Path) -> Any:
    import os

    import worker_forkserver

    return worker_forkserver.run_cortex(args, timeout=120,
                                        env={**os.environ, "CORTEX_NATS_URL": url, "CORTEX_DATA_DIR": str(data)})


TUESDAY_THEN_THURSDAY = [
    (2, "Alice", "Our deploy day is Tuesday."),
    (2, "Bob", "Good, that suits the release train."),
    (2, "Alice", "The API runs on Postgres 14."),
    (4, "Bob", "Our deploy day is Thursday now."),
    (4, "Alice", "The API runs on Postgres 16 since the upgrade."),
    (4, "Bob", "Lunch at noon?"),
]


async def test_a_superseded_value_stops_ranking_and_as_of_answers_what_was_believed_then(
    pipeline: Client, nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    """Issue 41: "…is Thursday now" after "…is Tuesday", "…Postgres 16 since the upgrade"
    after "runs on Postgres 14": today's answer carries the new value only — no window quoting
    the old one either — and `--as-of` a date before the change answers the old one."""
    nc = pipeline
    for i, (day, sender, text) in enumerate(TUESDAY_THEN_THURSDAY):
        await publish(nc, "msg", message("tess", i, sender, text, day=day, session=f"s{day}"), "received")
    await settled(nc, wait_for)
    now = await ask(nc, "tess", "Which day do we deploy?")
    assert "Thursday" in now.memories[0].content
    assert not any("Tuesday" in m.content for m in now.memories), [m.content for m in now.memories]
    db = await ask(nc, "tess", "Which Postgres version does the API run on?")
    assert "Postgres 16" in db.memories[0].content
    assert not any("Postgres 14" in m.content for m in db.memories)

    then = await ask(nc, "tess", "Which day do we deploy?", as_of="2026-03-03T00:00:00Z")
    assert "Tuesday" in then.memories[0].content
    assert not any("Thursday" in m.content for m in then.memories)
    assert then.memories[0].superseded_by  # believed then, replaced since
    shown = await asyncio.to_thread(cli, "recall", "tess", "Which day do we deploy?", "--as-of", "2026-03-03",
                                    url=nats_url, data=tmp_path / "cli")
    assert shown.returncode == 0, shown.stderr
    first = next(line for line in shown.stdout.splitlines() if "deploy day" in line)
    assert "Tuesday" in first and "Thursday" not in shown.stdout


@pytest.mark.parametrize("pipeline", [tuple(all_specs())], indirect=True)
async def test_the_briefing_shows_one_value_of_a_fact(pipeline: Client, wait_for: Any) -> None:
    """Issue 41: after "Our deploy day is Tuesday." and "Our deploy day is Thursday now." the
    thread's summary said Tuesday while Rules & Key Memories said Thursday, in one BOOTSTRAP."""
    nc = pipeline
    said = [(2, "Alice", "Let's talk about the deploy schedule: our deploy day is Tuesday."),
            (2, "Bob", "Remember: always run the migrations before the deploy."),
            (3, "Alice", "Our deploy day is Thursday now.")]
    for i, (day, sender, text) in enumerate(said):
        await publish(nc, "msg", message("uma", i, sender, text, day=day), "received")
    await settled(nc, wait_for)
    # asked about: its memory is accessed, so it is a key memory of the briefing
    assert "Thursday" in (await ask(nc, "uma", "Which day do we deploy?")).memories[0].content
    await publish(nc, "session", {"id": "uma-s2", "agent": "uma", "session": "s2", "ts": "2026-03-04T09:00:00Z"},
                  "start")
    await settled(nc, wait_for, *consuming_workers())
    raw = await nc.request("cortex.api.boot.uma", b"{}", timeout=20)
    markdown = msgspec.json.decode(raw.data).get("markdown", "")
    assert "Thursday" in markdown, markdown
    assert "Tuesday" not in markdown, markdown


async def test_an_edit_replays_and_keeps_its_history(pipeline: Client, nats_url: str, tmp_path: Path,
                                                      wait_for: Any) -> None:
    """Issue 41: `cortex memory update` publishes a memory_update (so it replays); the memory keeps
    its id, recall finds the new statement, `--as-of` before the edit the old one, and
    `cortex memory show --history` lists every version with its event."""
    nc = pipeline
    await publish(nc, "feedback", remember("vera", "rem-db", "The staging database lives on db-2."), "remember")
    await publish(nc, "msg", message("vera", 1, "Ana", "Lunch at noon?", day=3), "received")
    await settled(nc, wait_for)
    memory_id = remembered_id("vera", "rem-db")
    edited = await asyncio.to_thread(cli, "memory", "update", "vera", memory_id, "The staging database lives on db-7.",
                                     url=nats_url, data=tmp_path / "cli")
    assert edited.returncode == 0, edited.stderr
    event_id = edited.stdout.split("(event ")[1].split(")")[0]

    async def updated() -> bool:
        top = (await ask(nc, "vera", "Where does the staging database live?")).memories[0]
        return top.id == memory_id and "db-7" in top.content

    await wait_for(updated, within=60)
    before = (await ask(nc, "vera", "Where does the staging database live?", as_of="2026-03-02T12:00:00Z")).memories
    assert before[0].id == memory_id and "db-2" in before[0].content  # as it was then
    shown = await asyncio.to_thread(cli, "memory", "show", "vera", memory_id, "--history", url=nats_url,
                                    data=tmp_path / "cli")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert any("rem-db" in line and "db-2" in line for line in lines), shown.stdout
    assert any(event_id in line and "db-7" in line for line in lines), shown.stdout
    missing = await asyncio.to_thread(cli, "memory", "show", "vera", "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
                                      url=nats_url, data=tmp_path / "cli")
    assert missing.returncode != 0 and "no memory" in missing.stderr


@pytest.mark.parametrize("pipeline", [("recall", "boot")], indirect=True)
async def test_a_recall_and_a_briefing_for_one_person_never_show_another_persons_memories(
    pipeline: Client, wait_for: Any
) -> None:
    """Issue 41 (mem0's user_id): a support agent talking with two customers keeps one pool;
    a recall for Alice sees her memories and the shared ones, never Bob's — and the agent's
    answer to her is hers too; her briefing's key memories leave Bob's out."""
    nc = pipeline
    turns = [("alice", "user", "My order number is 4711 and the parcel never arrived.", "s-alice"),
             (None, "assistant", "I am sorry, I will check order 4711 for you.", "s-alice"),
             ("bob", "user", "My order number is 9000 and the parcel is damaged.", "s-bob"),
             (None, "assistant", "I am sorry, I will check order 9000 for you.", "s-bob")]
    for i, (sender, role, text, session) in enumerate(turns):
        event = {**message("desk", i, sender or "", text, session=session), "role": role}
        if sender is None:
            event.pop("sender")
        await publish(nc, "msg", event, "received" if role == "user" else "sent")
    for person, text, event_id in (("alice", "Alice prefers e-mail over phone calls.", "r-alice"),
                                   ("bob", "Bob prefers phone calls over e-mail.", "r-bob"),
                                   (None, "Refunds take five working days.", "r-shared")):
        value = {"content": text, "type": "fact", **({"person": person} if person else {})}
        await publish(nc, "feedback", {**remember("desk", event_id, text), "value": value}, "remember")
    await settled(nc, wait_for, "recall", "boot")

    for person, mine, theirs in (("alice", "4711", "9000"), ("bob", "9000", "4711")):
        reply = await ask(nc, "desk", "What is my order number?", person=person)
        texts = " ".join(m.content for m in reply.memories)
        assert mine in texts and theirs not in texts, (person, texts)
        contact = " ".join(m.content for m in (await ask(nc, "desk", "phone or e-mail?", person=person)).memories)
        assert person.capitalize() in contact and ("Bob" if person == "alice" else "Alice") not in contact
    everyone = " ".join(m.content for m in (await ask(nc, "desk", "What is my order number?")).memories)
    assert "4711" in everyone and "9000" in everyone  # without a person: the agent's whole pool

    for question in ("phone or e-mail?", "refunds working days"):  # accessed: key memories of the briefing
        await ask(nc, "desk", question)
    await settled(nc, wait_for, "recall")
    await wait_for(lambda: briefed(nc, "Refunds take five working days"), within=30)
    raw = await nc.request("cortex.api.boot.desk", b'{"person": "alice"}', timeout=20)
    markdown = msgspec.json.decode(raw.data)["markdown"]
    assert "Alice prefers e-mail" in markdown and "Bob prefers" not in markdown, markdown
    assert "Refunds take five working days" in markdown


async def briefed(nc: Client, text: str) -> bool:
    raw = await nc.request("cortex.api.boot.desk", b"{}", timeout=20)
    return text in msgspec.json.decode(raw.data).get("markdown", "")


@pytest.mark.parametrize("pipeline", [("knowledge", "recall")], indirect=True)
async def test_a_producer_of_messages_only_still_gets_its_facts_mirrored_and_memories_maintained(
    pipeline: Client, wait_for: Any
) -> None:
    """Issue 41: upkeep ran only at session starts, so an agent in one endless session never
    consolidated, expired or mirrored its facts. Now the session's first message of a new day
    does it: the knowledge fact answers the question, and the repeated thanks are one memory."""
    nc = pipeline
    said = [(2, "Maria works at Acme Analytics GmbH."), (2, "Thanks!"), (2, "thanks"),
            (2, "Maria will work on the GmbH paperwork next week.")]
    for i, (day, text) in enumerate(said):
        await publish(nc, "msg", message("walt", i, "Jonas", text, day=day), "received")
    await settled(nc, wait_for, "knowledge", "recall")
    await publish(nc, "msg", message("walt", 9, "Jonas", "Good morning!", day=3), "received")  # a new day
    await settled(nc, wait_for, "knowledge", "recall")
    top = (await ask(nc, "walt", "where does Maria work?")).memories[0]
    assert top.fact_id is not None and top.content == "Maria works at Acme Analytics GmbH"
    thanks = [m for m in (await ask(nc, "walt", "thanks")).memories if "hanks" in m.content and "\n" not in m.content]
    assert len(thanks) == 1


async def test_daily_notes_are_dated_by_their_file_name_never_by_mtime(
    pipeline: Client, nats_url: str, tmp_path: Path, wait_for: Any
) -> None:
    """Issue 41: after `cortex index` of a copied memory directory, 2026-03-05.md showed in
    today's narrative (its mtime) and the agent's "now" jumped nine months. A daily note is
    its file name's day; any other note the agent's latest event time."""
    import os

    from schemas.events import NoteEvent

    nc = pipeline
    await publish(nc, "msg", message("xena", 1, "Ana", "Lunch at noon?", day=6), "received")
    await settled(nc, wait_for)
    notes = tmp_path / "memory"
    (notes / "projects").mkdir(parents=True)
    (notes / "2026-03-05.md").write_text("# Incident\nStaging DB slow after the vacuum.\n")
    (notes / "projects" / "cortex.md").write_text("# Deploys\nThe deploy window is Tuesday morning.\n")
    for path in (notes / "2026-03-05.md", notes / "projects" / "cortex.md"):
        os.utime(path, (1_900_000_000, 1_900_000_000))  # a copy made in 2030
    done = await asyncio.to_thread(cli, "index", str(notes), "--agent", "xena", url=nats_url, data=tmp_path / "cli")
    assert done.returncode == 0, done.stderr
    js = nc.jetstream()
    sub = await js.pull_subscribe("cortex.notes.*.xena.section", durable=None, stream="CORTEX_EVENTS")
    got = [msgspec.json.decode(m.data, type=NoteEvent) for m in await sub.fetch(2, timeout=10)]
    times = {n.path: n.ts.isoformat() for n in got}
    assert times == {"2026-03-05.md": "2026-03-05T00:00:00+00:00",
                     "projects/cortex.md": "2026-03-06T09:01:00+00:00"}  # the agent's latest event
