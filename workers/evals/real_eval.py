"""``cortex eval briefing --real``: the briefing on public conversations, against hand labels.

Each labelled conversation (``real_labels``) is loaded from the corpus the user points to
(``real_corpora``: LoCoMo's chats, QMSum's AMI/ICSI meetings), its sessions become Cortex
sessions at their own dates, and a new session starts the next morning at 09:00. Everything
runs through every worker on an embedded nats-server, as the pipeline level of ``cortex eval
briefing`` does (``briefing_e2e.run_stored``); then two levels are scored against the labels:

* **stored** — the documents: every thread, decision and commitment, the knowledge facts,
  the rules (recall's key memories; no recall query was made, so they are the rules);
* **briefing** — the session-start BOOTSTRAP of the morning session: Active Threads, Recent
  Decisions, Commitments, Known Facts, Rules & Key Memories.

Per section: precision and recall with lenient word-overlap matching (``real_match``); for
the stored documents the accuracy of thread states, commitment statuses and due dates
(a promise matches only its owner's: ``real_match``); and the reader defects of both levels:
the earlier checks (``briefing_checks``) and the real-conversation ones (``real_checks``).

The extraction path is the pipeline's settings (``pipeline_settings``: no LLM), or with
``RealOptions.llm`` the configured model's (``cortex eval briefing --real --llm``: the model
reads each session window, ``workers.extraction``, and both levels score what it shows).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Final

import msgspec

from schemas.docs import Commitment
from shared.config import Settings, load_settings
from workers.decisions.briefing import DecisionsBriefingSettings
from workers.evals.briefing import (
    Conversation,
    Counts,
    Progress,
    Ratio,
    Tally,
    Turn,
    conversation_events,
    score_conversation,
)
from workers.evals.briefing import Score as BriefingScore
from workers.evals.briefing_checks import TITLE_LINE
from workers.evals.briefing_e2e import (
    COMMITMENT_LINE,
    DECISION_LINE,
    Stored,
    run_stored,
    score_boot,
    section_lines,
    sections,
)
from workers.evals.locomo import DatasetError
from workers.evals.real_checks import (
    REAL_DEFECTS,
    always_never_rule,
    caption_as_text,
    overdue_without_due,
    pleasantry_commitment,
    thread_title_defect,
    when_only_narrative,
)
from workers.evals.real_corpora import (
    RealConversation,
    Split,
    SplitError,
    locomo_conversation,
    qmsum_conversation,
    qmsum_root,
    read_locomo,
)
from workers.evals.real_labels import (
    REAL_LABELS,
    CommitmentLabel,
    ConversationLabels,
    Label,
    ThreadLabel,
    check_refs,
    expected_in_briefing,
    label_texts,
    load_labels,
    people,
    unmatched_words,
)
from workers.evals.real_match import Candidate, Matched, match, name_words
from workers.render import entity_names

SECTIONS: Final = ("threads", "decisions", "commitments", "facts", "rules")
LEVELS: Final = ("stored", "briefing")
REAL_SET_LANGUAGE: Final = "both"  # the default CORTEX_LANGUAGE: what a new user runs
REAL_SET_TIMEZONE: Final = "UTC"  # the corpora's clocks
SESSION_END_AFTER: Final = timedelta(seconds=30)
_HEADINGS: Final = {"threads": "Active Threads", "decisions": "Recent Decisions", "commitments": "Commitments",
                    "facts": "Known Facts", "rules": "Rules & Key Memories"}


class RealOptions(msgspec.Struct, frozen=True, kw_only=True):
    split: Split
    locomo: str | None = None
    qmsum: str | None = None
    acceptance: bool = False
    only: list[str] = []
    embedder: str | None = None
    labels: str | None = None  # a labels directory (``<split>/*.json``) instead of the shipped one
    llm: bool = False  # with the configured model (``cortex eval briefing --llm``)


@dataclass(frozen=True)
class Loaded:
    labels: ConversationLabels
    conv: RealConversation


# --- loading -------------------------------------------------------------------------------


def _load_one(labels: ConversationLabels, options: RealOptions, locomo: list[Any] | None) -> RealConversation | None:
    if labels.source == "locomo":
        if locomo is None:
            return None
        return locomo_conversation(locomo, int(labels.conversation), options.split, options.acceptance)
    if options.qmsum is None:
        return None
    return qmsum_conversation(qmsum_root(options.qmsum), labels.conversation, labels.meetings, options.split,
                              options.acceptance)


def load_real_set(options: RealOptions) -> tuple[list[Loaded], list[str]]:
    """The labelled conversations of the split whose corpus was given, and the names of
    those left out for want of one. The acceptance split needs ``acceptance``."""
    if options.split == "acceptance" and not options.acceptance:
        raise SplitError("the acceptance split is refused without --acceptance")
    if options.locomo is None and options.qmsum is None:
        raise DatasetError("--real needs --locomo PATH (LoCoMo's locomo10.json) and/or --qmsum DIR (QMSum's data/ALL)")
    every = load_labels(options.split, Path(options.labels) if options.labels else REAL_LABELS)
    unknown = sorted(set(options.only) - {lab.name for lab in every})
    if unknown:
        raise DatasetError(f"no labelled conversation {', '.join(unknown)} in the {options.split} split")
    chosen = [lab for lab in every if not options.only or lab.name in options.only]
    locomo = read_locomo(options.locomo) if options.locomo and any(x.source == "locomo" for x in chosen) else None
    loaded, skipped = [], []
    for labels in chosen:
        conv = _load_one(labels, options, locomo)
        if conv is None:
            skipped.append(labels.name)
            continue
        check_refs(labels, conv)
        loaded.append(Loaded(labels, conv))
    if not loaded:
        raise DatasetError(f"nothing to evaluate: no corpus given for {', '.join(skipped)}")
    return loaded, skipped


def as_conversation(conv: RealConversation) -> Conversation:
    """The real conversation as events: each session opened one second before its first
    turn and closed thirty seconds after its last; the next morning's session last."""
    marks: list[tuple[datetime, Turn]] = []
    for i, t in enumerate(conv.turns):
        if i == 0 or t.session != conv.turns[i - 1].session:
            if i:
                marks.append((conv.turns[i - 1].ts + SESSION_END_AFTER, Turn(kind="session.end")))
            marks.append((t.ts - timedelta(seconds=1), Turn(kind="session.start")))
        marks.append((t.ts, Turn(sender=t.speaker, role="user", text=t.text)))
    marks.append((conv.turns[-1].ts + SESSION_END_AFTER, Turn(kind="session.end")))
    marks.append((conv.morning, Turn(kind="session.start")))
    start = clock = marks[0][0]
    turns = []
    for at, turn in marks:
        turns.append(msgspec.structs.replace(turn, gap_s=max(0, int((at - clock).total_seconds()))))
        clock = max(clock, at)
    return Conversation(name=conv.name, start=start, turns=turns)


def real_settings(base: Settings) -> Settings:
    return msgspec.structs.replace(base, language=REAL_SET_LANGUAGE, timezone=REAL_SET_TIMEZONE)


def dev_tool_main(prog: str, description: str, report: Callable[[list[Loaded], Settings], str],
                  argv: Sequence[str] | None,
                  examples: Callable[[list[Loaded], Settings], str] | None = None) -> int:
    """The command line of a dev-split tool (``python -m workers.evals.real_facts``, ``real_mornings``,
    ``real_dc``): the dev conversations whose corpora are given (or the ones named), ``report`` of
    them printed — or ``examples`` with ``--examples``, for a tool that has it; a missing or
    unreadable corpus is one line on stderr and exit 1."""
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=description)
    parser.add_argument("--locomo", help="LoCoMo's data/locomo10.json")
    parser.add_argument("--qmsum", help="QMSum's checkout (data/ALL/…)")
    parser.add_argument("--conversation", action="append", default=[], help="only this conversation (repeatable)")
    if examples is not None:
        parser.add_argument("--examples", action="store_true", help="every miss and extra item (shipped setting)")
    args = parser.parse_args(argv)
    if examples is not None and args.examples:
        report = examples
    settings = real_settings(load_settings({}))
    try:
        items, _ = load_real_set(RealOptions(split="dev", locomo=args.locomo, qmsum=args.qmsum,
                                             only=args.conversation))
    except DatasetError as exc:
        print(f"{prog.rsplit('.', 1)[-1]}: {exc}", file=sys.stderr)
        return 1
    print(report(items, settings))
    return 0


# --- what each level shows -----------------------------------------------------------------


def _task(c: Commitment) -> str:
    return f"{c.what} ({c.topic})" if c.topic else c.what


def stored_candidates(stored: Stored) -> dict[str, list[Candidate]]:
    d = stored.derived
    threads = d.threads.threads if d.threads else []
    decisions = d.decisions.decisions if d.decisions else []
    commitments = d.commitments.commitments if d.commitments else []
    facts: list[Candidate] = []
    if stored.knowledge is not None:
        names = entity_names(stored.knowledge.entities)
        facts = [Candidate(f"{names.get(f.subject, f.subject)} {f.predicate.replace('-', ' ')} "
                           f"{names.get(f.object, f.object)}") for f in stored.knowledge.facts]
    return {
        "threads": [Candidate(t.title, status=t.status) for t in threads],
        "decisions": [Candidate(x.what) for x in decisions],
        "commitments": [Candidate(_task(c), status=c.status, due=c.due, who=c.who) for c in commitments],
        "facts": facts,
        "rules": [Candidate(m) for m in (stored.recall.key_memories if stored.recall else [])],
    }


_LAST_PARENS: Final = re.compile(r"\(([^()]*)\)\s*$")


def _promiser(line: str) -> str | None:
    """Who a Commitments line says made the promise: "(Caroline; promised …)", "(Ana)"."""
    found = _LAST_PARENS.search(line)
    who = found.group(1).split(";")[0].strip() if found else ""
    return who if who and not who.startswith(("promised ", "due ")) else None


def _bullets(lines: Sequence[str]) -> list[str]:
    return [line[2:].strip() for line in lines if line.startswith("- ")]


def briefing_candidates(markdown: str) -> dict[str, list[Candidate]]:
    """The items the BOOTSTRAP shows, section by section, as the reader sees them."""
    parts = sections(markdown)
    lines = {kind: section_lines(parts, heading) for kind, heading in _HEADINGS.items()}
    commitments = []
    for line in lines["commitments"]:
        if found := COMMITMENT_LINE.match(line):
            commitments.append(Candidate(found.group(1), status="overdue" if "**OVERDUE**" in line else "open",
                                         who=_promiser(line)))
    return {
        "threads": [Candidate(m.group(1), status="open") for x in lines["threads"] if (m := TITLE_LINE.match(x))],
        "decisions": [Candidate(m.group(1)) for x in lines["decisions"] if (m := DECISION_LINE.match(x))],
        "commitments": commitments,
        "facts": [Candidate(x) for x in _bullets(lines["facts"])],
        "rules": [Candidate(x) for x in _bullets(lines["rules"])],
    }


# --- scoring -------------------------------------------------------------------------------


@dataclass
class LevelScore(Tally):
    counts: dict[str, Counts] = field(default_factory=lambda: {k: Counts() for k in SECTIONS})
    state: Ratio = field(default_factory=Ratio)  # a matched thread's open/closed
    status: Ratio = field(default_factory=Ratio)  # a matched commitment's open/done
    due: Ratio = field(default_factory=Ratio)  # a matched commitment's stated due
    defects: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def ratios(self) -> tuple[Ratio, ...]:
        return self.state, self.status, self.due


def _labels_of(labels: ConversationLabels, kind: str) -> list[Label]:
    by_kind: dict[str, list[Label]] = {"threads": [*labels.threads], "decisions": [*labels.decisions],
                                       "commitments": [*labels.commitments], "facts": [*labels.facts],
                                       "rules": [*labels.rules]}
    return by_kind[kind]


def _wording(label: Label) -> str:
    return label_texts(label)[0]


def _accuracy(pairs: Sequence[tuple[Label, Candidate]], score: LevelScore) -> None:
    for label, cand in pairs:
        if isinstance(label, ThreadLabel):
            score.state.add((cand.status or "open") == label.state)
        elif isinstance(label, CommitmentLabel):
            score.status.add(("done" if cand.status == "done" else "open") == label.status)
            if label.due is not None:
                score.due.add((cand.due or "").startswith(label.due))


def score_section(loaded: Loaded, kind: str, level: str, cands: list[Candidate], decision_days: int,
                   score: LevelScore) -> Matched:
    labels = _labels_of(loaded.labels, kind)
    required = [not lab.optional and (level == "stored" or expected_in_briefing(lab, loaded.conv, decision_days))
                for lab in labels]
    speakers = frozenset(t.speaker.lower() for t in loaded.conv.turns)
    found = match(labels, required, cands, name_words(unmatched_words(loaded.labels, loaded.conv)), speakers)
    counts = score.counts[kind]
    counts.tp += len(found.pairs)
    counts.fn += len(found.missed)
    counts.fp += len(found.extra)
    name = loaded.labels.name
    score.examples += [f"{name}: {level} {kind} matched: {_wording(lab)} <- {c.text[:120]}" for lab, c in found.pairs]
    score.examples += [f"{name}: {level} {kind} missed: {_wording(lab)}" for lab in found.missed]
    score.examples += [f"{name}: {level} {kind} extra: {c.text[:160]}" for c in found.extra]
    return found


def _title_defects(name: str, titles: Sequence[str], names: Sequence[str], score: LevelScore) -> None:
    for title in titles:
        if (defect := thread_title_defect(title, names)) is not None:
            score.defect(name, defect, title)


def _take(earlier: BriefingScore, score: LevelScore) -> None:
    """The defects the earlier checks (``briefing_checks``) found, into ``score``."""
    for defect, n in earlier.defects.items():
        score.defects[defect] = score.defects.get(defect, 0) + n
    score.examples += earlier.examples  # "<conversation>: <defect>: <text>" already


def _shown_defects(loaded: Loaded, cands: dict[str, list[Candidate]], score: LevelScore) -> None:
    """What both levels show alike: thread titles, commitment tasks, rules."""
    name = loaded.labels.name
    _title_defects(name, [c.text for c in cands["threads"]], people(loaded.labels, loaded.conv), score)
    for c in cands["commitments"]:
        if pleasantry_commitment(c.text):
            score.defect(name, "pleasantry_commitment", c.text)
    for rule in cands["rules"]:
        if always_never_rule(rule.text):
            score.defect(name, "always_never_rule", rule.text)


def _stored_defects(loaded: Loaded, stored: Stored, cands: dict[str, list[Candidate]], settings: Settings,
                    score: LevelScore) -> None:
    name = loaded.labels.name
    _take(score_conversation(as_conversation(loaded.conv), stored.derived, settings), score)
    _shown_defects(loaded, cands, score)
    for c in cands["commitments"]:
        if c.status == "overdue" and not c.due:
            score.defect(name, "overdue_without_due", c.text)
    threads = stored.derived.threads.threads if stored.derived.threads else []
    texts = [c.text for kind in ("threads", "decisions", "commitments") for c in cands[kind]]
    for text in [*texts, *(t.summary for t in threads)]:
        if caption_as_text(text):
            score.defect(name, "caption_as_text", text)


def _briefing_defects(loaded: Loaded, stored: Stored, cands: dict[str, list[Candidate]], settings: Settings,
                      score: LevelScore) -> None:
    name = loaded.labels.name
    if stored.boot is None:
        score.defect(name, "missing_briefing", "no session-start BOOTSTRAP stored")
        return
    conv = as_conversation(loaded.conv)
    earlier = BriefingScore()
    score_boot(conv, conversation_events(conv, settings.prefix), stored, earlier)
    _take(earlier, score)
    _shown_defects(loaded, cands, score)
    parts = sections(stored.boot.markdown)
    for line in section_lines(parts, "Commitments"):
        if overdue_without_due(line):
            score.defect(name, "overdue_without_due", line)
    narrative = section_lines(parts, "Narrative")
    if any(h.startswith("## 📖 Narrative") for h in parts) and when_only_narrative(narrative):
        score.defect(name, "when_only_narrative", " | ".join(x for x in narrative if x.strip())[:160])
    for line in (x for heading, lines in parts.items() if "Snapshot" not in heading for x in lines):
        if caption_as_text(line):  # the snapshot quotes what was said, captions included
            score.defect(name, "caption_as_text", line)


def _zero_defects(score: LevelScore) -> None:
    for name in REAL_DEFECTS:
        score.defects.setdefault(name, 0)


def score_real(loaded: Loaded, stored: Stored, settings: Settings) -> dict[str, LevelScore]:
    """One conversation's scores at both levels."""
    days = settings.briefing_knobs(DecisionsBriefingSettings).decision_recency_days
    out = {level: LevelScore() for level in LEVELS}
    by_level = {"stored": stored_candidates(stored),
                "briefing": briefing_candidates(stored.boot.markdown if stored.boot else "")}
    for level, cands in by_level.items():
        for kind in SECTIONS:
            found = score_section(loaded, kind, level, cands[kind], days, out[level])
            if level == "stored":
                _accuracy(found.pairs, out[level])
            elif kind == "commitments":
                for label, cand in [*found.pairs, *found.absorbed]:
                    if isinstance(label, CommitmentLabel) and label.status == "done":
                        out[level].defect(loaded.labels.name, "done_shown_open", cand.text)
    _stored_defects(loaded, stored, by_level["stored"], settings, out["stored"])
    _briefing_defects(loaded, stored, by_level["briefing"], settings, out["briefing"])
    for level in LEVELS:
        _zero_defects(out[level])
    return out


# --- the run and its report ----------------------------------------------------------------


@dataclass
class RealResult:
    split: Split
    conversations: list[str]
    skipped: list[str]
    total: dict[str, LevelScore]
    per: dict[str, dict[str, LevelScore]]
    events: int = 0
    briefings: dict[str, str] = field(default_factory=dict)  # the morning BOOTSTRAP of each conversation


async def run_real_eval(options: RealOptions, base: Settings, progress: Progress | None = None) -> RealResult:
    """Load, run every worker, score. ``base``: the user's settings (language and time zone
    are the set's)."""
    say = progress or (lambda _m: None)
    loaded, skipped = load_real_set(options)
    settings = real_settings(base)
    convs = [as_conversation(x.conv) for x in loaded]
    n_turns = sum(len(c.turns) for c in convs)
    say(f"{options.split} split: {len(loaded)} conversations, {n_turns} events"
        + (f" (left out, no corpus given: {', '.join(skipped)})" if skipped else ""))
    stored = await run_stored(convs, settings, options.embedder, say, llm=options.llm)
    total = {level: LevelScore() for level in LEVELS}
    per: dict[str, dict[str, LevelScore]] = {}
    for item in loaded:
        per[item.labels.name] = score_real(item, stored[item.labels.name], settings)
        for level in LEVELS:
            total[level].add(per[item.labels.name][level])
    boots = {name: s.boot.markdown if s.boot else "" for name, s in stored.items()}
    return RealResult(options.split, [x.labels.name for x in loaded], skipped, total, per, n_turns, boots)


def level_report(score: LevelScore) -> dict[str, Any]:
    return {
        **{kind: score.counts[kind].as_dict() for kind in SECTIONS},
        "thread_state_accuracy": score.state.value(), "thread_state_n": score.state.n,
        "status_accuracy": score.status.value(), "status_n": score.status.n,
        "due_accuracy": score.due.value(), "due_n": score.due.n,
        "defects": dict(sorted(score.defects.items())),
    }


def report(result: RealResult) -> dict[str, Any]:
    return {
        "split": result.split, "conversations": result.conversations, "skipped": result.skipped,
        "events": result.events,
        **{level: level_report(result.total[level]) for level in LEVELS},
        "per_conversation": {name: {level: level_report(s[level]) for level in LEVELS}
                             for name, s in result.per.items()},
        "examples": {level: result.total[level].examples for level in LEVELS},
        "briefings": result.briefings,
    }


def cell(c: dict[str, Any]) -> str:
    """A score as the reports print it: P R (tp/fp/fn)."""
    return f"{c['precision']:.3f} {c['recall']:.3f} ({c['tp']}/{c['fp']}/{c['fn']})"


def format_report(rep: dict[str, Any]) -> str:
    stored, briefing = rep["stored"], rep["briefing"]
    rows = [f"real-conversation briefing eval: {rep['split']} split, {len(rep['conversations'])} conversations "
            f"({', '.join(rep['conversations'])})",
            f"  {'':<12} {'stored documents':<26} BOOTSTRAP",
            f"  {'section':<12} {'P     R     (tp/fp/fn)':<26} P     R     (tp/fp/fn)"]
    rows += [f"  {kind:<12} {cell(stored[kind]):<26} {cell(briefing[kind])}" for kind in SECTIONS]
    rows.append(f"  stored: thread state {stored['thread_state_accuracy']:.3f} (n {stored['thread_state_n']}), "
                f"commitment status {stored['status_accuracy']:.3f} (n {stored['status_n']}), "
                f"due {stored['due_accuracy']:.3f} (n {stored['due_n']})")
    names = sorted(set(stored["defects"]) | set(briefing["defects"]))
    shown = [f"{n} {stored['defects'].get(n, 0)}/{briefing['defects'].get(n, 0)}" for n in names
             if stored["defects"].get(n, 0) or briefing["defects"].get(n, 0) or n in REAL_DEFECTS]
    rows.append("  defects (stored/BOOTSTRAP): " + ", ".join(shown))
    if rep["skipped"]:
        rows.append(f"  left out (no corpus given): {', '.join(rep['skipped'])}")
    return "\n".join(rows) + "\n"
