"""``cortex eval briefing``: what the briefing says about labelled conversations.

The dataset (``workers/evals/data/briefing.json``, or any file of that shape) holds short
conversations in several of the ten languages, each labelled with what a person reading it
would write down: the topics worth a thread, every decision with the reason the text
gives (or none), every promise with its due date, and the wishes that are no promise.

Two levels, both deterministic:

* **core** — the conversation runs through the pure cores (threads, decisions, commitments,
  the snapshot markdown) exactly as the workers call them; precision and recall of
  threads, decisions and commitments, the accuracy of reasons, due dates and final
  statuses, and the reader-visible defects of the derived text (``briefing_checks``).
* **pipeline** — (``workers.evals.briefing_e2e``) the same events through an embedded
  nats-server and every worker, as ``cortex demo`` runs them; the stored documents are
  scored again, and the stored session-start BOOTSTRAP is read for the defects a reader
  meets there (a repeated why, a duplicate decision, a cut without "…", a boilerplate
  summary, a missing narrative, a lag line although every source caught up) and, as a
  whole, for one fact said twice, a stub left by a cut, an empty heading, a miscount, a
  pasted heading and two clocks (``briefing_checks.briefing_defects``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal, Protocol, Self, TypeVar
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import Commitment, CommitmentsDoc, Decision, DecisionsDoc, Thread, ThreadsDoc
from schemas.events import CompactionEvent, CompactionMessage, MessageEvent, SessionEvent
from shared.config import Settings, load_settings
from shared.names import published_subject
from workers.conversation.patterns import get_patterns, prepare_text
from workers.evals.briefing_checks import (
    boilerplate_summary,
    fragment_defect,
    near_duplicate,
    repeated_why,
    stub_cut,
)
from workers.evals.locomo import DatasetError

SAMPLE_BRIEFING: Final = Path(__file__).parent / "data" / "briefing.json"
DEFECTS: Final = (
    "repeated_why", "duplicate_decision", "cut_mid_word", "cut_without_ellipsis", "boilerplate_summary",
    "wish_as_promise", "due_word_in_task", "missing_narrative", "lag_line",
    "stub_cut", "cross_section_repeat", "repeat_in_section", "empty_section", "miscount", "stray_heading",
    "clock_mismatch",
)
KINDS: Final = ("threads", "decisions", "commitments")
COMPACTION_KEEP: Final = 20


# --- the dataset -------------------------------------------------------------------------


class DecisionLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    what: list[str]
    why: list[str] = []  # empty: the text gives no reason, so no why is expected


class CommitmentLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    what: list[str]
    due: str | None = None  # YYYY-MM-DD in the dataset's time zone
    status: Literal["open", "done"] | None = None  # expected at the end, when given


class ThreadLabel(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    label: str
    match: list[str]
    status: Literal["open", "closed"] | None = None


class Turn(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    kind: Literal["msg", "session.start", "session.end", "compaction"] = "msg"
    sender: str | None = None
    role: Literal["user", "assistant", "system", "tool"] = "user"
    text: str = ""
    gap_s: int = 120  # seconds after the previous turn
    decisions: list[DecisionLabel] = []
    commitments: list[CommitmentLabel] = []
    wish: bool = False


class Conversation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    start: datetime
    turns: list[Turn]
    threads: list[ThreadLabel] = []
    note: str = ""


class Dataset(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    conversations: list[Conversation]
    timezone: str = "UTC"
    language: str = "all"
    description: str = ""


def load_dataset(path: str | Path) -> Dataset:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise DatasetError(f"{path}: {exc.strerror or exc}") from exc
    try:
        dataset = msgspec.json.decode(raw, type=Dataset)
    except msgspec.DecodeError as exc:
        raise DatasetError(f"{path}: {exc}") from exc
    names = [c.name for c in dataset.conversations]
    if len(set(names)) != len(names):
        raise DatasetError(f"{path}: conversation names must be unique")
    return dataset


def eval_settings(dataset: Dataset, base: Settings | None = None) -> Settings:
    """The user's behaviour settings with the dataset's language and time zone."""
    settings = base or load_settings({})
    return msgspec.structs.replace(settings, language=dataset.language, timezone=dataset.timezone)


# --- events ------------------------------------------------------------------------------

Event = MessageEvent | SessionEvent | CompactionEvent


def agent_of(conv: Conversation) -> str:
    return "brief-" + "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in conv.name)[:58]


@dataclass(frozen=True)
class Placed:
    """One turn as an event, with its subject and the index of the message it is."""

    turn: Turn
    event: Event
    subject: str
    message_index: int | None  # position among the conversation's messages


def conversation_events(conv: Conversation, prefix: str = "cortex") -> list[Placed]:
    agent = agent_of(conv)
    ts = conv.start
    session_no = 0
    recent: list[CompactionMessage] = []
    placed: list[Placed] = []
    n_messages = 0
    for i, turn in enumerate(conv.turns):
        ts = ts + timedelta(seconds=turn.gap_s) if i else ts
        eid = f"{agent}.{i:03d}"
        session = f"s{session_no}"
        if turn.kind == "session.start":
            session_no += 1
            session, recent = f"s{session_no}", []
            event: Event = SessionEvent(id=eid, agent=agent, session=session, ts=ts, channel="webchat")
            placed.append(Placed(turn, event, published_subject(prefix, "session", agent, "start"), None))
        elif turn.kind == "session.end":
            event = SessionEvent(id=eid, agent=agent, session=session, ts=ts, channel="webchat")
            placed.append(Placed(turn, event, published_subject(prefix, "session", agent, "end"), None))
        elif turn.kind == "compaction":
            kept = recent[-COMPACTION_KEEP:]
            event = CompactionEvent(id=eid, agent=agent, session=session, ts=ts, messages=kept,
                                    message_count=len(recent), compacting_count=len(kept))
            placed.append(Placed(turn, event, published_subject(prefix, "compaction", agent, "before"), None))
        else:
            event = MessageEvent(id=eid, agent=agent, session=session, ts=ts, role=turn.role, sender=turn.sender,
                                 content=turn.text, channel="webchat")
            kind = "sent" if turn.role == "assistant" else "received"
            placed.append(Placed(turn, event, published_subject(prefix, "msg", agent, kind), n_messages))
            recent.append(CompactionMessage(role=turn.role, content=turn.text, ts=ts))
            n_messages += 1
    return placed


# --- what a run produced -----------------------------------------------------------------


@dataclass
class Derived:
    """The documents derived for one conversation (by the cores or by the pipeline)."""

    threads: ThreadsDoc | None = None
    decisions: DecisionsDoc | None = None
    commitments: CommitmentsDoc | None = None
    snapshots: list[str] = field(default_factory=list)  # hot-snapshot markdown, per compaction


def run_cores(conv: Conversation, settings: Settings) -> Derived:
    """The conversation through the pure cores, in stream order, as the workers apply it."""
    from workers.decisions import commitments as commitments_core
    from workers.decisions import core as decisions_core
    from workers.snapshot.core import build_snapshot_markdown, thread_state_line
    from workers.threads import core as threads_core

    patterns = get_patterns(settings.languages)
    tz = ZoneInfo(settings.timezone)
    out = Derived()
    for placed in conversation_events(conv):
        event = placed.event
        if isinstance(event, MessageEvent):
            out.threads = threads_core.apply_message(out.threads, event, settings.threads, patterns)
            out.decisions = decisions_core.apply_message(out.decisions, event, settings.decisions, patterns, tz)
            out.commitments = commitments_core.apply_message(out.commitments, event, settings.commitments,
                                                             patterns, tz)
        elif isinstance(event, CompactionEvent):
            markdown, _ = build_snapshot_markdown(event.ts, list(event.messages),
                                                  settings.precompaction.max_snapshot_messages,
                                                  thread_state_line(out.threads))
            out.snapshots.append(markdown)
    return out


# --- scoring -----------------------------------------------------------------------------


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Counts) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    def as_dict(self) -> dict[str, float | int]:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": round(p, 3), "recall": round(r, 3),
                "f1": round(f1, 3)}


@dataclass
class Ratio:
    ok: int = 0
    n: int = 0

    def add(self, ok: bool) -> None:
        self.n += 1
        self.ok += int(ok)

    def value(self) -> float:
        return round(self.ok / self.n, 3) if self.n else math.nan

    def merge(self, other: Ratio) -> None:
        self.ok += other.ok
        self.n += other.n


class Tally:
    """What a score keeps: counts by kind, ratios (``ratios``), defects by name and their
    examples ("<conversation>: <defect>: <text>"); scores of several conversations add up."""

    counts: dict[str, Counts]
    defects: dict[str, int]
    examples: list[str]

    def ratios(self) -> tuple[Ratio, ...]:
        return ()

    def defect(self, conv: str, name: str, text: str) -> None:
        self.defects[name] = self.defects.get(name, 0) + 1
        self.examples.append(f"{conv}: {name}: {text[:160]}")

    def add(self, other: Self) -> None:
        for kind, counts in other.counts.items():
            self.counts[kind].add(counts)
        for mine, theirs in zip(self.ratios(), other.ratios(), strict=True):
            mine.merge(theirs)
        for name, n in other.defects.items():
            self.defects[name] = self.defects.get(name, 0) + n
        self.examples.extend(other.examples)


@dataclass
class Score(Tally):
    counts: dict[str, Counts] = field(default_factory=lambda: {k: Counts() for k in KINDS})
    why: Ratio = field(default_factory=Ratio)
    due: Ratio = field(default_factory=Ratio)
    status: Ratio = field(default_factory=Ratio)
    defects: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DEFECTS, 0))
    examples: list[str] = field(default_factory=list)

    def ratios(self) -> tuple[Ratio, ...]:
        return self.why, self.due, self.status


def _has_all(text: str, keywords: Sequence[str]) -> bool:
    lowered = text.lower()
    return all(k.lower() in lowered for k in keywords)


def _score_threads(conv: Conversation, threads: list[Thread], score: Score) -> None:
    unmatched = list(threads)
    for label in conv.threads:
        hit = next((t for t in unmatched if any(m.lower() in t.title.lower() for m in label.match)), None)
        if hit is None:
            score.counts["threads"].fn += 1
            continue
        unmatched.remove(hit)
        score.counts["threads"].tp += 1
        if label.status is not None:
            score.status.add(hit.status == label.status)
    score.counts["threads"].fp += len(unmatched)
    for t in threads:
        if boilerplate_summary(t.summary, t.title):
            score.defect(conv.name, "boilerplate_summary", f"{t.title}: {t.summary!r}")
        for text in (t.summary, *t.decisions, t.waiting_for or ""):
            if stub_cut(text):
                score.defect(conv.name, "stub_cut", text)


def _messages(placed: list[Placed]) -> list[Placed]:
    return [p for p in placed if p.message_index is not None]


class _Stated(Protocol):
    @property
    def what(self) -> str: ...


class _Keywords(Protocol):
    @property
    def what(self) -> Sequence[str]: ...


Found = TypeVar("Found", bound=_Stated)
Label = TypeVar("Label", bound=_Keywords)


def _matched(found: Sequence[Found], labels: Sequence[Label], counts: Counts) -> list[tuple[Found, Label]]:
    """Each label with the first item found for its message that says all its words (each
    item matched once), counted: a match a true positive, a label left a false negative, an
    item left a false positive."""
    unmatched = list(found)
    pairs = []
    for label in labels:
        hit = next((f for f in unmatched if _has_all(f.what, label.what)), None)
        if hit is None:
            counts.fn += 1
            continue
        unmatched.remove(hit)
        counts.tp += 1
        pairs.append((hit, label))
    counts.fp += len(unmatched)
    return pairs


def _score_decisions(conv: Conversation, placed: list[Placed], decisions: list[Decision], score: Score) -> None:
    for p in _messages(placed):
        mine = [d for d in decisions if d.extracted_at == p.event.ts]
        for hit, label in _matched(mine, p.turn.decisions, score.counts["decisions"]):
            score.why.add(_has_all(hit.why, label.why) and bool(hit.why.strip()) if label.why
                          else not hit.why.strip())
        for i, a in enumerate(mine):
            if any(near_duplicate(a.what, b.what) for b in mine[:i]):
                score.defect(conv.name, "duplicate_decision", a.what)
    sources = [p.turn.text for p in _messages(placed)]
    for d in decisions:
        if repeated_why(d.what, d.why):
            score.defect(conv.name, "repeated_why", f"{d.what} | why: {d.why}")
        for text in (d.what, d.why):
            if text and (defect := fragment_defect(text, sources)) is not None:
                score.defect(conv.name, defect, text)
            if stub_cut(text):
                score.defect(conv.name, "stub_cut", text)


def _score_commitments(conv: Conversation, placed: list[Placed], commitments: list[Commitment], score: Score,
                       settings: Settings) -> None:
    patterns = get_patterns(settings.languages)
    for p in _messages(placed):
        mine = [c for c in commitments if c.source_event == p.event.id]
        for hit, label in _matched(mine, p.turn.commitments, score.counts["commitments"]):
            score.due.add(hit.due == label.due)
            if label.status is not None:
                score.status.add(hit.status == label.status)
        if p.turn.wish:
            for c in mine:
                score.defect(conv.name, "wish_as_promise", c.what)
    sources = [p.turn.text for p in _messages(placed)]
    for c in commitments:
        if any(pattern.search(prepare_text(c.what)) for pattern in patterns.due):
            score.defect(conv.name, "due_word_in_task", c.what)
        if (defect := fragment_defect(c.what, sources, check_start=False, before_date=True)) is not None:
            score.defect(conv.name, defect, c.what)
        if stub_cut(c.what):
            score.defect(conv.name, "stub_cut", c.what)


def _score_thread_text(conv: Conversation, placed: list[Placed], threads: list[Thread], score: Score) -> None:
    sources = [p.turn.text for p in _messages(placed)]
    for t in threads:
        for text in t.decisions:
            if (defect := fragment_defect(text, sources)) is not None:
                score.defect(conv.name, defect, text)
        # a wait starts after its cue ("waiting for …"): only where it stops is judged
        if t.waiting_for and (defect := fragment_defect(t.waiting_for, sources, check_start=False)) is not None:
            score.defect(conv.name, defect, t.waiting_for)


def snapshot_lines(markdown: str) -> list[str]:
    """The message previews of a hot snapshot (``- [role] text``)."""
    out = []
    for line in markdown.splitlines():
        if line.startswith("- [") and "] " in line:
            out.append(line.split("] ", 1)[1])
    return out


def _score_snapshots(conv: Conversation, placed: list[Placed], snapshots: list[str], score: Score) -> None:
    sources = [p.turn.text for p in _messages(placed)]
    for markdown in snapshots:
        for text in snapshot_lines(markdown):
            if (defect := fragment_defect(text, sources)) is not None:
                score.defect(conv.name, defect, text)
            if stub_cut(text):
                score.defect(conv.name, "stub_cut", text)


def score_conversation(conv: Conversation, derived: Derived, settings: Settings) -> Score:
    placed = conversation_events(conv)
    score = Score()
    threads = derived.threads.threads if derived.threads else []
    _score_threads(conv, threads, score)
    _score_thread_text(conv, placed, threads, score)
    _score_decisions(conv, placed, derived.decisions.decisions if derived.decisions else [], score)
    _score_commitments(conv, placed, derived.commitments.commitments if derived.commitments else [], score,
                       settings)
    _score_snapshots(conv, placed, derived.snapshots, score)
    return score


def score_report(score: Score) -> dict[str, Any]:
    return {
        **{kind: score.counts[kind].as_dict() for kind in KINDS},
        "why_accuracy": score.why.value(), "why_n": score.why.n,
        "due_accuracy": score.due.value(), "due_n": score.due.n,
        "status_accuracy": score.status.value(), "status_n": score.status.n,
        "defects": dict(score.defects),
    }


Progress = Callable[[str], None]


def run_core_eval(dataset: Dataset, settings: Settings, only: Sequence[str] | None = None) -> tuple[Score,
                                                                                                   dict[str, Score]]:
    """Every (or the named) conversation through the cores: the total and each one's score."""
    per: dict[str, Score] = {}
    total = Score()
    for conv in select(dataset, only):
        score = score_conversation(conv, run_cores(conv, settings), settings)
        per[conv.name] = score
        total.add(score)
    return total, per


def select(dataset: Dataset, only: Sequence[str] | None) -> list[Conversation]:
    if not only:
        return list(dataset.conversations)
    known = {c.name: c for c in dataset.conversations}
    missing = [n for n in only if n not in known]
    if missing:
        raise DatasetError(f"unknown conversation(s): {', '.join(missing)}")
    return [known[n] for n in only]


def format_score(title: str, rep: dict[str, Any]) -> str:
    rows = [f"{title}"]
    for kind in KINDS:
        c = rep[kind]
        rows.append(f"  {kind:<12} precision {c['precision']:.3f}  recall {c['recall']:.3f}  f1 {c['f1']:.3f}"
                    f"  (tp {c['tp']}, fp {c['fp']}, fn {c['fn']})")
    rows.append(f"  why accuracy {rep['why_accuracy']:.3f} (n {rep['why_n']}), due accuracy"
                f" {rep['due_accuracy']:.3f} (n {rep['due_n']}), status accuracy {rep['status_accuracy']:.3f}"
                f" (n {rep['status_n']})")
    defects = rep["defects"]
    rows.append("  defects: " + ", ".join(f"{name} {defects[name]}" for name in DEFECTS if name in defects))
    return "\n".join(rows) + "\n"
