"""A learnt ranker of a session's phrases for Active Threads, left one conversation out (issue 37,
fourteenth round; docs/briefing-eval.md, "Fourteenth round: threads"). Measured, not built.

Every phrase said in the last ``SESSIONS`` sessions before a morning is scored, and the top one is
added to what the BOOTSTRAP shows when its score reaches a threshold. The weights of each fold are
learnt on the other conversations' phrases (balanced logistic regression; a phrase is positive when
it matches one of its conversation's thread labels, optional ones included), and the threshold is
either fixed or chosen on the other conversations too (nested): the conversation left out chooses
nothing. Features: the structures of ``real_threads`` combined (``structure``); then the same and
the bundled embedder's static vector of the phrase's head word (``learnt_train.Vectors``).

Development split only: ``python -m workers.evals.real_threads_ranker --locomo … --qmsum …``
(a few minutes: every phrase of every morning is scored, twice).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from zoneinfo import ZoneInfo

import msgspec
import numpy as np

from shared.config import Settings
from workers.conversation.patterns import PatternSet, get_patterns
from workers.evals.briefing import Counts
from workers.evals.learnt_train import Matrix, Vectors
from workers.evals.real_eval import LevelScore, Loaded, dev_tool_main, score_section
from workers.evals.real_match import Candidate
from workers.evals.real_mornings import cut, session_documents, shown
from workers.evals.real_threads import DECISION_DAYS, MIN_HEAD, Said, f_beta, said_in

SESSIONS = 2  # the last sessions whose phrases a morning ranks
OPENING_TURNS = 2  # a person's first turns of a session: what they bring up first
ECHO_TURNS = 3
ASKED_TURNS = 7
L2 = 10.0
STEPS = 600
RATE = 0.5
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.01)  # 1.01: never (main)
Index = tuple[dict[str, set[int]], dict[str, set[str]]]  # phrase → sessions said in, speakers


def index(phrases: Sequence[Said], upto: int) -> Index:
    sessions: dict[str, set[int]] = {}
    speakers: dict[str, set[str]] = {}
    for s in phrases:
        if s.session > upto:
            break
        sessions.setdefault(s.phrase, set()).add(s.session)
        speakers.setdefault(s.phrase, set()).add(s.speaker)
    return sessions, speakers


def opening(item: Loaded) -> frozenset[int]:
    firsts: dict[tuple[int, str], list[int]] = {}
    for i, t in enumerate(item.conv.turns):
        mine = firsts.setdefault((t.session, t.speaker), [])
        if len(mine) < OPENING_TURNS:
            mine.append(i)
    return frozenset(i for v in firsts.values() for i in v)


def structure(item: Loaded, s: Said, upto: int, idx: Index, first: frozenset[int],
              definite: frozenset[str]) -> list[float]:
    """The bias and 12 structures of one phrase occurrence, as of the morning after ``upto``."""
    turns = item.conv.turns
    low = turns[s.turn].text.lower()
    at = low.find(s.phrase)
    before = low[:at].split()[-1:] if at > 0 else []
    det = 1.0 if before and before[0].strip('"(') in definite else 0.0
    nxt = [u for u in turns[s.turn + 1:s.turn + 1 + ECHO_TURNS] if u.speaker != s.speaker and u.session <= upto]
    echo_word = any(w in u.text.lower() for u in nxt for w in s.phrase.split() if len(w) >= MIN_HEAD)
    echo_phrase = any(s.phrase in u.text.lower() for u in nxt)
    asked = any("?" in u.text and s.head in u.text.lower() and u.speaker != s.speaker
                for u in turns[s.turn + 1:s.turn + 1 + ASKED_TURNS] if u.session <= upto)
    sessions, speakers = idx
    return [1.0, float(s.engaged), det, float(echo_word), float(echo_phrase),
            math.log1p(len(sessions.get(s.phrase, ()))), float(len(speakers.get(s.phrase, ())) > 1),
            float(asked), float(s.turn in first), float(s.phrase.count(" ") + 1), float(upto - s.session),
            float(s.open_question), float(len(s.head) >= 6)]


def fit(x: Matrix, y: Matrix) -> Matrix:
    """Balanced logistic regression by gradient descent (``STEPS`` steps of ``RATE`` from zero)."""
    w = np.zeros(x.shape[1])
    pos = float(y.mean())
    weight = np.where(y > 0, 0.5 / max(pos, 1e-6), 0.5 / max(1 - pos, 1e-6))
    for _ in range(STEPS):
        p = 1 / (1 + np.exp(-(x @ w)))
        w = w - RATE * ((x.T @ (weight * (p - y))) / len(y) + L2 * w / len(y))
    return np.asarray(w)


@dataclass
class Conversation:
    item: Loaded
    x: Matrix  # every phrase occurrence, as of the morning after its session
    y: Matrix
    mornings: dict[int, tuple[list[str], Matrix | None]]  # session → phrases of the last SESSIONS, rows
    cuts: dict[int, Loaded]
    base: dict[int, list[Candidate]]  # what the BOOTSTRAP shows that morning
    memo: dict[tuple[int, str | None], Counts] = field(default_factory=dict)

    def counts(self, session: int, title: str | None) -> Counts:
        key = (session, title)
        if key not in self.memo:
            extra = [Candidate(title, status="open")] if title else []
            level = LevelScore()
            score_section(self.cuts[session], "threads", "briefing", [*self.base[session], *extra], DECISION_DAYS,
                          level)
            self.memo[key] = level.counts["threads"]
        return self.memo[key]

    def run(self, w: Matrix, threshold: float) -> tuple[Counts, Counts]:
        every, last = Counts(), Counts()
        for session in sorted(self.mornings):
            phrases, x = self.mornings[session]
            title = None
            if x is not None:
                p = 1 / (1 + np.exp(-(x @ w)))
                best = int(np.argmax(p))
                title = phrases[best] if p[best] >= threshold else None
            last = self.counts(session, title)
            every.add(last)
        return every, last


def _is_thread(item: Loaded, phrase: str, truth: dict[str, bool]) -> bool:
    if phrase not in truth:
        labels = msgspec.structs.replace(item.labels, threads=[
            msgspec.structs.replace(t, optional=False) for t in item.labels.threads])
        level = LevelScore()
        score_section(Loaded(labels=labels, conv=item.conv), "threads", "stored", [Candidate(phrase, status="open")],
                      DECISION_DAYS, level)
        truth[phrase] = level.counts["threads"].tp > 0
    return truth[phrase]


def prepare(item: Loaded, settings: Settings, patterns: PatternSet, vectors: Vectors | None) -> Conversation:
    tz = ZoneInfo(settings.timezone)
    phrases = said_in(item, patterns)
    first = opening(item)
    truth: dict[str, bool] = {}

    def row(s: Said, upto: int, idx: Index) -> list[float]:
        found = structure(item, s, upto, idx, first, patterns.definite)
        return found + vectors.mean(s.head).tolist() if vectors is not None else found

    xs: list[list[float]] = []
    ys: list[float] = []
    last = max(t.session for t in item.conv.turns)
    for upto in range(1, last + 1):
        idx = index(phrases, upto)
        for s in phrases:
            if s.session == upto and len(s.head) >= MIN_HEAD:
                xs.append(row(s, upto, idx))
                ys.append(1.0 if _is_thread(item, s.phrase, truth) else 0.0)
    docs = session_documents(item, settings)
    mornings: dict[int, tuple[list[str], Matrix | None]] = {}
    cuts: dict[int, Loaded] = {}
    base: dict[int, list[Candidate]] = {}
    for upto in sorted(docs):
        idx = index(phrases, upto)
        near = [s for s in phrases if upto - SESSIONS < s.session <= upto and len(s.head) >= MIN_HEAD]
        mornings[upto] = ([s.phrase for s in near], np.array([row(s, upto, idx) for s in near]) if near else None)
        cuts[upto] = cut(item, upto)
        base[upto] = shown(docs[upto], cuts[upto], tz)["threads"]
    return Conversation(item, np.array(xs), np.array(ys), mornings, cuts, base)


@dataclass
class Ranked:
    fixed: dict[float, tuple[Counts, Counts]]
    nested: dict[float, tuple[Counts, Counts]]  # by F-beta → (all mornings, last)


def _add(pair: tuple[Counts, Counts], found: tuple[Counts, Counts]) -> None:
    pair[0].add(found[0])
    pair[1].add(found[1])


def _f_over(conversations: Sequence[Conversation], w: Matrix, threshold: float, beta: float) -> float:
    total = Counts()
    for c in conversations:
        total.add(c.run(w, threshold)[0])
    return f_beta(total, beta)


def leave_one_out(conversations: Sequence[Conversation]) -> Ranked:
    fixed = {t: (Counts(), Counts()) for t in THRESHOLDS}
    nested = {beta: (Counts(), Counts()) for beta in (0.5, 1.0)}
    for out in conversations:
        others = [c for c in conversations if c is not out]
        w = fit(np.concatenate([c.x for c in others]), np.concatenate([c.y for c in others]))
        for t in THRESHOLDS:
            _add(fixed[t], out.run(w, t))
        for beta, pair in nested.items():
            chosen = max(THRESHOLDS, key=partial(_f_over, others, w, beta=beta))
            _add(pair, out.run(w, chosen))
    return Ranked(fixed, nested)


def _cell(pair: tuple[Counts, Counts]) -> str:
    every, last = pair
    return f"{every.tp}/{every.fp}/{every.fn}; last {last.tp}/{last.fp}/{last.fn}"


def report(items: Sequence[Loaded], settings: Settings, with_vectors: bool = True) -> str:
    patterns = get_patterns(settings.languages)
    lines = ["A session's top phrase added to Active Threads, the ranker left one conversation out (dev split)"]
    for vectors in (False, True) if with_vectors else (False,):
        vocabulary = sorted({w for item in items for s in said_in(item, patterns) for w in s.phrase.split()})
        table = Vectors(vocabulary) if vectors else None
        ranked = leave_one_out([prepare(item, settings, patterns, table) for item in items])
        lines.append("the structures and the head word's vector:" if vectors else "the structures:")
        lines += [f"  threshold {t}: {_cell(ranked.fixed[t])}" for t in THRESHOLDS]
        lines += [f"  nested by F{beta}: {_cell(ranked.nested[beta])}" for beta in ranked.nested]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return dev_tool_main("workers.evals.real_threads_ranker", __doc__.split("\n")[0], report, argv)


if __name__ == "__main__":
    sys.exit(main())
