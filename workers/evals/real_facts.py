"""Known Facts by predicate: which kind of statement made each stored fact of the development
conversations, in how many conversations it is right, and a predicate selection judged leaving
one conversation out (issue 37, eighth round; docs/briefing-eval.md).

Six rounds of phrase rules raised the development split's facts and none of it reached the
held-out split: a rule written while reading one conversation is right in that one. This
harness says it per rule. Each development conversation runs through the pure knowledge core in
stream order (as the knowledge worker applies it: the pipeline's stored facts exactly); its
stored facts and its BOOTSTRAP's Known Facts lines are scored with the eval's matcher. Every
stored fact is counted under its *predicate* and the kind of its subject ("person is-into",
"concept is" for a project figure): its rule, as near as the document says. Then, per predicate,
the conversations it is right in, and a leave-one-conversation-out selection: a predicate is
kept for a conversation when, on the other conversations, it is right at least as often as it
is wrong (or never said there).

Development split only: ``python -m workers.evals.real_facts --locomo … --qmsum …``.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from schemas.docs import Fact, KnowledgeDoc
from schemas.events import MessageEvent
from shared.config import Settings
from workers.evals.briefing import Counts, conversation_events
from workers.evals.real_eval import (
    LevelScore,
    Loaded,
    as_conversation,
    cell,
    dev_tool_main,
)
from workers.evals.real_eval import score_section as score_real_section
from workers.evals.real_match import Candidate
from workers.knowledge import core as knowledge_core
from workers.knowledge.briefing import fact_sentences
from workers.knowledge.personal import get_personal_patterns
from workers.render import entity_names

LEVELS = ("stored", "briefing")


def knowledge_of(item: Loaded, settings: Settings) -> KnowledgeDoc | None:
    """The conversation's knowledge document: every message through the pure core, in stream order."""
    packs = get_personal_patterns(settings.languages)
    doc = None
    for placed in conversation_events(as_conversation(item.conv)):
        if isinstance(placed.event, MessageEvent):
            doc = knowledge_core.apply_message(doc, placed.event, settings.knowledge, packs)
    return doc


def predicate_of(fact: Fact) -> str:
    """A fact's rule, as near as the document says: its subject's kind and its predicate
    ("person is-into", "concept is")."""
    kind = fact.subject.split(":", 1)[0] if ":" in fact.subject else "literal"
    return f"{kind} {fact.predicate}"


@dataclass
class FactScores:
    """Per conversation: the stored and BOOTSTRAP counts, and per predicate the stored tp/fp."""

    levels: dict[str, dict[str, Counts]] = field(default_factory=dict)  # conversation → level → counts
    predicates: dict[str, dict[str, Counts]] = field(default_factory=dict)  # predicate → conversation → counts
    labelled: dict[str, int] = field(default_factory=dict)  # conversation → required fact labels


def _score(item: Loaded, cands: list[Candidate], level: str) -> tuple[Counts, Counter[str], Counter[str]]:
    """The level's counts, and the texts of the candidates paired with a label and of the extra ones."""
    score = LevelScore()
    found = score_real_section(item, "facts", level, cands, 0, score)
    return score.counts["facts"], Counter(c.text for _, c in found.pairs), Counter(c.text for c in found.extra)


def score_facts(items: Sequence[Loaded], settings: Settings) -> FactScores:
    out = FactScores()
    for item in items:
        name = item.labels.name
        doc = knowledge_of(item, settings)
        facts = doc.facts if doc is not None else []
        names = entity_names(doc.entities) if doc is not None else {}
        texts = {f.id: f"{names.get(f.subject, f.subject)} {f.predicate.replace('-', ' ')} "
                       f"{names.get(f.object, f.object)}" for f in facts}
        stored, right, wrong = _score(item, [Candidate(texts[f.id]) for f in facts], "stored")
        shown, _, _ = _score(item, [Candidate(s) for s in fact_sentences(facts, names)], "briefing")
        out.levels[name] = {"stored": stored, "briefing": shown}
        out.labelled[name] = stored.tp + stored.fn
        for f in facts:
            counts = out.predicates.setdefault(predicate_of(f), {}).setdefault(name, Counts())
            text = texts[f.id]  # each paired (or extra) candidate counted once
            if right[text] > 0:
                right[text] -= 1
                counts.tp += 1
            elif wrong[text] > 0:
                wrong[text] -= 1
                counts.fp += 1
    return out


def _sum(counts: dict[str, Counts], names: Sequence[str]) -> Counts:
    total = Counts()
    for name in names:
        if name in counts:
            total.add(counts[name])
    return total


def kept_leaving_out(scores: FactScores, left_out: str) -> set[str]:
    """The predicates kept for ``left_out``: right at least as often as wrong on the other conversations."""
    others = [name for name in scores.levels if name != left_out]
    return {p for p, by in scores.predicates.items() if (c := _sum(by, others)).tp >= c.fp}


def leave_one_out(scores: FactScores) -> Counts:
    """Stored tp/fp/fn summed over the folds, each conversation's facts those of the predicates
    its fold keeps (a dropped predicate's true facts become misses)."""
    total = Counts()
    for name, labelled in scores.labelled.items():
        fold = Counts()
        for predicate in kept_leaving_out(scores, name):
            fold.add(scores.predicates[predicate].get(name, Counts()))
        total.add(Counts(tp=fold.tp, fp=fold.fp, fn=labelled - fold.tp))
    return total


def format_facts(scores: FactScores) -> str:
    names = list(scores.levels)
    lines = [f"Known Facts on {len(names)} conversations (dev split): stored | BOOTSTRAP, P R (tp/fp/fn)"]
    for name in names:
        level = scores.levels[name]
        lines.append(f"  {name:14} {cell(level['stored'].as_dict()):24} {cell(level['briefing'].as_dict())}")
    totals = {level: _sum({n: scores.levels[n][level] for n in names}, names) for level in LEVELS}
    lines.append(f"  {'all':14} {cell(totals['stored'].as_dict()):24} {cell(totals['briefing'].as_dict())}")
    lines.append("by predicate: conversations right in, stored tp/fp")
    ranked = sorted(scores.predicates.items(),
                    key=lambda kv: (-sum(c.tp > 0 for c in kv[1].values()), -_sum(kv[1], names).tp, kv[0]))
    for predicate, by in ranked:
        total = _sum(by, names)
        lines.append(f"  {sum(c.tp > 0 for c in by.values())} {total.tp:3}/{total.fp:<3} {predicate}")
    lines.append(f"leave one out (a predicate kept where right as often as wrong elsewhere): "
                 f"{cell(leave_one_out(scores).as_dict())}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return dev_tool_main("workers.evals.real_facts", __doc__.split("\n")[0],
                         lambda items, settings: format_facts(score_facts(items, settings)), argv)


if __name__ == "__main__":
    sys.exit(main())
