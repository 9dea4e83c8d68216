"""Silver thread labels from the corpora's annotations, and the phrase ranker trained on them, left
one conversation out (issue 37, fifteenth round; docs/briefing-eval.md, "Fifteenth round: threads").
Measured before anything is built.

The fourteenth round's ranker (``real_threads_ranker``: a session's phrases scored by their
structures and their head word's static e5 vector) is the one shape that moved Active Threads'
precision, learnt on five labelled chats and four meeting series. The corpora annotate topics of
their own, and on the **development split** they are fair training data (never a score: the hand
labels stay the measure):

* **QMSum ``train/``, ``topic_list``** — each topic of a meeting ("Best way to store features",
  "Discussion about favourite animal characteristics and the workflow") with its turn spans. A phrase of the threads
  core's kind (``topics.phrases_of``) said in a turn of a topic's span is positive when the topic's
  words hold it (``held``: its head word, and half of its content words — two at least when it has
  two), negative otherwise (a turn of no span: negative). AMI meetings are grouped by series (four
  meetings, four sessions, as the hand-labelled series are), an ICSI meeting is a conversation of
  its own.
* **LoCoMo 0–4, ``event_summary``** — per session and person, what they did or are doing ("Caroline
  attends an LGBTQ support group for the first time"). A phrase said in that session by that person
  is positive when one of their events of the session holds it, negative otherwise. Optionally
  (``--summaries``) ``session_summary`` too: the session's summary sentences that name the speaker.

A silver row carries its conversation's name — the hand-labelled dev conversation's ("locomo-3",
"qmsum-ES2005") when the chat or the series is one of the nine — so leaving a conversation out of
the hand labels leaves its silver rows out too. Of the silver negatives every ``NEGATIVE_EVERY``-th
is kept (cost). Only ``dev`` is asked of the loaders (LoCoMo 0–4, QMSum ``train/``: their split
guard refuses the others); nothing from the corpora is stored.

The ranker is then learnt per fold on silver rows, hand rows of the other eight conversations, or
both (``VARIANTS``), and scored on the conversation left out exactly as ``real_threads_ranker``
scores it: the top phrase of each morning's last two sessions added to what the BOOTSTRAP shows when
its score reaches a threshold (fixed, or chosen on the other eight conversations' hand labels).

    python -m workers.evals.silver_threads --locomo locomo10.json --qmsum QMSum   # a few minutes
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

import numpy as np

from shared.config import Settings, load_settings
from workers.conversation.patterns import PatternSet, get_patterns
from workers.evals.briefing import Counts
from workers.evals.learnt_train import Matrix, Vectors
from workers.evals.locomo import DatasetError
from workers.evals.real_corpora import (
    QMSUM_DIRS,
    RealConversation,
    locomo_conversation,
    qmsum_conversation,
    qmsum_root,
    read_locomo,
)
from workers.evals.real_eval import Loaded, RealOptions, load_real_set, real_settings
from workers.evals.real_labels import ConversationLabels
from workers.evals.real_match import coverage, name_words, same_word, words
from workers.evals.real_threads import MIN_HEAD, Said, f_beta, said_in
from workers.evals.real_threads_ranker import (
    L2,
    RATE,
    STEPS,
    THRESHOLDS,
    Conversation,
    _is_thread,
    index,
    opening,
    prepare,
    structure,
)
from workers.evals.silver_data import DEV, LOCOMO_DEV

_AMI: Final = re.compile(r"(?:ES|IS|TS|EN)\d{4}[a-d]")
_ICSI: Final = re.compile(r"B[a-z]{2}\d{3}")
NEGATIVE_EVERY: Final = 8
SHARE: Final = 0.5  # of a phrase's content words, the share an annotation must hold (its head always)


@dataclass(frozen=True)
class Note:
    """One annotation: its text, the turns it covers (QMSum) or the session and person it is of
    (LoCoMo)."""

    text: str
    refs: frozenset[str] = frozenset()
    session: int = 0
    speaker: str = ""


def held(phrase: str, note: frozenset[str], names: frozenset[str]) -> bool:
    """The annotation's words hold the phrase: its head word, and ``SHARE`` of its content words."""
    mine = words(phrase, names)
    head = words(phrase.rsplit(" ", 1)[-1], names)
    return bool(mine) and bool(head) and all(any(same_word(h, n) for n in note) for h in head) \
        and coverage(mine, note) >= SHARE


# --- the annotations ---------------------------------------------------------------------------


def topic_notes(meeting: str, data: dict[str, Any]) -> list[Note]:
    """A QMSum meeting's topics, each with the turns of its spans."""
    notes = []
    for topic in data.get("topic_list") or []:
        refs: set[str] = set()
        for span in topic.get("relevant_text_span") or []:
            if isinstance(span, list) and len(span) == 2 and all(str(s).isdigit() for s in span):
                refs.update(f"{meeting}:{i}" for i in range(int(span[0]), int(span[1]) + 1))
        if isinstance(topic.get("topic"), str) and refs:
            notes.append(Note(topic["topic"], frozenset(refs)))
    return notes


def event_notes(sample: dict[str, Any], conv: RealConversation, summaries: bool) -> list[Note]:
    """A LoCoMo chat's events per session and person; with ``summaries`` also the sentences of each
    session's summary that name the person."""
    notes = []
    for key, session in (sample.get("event_summary") or {}).items():
        number = re.search(r"(\d+)$", key)
        if number is None or not isinstance(session, dict):
            continue
        for speaker, events in session.items():
            if speaker in conv.speakers and isinstance(events, list):
                notes += [Note(e, session=int(number.group(1)), speaker=speaker) for e in events if isinstance(e, str)]
    if summaries:
        for key, text in (sample.get("session_summary") or {}).items():
            number = re.search(r"session_(\d+)_summary", key)
            if number is None or not isinstance(text, str):
                continue
            for sentence in re.split(r"(?<=[.!?])\s+", text):
                notes += [Note(sentence, session=int(number.group(1)), speaker=s) for s in conv.speakers
                          if s.split()[0] in sentence]
    return notes


def _label(conv: RealConversation, notes: Sequence[Note], names: frozenset[str]) -> Callable[[Said], bool]:
    by_ref: dict[str, list[frozenset[str]]] = {}
    by_session: dict[tuple[int, str], list[frozenset[str]]] = {}
    for n in notes:
        w = words(n.text, names)
        for r in n.refs:
            by_ref.setdefault(r, []).append(w)
        if n.session:
            by_session.setdefault((n.session, n.speaker), []).append(w)

    def positive(s: Said) -> bool:
        turn = conv.turns[s.turn]
        cover = by_ref.get(turn.ref, []) + by_session.get((s.session, s.speaker), [])
        return any(held(s.phrase, w, names) for w in cover)
    return positive


# --- rows ---------------------------------------------------------------------------------------


@dataclass
class Silver:
    name: str  # the dev conversation it belongs to ("locomo-3", "qmsum-ES2005") or its own
    source: str  # "qmsum" or "locomo"
    x: Matrix
    y: Matrix


def silver_rows(conv: RealConversation, name: str, notes: Sequence[Note], patterns: PatternSet,
                vectors: Vectors | None) -> Silver:
    """Every phrase occurrence of ``conv`` as of the morning after its session, labelled by
    ``notes``; every positive and every ``NEGATIVE_EVERY``-th negative."""
    item = Loaded(labels=ConversationLabels(source=conv.source, conversation=name, split=DEV), conv=conv)
    names = name_words(conv.speakers if conv.source == "locomo" else ())
    positive = _label(conv, notes, names)
    phrases = said_in(item, patterns)
    first = opening(item)
    xs: list[list[float]] = []
    ys: list[float] = []
    negatives = 0
    last = max(t.session for t in conv.turns)
    for upto in range(1, last + 1):
        idx = index(phrases, upto)
        for s in phrases:
            if s.session != upto or len(s.head) < MIN_HEAD:
                continue
            y = positive(s)
            if not y:
                negatives += 1
                if negatives % NEGATIVE_EVERY:
                    continue
            row = structure(item, s, upto, idx, first, patterns.definite)
            xs.append(row + vectors.mean(s.head).tolist() if vectors is not None else row)
            ys.append(1.0 if y else 0.0)
    width = 13 + (vectors.vectors.shape[1] if vectors is not None else 0)
    return Silver(name, conv.source, np.array(xs).reshape(-1, width), np.array(ys))


def qmsum_conversations(path: str) -> list[tuple[RealConversation, list[Note]]]:
    """QMSum's train meetings: an AMI series (its meetings in train/) as one conversation, an ICSI
    meeting alone; each with its topics."""
    root = qmsum_root(path)
    stems = sorted(p.stem for p in (root / QMSUM_DIRS[DEV]).glob("*.json"))
    groups: dict[str, list[str]] = {}
    for stem in stems:
        if _AMI.fullmatch(stem):
            groups.setdefault(stem[:-1], []).append(stem)
        elif _ICSI.fullmatch(stem):
            groups[stem] = [stem]
    out = []
    for series, meetings in sorted(groups.items()):
        notes: list[Note] = []
        for m in meetings:
            data = json.loads((root / QMSUM_DIRS[DEV] / f"{m}.json").read_text(encoding="utf-8"))
            notes += topic_notes(m, data)
        if notes:
            out.append((qmsum_conversation(root, series, meetings, DEV), notes))
    return out


def locomo_conversations(path: str, summaries: bool) -> list[tuple[RealConversation, list[Note]]]:
    data = read_locomo(path)
    out = []
    for i in LOCOMO_DEV:
        conv = locomo_conversation(data, i, DEV)
        out.append((conv, event_notes(data[i], conv, summaries)))
    return out


# --- the ranker, left one conversation out -----------------------------------------------------


def fit_weighted(x: Matrix, y: Matrix, groups: Matrix) -> Matrix:
    """Balanced logistic regression by gradient descent (the fourteenth round's ``fit``), each of
    the ``groups`` (0: hand rows, 1: silver rows) weighing the same in total, each class half of its
    group."""
    w = np.zeros(x.shape[1])
    weight = np.zeros(len(y))
    present = [g for g in (0.0, 1.0) if (groups == g).any()]
    for g in present:
        mine = groups == g
        for label in (0.0, 1.0):
            cell = mine & (y == label)
            if cell.any():
                weight[cell] = len(y) / (len(present) * 2 * cell.sum())
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w)))
        w = w - RATE * ((x.T @ (weight * (p - y))) / len(y) + L2 * w / len(y))
    return np.asarray(w)


VARIANTS: Final = ("hand", "silver", "hand+silver", "hand+qmsum", "hand+locomo")


def _training(variant: str, others: Sequence[Conversation], silver: Sequence[Silver],
              out: str) -> tuple[Matrix, Matrix, Matrix]:
    hand = variant.startswith("hand")
    source = {"silver": ("qmsum", "locomo"), "hand+silver": ("qmsum", "locomo"), "hand+qmsum": ("qmsum",),
              "hand+locomo": ("locomo",)}.get(variant, ())
    parts = [(c.x, c.y, 0.0) for c in others] if hand else []
    parts += [(s.x, s.y, 1.0) for s in silver if s.name != out and s.source in source and len(s.y)]
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    g = np.concatenate([np.full(len(p[1]), p[2]) for p in parts])
    return x, y, g


def _f_over(conversations: Sequence[Conversation], w: Matrix, threshold: float, beta: float) -> float:
    total = Counts()
    for c in conversations:
        total.add(c.run(w, threshold)[0])
    return f_beta(total, beta)


@dataclass
class Scored:
    fixed: dict[float, tuple[Counts, Counts]]
    nested: dict[float, tuple[Counts, Counts]]
    per: dict[str, dict[float, tuple[Counts, Counts]]]  # conversation → nested by F-beta


def leave_one_out(conversations: Sequence[Conversation], silver: Sequence[Silver], variant: str,
                  chats: bool = False) -> Scored:
    """Each conversation left out in turn (with ``chats``, only the LoCoMo chats are left out and
    scored, and the threshold is chosen on the other chats; the weights are learnt on every other
    conversation either way)."""
    fixed = {t: (Counts(), Counts()) for t in THRESHOLDS}
    nested = {beta: (Counts(), Counts()) for beta in (0.5, 1.0)}
    per: dict[str, dict[float, tuple[Counts, Counts]]] = {}
    scored = [c for c in conversations if c.item.conv.source == "locomo"] if chats else list(conversations)
    for out in scored:
        others = [c for c in conversations if c is not out]
        w = fit_weighted(*_training(variant, others, silver, out.item.labels.name))
        for t in THRESHOLDS:
            _add(fixed[t], out.run(w, t))
        per[out.item.labels.name] = {}
        judges = [c for c in scored if c is not out]
        for beta, pair in nested.items():
            chosen = max(THRESHOLDS, key=partial(_f_over, judges, w, beta=beta))
            found = out.run(w, chosen)
            _add(pair, found)
            per[out.item.labels.name][beta] = found
    return Scored(fixed, nested, per)


def _add(pair: tuple[Counts, Counts], found: tuple[Counts, Counts]) -> None:
    pair[0].add(found[0])
    pair[1].add(found[1])


def _cell(pair: tuple[Counts, Counts]) -> str:
    every, last = pair
    return f"{every.tp}/{every.fp}/{every.fn}; last {last.tp}/{last.fp}/{last.fn}"


def annotated(locomo: str | None, qmsum: str | None, summaries: bool) -> list[tuple[RealConversation, list[Note]]]:
    """Every silver conversation with its annotations: QMSum's train series and meetings, LoCoMo 0–4."""
    meetings = qmsum_conversations(qmsum) if qmsum else []
    return [*meetings, *(locomo_conversations(locomo, summaries) if locomo else [])]


def vocabulary(convs: Sequence[RealConversation], patterns: PatternSet) -> list[str]:
    found: set[str] = set()
    for conv in convs:
        item = Loaded(labels=ConversationLabels(source=conv.source, conversation=conv.name, split=DEV), conv=conv)
        found.update(s.head for s in said_in(item, patterns))
    return sorted(found)


def report(items: Sequence[Loaded], settings: Settings, locomo: str | None, qmsum: str | None,
           with_vectors: bool = True, summaries: bool = False, variants: Sequence[str] = VARIANTS,
           chats: bool = False) -> str:
    patterns = get_patterns(settings.languages)
    pairs = annotated(locomo, qmsum, summaries)
    table = Vectors(vocabulary([c for c, _ in pairs] + [i.conv for i in items], patterns)) if with_vectors else None
    silver = [silver_rows(conv, conv.name, notes, patterns, table) for conv, notes in pairs]
    lines = ["Silver thread labels (dev split): conversation, phrase rows kept (positive / negative, "
             f"every {NEGATIVE_EVERY}th negative kept)"]
    for source in ("qmsum", "locomo"):
        mine = [s for s in silver if s.source == source]
        pos = int(sum(s.y.sum() for s in mine))
        rows = sum(len(s.y) for s in mine)
        lines.append(f"  {source}: {len(mine)} conversations, {pos} positive / {rows - pos} negative")
    conversations = [prepare(item, settings, patterns, table) for item in items]
    lines.append(f"hand: {int(sum(c.y.sum() for c in conversations))} positive / "
                 f"{int(sum(len(c.y) - c.y.sum() for c in conversations))} negative")
    lines.append("The top phrase of a morning added to Active Threads, left one conversation out "
                 "(all mornings tp/fp/fn; last morning)")
    lines.append(f"  (threshold {THRESHOLDS[-1]}: nothing added, what the BOOTSTRAP shows)")
    for variant in variants:
        scored = leave_one_out(conversations, silver, variant, chats)
        lines.append(f"{variant}:")
        lines += [f"  threshold {t}: {_cell(scored.fixed[t])}" for t in THRESHOLDS]
        lines += [f"  nested by F{beta}: {_cell(scored.nested[beta])}" for beta in scored.nested]
        lines += [f"    {name}: " + "  ".join(f"F{b} {_cell(p)}" for b, p in found.items())
                  for name, found in scored.per.items()]
    return "\n".join(lines)


def agreement(items: Sequence[Loaded], pairs: Sequence[tuple[RealConversation, list[Note]]],
              patterns: PatternSet) -> dict[str, tuple[int, int, int]]:
    """Per hand-labelled conversation, tp/fp/fn of the silver labels against the hand labels over its
    distinct phrases (silver-positive when one occurrence is; hand-positive when the phrase matches a
    thread label, optional ones included: ``real_threads_ranker._is_thread``)."""
    by_name = {conv.name: (conv, notes) for conv, notes in pairs}
    out: dict[str, tuple[int, int, int]] = {}
    for item in items:
        if item.labels.name not in by_name:
            continue
        conv, notes = by_name[item.labels.name]
        positive = _label(conv, notes, name_words(conv.speakers if conv.source == "locomo" else ()))
        silver: dict[str, bool] = {}
        for s in said_in(item, patterns):
            if len(s.head) >= MIN_HEAD:
                silver[s.phrase] = silver.get(s.phrase, False) or positive(s)
        truth: dict[str, bool] = {}
        hand = {phrase: _is_thread(item, phrase, truth) for phrase in silver}
        out[item.labels.name] = (sum(hand[p] and y for p, y in silver.items()),
                                 sum(not hand[p] and y for p, y in silver.items()),
                                 sum(hand[p] and not y for p, y in silver.items()))
    return out


def agreement_report(items: Sequence[Loaded], settings: Settings, locomo: str | None, qmsum: str | None,
                     summaries: bool) -> str:
    found = agreement(items, annotated(locomo, qmsum, summaries), get_patterns(settings.languages))
    lines = ["Silver against hand thread labels, distinct phrases per conversation (tp/fp/fn)"]
    lines += [f"  {name}: {tp}/{fp}/{fn}" for name, (tp, fp, fn) in found.items()]
    tp, fp, fn = (sum(v[k] for v in found.values()) for k in range(3))
    lines.append(f"  all: P {tp / max(tp + fp, 1):.3f} R {tp / max(tp + fn, 1):.3f} ({tp}/{fp}/{fn})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.evals.silver_threads", description=__doc__.split("\n")[0])
    parser.add_argument("--locomo", help="LoCoMo's data/locomo10.json")
    parser.add_argument("--qmsum", help="QMSum's checkout (data/ALL/…)")
    parser.add_argument("--summaries", action="store_true", help="LoCoMo's session summaries as silver too")
    parser.add_argument("--no-vectors", action="store_true", help="the structures only")
    parser.add_argument("--variant", action="append", default=[], choices=VARIANTS)
    parser.add_argument("--chats", action="store_true", help="score the chats only (threshold chosen on the others)")
    parser.add_argument("--agreement", action="store_true", help="only the silver labels against the hand labels")
    args = parser.parse_args(argv)
    settings = real_settings(load_settings({}))
    try:
        items, _ = load_real_set(RealOptions(split="dev", locomo=args.locomo, qmsum=args.qmsum))
        text = agreement_report(items, settings, args.locomo, args.qmsum, args.summaries) if args.agreement else \
            report(items, settings, args.locomo, args.qmsum, not args.no_vectors, args.summaries,
                   args.variant or VARIANTS, args.chats)
    except DatasetError as exc:
        print(f"silver_threads: {exc}", file=sys.stderr)
        return 1
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
