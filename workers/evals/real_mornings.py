"""Many mornings: the real-conversation set's briefing selection scored on the morning after
every session, not only the last (issue 37, seventh round; docs/briefing-eval.md).

One morning per conversation is too few to choose a selection rule on: the development split's
nine briefings list a handful of commitments each. Cut after each of its sessions, a LoCoMo chat
gives 19-32 mornings and an AMI series 2-4. For each cut the pure cores' documents are taken as
of its last turn and the labels as they stood then: a label none of whose refs was said yet is
not there (a decision: until all of them were said); a promise labelled done, or a thread labelled
closed, whose last ref comes after the cut is still open. Each morning's Active Threads, Recent
Decisions and Commitments are selected as the BOOTSTRAP selects them (default knobs) and scored
with the eval's matcher and its rule of what a briefing should show.

Development split only: ``python -m workers.evals.real_mornings --locomo … --qmsum …``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import msgspec

from schemas.events import MessageEvent
from shared.config import Settings
from workers.conversation.patterns import get_patterns
from workers.decisions import commitments as commitments_core
from workers.decisions import core as decisions_core
from workers.decisions.briefing import (
    CommitmentsBriefingSettings,
    DecisionsBriefingSettings,
    commitments_section,
    recent_decisions,
)
from workers.evals.briefing import Counts, Derived, conversation_events
from workers.evals.real_eval import (
    LevelScore,
    Loaded,
    as_conversation,
    briefing_candidates,
    cell,
    dev_tool_main,
    score_section,
)
from workers.evals.real_match import Candidate
from workers.threads import core as threads_core
from workers.threads.briefing import ThreadsBriefingSettings, briefed_threads, set_aside

SECTIONS = ("threads", "decisions", "commitments")
COMMITMENTS_CHARS = 1000  # the Commitments section's budget (``SECTIONS`` of workers.decisions.briefing)


def cut(item: Loaded, session: int) -> Loaded:
    """The conversation up to the end of ``session``, with its labels as they stood then."""
    conv = dataclasses.replace(item.conv, turns=tuple(t for t in item.conv.turns if t.session <= session))
    said = {t.ref for t in conv.turns}
    labels = item.labels
    threads = [msgspec.structs.replace(x, refs=seen, state=x.state if len(seen) == len(x.refs) else "open")
               for x in labels.threads if (seen := [r for r in x.refs if r in said])]
    commitments = [msgspec.structs.replace(x, refs=seen, status=x.status if len(seen) == len(x.refs) else "open")
                   for x in labels.commitments if (seen := [r for r in x.refs if r in said])]
    decisions = [x for x in labels.decisions if all(r in said for r in x.refs)]
    return Loaded(labels=msgspec.structs.replace(labels, threads=threads, commitments=commitments,
                                                 decisions=decisions), conv=conv)


def session_documents(item: Loaded, settings: Settings) -> dict[int, Derived]:
    """The threads, decisions and commitments documents after each session's last turn (the
    pure cores, in stream order, once)."""
    patterns = get_patterns(settings.languages)
    tz = ZoneInfo(settings.timezone)
    ends = {t.session: t.ts for t in item.conv.turns}
    out: dict[int, Derived] = {}
    now = Derived()
    for placed in conversation_events(as_conversation(item.conv)):
        event = placed.event
        if not isinstance(event, MessageEvent):
            continue
        now = Derived(threads=threads_core.apply_message(now.threads, event, settings.threads, patterns),
                      decisions=decisions_core.apply_message(now.decisions, event, settings.decisions, patterns, tz),
                      commitments=commitments_core.apply_message(now.commitments, event, settings.commitments,
                                                                 patterns, tz))
        for session, end in ends.items():
            if session not in out and event.ts >= end:
                out[session] = now
    return out


def shown(derived: Derived, item: Loaded, tz: ZoneInfo) -> dict[str, list[Candidate]]:
    """What the morning's BOOTSTRAP would list of each section, at the default knobs."""
    morning = item.conv.morning
    threads: list[Candidate] = []
    if derived.threads is not None:
        lists = ThreadsBriefingSettings()
        listed = briefed_threads(derived.threads.threads, aside=set_aside(derived.threads, morning)[0],
                                 topics=lists.max_topics_in_boot)
        threads = [Candidate(t.title, status="open") for t in listed[:lists.max_threads_in_boot]]
    knobs = DecisionsBriefingSettings()
    decisions = recent_decisions(derived.decisions.decisions if derived.decisions else [], morning, tz,
                                 knobs.decision_recency_days, knobs.max_decisions_in_boot)
    windows = CommitmentsBriefingSettings()
    text, _ = commitments_section(derived.commitments.commitments if derived.commitments else [], morning, tz,
                                  COMMITMENTS_CHARS, undated_days=windows.commitment_days,
                                  overdue_days=windows.overdue_days)
    return {"threads": threads, "decisions": [Candidate(d.what) for d in decisions],
            "commitments": briefing_candidates(text)["commitments"]}


@dataclass
class Mornings:
    """Per conversation and section: the counts over all its mornings and on its last."""

    mornings: int = 0
    every: dict[str, dict[str, Counts]] = field(default_factory=dict)
    last: dict[str, dict[str, Counts]] = field(default_factory=dict)


def score_mornings(items: Sequence[Loaded], settings: Settings) -> Mornings:
    tz = ZoneInfo(settings.timezone)
    days = DecisionsBriefingSettings().decision_recency_days
    result = Mornings()
    for item in items:
        name = item.labels.name
        every = result.every.setdefault(name, {kind: Counts() for kind in SECTIONS})
        docs = session_documents(item, settings)
        for session in sorted(docs):
            at = cut(item, session)
            score = LevelScore()
            candidates = shown(docs[session], at, tz)
            for kind in SECTIONS:
                score_section(at, kind, "briefing", candidates[kind], days, score)
                every[kind].add(score.counts[kind])
            result.last[name] = score.counts
            result.mornings += 1
    return result


def format_mornings(result: Mornings) -> str:
    lines = [f"BOOTSTRAP selection on {result.mornings} mornings of {len(result.every)} conversations (dev split)",
             f"  {'section':12} {'all mornings: P R (tp/fp/fn)':32} last morning: P R (tp/fp/fn)"]
    for kind in SECTIONS:
        every, last = Counts(), Counts()
        for name in result.every:
            every.add(result.every[name][kind])
            last.add(result.last[name][kind])
        lines.append(f"  {kind:12} {cell(every.as_dict()):32} {cell(last.as_dict())}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return dev_tool_main("workers.evals.real_mornings", __doc__.split("\n")[0],
                         lambda items, settings: format_mornings(score_mornings(items, settings)), argv)


if __name__ == "__main__":
    sys.exit(main())
