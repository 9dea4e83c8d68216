"""``cortex eval recall``: LoCoMo-style evidence retrieval through the real stream and worker.

What runs: an embedded nats-server and the recall worker in-process (``WorkerHost`` with
only the recall spec), both under a temporary data dir, so nothing of the user's Cortex
is touched. Each conversation becomes one agent (``locomo-<i>``): every session opens
with a ``SessionEvent`` (the worker's lifecycle runs there, as live) and every turn is a
``MessageEvent`` whose id is derived from the dia_id (``locomo-<i>.D3:12``), ``sender``
the speaker and ``ts`` the session date plus 30 s per turn. When the recall consumer has
drained, every question of categories 1–4 is asked through ``cortex.api.recall.<agent>``
with ``limit`` 10, one at a time, and each returned memory is mapped back to its turn
through ``source_event``.

Scores, by category and overall: evidence recall@k — a question is a hit at k when a
memory of one of its evidence turns is among the first k returned — and MRR (the
reciprocal rank of the first such memory, 0 when none is in the reply). Latency is the
client-side round trip of each request; the ingest rate counts events from the first
publish until the consumer has applied them all (embedding included).

Two measurement choices, both documented in ``docs/recall-eval.md``:

* the token budget is lifted (``budget_tokens`` 100 000) so the reply's trim cannot cut
  the top ``limit`` — this measures retrieval, not the budget;
* the worker's consumer reads messages and sessions only, so the ``recall_access``
  feedback a reply publishes is not applied while questions are asked (it would re-rank
  later questions by the earlier ones' answers, making scores depend on question order).
  ``access_feedback=True``
  keeps the production wiring instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import nats
from nats.aio.client import Client

from schemas.api import ErrorReply, RecallReply, RecallRequest
from shared.config import Settings, load_settings, without_llm
from shared.embedded import EmbeddedNats
from shared.names import DLQ_STREAM, EVENTS_STREAM, api_subject, published_subject
from shared.provision import provision
from shared.runtime import WorkerHost, WorkerSpec
from workers import __version__
from workers.cli.base import stop_in_process
from workers.evals import PUBLISH_ACK_S
from workers.evals.locomo import CATEGORY_NAMES, SCORED_CATEGORIES, Conversation, Turn, load_locomo
from workers.recall import worker as recall_worker
from workers.recall.capture import WINDOW_LINE_CHARS, WINDOW_TURNS, turn_line
from workers.recall.embedders import StaticE5Embedder, VocabularyStats, shared_vocabulary_stats
from workers.recall.media import turn_text
from workers.recall.spec import SPEC as RECALL_SPEC

K_VALUES = (1, 5, 10)
# The ranking's weights are chosen on LoCoMo conversations 0-4 (the dev split) and reported on
# 5-9 (held out: never looked at while choosing) beside all ten (docs/recall-eval.md).
DEV_CONVERSATIONS = 5
# How the dataset reaches the worker:
# * eval — each session opens with a SessionEvent, the recall_access feedback of replies is
#   not applied (scores do not depend on question order; see the module docstring);
# * live — as a deployment sees it: every turn is just a message (no session events), and
#   the worker applies each reply's recall_access feedback (stamped, as the API stamps it,
#   with the agent's latest event time applied) before the next question is asked.
TRAFFIC = ("eval", "live")
LIFTED_BUDGET = 100_000
REQUEST_TIMEOUT_S = 30.0
Progress = Callable[[str], None]


class EvalError(RuntimeError):
    """The evaluation could not run (the message says why, in one line)."""


@dataclass(frozen=True)
class EvalOptions:
    embedder: str | None = None  # None: the settings' CORTEX_EMBEDDER
    limit_conversations: int | None = None
    limit: int = 10
    budget_tokens: int = LIFTED_BUDGET
    captions: bool = True  # a photo turn carries its caption as a gateway's image description
    access_feedback: bool = False
    traffic: str = "eval"  # "eval" or "live" (see TRAFFIC)
    details: bool = False  # per-question ranks in the report
    ingest_timeout_s: float = 3600.0


@dataclass
class QuestionResult:
    agent: str
    index: int
    category: int
    rank: int | None  # 1-based position of the first evidence memory in the reply
    latency_ms: float
    returned: int
    tokens: int
    text_rank: int | None = None  # 1-based position of the first memory whose text quotes an evidence turn
    evidence: tuple[str, ...] = ()
    returned_turns: tuple[str, ...] = ()


@dataclass
class IngestStats:
    events: int = 0
    messages: int = 0
    seconds: float = 0.0
    memories: int = 0
    dead_letters: int = 0
    # the default (static) embedder's vocabulary work inside ``seconds`` (None: another embedder)
    vocabulary: Vocabulary | None = None

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Vocabulary:
    """What the static embedder spent during an ingest: preparing its model (0 when the
    process had prepared it before) and the words it met for the first time, each embedded
    with e5 once (``learn_s`` is wall time inside e5; ``prefetched`` of the words were
    learnt by the background learner, overlapping the store's writes; ``shipped`` words were
    read from the model words made at build time instead, no e5)."""

    prepare_s: float
    words: int
    learn_s: float
    prefetched: int
    shipped: int = 0


def vocabulary_between(before: VocabularyStats | None, after: VocabularyStats | None) -> Vocabulary | None:
    if after is None:
        return None
    if before is None:
        return Vocabulary(prepare_s=after.prepare_s, words=after.words, learn_s=after.learn_s,
                          prefetched=after.prefetched, shipped=after.shipped)
    return Vocabulary(prepare_s=0.0, words=after.words - before.words, learn_s=after.learn_s - before.learn_s,
                      prefetched=after.prefetched - before.prefetched, shipped=after.shipped - before.shipped)


@dataclass
class EvalResult:
    dataset: str
    embedder: str
    options: EvalOptions
    conversations: int
    turns: int
    skipped_questions: int
    ingest: IngestStats
    questions: list[QuestionResult] = field(default_factory=list)
    wall_seconds: float = 0.0


# --- scoring (pure) ---------------------------------------------------------------------


def first_evidence_rank(returned_turns: Sequence[str | None], evidence: Sequence[str]) -> int | None:
    """1-based rank of the first returned memory whose turn is evidence, or None."""
    wanted = set(evidence)
    for position, turn in enumerate(returned_turns, 1):
        if turn is not None and turn in wanted:
            return position
    return None


def first_quoting_rank(covered: Sequence[Set[str]], evidence: Sequence[str]) -> int | None:
    """1-based rank of the first returned memory that quotes an evidence turn (its own
    turn, or a turn its context window quotes), or None."""
    wanted = set(evidence)
    for position, turns in enumerate(covered, 1):
        if wanted & turns:
            return position
    return None


class QuotedTurns:
    """Which turns of a conversation a returned memory quotes: the turn it came from, and
    the neighbouring turns of its session whose line (``capture.turn_line``) is a line of
    its text — what a context window (the turns before) or a reply window (the turn
    after) carries besides its own turn."""

    def __init__(self, conv: Conversation, captions: bool = True) -> None:
        self._near: dict[str, list[tuple[str, str]]] = {}
        recent: list[tuple[str, str]] = []
        session = None
        for turn in conv.turns:
            text = turn_text(_turn_text(turn, captions))
            line = (turn.dia_id, turn_line(f"{turn.speaker}: {text}", WINDOW_LINE_CHARS))
            if turn.session != session:
                session, recent = turn.session, []
            elif recent:
                self._near[recent[-1][0]].append(line)  # the previous turn's reply
            self._near[turn.dia_id] = list(recent)
            recent = [*recent, line][-(WINDOW_TURNS - 1):]

    def of(self, source_turn: str | None, content: str) -> set[str]:
        if source_turn is None:
            return set()
        lines = set(content.split("\n"))
        return {source_turn} | {dia for dia, line in self._near.get(source_turn, ()) if line in lines}


def split_of(agent: str) -> str:
    """The split a conversation's questions belong to: ``dev`` (conversations 0-4, on which
    the ranking's weights are chosen) or ``held-out`` (5 and later)."""
    index = int(agent.rsplit("-", 1)[1])
    return "dev" if index < DEV_CONVERSATIONS else "held-out"


def by_split(questions: Sequence[QuestionResult]) -> dict[str, Any]:
    """Scores of the dev and the held-out questions, when the run has both."""
    splits: dict[str, list[QuestionResult]] = {}
    for q in questions:
        splits.setdefault(split_of(q.agent), []).append(q)
    if len(splits) < 2:
        return {}
    return {name: {**metrics([q.rank for q in qs]), "quoted": metrics([q.text_rank for q in qs])}
            for name, qs in sorted(splits.items())}


def metrics(ranks: Sequence[int | None], ks: Sequence[int] = K_VALUES) -> dict[str, float | int]:
    """``n``, ``recall@k`` for each k and ``mrr`` over a list of first-evidence ranks."""
    n = len(ranks)
    out: dict[str, float | int] = {"n": n}
    for k in ks:
        out[f"recall@{k}"] = round(sum(1 for r in ranks if r is not None and r <= k) / n, 4) if n else 0.0
    out["mrr"] = round(sum(1.0 / r for r in ranks if r is not None) / n, 4) if n else 0.0
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of a non-empty list; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]


def report(result: EvalResult) -> dict[str, Any]:
    """The JSON report (``--out``)."""
    by_category: dict[str, Any] = {}
    by_category_text: dict[str, Any] = {}
    for category in SCORED_CATEGORIES:
        ranks = [q.rank for q in result.questions if q.category == category]
        if ranks:
            by_category[str(category)] = {"name": CATEGORY_NAMES[category], **metrics(ranks)}
            text_ranks = [q.text_rank for q in result.questions if q.category == category]
            by_category_text[str(category)] = {"name": CATEGORY_NAMES[category], **metrics(text_ranks)}
    latencies = [q.latency_ms for q in result.questions]
    ing = result.ingest
    out: dict[str, Any] = {
        "dataset": result.dataset,
        "embedder": result.embedder,
        "options": {"limit": result.options.limit, "budget_tokens": result.options.budget_tokens,
                    "captions": result.options.captions, "access_feedback": result.options.access_feedback,
                    "traffic": result.options.traffic,
                    "limit_conversations": result.options.limit_conversations},
        "conversations": result.conversations,
        "turns": result.turns,
        "questions": len(result.questions),
        "skipped_questions": result.skipped_questions,
        "overall": metrics([q.rank for q in result.questions]),
        # conversations 0-4 chose the weights, 5-9 are held out (empty for fewer than six)
        "by_split": by_split(result.questions),
        "by_category": by_category,
        # credit where a returned memory's text quotes an evidence turn (a context window
        # quotes up to two turns before its own), as window-level retrieval is scored
        "overall_quoted": metrics([q.text_rank for q in result.questions]),
        "by_category_quoted": by_category_text,
        "latency_ms": {"p50": round(percentile(latencies, 50), 2), "p95": round(percentile(latencies, 95), 2),
                       "mean": round(statistics.fmean(latencies), 2) if latencies else 0.0},
        "reply_tokens_mean": round(statistics.fmean(q.tokens for q in result.questions), 1)
        if result.questions else 0.0,
        "ingest": {"events": ing.events, "messages": ing.messages, "seconds": round(ing.seconds, 2),
                   "events_per_s": round(ing.events_per_s, 1), "memories": ing.memories,
                   "dead_letters": ing.dead_letters,
                   "vocabulary": None if ing.vocabulary is None else {
                       "prepare_s": round(ing.vocabulary.prepare_s, 2), "words_learnt": ing.vocabulary.words,
                       "learn_s": round(ing.vocabulary.learn_s, 1), "prefetched": ing.vocabulary.prefetched,
                       "shipped": ing.vocabulary.shipped}},
        "wall_seconds": round(result.wall_seconds, 1),
    }
    if result.options.details:
        out["details"] = [{"agent": q.agent, "qa_index": q.index, "category": q.category, "rank": q.rank,
                           "text_rank": q.text_rank,
                           "evidence": list(q.evidence), "returned_turns": list(q.returned_turns),
                           "latency_ms": round(q.latency_ms, 2)} for q in result.questions]
    return out


def _vocabulary_line(vocabulary: dict[str, Any] | None) -> str:
    """The static embedder's share of the ingest: the model's preparation and the new words."""
    if not vocabulary:
        return ""
    prepared = (f"; its model prepared in {vocabulary['prepare_s']:.1f} s" if vocabulary["prepare_s"]
                else "; its model prepared before")
    return (f"  vocabulary: {vocabulary['words_learnt']} words met for the first time, each embedded with e5"
            f" ({vocabulary['learn_s']:.1f} s inside e5, {vocabulary['prefetched']} learnt ahead of their batch;"
            f" {vocabulary.get('shipped', 0)} more read from the model words, no e5){prepared}\n")


def format_table(rep: dict[str, Any]) -> str:
    """A readable summary of a report."""
    head = (f"recall eval: {rep['dataset']}\n"
            f"  {rep['conversations']} conversations, {rep['turns']} turns, {rep['questions']} questions"
            f" ({rep['skipped_questions']} skipped: no known evidence)\n"
            f"  embedder {rep['embedder']}, limit {rep['options']['limit']},"
            f" {rep['options'].get('traffic', 'eval')} traffic\n"
            f"  ingest {rep['ingest']['events']} events in {rep['ingest']['seconds']:.1f} s"
            f" ({rep['ingest']['events_per_s']:.1f} events/s, {rep['ingest']['memories']} memories,"
            f" {rep['ingest']['dead_letters']} dead letters)\n"
            f"{_vocabulary_line(rep['ingest'].get('vocabulary'))}"
            f"  query latency p50 {rep['latency_ms']['p50']:.1f} ms, p95 {rep['latency_ms']['p95']:.1f} ms\n")
    rows: list[tuple[str, ...]] = [("category", "n", "R@1", "R@5", "R@10", "MRR")]
    for key, m in rep["by_category"].items():
        rows.append((f"{key} {m['name']}", str(m["n"]), *(f"{m[c]:.3f}" for c in ("recall@1", "recall@5",
                                                                                    "recall@10", "mrr"))))
    o = rep["overall"]
    rows.append(("all (1-4)", str(o["n"]), *(f"{o[c]:.3f}" for c in ("recall@1", "recall@5", "recall@10", "mrr"))))
    for name, m in rep.get("by_split", {}).items():
        label = f"{name} (0-{DEV_CONVERSATIONS - 1})" if name == "dev" else f"{name} ({DEV_CONVERSATIONS}-)"
        rows.append((label, str(m["n"]), *(f"{m[c]:.3f}" for c in ("recall@1", "recall@5", "recall@10", "mrr"))))
    quoted = rep.get("overall_quoted")
    if quoted:
        rows.append(("all, quoted", str(quoted["n"]),
                     *(f"{quoted[c]:.3f}" for c in ("recall@1", "recall@5", "recall@10", "mrr"))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths,
                                                                                                   strict=True)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return head + "\n" + "\n".join(lines) + "\n"


# --- events ------------------------------------------------------------------------------


def agent_for(index: int) -> str:
    return f"locomo-{index}"


def event_id(agent: str, dia_id: str) -> str:
    return f"{agent}.{dia_id}"


def _ts(value: Any) -> str:
    return str(value.isoformat().replace("+00:00", "Z"))


def _turn_text(turn: Turn, captions: bool) -> str:
    """A turn's message content as a gateway publishes it. A turn that shared a photo is,
    with ``captions``, the body OpenClaw's media understanding gives the agent (the
    dataset's machine caption as the image's description; ``workers.recall.media``);
    without, the person's text alone, as with media understanding off."""
    if not (captions and turn.caption):
        return turn.text
    said = f"User text:\n{turn.text}\n" if turn.text.strip() else ""
    return f"[Image]\n{said}Description:\n{turn.caption}"


def conversation_events(agent: str, conv: Conversation, captions: bool = True,
                        sessions: bool = True) -> list[tuple[str, bytes, str]]:
    """(subject, payload, id) for one conversation in stream order: a SessionEvent start
    before each session's first turn (unless ``sessions`` is false), then a MessageEvent
    per turn."""
    out: list[tuple[str, bytes, str]] = []
    session = None
    for turn in conv.turns:
        name = f"session_{turn.session}"
        if turn.session != session and sessions:
            session = turn.session
            sid = f"{agent}.S{turn.session}.start"
            payload = {"id": sid, "agent": agent, "session": name, "ts": _ts(turn.ts)}
            out.append((published_subject("cortex", "session", agent, "start"), msgspec.json.encode(payload), sid))
        text = _turn_text(turn, captions)
        mid = event_id(agent, turn.dia_id)
        payload = {"id": mid, "agent": agent, "session": name, "ts": _ts(turn.ts), "role": "user",
                   "sender": turn.speaker, "content": text}
        out.append((published_subject("cortex", "msg", agent, "received"), msgspec.json.encode(payload), mid))
    return out


# --- the run -------------------------------------------------------------------------------


def _eval_settings(base: Settings, url: str, data_dir: str, embedder: str | None) -> Settings:
    """The user's behaviour settings, on a private broker and data dir, no LLM, no metrics port."""
    runtime = msgspec.structs.replace(base.runtime, fetch_timeout_ms=100)
    return msgspec.structs.replace(
        without_llm(base), nats_url=url, nats_creds=None, nats_user=None, nats_password=None, nats_token=None,
        nats_tls_ca=None, nats_tls_cert=None, nats_tls_key=None, data_dir=data_dir, qdrant_url=None,
        embedder=embedder or base.embedder, mode="live", channel_modes="",
        metrics_port=None, workspace=None, runtime=runtime)


def _recall_spec(opts: EvalOptions) -> WorkerSpec:
    spec = RECALL_SPEC
    return spec if _with_feedback(opts) else dataclasses.replace(spec, families=("msg", "session"), feedback_kinds=None)


def _with_feedback(opts: EvalOptions) -> bool:
    return opts.access_feedback or opts.traffic == "live"


async def _pending(nc: Client, consumer: str) -> int:
    info = await nc.jetstream().consumer_info(EVENTS_STREAM, consumer)
    return int(info.num_pending or 0) + int(info.num_ack_pending or 0)


async def _serving(nc: Client, prefix: str) -> bool:
    try:
        reply = await nc.request(api_subject(prefix, "recall", "probe"), b'{"query":"x"}', timeout=2)
    except Exception:
        return False
    return not (reply.headers and reply.headers.get("Nats-Service-Error"))


async def _ingest(nc: Client, prefix: str, events: list[tuple[str, bytes, str]], host_task: asyncio.Task[None],
                  timeout_s: float, progress: Progress) -> float:
    js = nc.jetstream()
    t0 = time.perf_counter()
    for i, (subject, data, eid) in enumerate(events, 1):
        await js.publish(subject.replace("cortex.", f"{prefix}.", 1), data, headers={"Nats-Msg-Id": eid},
                         timeout=PUBLISH_ACK_S)  # the workers share this loop: see PUBLISH_ACK_S
        if i % 1000 == 0:
            progress(f"  published {i}/{len(events)} events")
    last = 0.0
    while True:
        if host_task.done():
            host_task.result()
            raise EvalError("the recall worker stopped during ingest")
        pending = await _pending(nc, "recall")
        elapsed = time.perf_counter() - t0
        if pending == 0:
            return elapsed
        if elapsed > timeout_s:
            raise EvalError(f"ingest did not finish within {timeout_s:.0f}s ({pending} events pending)")
        if elapsed - last >= 5:
            last = elapsed
            done = len(events) - pending
            progress(f"  ingest: {done}/{len(events)} events applied, {elapsed:.0f}s ({done / elapsed:.1f}/s)")
        await asyncio.sleep(0.1)


async def _applied(nc: Client, timeout_s: float = REQUEST_TIMEOUT_S) -> None:
    """Until the recall consumer has applied everything in the stream (a reply's feedback)."""
    deadline = time.monotonic() + timeout_s
    while await _pending(nc, "recall"):
        if time.monotonic() > deadline:
            raise EvalError(f"the recall worker did not apply a reply's feedback within {timeout_s:.0f}s")
        await asyncio.sleep(0.005)


async def _ask(nc: Client, subject: str, req: RecallRequest) -> tuple[RecallReply, float]:
    t0 = time.perf_counter()
    raw = await nc.request(subject, msgspec.json.encode(req), timeout=REQUEST_TIMEOUT_S)
    latency = (time.perf_counter() - t0) * 1000
    if raw.headers and raw.headers.get("Nats-Service-Error"):
        err = msgspec.json.decode(raw.data, type=ErrorReply).error if raw.data else None
        raise EvalError(f"{subject}: {err.message if err else raw.headers['Nats-Service-Error']}")
    return msgspec.json.decode(raw.data, type=RecallReply), latency


async def _questions(nc: Client, prefix: str, convs: list[tuple[str, Conversation]], opts: EvalOptions,
                     progress: Progress) -> list[QuestionResult]:
    total = sum(len(c.questions) for _, c in convs)
    results: list[QuestionResult] = []
    t0 = time.perf_counter()
    last = t0
    for agent, conv in convs:
        turn_of = {event_id(agent, t.dia_id): t.dia_id for t in conv.turns}
        quoted = QuotedTurns(conv, opts.captions)
        subject = api_subject(prefix, "recall", agent)
        for q in conv.questions:
            reply, latency = await _ask(nc, subject, RecallRequest(query=q.question, limit=opts.limit,
                                                                   budget_tokens=opts.budget_tokens))
            if _with_feedback(opts) and reply.memories:
                await _applied(nc)  # the reply's recall_access is in the stream: the next question sees it
            turns = [turn_of.get(m.source_event) for m in reply.memories]
            covered = [quoted.of(turn, m.content) for turn, m in zip(turns, reply.memories, strict=True)]
            results.append(QuestionResult(
                agent=agent, index=q.index, category=q.category, rank=first_evidence_rank(turns, q.evidence),
                text_rank=first_quoting_rank(covered, q.evidence),
                latency_ms=latency, returned=len(reply.memories), tokens=reply.tokens, evidence=q.evidence,
                returned_turns=tuple(t or "?" for t in turns)))
            now = time.perf_counter()
            if now - last >= 5:
                last = now
                hits = sum(1 for r in results if r.rank is not None)
                progress(f"  questions: {len(results)}/{total} asked, {now - t0:.0f}s,"
                         f" recall@{opts.limit} so far {hits / len(results):.3f}")
    return results


def _memory_count(agents: Sequence[str]) -> int:
    store = recall_worker.HOLDER.store
    if store is None:
        return 0
    with recall_worker.HOLDER.lock:
        return sum(store.count(a) for a in agents)


async def _dead_letters(nc: Client) -> int:
    with contextlib.suppress(Exception):
        info = await nc.jetstream().stream_info(DLQ_STREAM)
        return int(info.state.messages)
    return 0


async def run_eval(path: str | Path, options: EvalOptions | None = None, settings: Settings | None = None,
                   progress: Progress | None = None) -> EvalResult:
    """Run the whole evaluation; everything it starts is stopped before it returns."""
    opts = options or EvalOptions()
    say = progress or (lambda _msg: None)
    started = time.perf_counter()
    convs = load_locomo(path)
    if opts.limit_conversations is not None:
        convs = convs[: opts.limit_conversations]
    if not convs:
        raise EvalError(f"{path}: no conversations to evaluate")
    base = settings or load_settings({})
    agents = [(agent_for(i), c) for i, c in enumerate(convs)]
    events = [e for agent, c in agents
              for e in conversation_events(agent, c, opts.captions, sessions=opts.traffic == "eval")]
    say(f"{path}: {len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns,"
        f" {sum(len(c.questions) for c in convs)} questions")
    with tempfile.TemporaryDirectory(prefix="cortex-eval-") as tmp:
        server = EmbeddedNats(str(Path(tmp) / "nats"))
        server.start()
        try:
            s = _eval_settings(base, server.url, str(Path(tmp) / "data"), opts.embedder)
            return await _run(s, str(path), convs, agents, events, opts, say, started)
        finally:
            server.stop()


async def _run(s: Settings, dataset: str, convs: list[Conversation], agents: list[tuple[str, Conversation]],
               events: list[tuple[str, bytes, str]], opts: EvalOptions, say: Progress, started: float) -> EvalResult:
    spec = _recall_spec(opts)
    nc = await nats.connect(s.nats_url or "")
    host = WorkerHost(s, [spec], __version__)
    task: asyncio.Task[None] | None = None
    try:
        await provision(nc.jetstream(), s, [spec.consumer("recall")])
        task = asyncio.create_task(host.run())
        say(f"ingesting {len(events)} events through the recall worker ({s.embedder} embedder,"
            f" {opts.traffic} traffic)")
        vocabulary_before = shared_vocabulary_stats()
        seconds = await _ingest(nc, s.prefix, events, task, opts.ingest_timeout_s, say)
        vocabulary = vocabulary_between(vocabulary_before, shared_vocabulary_stats())
        deadline = time.monotonic() + 60
        while not await _serving(nc, s.prefix):
            if time.monotonic() > deadline or task.done():
                raise EvalError("the recall API did not come up")
            await asyncio.sleep(0.1)
        embedder = recall_worker.HOLDER.embedder
        ingest = IngestStats(events=len(events), messages=sum(len(c.turns) for c in convs), seconds=seconds,
                             memories=await asyncio.to_thread(_memory_count, [a for a, _ in agents]),
                             dead_letters=await _dead_letters(nc),
                             vocabulary=vocabulary if embedder is not None and embedder.name == StaticE5Embedder.NAME
                             else None)
        say(f"ingested in {seconds:.1f}s ({ingest.events_per_s:.1f} events/s), {ingest.memories} memories;"
            " asking questions")
        results = await _questions(nc, s.prefix, agents, opts, say)
        return EvalResult(dataset=dataset, embedder=embedder.name if embedder else s.embedder, options=opts,
                          conversations=len(convs), turns=ingest.messages,
                          skipped_questions=sum(c.skipped_questions for c in convs), ingest=ingest,
                          questions=results, wall_seconds=time.perf_counter() - started)
    finally:
        if task is not None:
            await stop_in_process(host, task, within_s=60)
        await nc.close()
