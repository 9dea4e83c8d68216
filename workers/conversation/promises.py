"""Promises in one message: what someone committed to, as a task, and by when.

Ported from the reference's ``detectCommitments`` and ``CommitmentTracker.processMessage``
(openclaw-cortex ``src/commitment-patterns.ts``, ``src/commitment-tracker.ts``): a phrase
such as "I'll" or "ich werde" followed by the promise, or a fixed phrase ("I'm on it",
"mach ich"). Differences, each to make ``what`` the task a person would write down:

* a captured promise ends at the end of its sentence (the reference took 80 characters,
  so "I'll fix it. Lunch?" promised "fix it. Lunch?"), and the search continues after it,
  so two promises in two sentences are two commitments;
* the due phrase is the promise's date, not part of its task: "I'll send the report
  tomorrow" promises "send the report", due tomorrow ("Due morgen: morgen um die
  Kommunikation …" in issue 18); a phrase whose verb is in the promise phrase keeps its verb
  ("Ich kümmere mich um X" → "sich um X kümmern", "Я сделаю X" → "сделать X", "Me encargo
  de X" → "encargarse de X", not "de X"); a promise whose day is all that follows its phrase
  is its sentence ("Je m'en occupe demain." → "Je m'en occupe", due demain; there was none);
* a fixed phrase has no object, so its task is the rest of its sentence ("Lo haré mañana:
  preparo el script" → "preparo el script"), or the sentence when nothing follows; a fixed
  phrase that only agrees ("De acuerdo.", "Договорились.") with nothing else in its
  sentence is no promise;
* a wish or an aspiration is no promise ("I'll do my best to make sure these kids have a
  safe and loving home", "I will always remember …", "Ich werde immer versuchen …");
* a match inside text already taken by an earlier promise is the same promise, not a
  second one (the reference only compared the strings);
* ``due`` is the first day phrase of the promise's sentence ("tomorrow", "bis Freitag");
  ``workers.conversation.due`` turns it into a date.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from typing import Final, NamedTuple

from workers.conversation import learnt
from workers.conversation.languages import NOT_A_NAME
from workers.conversation.patterns import MAX_MATCHES_PER_FAMILY, MatchText, Pattern, PatternSet, iter_matches
from workers.conversation.sentences import clause_before, tidy
from workers.render import CLAUSE_TAIL, clip_words

MAX_WHAT_CHARS: Final = 200
_SENTENCE_REACH: Final = 100  # how far before and after a phrase its sentence is looked for
# A day before the promise phrase is its day when it leads into it ("Next month, I'm off to
# Lisbon", "Tomorrow I'll call"), not when it is another clause's ("This week has been
# swamped, but I'm plowing through"): at most this many words between them.
_LEAD_WORDS: Final = 2
_SENTENCE_END: Final = re.compile(r"[.!?…](?=\s|$)|[。！？\n]")
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_WORD: Final = re.compile(r"\w+")
# Subject pronouns a fixed phrase leaves in front of its task ("me ne occupo io domani: …").
_LEADING_FILLER: Final = re.compile(r"^(?:(?:io|yo|je|eu|я|ich|i|moi|me)\b[\s,:;.!-]*)+", re.IGNORECASE)
# Promise phrases whose verb the task needs back: phrase (lowered) → (prefix, suffix, only when
# the task starts with one of these; "" for any task).
_TASK_FRAMES: Final[dict[str, tuple[str, str, tuple[str, ...]]]] = {
    "ich kümmere mich": ("sich ", " kümmern", ("um ",)),
    "ich mach": ("", " machen", ("",)),
    "ich übernehme": ("", " übernehmen", ("",)),
    "я сделаю": ("сделать ", "", ("",)),
    "я займусь": ("заняться ", "", ("",)),
    "me encargo": ("encargarse ", "", ("de ", "del ")),
    "yo me ocupo": ("ocuparse ", "", ("de ", "del ")),
    "fico responsável": ("ficar responsável ", "", ("por ", "pelo ", "pela ", "pelos ", "pelas ")),
    "ci penso io": ("pensare ", "", ("a ", "al ", "allo ", "alla ", "all'", "all’", "ai ", "agli ", "alle ")),
    # "I'm going to a transgender conference this month": going somewhere, not "going to" do
    **dict.fromkeys(("i'm going to", "i’m going to", "i am going to"),
                    ("go to ", "", ("a ", "an ", "the ", "my ", "our ", "this ", "that ", "his ", "her ", "their "))),
    # "I'm off to Lisbon next month" (a plan, ``LanguagePack.plan``)
    **dict.fromkeys(("i'm off to", "i’m off to", "i am off to", "we're off to", "we’re off to", "we are off to"),
                    ("go to ", "", ("",))),
}
# Hesitation in a transcript ("I will uh take some minutes uh again"): no word of the task.
_FILLERS: Final = re.compile(r"\b(?:uh|um|uhm|erm|er|hmm)\b\s*|\{vocalsound\}\s*")


class Promise(NamedTuple):
    what: str
    due: str | None  # the due phrase as written ("tomorrow", "bis Freitag")
    start: int  # span of the promise in the message
    end: int
    # the task stops inside its clause: its pattern's length ran out with more words of the
    # sentence after it ("have to look into shelters near me soon, it would be great to have a new
    # pup in" — "my life" follows); a reader is shown it ended with "…" (``shown_task``)
    cut: bool = False


def shown_task(promise: Promise) -> str:
    """The task as a commitment keeps and shows it: marked "…" where it was cut short."""
    what = promise.what
    return what if not promise.cut or what.endswith("…") else what.rstrip(CLAUSE_TAIL) + "…"


def _stops_inside_clause(original: str, end: int, stop: int) -> bool:
    """More words of the same clause follow ``end`` before the sentence's end ``stop``: no clause
    mark or sentence end in between — the capture's length ran out, not the task."""
    first = original[end:stop].lstrip()[:1]
    return first.isalnum() and not original[:end].rstrip().endswith(tuple(CLAUSE_TAIL.strip()))


def _sentence_end(text: str, pos: int, limit: int) -> int:
    found = _SENTENCE_END.search(text, pos, limit)
    return found.start() if found else limit


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    lo = max(0, start - _SENTENCE_REACH)
    last = deque(_SENTENCE_END.finditer(text, lo, start), maxlen=1)
    begin = last[0].end() if last else lo
    return begin, _sentence_end(text, end, min(len(text), end + _SENTENCE_REACH))


def sentence_of(text: MatchText, promise: Promise) -> str:
    """The sentence of the message a promise was said in."""
    start, stop = _sentence(text.original, promise.start, promise.end)
    return text.original[start:stop]


def _due(text: MatchText, patterns: PatternSet, start: int, stop: int) -> re.Match[str] | None:
    best: re.Match[str] | None = None
    for pattern in patterns.due:
        subject = pattern.subject(text)
        if not pattern.may_match(subject[start:stop]):
            continue
        found = pattern.find(subject, start, stop)
        if found is not None and (best is None or found.start() < best.start()):
            best = found
    return best


def _without(text: MatchText, lo: int, hi: int, cut: re.Match[str] | None) -> str:
    """``text[lo:hi]`` with the due phrase taken out, whitespace and punctuation tidied."""
    original = text.original
    if cut is None or cut.end() <= lo or cut.start() >= hi:
        return tidy(" ".join(original[lo:hi].split()))
    head, tail = original[lo : cut.start()], original[cut.end() : hi]
    glue = "" if _CJK.match(head[-1:] or " ") or _CJK.match(tail[:1] or " ") else " "
    joined = head + glue + tail
    return tidy(" ".join(joined.split()).replace(" ,", ",").replace(" :", ":"))


def _framed(phrase: str, task: str) -> str:
    frame = _TASK_FRAMES.get(" ".join(phrase.lower().split()))
    if frame is None or not task or not task.lower().startswith(frame[2]):  # str.startswith takes a tuple
        return task
    return f"{frame[0]}{task}{frame[1]}"


def _words(text: str) -> int:
    return len(_WORD.findall(text)) if not _CJK.search(text) else len(text)


def _captured(text: MatchText, patterns: PatternSet, found: re.Match[str]) -> Promise | None:
    original = text.original
    start = found.start(1)
    end = _sentence_end(original, start, found.end(1))
    if not original[start:end].strip():
        return None
    sentence_start, sentence_stop = _sentence(original, found.start(), end)
    due = _due(text, patterns, sentence_start, sentence_stop)
    if due is not None and due.end() <= found.start() and _words(original[due.end() : found.start()]) > _LEAD_WORDS:
        due = _due(text, patterns, found.start(), sentence_stop)
    phrase = original[found.start() : found.start(1)]
    what = _framed(phrase.strip(), _without(text, start, end, due))
    if not what:  # its day was all that followed ("Je m'en occupe demain."): the sentence is the task
        what = _without(text, sentence_start, sentence_stop, due)
    cut = end == found.end(1) and _stops_inside_clause(original, end, sentence_stop)
    return Promise(clip_words(what, MAX_WHAT_CHARS), _phrase(text, due), start, end, cut)


def _fixed(text: MatchText, patterns: PatternSet, found: re.Match[str]) -> Promise | None:
    original = text.original
    begin, stop = _sentence(original, found.start(), found.end())
    due = _due(text, patterns, begin, stop)
    if _CJK.search(original[found.start() : found.end()]):  # verb-final: the sentence is the task
        what = _without(text, begin, stop, due)
    else:
        rest = _LEADING_FILLER.sub("", _without(text, found.end(), stop, due))
        framed = _framed(original[found.start() : found.end()], rest)
        if _words(rest) >= 2 or framed != rest:  # a verb given back takes a one-word object ("сделать отчёт")
            what = framed
        elif " ".join(text.lowered[found.start() : found.end()].split()) in patterns.agreement:
            return None  # "De acuerdo." agrees; it promises nothing
        else:
            what = _without(text, begin, stop, due)
    if not what:
        return None
    return Promise(clip_words(what, MAX_WHAT_CHARS), _phrase(text, due), found.start(), found.end())


def _phrase(text: MatchText, due: re.Match[str] | None) -> str | None:
    return None if due is None else text.original[due.start() : due.end()].strip() or None


def due_phrase(text: MatchText, patterns: PatternSet, start: int, stop: int) -> str | None:
    """The first due phrase said in ``text[start:stop]`` ("tomorrow", "bis Freitag"), or None."""
    return _phrase(text, _due(text, patterns, start, stop))


def _promise(text: MatchText, patterns: PatternSet, found: re.Match[str]) -> Promise | None:
    if found.re.groups and found.group(1) is not None:
        return _captured(text, patterns, found)
    return _fixed(text, patterns, found)


def is_no_promise(promise: Promise, lowered: str, phrase_start: int, patterns: PatternSet) -> bool:
    """A promise phrase that promises nothing (issue 37): a wish or an aspiration ("do my best
    to …"), a hedge or a condition in its clause or task ("maybe I'll", "who knows if I'll ever
    get a pet", "… sometime", "reach out if I need anything"), a pleasantry, politeness or no
    action ("keep you posted", "definitely check it out", "be ok", "keep pushing"), or, without
    a day, a vague task or what a speaker does right then ("do that", "go first", "just check
    that"). The reference counted every "I'll …": LoCoMo's chats held 38 such promises in one
    conversation, AMI's meetings 33 ("I'll go first", "let me see")."""
    task = _FILLERS.sub("", promise.what.lower())
    if patterns.aspiration is not None and patterns.aspiration.search(task) is not None:
        return True
    core = patterns.task_lead.sub("", task, count=1) if patterns.task_lead is not None else task
    if patterns.idle is not None and patterns.idle.search(core) is not None:
        return True
    if promise.due is None and patterns.vague is not None and patterns.vague.search(core) is not None:
        return True
    hedge = patterns.hedge
    return hedge is not None and hedge.search(f"{clause_before(lowered, phrase_start)} {task}") is not None


def is_promise(promise: Promise, text: MatchText, phrase_start: int, patterns: PatternSet,
               learnt_judges: bool = True) -> bool:
    """The rules find no reason against the promise (``is_no_promise``) and, when it names no
    day, the learnt filter keeps its sentence (``learnt.keeps``: English sentences only; the
    pleasantries, wishes and meeting moves no rule list names). A promise with a stated due is
    concrete enough ("I'll ship it on 2026-03-01"), as the rules' ``vague`` list holds. A task
    given to the one addressed is not the filter's (``learnt_judges`` False): it was trained on
    promises said in the first person, and none of its rows is an assignment."""
    if is_no_promise(promise, text.lowered, phrase_start, patterns):
        return False
    if promise.due is not None or not learnt_judges:
        return True
    start, stop = _sentence(text.original, phrase_start, promise.end)
    return learnt.keeps("commitments", text.original[start:stop], promise.what, patterns.languages)


def _promises_of(pattern: Pattern, text: MatchText, patterns: PatternSet) -> list[tuple[Promise, int]]:
    """(A pattern its family's ``candidates`` kept: its ``may_match`` is answered.)"""
    subject = pattern.subject(text)
    out: list[tuple[Promise, int]] = []
    pos = 0
    while len(out) < MAX_MATCHES_PER_FAMILY and (found := pattern.find(subject, pos)) is not None:
        promise = _promise(text, patterns, found)
        # Continue after the promise, not after the greedy capture, so the next
        # sentence's "I'll" is found.
        pos = max(promise.end if promise else found.end(), found.start() + 1)
        if promise is not None and is_promise(promise, text, found.start(), patterns):
            out.append((promise, found.start()))
    return out


def _candidates(text: MatchText, patterns: PatternSet) -> Iterator[tuple[Promise, int]]:
    """The commitment patterns' promises, then the plans that name a day (``LanguagePack.plan``:
    "I'm hosting a dance workshop next month" is owed by then; "I'm hosting a dance workshop"
    says what the speaker does now)."""
    # (``candidates``: the family's pre-check, then each pattern's in one go)
    for pattern in patterns.commitment.candidates(text):
        yield from _promises_of(pattern, text, patterns)
    if patterns.plan.may_match(text) and patterns.due.may_match(text):  # a plan needs a day
        for pattern in patterns.plan.candidates(text):
            yield from ((p, at) for p, at in _promises_of(pattern, text, patterns) if p.due is not None)


def find_promises(text: MatchText, patterns: PatternSet) -> list[Promise]:
    """Distinct promises of the enabled languages' commitment patterns and dated plans, in
    pattern order."""
    taken: list[tuple[int, int]] = []
    seen: set[str] = set()
    result: list[Promise] = []
    for promise, phrase_start in _candidates(text, patterns):
        span = (min(phrase_start, promise.start), promise.end)
        if not promise.what or promise.what in seen or any(s < span[1] and span[0] < e for s, e in taken):
            continue
        seen.add(promise.what)
        taken.append(span)
        result.append(promise)
    return result[:MAX_MATCHES_PER_FAMILY]


class Delegated(NamedTuple):
    """A promise someone else made or was asked for: whose it is and what."""

    who: str  # the named person ("Sarah"); "" for the agent (a request: "remind me to …")
    promise: Promise
    # a task given to the one addressed ("you have to work on the component concept"): whoever
    # that is, the speaker asked for it (``LanguagePack.assigned``); ``who`` is ""
    assigned: bool = False
    # a titled role's task, given by the chair ("the Industrial Designer will do the components
    # concept"): its pattern opens on the title's article (nineteenth round)
    titled: bool = False


def _of_group(text: MatchText, patterns: PatternSet, found: re.Match[str], group: int) -> Promise | None:
    original = text.original
    start = found.start(group)
    end = _sentence_end(original, start, found.end(group))
    _, stop = _sentence(original, found.start(), end)
    due = _due(text, patterns, found.start(), stop)
    what = _without(text, start, end, due)
    cut = end == found.end(group) and _stops_inside_clause(original, end, stop)
    return Promise(clip_words(what, MAX_WHAT_CHARS), _phrase(text, due), start, end, cut) if what else None


# Where a named person's promise may start: a clause's start, or after "and" / "so" ("OK so Tom
# will call the client"); "Yesterday Tom will …" and "the Team will …" are not a person's.
_PERSON_AFTER: Final = re.compile(r"(?:^|[.!?,;:—–(\n]\s*|\b(?:and|so|ok|okay|then|und|y|et|e|и)\s+)\Z",
                                  re.IGNORECASE)


def _named_person(original: str, found: re.Match[str]) -> bool:
    """A name at a clause's start; or a titled role after the article its pattern spells ("is the
    Industrial Designer will do …": the match opens on the article, the title after it is no word
    of the sentence's start)."""
    name = found.group(1)
    return name not in NOT_A_NAME and (found.start(1) > found.start() or _PERSON_AFTER.search(
        original, max(0, found.start() - 8), found.start()) is not None)


def find_delegated(text: MatchText, patterns: PatternSet) -> list[Delegated]:
    """Promises of a named third person ("Sarah will send the signed contract by Friday": Sarah's),
    requests to the agent ("remind me to renew the SSL certificate": the agent's) and tasks given
    to the one addressed ("you have to work on the component concept": ``assigned``), judged as a
    speaker's own (``is_no_promise``). The reference knew only the speaker's own promises."""
    out: list[Delegated] = []
    for family, group, assigned in ((patterns.delegated, 2, False), (patterns.requested, 1, False),
                                    (patterns.assigned, 1, True)):
        for found in iter_matches(family, text):
            if group == 2 and not _named_person(text.original, found):
                continue
            promise = _of_group(text, patterns, found, group)
            if promise is None or not is_promise(promise, text, found.start(), patterns, learnt_judges=not assigned):
                continue
            who = text.original[found.start(1) : found.end(1)] if group == 2 else ""
            out.append(Delegated(who, promise, assigned, titled=group == 2 and found.start(1) > found.start()))
    return out[:MAX_MATCHES_PER_FAMILY]
