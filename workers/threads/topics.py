"""Topics nobody announced: phrases a working conversation keeps coming back to.

The reference opens a thread only on a cue ("back to X", "now about X", "bzgl. X"). People
mostly start a topic by just talking about it: "The billing rewrite is behind schedule …",
"… the search latency regression is getting worse …". Here a phrase of two or three
content words (no stop word of any enabled language, no digit, no CJK) — or one
hyphenated compound ("Datenbank-Upgrade") — becomes a thread when

* it was said in at least two of the last ``WINDOW`` messages (this one included), and at
  least one of them carried work: a decision, a wait, a promise, a closure or a high-impact
  word ("deploy", "migration", …) — chit-chat that repeats "pancakes every morning" opens
  nothing; or the conversation keeps coming back to it: said in ``MIN_RETURNS`` episodes
  ``RETURN_GAP`` messages or more apart (``returned``: a chat's project mentioned once a
  session, issue 37),
* it shares no word with an open thread's title (that thread is its topic), nor did most
  of its mentions come with an open thread's title, and
* someone has a stake in it where it is said (issue 37): a first-person subject doing,
  planning or choosing something in its sentence, a possessive before it ("my dance studio"),
  a state still going on after it ("… is behind schedule"), or the agent talking about it —
  a phrase only talked about ("ice cream", "Harry Potter") waits for such a mention,
* it is not a detail of a broader topic: when most of its mentions came with a phrase
  introduced before it and said at least twice ("The billing rewrite is behind schedule,
  the invoice generator still uses the old tax tables"), the broader one becomes the thread.

The window (``ThreadsDoc.recent``: each message's first ``HEAD_CHARS`` characters and
whether it carried work), the phrases already settled (``ThreadsDoc.settled``) and each
phrase's episodes (``ThreadsDoc.returns``, bounded) are part of the document, so the rule
is a pure function of the stream. A phrase is looked for in the window with a substring
search (C speed); only a phrase said again in a message that may open a thread costs more.
CJK text has no spaces to find phrases by: there, only cue phrases open threads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from itertools import pairwise
from operator import attrgetter
from typing import Final, NamedTuple

import msgspec

from schemas.docs import RecentMessage, Thread
from workers.conversation.patterns import PatternSet, prepare_text
from workers.conversation.promises import find_promises
from workers.conversation.sentences import clip_around, sentence_around, sentence_ends, tidy

MIN_MENTIONS: Final = 2
WINDOW: Final = 10  # messages
# A phrase said again twice a window after its last mention is a return to it (an episode); at
# MIN_RETURNS episodes the conversation keeps coming back to it (``returned``). Both chosen leaving
# one development conversation out (docs/briefing-eval.md, fifth round).
RETURN_GAP: Final = 2 * WINDOW
MIN_RETURNS: Final = 3
MAX_RETURNS: Final = 300
HEAD_CHARS: Final = 400  # of each message, kept in the window
MAX_SETTLED: Final = 100
MAX_HEARD: Final = 200
ABOUT_CHARS: Final = 120
MIN_WORD_CHARS: Final = 3

# Words that join the two halves of a noun phrase in the Romance languages (and English
# "of"); only between two content words, never at an end.
LINKERS: Final = frozenset(("de", "del", "di", "du", "des", "da", "do", "della", "dello", "of"))
_MARKS: Final = ".,;:!?()\\[\\]{}\"“”«»„…—–/|"
_TOKENS: Final = re.compile(f"[{_MARKS}]|[^\\s{_MARKS}]+")
_STRIP: Final = ".,;:!?()[]{}\"“”«»„…—–/|'’`*_#>"
_EDGES: Final = "'’\"`*_#>"
# a bracketed note in a message ("[shares a photo of …]", "[image: …]"): not what was said
_ANNOTATION: Final = re.compile(r"\[[^\]\n]{0,400}\]")
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _compound(word: str) -> bool:
    """One hyphenated compound of two words ("Datenbank-Upgrade", "Support-Team")."""
    parts = word.split("-")
    return len(parts) == 2 and len(parts[0]) >= 2 and len(parts[1]) >= 2 and parts[0].isalpha() \
        and parts[1].isalpha() and not _CJK.search(word)


def _grams(run: list[str], found: dict[str, int]) -> None:
    while run and run[-1] in LINKERS:
        run.pop()
    last = len(run) - 1
    for i, word in enumerate(run):
        if "-" in word:
            found.setdefault(word, 1)
        if i == last or word in LINKERS:
            continue
        second = run[i + 1]
        if second == word:  # a word said twice ("different different", "the the"): a speaker's restart
            continue
        if second not in LINKERS:
            found.setdefault(f"{word} {second}", 2)
        if i + 2 <= last and run[i + 2] not in LINKERS:
            found.setdefault(f"{word} {second} {run[i + 2]}", 3)


def _content(word: str, stopwords: frozenset[str]) -> bool:
    if len(word) < MIN_WORD_CHARS or word in stopwords:
        return False
    if word.isascii():
        return word.isalpha() or ("-" in word and _compound(word))
    return (word.isalpha() and not _CJK.search(word)) or ("-" in word and _compound(word))


class _Tokenizer:
    """``_TOKENS.findall`` (a clause mark alone, or a run of what is neither a mark nor whitespace),
    the same list for every text, in C string operations: each mark the text holds spaced out by a
    ``str.replace``, then one ``split`` (whose whitespace is the regex's ``\\s``: both are
    ``Py_UNICODE_ISSPACE``). The regex's character classes cost ~8 % of the threads core's
    instructions, twice this (eighteenth round). An object, not a module-level table: the pattern
    fingerprint (``shared.fingerprint``) reads those, and ``_TOKENS`` says what a token is."""

    __slots__ = ("_ascii", "_every")

    def __init__(self, marks: str) -> None:
        self._every = tuple((mark, f" {mark} ") for mark in marks)
        self._ascii = tuple(pair for pair in self._every if pair[0].isascii())  # (an ASCII text holds no other)

    def tokens(self, text: str) -> list[str]:
        for mark, spaced in self._ascii if text.isascii() else self._every:
            if mark in text:
                text = text.replace(mark, spaced)
        return text.split()


_tokens_of = _Tokenizer(".,;:!?()[]{}\"“”«»„…—–/|").tokens  # ``_MARKS`` unescaped


_BREAK, _WORD, _LINKER = 0, 1, 2
_KINDS_MAX: Final = 20_000
_KIND_CHARS: Final = 32  # longer tokens (a URL, a hash) rarely repeat: judged each time
class _KindTables:
    """Each token seen → (content word, linking word or neither; the token without its edge
    marks), per stop-word set: a conversation's words repeat, so each is judged once (a
    table is emptied when full, ~3 MB at most; what it holds never changes a result). An
    object, not a module-level dict: the pattern fingerprint (``shared.fingerprint``) reads
    module-level dicts as tables, and this one's content depends on what a process has seen."""

    def __init__(self) -> None:
        self.by_stopwords: dict[frozenset[str], dict[str, tuple[int, str]]] = {}

    def of(self, stopwords: frozenset[str]) -> dict[str, tuple[int, str]]:
        kinds = self.by_stopwords.get(stopwords)
        if kinds is None or len(kinds) >= _KINDS_MAX:
            kinds = self.by_stopwords[stopwords] = {}
        return kinds


_KINDS = _KindTables()


def _kind(token: str, stopwords: frozenset[str]) -> tuple[int, str]:
    word = token.strip(_EDGES)
    return (_WORD if _content(word, stopwords) else _LINKER if word in LINKERS else _BREAK), word


def phrases_of(lowered: str, stopwords: frozenset[str]) -> dict[str, int]:
    """The candidate phrases of a lower-cased message (phrase → its number of words, in
    order of appearance): runs of content words within a clause; one linking word may join
    two ("informe de ventas"). A bracketed note ("[shares a photo of …]") has none."""
    found: dict[str, int] = {}
    run: list[str] = []
    kinds = _KINDS.of(stopwords)
    known_kind = kinds.get  # (bound once: this loop runs for every word of every message)
    if "[" in lowered:  # "[shares a photo of a board game …]" says what an image shows, not the topic
        lowered = _ANNOTATION.sub(" | ", lowered)
    for token in _tokens_of(lowered):  # words and clause marks (``_TOKENS``), in C
        known = known_kind(token)
        if known is None:
            known = _kind(token, stopwords)
            if len(token) <= _KIND_CHARS:
                kinds[token] = known
        kind, word = known
        if kind == _WORD or (kind == _LINKER and run and run[-1] not in LINKERS):
            run.append(word)
        elif run:  # the run ends (a function word, a clause mark)
            if len(run) > 1 or "-" in run[0]:
                _grams(run, found)
            run = []
    if run and (len(run) > 1 or "-" in run[0]):
        _grams(run, found)
    return found


_TEXT: Final = attrgetter("text")


@lru_cache(maxsize=4096)
def _lower(text: str) -> str:
    # A window message is looked at by the next WINDOW messages: lower-case it once.
    return text.lower()


def _title_words(threads: Sequence[Thread], stopwords: frozenset[str]) -> frozenset[str]:
    """The words of the open threads' titles."""
    return _titles_words(tuple(t.title for t in threads if t.status == "open"), stopwords)


@lru_cache(maxsize=1024)
def _titles_words(titles: tuple[str, ...], stopwords: frozenset[str]) -> frozenset[str]:
    # (the union of each title's, cached apart: a list of titles changes when one thread opens or
    # closes, and its other titles' words were split again)
    return frozenset().union(*[_title_words_of(title, stopwords) for title in titles])


@lru_cache(maxsize=8192)
def _title_words_of(title: str, stopwords: frozenset[str]) -> frozenset[str]:
    """A title's words (``_words`` of it lowered, hyphens as spaces) and the whole title lowered."""
    return frozenset(_words(title.lower().replace("-", " "), stopwords)) | {title.lower()}


def _words(text: str, stopwords: frozenset[str]) -> set[str]:
    return {w.strip(_STRIP) for w in text.split()} - stopwords - {""}


def _known(key: str, title_words: frozenset[str], stopwords: frozenset[str]) -> bool:
    return key in title_words or not _words(key.replace("-", " "), stopwords).isdisjoint(title_words)


class Mention(NamedTuple):
    n: int  # message ordinal
    at: int  # offset of the phrase in that message
    text: str  # the message (its head)


_new_tuple: Final = tuple.__new__


class Window(NamedTuple):
    """The last messages, oldest first, the current one last; lower-cased once."""

    messages: list[RecentMessage]
    lowered: list[str]

    def mentions(self, key: str) -> list[Mention]:
        # (``tuple.__new__`` in C: the named tuple's own ``__new__`` is a Python function, one call a mention)
        return [_new_tuple(Mention, (m.n, low.find(key), m.text))
                for m, low in zip(self.messages, self.lowered, strict=True) if key in low]


def _about(mention: Mention) -> str:
    text = mention.text
    start, end = sentence_around(text, sentence_ends(text), mention.at)
    return clip_around(tidy(text[start:end]), mention.at - start, ABOUT_CHARS)


class Topic(NamedTuple):
    """A phrase to open a thread for: its text as first written, and what it is about."""

    title: str
    about: str


class Update(NamedTuple):
    recent: list[RecentMessage]
    settled: list[str]
    promoted: list[Topic]  # open a thread for each, in this order
    heard: dict[str, int]  # ``ThreadsDoc.heard`` after the message
    returns: dict[str, tuple[int, int]]  # ``ThreadsDoc.returns`` after the message


def returned(returns: dict[str, tuple[int, int]], phrases: Sequence[str], ordinal: int
             ) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """The phrases' episodes counted (``ThreadsDoc.returns``: phrase → (episodes, ordinal of its
    last mention)), and those of them the conversation keeps coming back to: said now, ``RETURN_GAP``
    messages or more after its last mention, for the ``MIN_RETURNS``-th time at least. A chat's
    "dance studio" or a meeting's "speech recognition" comes back session after session, each
    time said once or twice: the window alone never saw it twice (issue 37). A new table: the
    document's is a value; bounded (``_bounded``)."""
    if not phrases:
        return returns, []
    # ``dict.copy``, not ``dict(…)``: the table has holes (a phrase said again moves to its end),
    # and ``dict()`` then re-inserts every entry (~7.5 µs for 300) where ``copy`` copies the
    # table whole (~1.2 µs); the same entries in the same order
    table = returns.copy()
    back = []
    for key in phrases:
        episodes, last = table.pop(key, (0, -RETURN_GAP))
        if ordinal - last >= RETURN_GAP:
            episodes += 1
            if episodes >= MIN_RETURNS:
                back.append(key)
        table[key] = (episodes, ordinal)
    return _bounded(table), back


def _bounded(table: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
    """At most ``MAX_RETURNS`` phrases: over it, a tenth goes — those said in one episode only,
    the longest unsaid first, then the longest unsaid of the rest. Dropping by age alone forgot a
    topic a chat returns to a few sessions later, after a hundred phrases said once."""
    if len(table) <= MAX_RETURNS:
        return table
    excess = len(table) - (MAX_RETURNS - MAX_RETURNS // 10)
    once = [k for k, (episodes, _) in table.items() if episodes == 1][:excess]
    for key in once:
        del table[key]
    for key in list(table)[: max(0, excess - len(once))]:
        del table[key]
    return table


def _carried_work(window: Window, index: int, patterns: PatternSet) -> bool:
    """A window message's work flag. A promise is looked for only when it matters, once
    per message: the answer is kept in the window (a new list of new values)."""
    m = window.messages[index]
    if m.work or m.checked:
        return m.work
    # a promise as the commitments worker reads one: "I'll keep you posted", "maybe I'll go back
    # someday" carry no work (issue 37)
    promise = bool(find_promises(prepare_text(m.text), patterns))
    window.messages[index] = msgspec.structs.replace(m, work=promise, checked=True)
    return promise


class _Context(NamedTuple):
    window: Window
    title_words: frozenset[str]
    stopwords: frozenset[str]
    patterns: PatternSet
    titles: tuple[str, ...] = ()  # the open threads' titles, lowered
    back: frozenset[str] = frozenset()  # phrases the conversation keeps coming back to (``returned``)


def _with_threads(mentions: list[Mention], ctx: _Context) -> int:
    """Mentions in a message that also names an open thread: its whole title. One word of it
    is not enough: in a meeting about a remote control, "remote" is in every other message, and
    "speech recognition" or "casing material" were each taken for a detail of "remote control"
    (issue 37)."""
    return sum(1 for m in mentions if any(t in _lower(m.text) for t in ctx.titles))


WAIT, SETTLE, OPEN = 0, 1, 2
_OWNER_REACH: Final = 2  # words before a phrase a possessive may stand ("my new dance studio")


def _owned(mention: Mention, key: str, patterns: PatternSet) -> bool:
    """A possessive stands right before the phrase ("my dance studio", "your customer base"), or
    it is the subject of a state still going on ("the billing rewrite is behind schedule", "how's
    the dance studio going?"). A phrase that comes back said once needs this stake of its own: a
    first-person verb elsewhere in its sentence made "real difference" and "join forces" threads
    (issue 37)."""
    text = _lower(mention.text)
    start, end = sentence_around(text, sentence_ends(text), mention.at)
    before = text[start : mention.at].split()[-_OWNER_REACH:]
    if patterns.owners and not patterns.owners.isdisjoint(w.strip(_STRIP) for w in before):
        return True
    return patterns.ongoing is not None and patterns.ongoing.match(text, mention.at + len(key), end) is not None


def _engaged(mention: Mention, key: str, patterns: PatternSet) -> bool:
    """Someone has a stake in the phrase where it is said: it is owned (``_owned``), or its
    sentence has a first-person subject doing, planning or choosing something ("I've been looking
    into counseling and mental health", "so we'll go with speech recognition"). LoCoMo's chats repeat
    what they only talk about ("ice cream", "Harry Potter", "that stuffed animal"), AMI's meetings
    what is on a slide ("project documents", "raised symbols"): no state that can change (issue 37)."""
    if _owned(mention, key, patterns):
        return True
    text = _lower(mention.text)
    start, end = sentence_around(text, sentence_ends(text), mention.at)
    return patterns.engaged is not None and patterns.engaged.search(text, start, end) is not None


def _has_stake(key: str, mentions: list[Mention], ctx: _Context, owned: bool = False) -> bool:
    """Someone has a stake in the phrase (``_engaged``; with ``owned``, ``_owned``: for a return
    said once), or the agent works on it ("I checked the payment webhook failures")."""
    patterns = ctx.patterns
    if patterns.engaged is None and not patterns.owners:
        return True  # no enabled language says what a stake is: as before
    roles = {m.n: m.role for m in ctx.window.messages}
    stake = _owned if owned else _engaged
    return any(roles.get(m.n) == "assistant" or stake(m, key, patterns) for m in mentions)


# A phrase said again after this many messages without it (the talk moved on and came back): a
# subject its speakers come back to (``_came_back_to``; issue 37, twenty-third round).
COME_BACK_GAP: Final = 3


def _came_back_to(key: str, mentions: list[Mention], patterns: PatternSet) -> bool:
    """The window says the phrase in two messages or more, the talk left it for ``COME_BACK_GAP``
    messages or more between two of them, and every mention's sentence gives someone a stake in it
    (``_engaged``): "I'm trying to get my head around the visa requirements …", five messages on
    "I'm proud of researching visa requirements …" — a plan its owner comes back to, with no work
    word. A phrase said in one stretch of talk ("My cork board …", "a pic of my cork board", "What
    made you hang it on your cork board?") or answered at once ("Congrats on the cooking show") has
    no such gap. The gap is language-free; the stake reads the packs' ``engaged`` and ``owners``
    (a language without them opens nothing here). Chosen in every left-one-out fold of the
    development conversations (docs/briefing-eval.md, twenty-third round). Asked only of a phrase
    said again in the window without work: the cheap gap first."""
    if len(mentions) < MIN_MENTIONS:
        return False
    if max(b.n - a.n for a, b in pairwise(mentions)) < COME_BACK_GAP:
        return False
    return all(_engaged(m, key, patterns) for m in mentions)


def _verdict(key: str, mentions: list[Mention], ctx: _Context, again: bool) -> int:
    """OPEN: a thread of its own (or of its broader topic); SETTLE: never one (a thread
    covers it); WAIT: not yet (no work came with it so far, and the conversation did not come
    back to it: ``again``, ``_came_back_to``). Cheapest checks first."""
    if _known(key, ctx.title_words, ctx.stopwords):
        return SETTLE
    at = {m.n: i for i, m in enumerate(ctx.window.messages)}
    if not again and not any(_carried_work(ctx.window, at[m.n], ctx.patterns) for m in mentions) \
            and not _came_back_to(key, mentions, ctx.patterns):
        return WAIT
    if 2 * _with_threads(mentions, ctx) >= len(mentions):  # mostly said together with a thread: its detail
        return SETTLE
    if not _has_stake(key, mentions, ctx, owned=key in ctx.back and len(mentions) < MIN_MENTIONS):
        return WAIT  # talked about, so far: a later mention may show someone's stake in it
    return OPEN


def _first(mentions: list[Mention], key: str) -> tuple[int, int, int]:
    m = mentions[0]
    return (m.n, m.at, -key.count(" "))


def _broader(key: str, mentions: list[Mention], ctx: _Context) -> tuple[str, list[Mention]] | None:
    """The phrase introduced before ``key``, said at least twice, that came with most of
    ``key``'s mentions: the topic ``key`` is a detail of (the longest such phrase where
    several start at the same place: "payment webhook failures", not "payment webhook")."""
    rank = _first(mentions, key)
    ours = {x.n for x in mentions}
    seen: set[str] = set()
    found: list[tuple[tuple[int, int, int], str, list[Mention]]] = []
    for m in mentions:
        for other in phrases_of(_lower(m.text), ctx.stopwords):
            if other == key or other in seen:
                continue
            seen.add(other)
            theirs = ctx.window.mentions(other)
            if len(theirs) < MIN_MENTIONS or _first(theirs, other) >= rank:
                continue
            if 2 * len({t.n for t in theirs} & ours) >= len(mentions):
                found.append((_first(theirs, other), other, theirs))
    if not found:
        return None
    _, other, theirs = min(found)
    return other, theirs


def _capitalised(word: str) -> bool:
    """A word written as a name's word is: a capital, then a small letter ("Designer", not "LCD")."""
    return word[:1].isupper() and any(ch.islower() for ch in word[1:])


def _written_as_name(key: str, mentions: list[Mention]) -> bool:
    """A phrase of two words or more, none a linking word, that every mention writes with a
    capital to each word, and one of them inside a sentence, where no capital is the sentence's
    own: "I heard our Industrial Designer talk about …", "the Project Manager", "Mississippi
    State" — a person's role, a place, an organisation: a name, not a topic whose state can change
    (issue 37, twentieth round). None is a name: a phrase said once in small letters ("the remote
    control", "our dance studio"), one written in capitals only where a sentence starts ("Selling
    price is …"), an acronym ("LCD display"), one word alone and a phrase with a linking word —
    German writes every noun with a capital ("der Rollback-Plan", "der Ausfall des Servers"), its
    adjectives small inside a sentence. Asked only of a phrase about to open a thread."""
    if " " not in key or not LINKERS.isdisjoint(key.split()):
        return False
    inside = False
    for m in mentions:
        said = m.text[m.at : m.at + len(key)]
        if said.lower() != key or not all(map(_capitalised, said.split())):
            return False
        before = m.text[: m.at].rstrip(" \t\"'“„«(*_")
        inside = inside or (bool(before) and before[-1] not in ".!?:;\n…")
    return inside


def _promote(key: str, mentions: list[Mention], ctx: _Context) -> tuple[str, list[Mention]] | None:
    broader = _broader(key, mentions, ctx)
    if broader is None:
        return key, mentions
    if _known(broader[0], ctx.title_words, ctx.stopwords):
        return None  # a detail of a topic that has a thread
    return broader


class PhraseMemory(NamedTuple):
    """What the document remembers of the phrases said so far (``ThreadsDoc``)."""

    settled: Sequence[str] = ()
    heard: dict[str, int] = {}  # noqa: RUF012  (never changed in place)
    returns: dict[str, tuple[int, int]] = {}  # noqa: RUF012


def track(recent: Sequence[RecentMessage], seen: PhraseMemory, ordinal: int, original: str, lowered: str,
          work: Callable[[], bool], threads: Sequence[Thread], patterns: PatternSet, role: str = "",
          session: str = "") -> Update:
    """This message (``ordinal``; said by ``role`` in ``session``) joins the window; say which
    phrases become threads.

    ``work`` says whether the message carries work: asked once, kept in the window. ``seen``:
    the phrases settled, those said twice in an earlier window without work, each with the
    ordinal of the message that said it last (``ThreadsDoc.heard``), and each phrase's episodes
    (``returned``); none is changed in place."""
    stopwords = patterns.phrase_breaks
    here = RecentMessage(n=ordinal, work=work(), text=original[:HEAD_CHARS], role=role, session=session)
    window_messages = [*recent[-(WINDOW - 1):], here]
    phrases = phrases_of(lowered[:HEAD_CHARS], stopwords)
    returns, back = returned(seen.returns, list(phrases), ordinal)
    # (the settled phrases unchanged are the document's list itself: documents are values, and
    # ``_decide`` appends to a copy)
    settled = seen.settled if isinstance(seen.settled, list) else list(seen.settled)
    unchanged = Update(window_messages, settled, [], seen.heard, returns)
    if len(window_messages) < MIN_MENTIONS or not phrases:
        return unchanged
    # one lower-cased string of the earlier messages: one substring search per phrase not settled
    # (a phrase is made of words, never of NUL, so no match spans two messages)
    earlier = list(map(_lower, map(_TEXT, window_messages[:-1])))
    joined = "\x00".join(earlier)
    back_set = set(back)
    done = _settled_set(settled)
    candidates = [k for k in phrases if k not in done and (k in back_set or k in joined)]
    if not candidates:
        return unchanged
    window = Window(window_messages, [*earlier, lowered[:HEAD_CHARS]])
    ctx = _Context(window, _title_words(threads, stopwords), stopwords, patterns,
                   tuple(t.title.lower() for t in threads if t.status == "open"), frozenset(back_set))
    update = _decide(sorted(candidates, key=lambda k: (-k.count(" "), lowered.find(k))), ctx, list(seen.settled),
                     seen.heard.copy())
    return update._replace(returns=returns)


class _SettledSets:
    """Each document's ``settled`` list as a set, by the list's identity: the list a document
    carries on unchanged until a phrase settles, never changed in place. Per agent: the worker
    interleaves its agents' messages, so one kept list (the last one asked) missed at nearly
    every message. Bounded (emptied when full); a kept list holds its id. An object, not a
    module-level dict (``_KindTables``)."""

    LIMIT: Final = 1024

    def __init__(self) -> None:
        self.by_id: dict[int, tuple[list[str], frozenset[str]]] = {}

    def of(self, settled: list[str]) -> frozenset[str]:
        known = self.by_id.get(id(settled))
        if known is not None and known[0] is settled:
            return known[1]
        if len(self.by_id) >= self.LIMIT:
            self.by_id.clear()
        done = frozenset(settled)
        self.by_id[id(settled)] = (settled, done)
        return done


_settled_set = _SettledSets().of


def _again(heard: dict[str, int], key: str, mentions: list[Mention]) -> bool:
    """Whether the conversation comes back to ``key``: it was said twice in an earlier window
    without work, and all of this window's mentions came after that (a meeting's "speech
    recognition", a chat's "dance studio" weeks apart; the garden chat's "back garden", said
    three times in one go, is not)."""
    last = heard.get(key)
    return last is not None and last < mentions[0].n


def _hear(heard: dict[str, int], key: str, mentions: list[Mention]) -> None:
    """``key`` was said twice here without work: keep its latest mention (at most ``MAX_HEARD``
    phrases, the ones heard longest ago dropped)."""
    heard.pop(key, None)
    heard[key] = mentions[-1].n
    while len(heard) > MAX_HEARD:
        del heard[next(iter(heard))]


def _decide(keys: list[str], ctx: _Context, settled: list[str], heard: dict[str, int]) -> Update:
    promoted: list[Topic] = []
    title_words, titles = ctx.title_words, ctx.titles
    for key in keys:
        mentions = ctx.window.mentions(key)
        if title_words is not ctx.title_words:  # (a thread promoted for an earlier key)
            ctx = ctx._replace(title_words=title_words, titles=titles)
        verdict = _verdict(key, mentions, ctx, key in ctx.back or _again(heard, key, mentions))
        if verdict == WAIT:
            if len(mentions) >= MIN_MENTIONS:  # said twice here: heard (a return said once is counted already)
                _hear(heard, key, mentions)
            continue
        settled.append(key)
        heard.pop(key, None)
        if verdict != OPEN:
            continue
        pick = _promote(key, mentions, ctx)
        if pick is None or _known(pick[0], title_words, ctx.stopwords) or _written_as_name(*pick):
            continue
        first = pick[1][0]
        promoted.append(Topic(first.text[first.at : first.at + len(pick[0])], _about(first)))
        settled.append(pick[0])
        title_words = title_words | _words(pick[0].replace("-", " "), ctx.stopwords) | {pick[0]}
        titles = (*titles, pick[0])
    return Update(ctx.window.messages, settled[-MAX_SETTLED:], promoted, heard, {})
