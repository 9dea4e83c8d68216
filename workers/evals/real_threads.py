"""Recall for Active Threads: candidate structures measured before any is built (issue 37,
fourteenth round; docs/briefing-eval.md, "Fourteenth round: threads").

The true threads of the real set's chats — a person's plan or project, a problem not yet solved —
and of its meetings — an open design question, a next step — are not opened by the threads core.
Each family here proposes extra Active Threads lines from the conversation's turns alone (the words
the threads core would see: its phrases, ``topics.phrases_of``; the packs' first-person pattern,
``PatternSet.engaged``), added on every morning (``real_mornings``) to what the BOOTSTRAP shows, and
scored with the eval's matcher. A family is worth building only if, leaving one development
conversation out (LOO), the setting chosen on the other eight helps the conversation left out.

* ``first_person`` — a phrase of a first-person sentence of doing or planning ("I'm looking into
  the study abroad program"), in the last ``sessions``; ``echo``: the other person names its head
  word (``head``), the whole phrase (``phrase``) or one of its words (``word``) within ``echo``
  turns; the latest ``shown`` first, one a head word.
* ``news`` — the phrases of each person's first ``turns`` turns of a session (what they bring up
  first: "Guess what, I passed the adoption agency interviews"), ``engaged``: of a first-person
  sentence only, ``echo``: answered by the other person in the next three turns.
* ``returned`` — a phrase said in ``sessions_said`` sessions or more, by a person of their own doing
  (``engaged``), by both people (``both``), its last mention in the last ``sessions``: a project
  said in other sessions in the same words.
* ``open_question`` — a question left open (English only): "we still have to decide …", "should
  we …", "action items", "next meeting", "I haven't decided yet": the phrases of its sentence and of
  the next ``reach`` turns of its session.
* ``asked`` — the other person's follow-up question ("How's the dance studio going?", "How did the
  interview go?"), its object said by the one asked before (``said_before``).

Development split only: ``python -m workers.evals.real_threads --locomo … --qmsum …``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import product
from zoneinfo import ZoneInfo

from shared.config import Settings
from workers.conversation.patterns import PatternSet, get_patterns
from workers.conversation.sentences import sentence_spans
from workers.evals.briefing import Counts
from workers.evals.real_eval import LevelScore, Loaded, dev_tool_main, score_section
from workers.evals.real_match import Candidate
from workers.evals.real_mornings import cut, session_documents, shown
from workers.threads.topics import phrases_of

_ANNOTATION = re.compile(r"\[[^\]\n]{0,400}\]")  # "[shares a photo of …]": what an image shows
_FOLLOW_UP = re.compile(
    r"\bhow(?:['’]s| is| are| was| did| has| have)\s+(?:your|the)\s+((?:[a-z-]+ ){0,2}?[a-z-]+)\s*"
    r"(?:going|coming along|doing|been|go|turn(?:ed)? out|working out|coming|progressing|\?)", re.IGNORECASE)
_OPEN = re.compile(
    r"\b(?:we|you|i)(?:['’]ll| will)?\s+(?:still\s+)?(?:have|need|got|gotta)\s+to\s+(?:decide|figure out|think about"
    r"|discuss|talk about|look (?:at|into)|find out|work out|sort out|consider)\b|\bshould we\b|\baction items?\b"
    r"|\bnext meeting\b|\bto be decided\b|\bstill (?:open|undecided|to decide)\b|\bhaven['’]t decided\b"
    r"|\bnot decided yet\b", re.IGNORECASE)
MIN_HEAD = 4  # letters of a phrase's last word (its head): shorter ones are function words and fillers
_TURNS = 1_000_000  # more turns than a conversation has: a session's rank before its turns'
DECISION_DAYS = 14  # Recent Decisions' default window (the matcher's rule of what a briefing shows)


@dataclass(frozen=True)
class Said:
    """One phrase of one sentence: the turn (index in the conversation), its session and speaker,
    whether the sentence is first-person doing or planning (``PatternSet.engaged``)."""

    turn: int
    session: int
    speaker: str
    phrase: str
    engaged: bool
    open_question: bool = False  # the sentence leaves a question open (``_OPEN``)

    @property
    def head(self) -> str:
        return self.phrase.rsplit(" ", 1)[-1]


def said_in(item: Loaded, patterns: PatternSet) -> list[Said]:
    """Every phrase of every sentence of the conversation, in order."""
    out: list[Said] = []
    for i, turn in enumerate(item.conv.turns):
        text = _ANNOTATION.sub(" ", turn.text)
        for start, end in sentence_spans(text) or [(0, len(text))]:
            low = text[start:end].lower()
            engaged = patterns.engaged is not None and patterns.engaged.search(low) is not None
            left_open = _OPEN.search(low) is not None
            out.extend(Said(i, turn.session, turn.speaker, phrase, engaged, left_open)
                       for phrase in phrases_of(low, patterns.phrase_breaks))
    return out


Family = Callable[[Loaded, list["Said"], int], list[str]]  # (conversation, its phrases, morning's session) → titles


def _latest_first(kept: Sequence[tuple[int, str]], shown_n: int) -> list[str]:
    """The phrases by rank (lowest first; of one rank the longest first), one a head word, at most
    ``shown_n``."""
    out: list[str] = []
    heads: set[str] = set()
    for _, _, phrase in sorted((rank, -phrase.count(" "), phrase) for rank, phrase in kept):
        head = phrase.rsplit(" ", 1)[-1]
        if head not in heads:
            heads.add(head)
            out.append(phrase)
        if len(out) >= shown_n:
            break
    return out


def _named_by_other(item: Loaded, said: Said, upto: int, echo: str, turns: int) -> bool:
    nxt = [t for t in item.conv.turns[said.turn + 1:said.turn + 1 + turns] if t.session <= upto
           and t.speaker != said.speaker]
    if echo == "phrase":
        return any(said.phrase in t.text.lower() for t in nxt)
    if echo == "head":
        return any(said.head in t.text.lower() for t in nxt)
    words = [w for w in said.phrase.split() if len(w) >= MIN_HEAD]
    return any(w in t.text.lower() for t in nxt for w in words)


def first_person(sessions: int, shown_n: int, echo: str, turns: int) -> Family:
    def titles(item: Loaded, phrases: list[Said], upto: int) -> list[str]:
        kept = [(-s.turn, s.phrase) for s in phrases
                if upto - sessions < s.session <= upto and s.engaged and len(s.head) >= MIN_HEAD
                and (echo == "none" or _named_by_other(item, s, upto, echo, turns))]
        return _latest_first(kept, shown_n)
    return titles


def news(sessions: int, shown_n: int, turns: int, gate: str) -> Family:
    def titles(item: Loaded, phrases: list[Said], upto: int) -> list[str]:
        firsts: dict[tuple[int, str], list[int]] = {}
        for i, t in enumerate(item.conv.turns):
            mine = firsts.setdefault((t.session, t.speaker), [])
            if len(mine) < turns:
                mine.append(i)
        opening = {i for v in firsts.values() for i in v}
        kept = [(s.turn - s.session * _TURNS, s.phrase) for s in phrases
                if upto - sessions < s.session <= upto and s.turn in opening and len(s.head) >= MIN_HEAD
                and (gate != "engaged" or s.engaged)
                and (gate != "echo" or _named_by_other(item, s, upto, "word", 3))]
        return _latest_first(kept, shown_n)  # the latest session first, in the order said
    return titles


def returned(sessions: int, shown_n: int, both: bool, sessions_said: int, engaged: bool) -> Family:
    def titles(item: Loaded, phrases: list[Said], upto: int) -> list[str]:
        seen: dict[str, tuple[set[int], set[str], bool, int]] = {}
        for s in phrases:
            if s.session > upto:
                break
            sess, speakers, own, _ = seen.get(s.phrase, (set(), set(), False, 0))
            seen[s.phrase] = (sess | {s.session}, speakers | {s.speaker}, own or s.engaged, s.turn)
        kept = [(-last, phrase) for phrase, (sess, speakers, own, last) in seen.items()
                if len(sess) >= sessions_said and (own or not engaged) and (len(speakers) > 1 or not both)
                and max(sess) > upto - sessions]
        return _latest_first(kept, shown_n)
    return titles


def open_question(sessions: int, shown_n: int, reach: int) -> Family:
    def titles(item: Loaded, phrases: list[Said], upto: int) -> list[str]:
        turns = item.conv.turns
        asking = {s.turn for s in phrases if s.open_question and s.turn < len(turns)
                  and upto - sessions < s.session <= upto}
        near = {j: i for i in sorted(asking, reverse=True) for j in range(i, min(len(turns), i + 1 + reach))
                if turns[j].session == turns[i].session}
        kept = [(-near[s.turn], s.phrase) for s in phrases
                if s.turn in near and ((s.turn in asking and s.open_question) or s.turn != near[s.turn])
                and len(s.head) >= MIN_HEAD]
        return _latest_first(kept, shown_n)
    return titles


def asked(sessions: int, shown_n: int, said_before: bool) -> Family:
    def titles(item: Loaded, phrases: list[Said], upto: int) -> list[str]:
        turns = item.conv.turns
        kept: list[tuple[int, str]] = []
        for i, t in enumerate(turns):
            if not upto - sessions < t.session <= upto:
                continue
            for found in _FOLLOW_UP.finditer(t.text):
                what = found.group(1).lower()
                head = what.rsplit(" ", 1)[-1]
                if len(head) < MIN_HEAD or (said_before and not any(
                        u.speaker != t.speaker and head in u.text.lower() for u in turns[:i])):
                    continue
                kept.append((-i, what))
        return _latest_first(kept, shown_n)
    return titles


def families() -> dict[str, list[tuple[str, Family]]]:
    """Every family's settings (the grids measured; docs/briefing-eval.md, fourteenth round)."""
    return {
        "first_person": [(f"sessions {k}, shown {n}, echo {e} in {t}", first_person(k, n, e, t))
                         for e in ("none", "head", "phrase", "word") for k, n in product((1, 2), (1, 2, 3))
                         for t in ((1,) if e == "none" else (1, 3))],
        "news": [(f"sessions {k}, shown {n}, first {t} turns, {g}", news(k, n, t, g))
                 for g in ("all", "engaged", "echo") for k, n, t in product((1, 2), (1, 2, 3), (1, 2))],
        "returned": [(f"shown {n}, last {k} sessions, both {b}, said in {m}, engaged {e}", returned(k, n, b, m, e))
                     for n, k, b, m, e in product((1, 2), (1, 2, 4), (False, True), (2, 3), (False, True))],
        "open_question": [(f"sessions {k}, shown {n}, reach {r}", open_question(k, n, r))
                          for k, n, r in product((1, 2), (1, 2, 3), (0, 1, 3))],
        "asked": [(f"last {k} sessions, shown {n}, said before {b}", asked(k, n, b))
                  for k, n, b in product((1, 3, 5, 99), (1, 2), (False, True))],
    }


PerConversation = dict[str, tuple[Counts, Counts]]  # conversation → (all mornings, last morning)


@dataclass
class Morning:
    at: Loaded
    shown: list[Candidate]


def _mornings(items: Sequence[Loaded], settings: Settings) -> Iterator[tuple[str, list[Said], list[Morning]]]:
    patterns = get_patterns(settings.languages)
    tz = ZoneInfo(settings.timezone)
    for item in items:
        docs = session_documents(item, settings)
        cuts = [cut(item, s) for s in sorted(docs)]
        mornings = [Morning(at, shown(docs[s], at, tz)["threads"]) for s, at in zip(sorted(docs), cuts, strict=True)]
        yield item.labels.name, said_in(item, patterns), mornings


def score(items: Sequence[Loaded], settings: Settings, variants: Sequence[tuple[str, Family | None]]
          ) -> dict[str, PerConversation]:
    """Each variant's threads counts per conversation: what the BOOTSTRAP shows, and its titles."""
    out: dict[str, PerConversation] = {label: {} for label, _ in variants}
    for name, phrases, mornings in _mornings(items, settings):
        for label, family in variants:
            every, last = Counts(), Counts()
            for m in mornings:
                upto = m.at.conv.turns[-1].session
                extra = family(m.at, phrases, upto) if family is not None else []
                level = LevelScore()
                score_section(m.at, "threads", "briefing", [*m.shown, *(Candidate(x, status="open") for x in extra)],
                              DECISION_DAYS, level)
                last = level.counts["threads"]
                every.add(last)
            out[label][name] = (every, last)
    return out


def f_beta(c: Counts, beta: float) -> float:
    p = c.tp / (c.tp + c.fp) if c.tp + c.fp else 1.0
    r = c.tp / (c.tp + c.fn) if c.tp + c.fn else 1.0
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r) if p + r else 0.0


def total(per: PerConversation, which: int, leave: str | None = None) -> Counts:
    c = Counts()
    for name, counts in per.items():
        if name != leave:
            c.add(counts[which])
    return c


def leave_one_out(scores: dict[str, PerConversation], beta: float) -> tuple[Counts, Counts, dict[str, str]]:
    """Each conversation scored with the variant that has the best F-beta over all mornings of the
    others (the first in order on a tie: "off" is first)."""
    names = list(next(iter(scores.values())))
    every, last, chosen = Counts(), Counts(), {}
    for out in names:
        label = max(scores, key=lambda v: f_beta(total(scores[v], 0, leave=out), beta))
        chosen[out] = label
        every.add(scores[label][out][0])
        last.add(scores[label][out][1])
    return every, last, chosen


def _cell(c: Counts) -> str:
    return f"{c.tp}/{c.fp}/{c.fn}"


def report(items: Sequence[Loaded], settings: Settings) -> str:
    lines = ["Active Threads with each recall family added, all mornings and the last (tp/fp/fn; dev split)"]
    for family, variants in families().items():
        scores = score(items, settings, [("off", None), *variants])
        off = scores["off"]
        lines.append(f"{family}: off {_cell(total(off, 0))}, last {_cell(total(off, 1))}")
        for beta in (0.5, 1.0):
            every, last, chosen = leave_one_out(scores, beta)
            picks = sorted(set(chosen.values()))
            lines.append(f"  LOO by F{beta}: {_cell(every)}, last {_cell(last)}; chosen: {'; '.join(picks)}")
        best = max((v for v, _ in variants), key=lambda v: f_beta(total(scores[v], 0), 1.0))
        per = scores[best]
        right = [n for n in per if per[n][0].tp - off[n][0].tp > per[n][0].fp - off[n][0].fp]
        lines.append(f"  in sample, best F1 ({best}): {_cell(total(per, 0))}, last {_cell(total(per, 1))}; "
                     f"more true than wrong lines added in {len(right)} of {len(per)} ({', '.join(right) or 'none'})")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    return dev_tool_main("workers.evals.real_threads", __doc__.split("\n")[0], report, argv)


if __name__ == "__main__":
    sys.exit(main())
