"""``cortex eval briefing``, pipeline level: the labelled conversations through an embedded
nats-server and every worker (as ``cortex demo`` runs them), then the stored documents.

Every conversation is one agent; its events are published in order with their ids as
``Nats-Msg-Id``. When every consumer has drained, the stored threads, decisions and
commitments documents are scored like the cores' (``briefing.score_conversation``), and
the stored BOOTSTRAP — the session-start document of the session that began right after
the last one ended — is read the way the agent reads it. A stored document that still
names a lagging source is given a short grace (``COMPLETION_GRACE_S``) to be completed
before it counts as a lag line: by then every source has caught up.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar
from zoneinfo import ZoneInfo

import msgspec
import nats.errors

from schemas.docs import (
    BootDoc,
    CommitmentsDoc,
    DecisionsDoc,
    ExtractionDoc,
    KnowledgeDoc,
    NarrativeDoc,
    RecallDoc,
    SnapshotDoc,
    ThreadsDoc,
)
from shared.briefing import Briefing
from shared.config import Settings, without_llm
from shared.embedded import EmbeddedNats
from shared.feedback import NO_EVENT_TIME
from shared.kv import kv_read
from shared.names import (
    BUCKET_BOOT,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_EXTRACTION,
    BUCKET_KNOWLEDGE,
    BUCKET_NARRATIVES,
    BUCKET_RECALL,
    BUCKET_SNAPSHOTS,
    BUCKET_THREADS,
    consumers_of,
)
from shared.runtime import WorkerHost
from workers import __version__
from workers.evals import PUBLISH_ACK_S
from workers.evals.briefing import (
    Conversation,
    Dataset,
    Derived,
    Placed,
    Progress,
    Score,
    agent_of,
    conversation_events,
    eval_settings,
    score_conversation,
    select,
    snapshot_lines,
)
from workers.evals.briefing_checks import (
    briefing_defects,
    fragment_defect,
    near_duplicate,
    normalize,
    repeated_why,
    strip_ellipses,
)
from workers.extraction.view import model_view

COMPLETION_GRACE_S: Final = 15.0
# the workers must have caught up within this, or within one second per MIN_EVENTS_PER_S
# events of a long run (the real-conversation set publishes thousands)
CATCH_UP_S: Final = 300.0
MIN_EVENTS_PER_S: Final = 10.0
LLM_SLOWER: Final = 10  # with a model, a worker waits on its answers: ten times the time to catch up
PROGRESS_EVERY_S: Final = 15.0
_T = TypeVar("_T")
_SECTION: Final = re.compile(r"^## (?![\w])")
DECISION_LINE: Final = re.compile(r"^- \S+ \*\*(.+)\*\* \(\d{4}-\d{2}-\d{2}\)$")
_WHY: Final = re.compile(r"^  Why: (.*)$")
_DUE: Final = r"Due (?:\d{4}-\d\d-\d\d \d\d:\d\d|[^:]*)"  # "Due 2026-02-18 09:00: …", "Due Friday: …"
COMMITMENT_LINE: Final = re.compile(rf"^- \S+ (?:\*\*OVERDUE\*\*|{_DUE}|Open): (.*?)(?: \([^()]*\))?$")
LAG_LINES: Final = ("no data yet from", "is lagging")


@dataclass
class Stored:
    """One agent's stored documents after the run."""

    derived: Derived
    boot: BootDoc | None
    narrative: NarrativeDoc | None
    snapshot: SnapshotDoc | None
    knowledge: KnowledgeDoc | None = None
    recall: RecallDoc | None = None  # its key memories: the rules (no recall query was made)


def sections(markdown: str) -> dict[str, list[str]]:
    """The BOOTSTRAP's sections by heading (``## 🎯 Recent Decisions`` → its lines).

    Only headings whose first character is no letter are the briefing's own: the hot
    snapshot inside it has headings of its own (``## Last conversation…``)."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in markdown.splitlines():
        if _SECTION.match(line):
            current = line
            out[current] = []
        elif current:
            out[current].append(line)
    return out


def section_lines(parts: dict[str, list[str]], word: str) -> list[str]:
    return next((lines for heading, lines in parts.items() if word in heading), [])


def _rendered_decisions(conv: str, lines: list[str], sources: list[str], score: Score) -> None:
    shown: list[str] = []
    for i, line in enumerate(lines):
        found = DECISION_LINE.match(line)
        if found is None:
            continue
        what = found.group(1)
        why_match = _WHY.match(lines[i + 1]) if i + 1 < len(lines) else None
        why = why_match.group(1) if why_match else ""
        if repeated_why(what, why):
            score.defect(conv, "repeated_why", f"{what} | Why: {why}")
        if any(near_duplicate(what, other) for other in shown):
            score.defect(conv, "duplicate_decision", what)
        shown.append(what)
        for text in (what, why):
            if text and (defect := fragment_defect(text, sources)) is not None:
                score.defect(conv, defect, text)


def _section_cut(conv: str, lines: list[str], stored_markdown: str, score: Score) -> None:
    """Every line of a copied section is a line of the stored document, or a prefix of one
    cut at a word and marked with "…"."""
    originals = [normalize(x) for x in stored_markdown.splitlines()]
    for line in lines:
        text = normalize(line)
        if not text or text in originals:
            continue
        core, _, trail = strip_ellipses(text)
        source = next((o for o in originals if o.startswith(core)), None)
        if source is None:
            continue
        if not trail:
            score.defect(conv, "cut_without_ellipsis", line)
        elif len(source) > len(core) and source[len(core) - 1].isalnum() and source[len(core)].isalnum():
            score.defect(conv, "cut_mid_word", line)


def _narrative_decisions(conv: str, lines: list[str], score: Score) -> None:
    in_block = False
    for line in lines:
        if line.startswith("**"):
            in_block = line.startswith("**Decisions")
            continue
        if in_block and line.startswith("- ") and " — " in line:
            what, why = line[2:].split(" — ", 1)
            if repeated_why(what, why):
                score.defect(conv, "repeated_why", line)


def score_boot(conv: Conversation, placed: list[Placed], stored: Stored, score: Score) -> None:
    doc = stored.boot
    if doc is None:
        return
    md = doc.markdown
    lowered = md.lower()
    if doc.lagging or any(marker in lowered for marker in LAG_LINES):
        score.defect(conv.name, "lag_line", f"lagging={doc.lagging}")
    kinds = [t.kind for t in conv.turns]
    ended_before_start = "session.end" in kinds[:-1] and kinds[-1] == "session.start"
    if ended_before_start and doc.trigger == "session_start" and "## 📖 Narrative" not in md:
        score.defect(conv.name, "missing_narrative", f"trigger={doc.trigger}")
    for _ in range(lowered.count("topic detected from")):
        score.defect(conv.name, "boilerplate_summary", "rendered: Topic detected from …")
    sources = [p.turn.text for p in placed if p.message_index is not None]
    parts = sections(md)
    _rendered_decisions(conv.name, section_lines(parts, "Recent Decisions"), sources, score)
    for line in section_lines(parts, "Commitments"):
        found = COMMITMENT_LINE.match(line)
        defect = found and fragment_defect(found.group(1), sources, check_start=False, before_date=True)
        if found and defect:
            score.defect(conv.name, defect, found.group(1))
    snapshot = section_lines(parts, "Snapshot")
    for text in snapshot_lines("\n".join(snapshot)):
        if (defect := fragment_defect(text, sources)) is not None:
            score.defect(conv.name, defect, text)
    if stored.snapshot is not None:
        _section_cut(conv.name, snapshot, stored.snapshot.markdown, score)
    narrative = section_lines(parts, "Narrative")
    _narrative_decisions(conv.name, narrative, score)
    if stored.narrative is not None:
        _section_cut(conv.name, narrative, stored.narrative.markdown, score)
    for defect, text in briefing_defects(md):
        score.defect(conv.name, defect, text)


# --- the run -----------------------------------------------------------------------------


async def _read(js: Any, bucket: str, agent: str, doc_type: type[_T]) -> _T | None:
    kv = await js.key_value(bucket)
    raw, _ = await kv_read(kv, agent)
    return None if raw is None else msgspec.json.decode(raw, type=doc_type)


async def _stored(js: Any, agent: str, tz: ZoneInfo) -> Stored:
    """The agent's stored documents; with a model's reading of the conversation (a run with
    ``--llm``: ``workers.extraction``), the items as the briefing shows them — the model's
    added, the ones it judged wrong left out."""
    from shared.parts import decode_parts, read_latest

    snapshot = await _read(js, BUCKET_SNAPSHOTS, agent, SnapshotDoc)
    parts, _ = await read_latest(await js.key_value(BUCKET_KNOWLEDGE), agent)
    knowledge = decode_parts(parts, msgspec.json.Decoder(KnowledgeDoc)) if parts else None
    docs: dict[str, Any] = {
        BUCKET_THREADS: await _read(js, BUCKET_THREADS, agent, ThreadsDoc),
        BUCKET_DECISIONS: await _read(js, BUCKET_DECISIONS, agent, DecisionsDoc),
        BUCKET_COMMITMENTS: await _read(js, BUCKET_COMMITMENTS, agent, CommitmentsDoc),
        BUCKET_KNOWLEDGE: knowledge, BUCKET_RECALL: await _read(js, BUCKET_RECALL, agent, RecallDoc)}
    read = await _read(js, BUCKET_EXTRACTION, agent, ExtractionDoc)
    # the model's items in, the ones it judged wrong out; its rules lead the key memories, as in the briefing
    seen = docs if read is None else model_view(read, Briefing(agent, NO_EVENT_TIME, tz, docs))
    derived = Derived(threads=seen[BUCKET_THREADS], decisions=seen[BUCKET_DECISIONS],
                      commitments=seen[BUCKET_COMMITMENTS],
                      snapshots=[snapshot.markdown] if snapshot is not None else [])
    recall = seen[BUCKET_RECALL] if docs[BUCKET_RECALL] is not None else None
    return Stored(derived, await _read(js, BUCKET_BOOT, agent, BootDoc),
                  await _read(js, BUCKET_NARRATIVES, agent, NarrativeDoc), snapshot, seen[BUCKET_KNOWLEDGE], recall)


async def _caught_up(js: Any, consumers: list[str], limit_s: float, progress: Progress | None = None) -> None:
    """Every consumer has applied everything it was given (a consumer given nothing — the
    snapshot worker when no conversation compacts — has nothing to apply); a long wait says
    every ``PROGRESS_EVERY_S`` how many events are still pending."""
    from shared.names import BUCKET_CHECKPOINTS
    from workers.evals.harness import EvalError

    ckpt = await js.key_value(BUCKET_CHECKPOINTS)
    start = time.monotonic()
    said = start
    while time.monotonic() - start < limit_s:
        try:
            done, pending = await _consumers_done(js, ckpt, consumers)
        except nats.errors.TimeoutError:  # a loaded server slow to answer a poll: not yet, not a failure
            await asyncio.sleep(0.1)
            continue
        if done == len(consumers):
            return
        if progress is not None and time.monotonic() - said >= PROGRESS_EVERY_S:
            said = time.monotonic()
            progress(f"  {done}/{len(consumers)} consumers caught up, {pending} events pending "
                     f"({said - start:.0f}s)")
        await asyncio.sleep(0.1)
    raise EvalError(f"the workers did not catch up within {limit_s:.0f}s")


async def _consumers_done(js: Any, ckpt: Any, consumers: list[str]) -> tuple[int, int]:
    """How many of ``consumers`` have applied everything they were given, and the events
    still pending for all of them."""
    from shared.names import EVENTS_STREAM

    done, pending = 0, 0
    for name in consumers:
        info = await js.consumer_info(EVENTS_STREAM, name)
        given = int(info.delivered.consumer_seq or 0) if info.delivered else 0
        raw, _ = await kv_read(ckpt, name)
        pending += int(info.num_pending or 0) + int(info.num_ack_pending or 0)
        if not info.num_pending and not info.num_ack_pending and (raw is not None or given == 0):
            done += 1
    return done, pending


async def _completed(js: Any, agents: list[str], grace_s: float) -> None:
    """Wait (bounded) until no stored BOOTSTRAP names a lagging source."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        with contextlib.suppress(nats.errors.TimeoutError):  # a poll not answered in time: not yet
            docs = [await _read(js, BUCKET_BOOT, a, BootDoc) for a in agents]
            if all(d is None or not d.lagging for d in docs):
                return
        await asyncio.sleep(0.2)


def pipeline_settings(settings: Settings, tmp: str, embedder: str | None, llm: bool = False) -> Settings:
    """``settings`` (the eval's language and time zone already set) for a run in ``tmp``:
    an embedded server, no outside service but the model — and that only with ``llm`` (the
    configured provider; without it, the extraction users get first: no LLM)."""
    runtime = msgspec.structs.replace(settings.runtime, fetch_timeout_ms=100)
    return msgspec.structs.replace(
        settings if llm else without_llm(settings), data_dir=tmp, nats_url=None, nats_creds=None, nats_user=None,
        nats_password=None, nats_token=None, nats_tls_ca=None, nats_tls_cert=None, nats_tls_key=None, qdrant_url=None,
        workspace=None, metrics_port=None, mode="live", channel_modes="",
        embedder=embedder or settings.embedder, runtime=runtime)


async def run_stored(convs: Sequence[Conversation], settings: Settings, embedder: str | None = None,
                     progress: Progress | None = None, grace_s: float = COMPLETION_GRACE_S,
                     llm: bool = False) -> dict[str, Stored]:
    """The conversations through every worker on an embedded nats-server (``settings``: the
    eval's, ``pipeline_settings`` applied here; ``llm``: with the configured model); each
    one's stored documents, by name."""
    from workers.cli.base import stop_in_process
    from workers.cli.specs import provision_all
    from workers.registry import all_specs

    say = progress or (lambda _m: None)
    specs = list(all_specs().values())
    with tempfile.TemporaryDirectory(prefix="cortex-eval-briefing-") as tmp:
        run = pipeline_settings(settings, str(Path(tmp) / "data"), embedder, llm)
        with EmbeddedNats(str(Path(tmp) / "nats")) as server:
            await provision_all(run, server.url)
            host = WorkerHost(msgspec.structs.replace(run, nats_url=server.url), specs, __version__)
            task = asyncio.create_task(host.run())
            try:
                import nats

                nc = await nats.connect(server.url)
                try:
                    events = {c.name: conversation_events(c, run.prefix) for c in convs}
                    n = await _publish(nc.jetstream(), events)
                    say(f"published {n} events of {len(convs)} conversations; waiting for every worker")
                    consumers = [c for s in specs if s.build for c in consumers_of(s.name, run.partitions)]
                    limit_s = max(CATCH_UP_S, n / MIN_EVENTS_PER_S) * (LLM_SLOWER if llm else 1)
                    await _caught_up(nc.jetstream(), consumers, limit_s=limit_s, progress=say)
                    await _completed(nc.jetstream(), [agent_of(c) for c in convs], grace_s)
                    tz = ZoneInfo(run.timezone)
                    return {c.name: await _stored(nc.jetstream(), agent_of(c), tz) for c in convs}
                finally:
                    await nc.close()
            finally:
                await stop_in_process(host, task, within_s=60)


async def run_pipeline_eval(dataset: Dataset, base: Settings, only: list[str] | None = None,
                            embedder: str | None = None, progress: Progress | None = None,
                            grace_s: float = COMPLETION_GRACE_S, llm: bool = False) -> tuple[Score, dict[str, Score]]:
    """The conversations through every worker (``llm``: with the configured model); the
    stored documents' score, total and each."""
    convs = select(dataset, only)
    settings = eval_settings(dataset, base)
    stored = await run_stored(convs, settings, embedder, progress, grace_s, llm)
    total = Score()
    per: dict[str, Score] = {}
    for conv in convs:
        score = score_conversation(conv, stored[conv.name].derived, settings)
        score_boot(conv, conversation_events(conv, settings.prefix), stored[conv.name], score)
        per[conv.name] = score
        total.add(score)
    return total, per


async def _publish(js: Any, events: dict[str, list[Placed]]) -> int:
    n = 0
    for placed in events.values():
        for p in placed:
            await js.publish(p.subject, msgspec.json.encode(p.event), timeout=PUBLISH_ACK_S,
                             headers={"Nats-Msg-Id": p.event.id})
            n += 1
    return n
