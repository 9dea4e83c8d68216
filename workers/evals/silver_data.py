"""Silver sentence labels from the corpora's own annotations, development split only (issue 37, ninth round).

The hand labels of nine dev conversations give the learnt reader a few hundred positives. The
corpora carry annotations of their own, and on the development split they are fair training
data (never a score: the hand labels stay the measure):

* **LoCoMo 0–4, ``observation``** — per session and speaker, a fact sentence with the dialogue
  ids it rests on (``["Caroline is planning to continue her education …", "D1:9"]``). A
  sentence of a cited turn that the eval's matcher pairs with the observation (as the fact
  item it would make: its speaker's name before it), or whose own content words the
  observation holds (``_echoes``), is a silver **fact**; the cited turn's other sentences are
  left out; every other sentence of the conversation is a negative. Observations of a one-off
  event ("… went swimming with the kids after the conversation") are not facts a briefing
  keeps: an observation is *lasting* unless its wording dates it (``_EVENT``); an event's
  turns are left out rather than made negatives.
* **QMSum's train split, ``specific_query_list``** — the AMI and ICSI meetings' queries with
  their ``relevant_text_span`` and answer. A query asking what was decided or agreed
  (``_DECISION``) makes its answer's sentences silver **decisions** of its spans; one asking
  for tasks, assignments or the next meeting's plan (``_COMMITMENT``) silver
  **commitments**. Inside a span, a sentence whose content words the answer sentence holds
  is positive and the span's others are left out; every sentence outside the spans of the
  kind is a negative. ``topic_list`` is not read: no sentence head reads threads.

Only ``dev`` is ever asked of the loaders (LoCoMo 0–4, QMSum ``train/``), whose split guard
refuses the others. A silver row carries its conversation's name — the dev conversation's
("locomo-3", "qmsum-ES2005") when the meeting or chat is one of the hand-labelled nine, so
leaving that conversation out leaves its silver rows out too; ``silver-<meeting>`` otherwise.
Nothing from the corpora is stored: rows are made at run time from the paths given.

    python -m workers.evals.silver_data --locomo locomo10.json --qmsum QMSum   # counts, agreement with the hand labels
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from workers.conversation.sentences import sentence_spans
from workers.evals.learnt_data import KINDS, SentenceRow, conversation_rows, item_text, load_dev
from workers.evals.real_corpora import (
    QMSUM_DIRS,
    RealConversation,
    locomo_conversation,
    qmsum_conversation,
    qmsum_root,
    read_locomo,
)
from workers.evals.real_eval import Loaded
from workers.evals.real_labels import FactLabel
from workers.evals.real_match import Candidate, coverage, match, name_words, words

DEV: Final = "dev"
LOCOMO_DEV: Final = (0, 1, 2, 3, 4)
_MEETING_ID: Final = re.compile(r"(?:(?:ES|IS|TS|EN)\d{4}[a-d]|B[a-z]{2}\d{3})")
# A query whose answer says what the group chose, or what someone is to do next.
_DECISION: Final = re.compile(r"\b(decid\w*|decision\w*|agree\w*|conclu\w*|settle\w*|final\w*|cho(?:se|ose)\w*)\b",
                              re.IGNORECASE)
_COMMITMENT: Final = re.compile(r"\b(tasks?|assign\w*|next meeting|responsib\w*|to do next|action items?|"
                                r"allocat\w*)\b", re.IGNORECASE)
# Wording that dates an observation: a one-off event, not a lasting fact about the person.
_EVENT: Final = re.compile(r"\b(recently|yesterday|today|tonight|tomorrow|last (?:week|weekend|month|year|night|"
                          r"friday|saturday|sunday)|next (?:week|month|year)|this (?:week|weekend|month)|"
                          r"after the conversation|just|went|attended|visited|took|had a|got back|"
                          r"is going to|was|were)\b", re.IGNORECASE)
ECHO_SHARE: Final = 0.6  # of a sentence's content words, the share an annotation must hold
ECHO_MIN: Final = 3  # and at least this many content words in the sentence
NEGATIVE_EVERY: Final = 8  # of the rows positive for no kind, the fit reads every eighth (cost)


@dataclass(frozen=True)
class Note:
    """One annotation: the kind it speaks for, its text, the turns it cites, whom it is about."""

    kind: str
    text: str
    refs: frozenset[str]
    about: str | None = None
    lasting: bool = True  # False: an event ("went …"): its turns are left out, not positive


def lasting(observation: str) -> bool:
    return _EVENT.search(observation) is None


def _echoes(sentence_words: frozenset[str], note_words: frozenset[str]) -> bool:
    """The sentence says what the annotation says: the annotation holds most of its content words."""
    return len(sentence_words) >= ECHO_MIN and coverage(sentence_words, note_words) >= ECHO_SHARE


def _fact_matches(note: Note, speaker: str, sentence: str, names: frozenset[str]) -> bool:
    label = FactLabel(text=note.text, about=note.about, refs=sorted(note.refs))
    found = match([label], [True], [Candidate(item_text("facts", speaker, sentence), who=speaker)], names)
    return bool(found.pairs) or _echoes(words(sentence, names), words(note.text, names))


def _says(note: Note, speaker: str, sentence: str, names: frozenset[str]) -> bool:
    """Whether a cited sentence says the annotation. A question does not say what was decided
    or who will do what (it raises the subject the answer settles)."""
    if note.kind == "facts":
        return _fact_matches(note, speaker, sentence, names)
    return not sentence.rstrip().endswith("?") and _echoes(words(sentence, names), words(note.text, names))


def _label(notes: Sequence[Note], ref: str, speaker: str, sentence: str, names: frozenset[str]) -> int | None:
    cited = [n for n in notes if ref in n.refs]
    if not cited:
        return 0
    if any(n.lasting and _says(n, speaker, sentence, names) for n in cited):
        return 1
    return None


def silver_rows_of(conv: RealConversation, name: str, notes: Sequence[Note], kinds: Sequence[str]) -> list[SentenceRow]:
    """Every sentence of ``conv`` as a row named ``name``, labelled for ``kinds`` from ``notes``
    (the other kinds left out)."""
    names = name_words(conv.speakers if conv.source == "locomo" else ())
    by_kind = {kind: [n for n in notes if n.kind == kind] for kind in kinds}
    rows: list[SentenceRow] = []
    position = 0
    for i, turn in enumerate(conv.turns):
        position = 0 if i == 0 or turn.session != conv.turns[i - 1].session else position + 1
        same = i + 1 < len(conv.turns) and conv.turns[i + 1].session == turn.session
        reply = conv.turns[i + 1].text if same else None
        for start, end in sentence_spans(turn.text):
            sentence = turn.text[start:end]
            labels: dict[str, int | None] = {kind: None for kind in KINDS}
            for kind in kinds:
                labels[kind] = _label(by_kind[kind], turn.ref, turn.speaker, sentence, names)
            rows.append(SentenceRow(name, turn.ref, i, turn.speaker, sentence, position, 0, labels, reply))
    return rows


# --- LoCoMo 0–4: observations ----------------------------------------------------------------


def _refs(cited: Any) -> frozenset[str]:
    """An observation's dialogue ids: one ("D1:9"), a list, or several in one string."""
    found = cited if isinstance(cited, list) else [cited]
    return frozenset(r for c in found if isinstance(c, str) for r in re.findall(r"D\d+:\d+", c))


def observations(sample: dict[str, Any]) -> list[Note]:
    notes = []
    for session in (sample.get("observation") or {}).values():
        for speaker, items in (session or {}).items():
            for item in items or []:
                if isinstance(item, list) and len(item) >= 2 and isinstance(item[0], str):
                    notes.append(Note("facts", item[0], _refs(item[1]), about=speaker, lasting=lasting(item[0])))
    return notes


def locomo_silver(path: str) -> list[SentenceRow]:
    data = read_locomo(path)
    rows: list[SentenceRow] = []
    for index in LOCOMO_DEV:
        conv = locomo_conversation(data, index, DEV)
        rows += silver_rows_of(conv, conv.name, observations(data[index]), ("facts",))
    return rows


# --- QMSum train: specific queries -----------------------------------------------------------


def _span_refs(meeting: str, spans: Any) -> frozenset[str]:
    refs: set[str] = set()
    for span in spans or []:
        if isinstance(span, list) and len(span) == 2 and all(str(s).isdigit() for s in span):
            refs.update(f"{meeting}:{i}" for i in range(int(span[0]), int(span[1]) + 1))
    return frozenset(refs)


def _answer_sentences(answer: str) -> list[str]:
    return [answer[s:e] for s, e in sentence_spans(answer)]


def query_notes(meeting: str, data: dict[str, Any]) -> list[Note]:
    """A meeting's silver decisions and commitments: each answer sentence of a query of the
    kind, citing the query's spans."""
    notes = []
    for query in data.get("specific_query_list") or []:
        text = str(query.get("query", ""))
        kind = "decisions" if _DECISION.search(text) else "commitments" if _COMMITMENT.search(text) else None
        if kind is None:
            continue
        refs = _span_refs(meeting, query.get("relevant_text_span"))
        notes += [Note(kind, s, refs) for s in _answer_sentences(str(query.get("answer", "")))]
    return notes


def _train_meetings(root: Path) -> list[str]:
    return sorted(p.stem for p in (root / QMSUM_DIRS[DEV]).glob("*.json") if _MEETING_ID.fullmatch(p.stem))


def _thinned(rows: Iterable[SentenceRow], every: int) -> list[SentenceRow]:
    """The rows positive for a kind, and every ``every``-th of the others (a negative or
    left-out row; the fit's cost is in the rows, and the hand rows hold every negative of the
    nine conversations already)."""
    out, n = [], 0
    for row in rows:
        if 1 in row.labels.values():
            out.append(row)
            continue
        n += 1
        if n % every == 0:
            out.append(row)
    return out


def qmsum_silver(path: str, dev_series: dict[str, str]) -> list[SentenceRow]:
    """Silver rows of QMSum's train meetings; ``dev_series``: meeting -> the hand-labelled dev
    conversation holding it (its rows are named so, and kept whole: they are compared with the
    hand labels)."""
    import json

    root = qmsum_root(path)
    rows: list[SentenceRow] = []
    for meeting in _train_meetings(root):
        data = json.loads((root / QMSUM_DIRS[DEV] / f"{meeting}.json").read_text(encoding="utf-8"))
        notes = query_notes(meeting, data)
        if not notes:
            continue
        conv = qmsum_conversation(root, meeting, [meeting], DEV)
        rows += silver_rows_of(conv, dev_series.get(meeting, f"silver-{meeting}"), notes, ("decisions", "commitments"))
    return rows


def dev_series(loaded: Sequence[Loaded]) -> dict[str, str]:
    return {meeting: one.conv.name for one in loaded for meeting in one.labels.meetings}


def silver_rows(locomo: str, qmsum: str, loaded: Sequence[Loaded]) -> list[SentenceRow]:
    return [*locomo_silver(locomo), *qmsum_silver(qmsum, dev_series(loaded))]


def silver_training_rows(locomo: str, qmsum: str, loaded: Sequence[Loaded]) -> list[SentenceRow]:
    """The silver rows a reader is fitted on: every positive; of the other rows, none of a
    hand-labelled conversation (its hand rows hold every negative already, labelled better)
    and every ``NEGATIVE_EVERY``-th of the other meetings."""
    hand = {one.conv.name for one in loaded}
    made = silver_rows(locomo, qmsum, loaded)
    return [*(r for r in made if r.conversation in hand and 1 in r.labels.values()),
            *_thinned((r for r in made if r.conversation not in hand), NEGATIVE_EVERY)]


# --- agreement with the hand labels ------------------------------------------------------------


def agreement(silver: Sequence[SentenceRow], hand: Sequence[SentenceRow], kind: str) -> tuple[int, int, int]:
    """tp, fp, fn of the silver positives against the hand positives, on the sentences both
    label (neither left out) — the hand labels as truth."""
    truth = {(r.conversation, r.ref, r.sentence): r.labels[kind] for r in hand}
    tp = fp = fn = 0
    for r in silver:
        h, s = truth.get((r.conversation, r.ref, r.sentence)), r.labels[kind]
        if h is None or s is None:
            continue
        tp += h == 1 and s == 1
        fp += h == 0 and s == 1
        fn += h == 1 and s == 0
    return tp, fp, fn


def summary(silver: Sequence[SentenceRow], hand: Sequence[SentenceRow]) -> str:
    lines = ["kind         positive  negative  left out  | vs hand (dev): P R (tp/fp/fn)"]
    for kind in KINDS:
        sources = {r.conversation for r in silver if r.labels[kind] is not None}
        mine = [r.labels[kind] for r in silver if r.conversation in sources]
        tp, fp, fn = agreement(silver, hand, kind)
        p = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        lines.append(f"{kind:12s} {mine.count(1):8d} {mine.count(0):9d} {mine.count(None):9d}  | "
                     f"{p:.3f} {rec:.3f} ({tp}/{fp}/{fn})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.evals.silver_data")
    parser.add_argument("--locomo", required=True, help="LoCoMo's data/locomo10.json")
    parser.add_argument("--qmsum", required=True, help="QMSum's data/ALL (or the repository)")
    args = parser.parse_args(argv)
    loaded = load_dev(args.locomo, args.qmsum)
    hand = [row for one in loaded for row in conversation_rows(one)]
    print(summary(silver_rows(args.locomo, args.qmsum, loaded), hand))
    return 0


if __name__ == "__main__":
    sys.exit(main())
