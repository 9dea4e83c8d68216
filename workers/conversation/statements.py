"""Decisions in one message, as a person would write them down.

A decision is a *sentence* in which a decision pattern matches ("we decided", "machen wir",
"决定"…); several matches in one sentence are one decision, two decision sentences are two.
Its ``why`` is the reason the text gives, and nothing when it gives none:

* a reason marker and the clause after it — "…, because the old secret is shared",
  "weil …", "porque …", "parce que …", "perché …", "потому что …", "因为 …" — or before
  the decision: "Since the library is unmaintained, we decided …";
* the clause before a reason marker that follows its reason: "問い合わせが多いので、…",
  "타임아웃 때문에 …";
* the clause before a consequence connector: "X is critical, so let's …";
* the preceding sentence, when the decision sentence follows from it: "The cluster runs
  out of memory. So we decided …", "… Wir haben deshalb beschlossen, …".

``what`` is then the decision sentence without its reason clause. A bare agreement
("Agreed.", "Einverstanden, machen wir.", "Договорились.") says nothing by itself and is
no decision (what was agreed was said before, or is said in the next decision sentence);
neither is a question ("Did we agree on X?") nor a negated cue ("not decided yet").
Long text is cut between words, marked "…".

Differences from the reference (openclaw-cortex ``decision-tracker.ts``), whose ``what``
was the characters 50 before to 100 after each match and whose ``why`` the characters 100
before to 200 after it: overlapping windows of one sentence made two decisions, text was
cut inside words, and every why repeated its decision.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import deque
from typing import Final, NamedTuple

from workers.conversation.patterns import MAX_MATCHES_PER_FAMILY, MatchText, PatternSet, ReasonMarkers, iter_matches
from workers.conversation.sentences import clause_before, clip_around, sentence_around, sentence_ends, tidy
from workers.render import clip_words

MAX_WHAT_CHARS: Final = 160
MAX_WHY_CHARS: Final = 160
_CLAUSE_MARKS: Final = ",，、;；:："
_WORD: Final = re.compile(r"\w+")
_CJK: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# A sentence whose words beside its cue are at most this many is a bare agreement.
_BARE_WORDS: Final = 1
_CHOICE_WORDS: Final = 3
_LEADING_JOINER: Final = re.compile(r"^(?:and|also|und|auch|y|et|e|и)\s+(?=\w)", re.IGNORECASE)


class DecisionText(NamedTuple):
    what: str
    why: str
    sentence: str  # the whole decision sentence: what a thread title is matched against


class _Split(NamedTuple):
    what: tuple[int, int]  # span within the sentence
    why: str


def _word_count(text: str) -> int:
    return len(_WORD.findall(text)) + (len(_CJK.findall(text)) // 2 if _CJK.search(text) else 0)


def _is_bare(sentence: str, cue: tuple[int, int], stopwords: frozenset[str]) -> bool:
    """Nothing decided beside the cue: "Agreed.", "Okay, decided.", "Machen wir so." — but a
    choice names what it chose in one word after its cue ("We're going with Stripe")."""
    rest = sentence[: cue[0]] + " " + sentence[cue[1] :]
    said = sentence[cue[0] : cue[1]]
    if _word_count(rest) > _BARE_WORDS or (len(_WORD.findall(said)) >= _CHOICE_WORDS and not _CJK.search(said)):
        return False  # (a cue of three words holds its object: "Postgres it is")
    after = _WORD.findall(sentence[cue[1] :])
    # the name of what was chosen, not "so" / "così" ("Machen wir so", "Facciamo così")
    named = len(after) == 1 and after[0].lower() not in stopwords and not after[0].islower()
    return not (named and not _word_count(sentence[: cue[0]]))


_POINTERS: Final = frozenset({
    "point", "points", "item", "items", "list", "ones", "decision", "decisions", "already", "far", "earlier",
    "previously", "before", "punkt", "punkte", "entscheidung", "entscheidungen", "bereits", "vorhin", "bisher",
    "puntos", "punti", "pontos", "décisions", "decisiones", "decisioni", "decisões", "déjà", "già", "já", "ya",
    "voilà", "ecco", "пункт", "пункты", "решения", "уже", "ранее",
    # the auxiliaries and relatives of a told decision that the packs' stopwords lack
    "l", "s", "avons", "avez", "ont", "abbiamo", "avete", "hanno", "questi", "queste", "hemos", "han", "temos",
    "têm", "estes", "estas", "são", "которые", "который", "которое",
})
"""Words that point at decisions told elsewhere ("these are the points we agreed on", "that was already
decided"; "das sind die Punkte, die wir beschlossen haben", "voilà les points que nous avons décidés"): no
content of a decision (``_points_back``); the packs' stopwords are the rest of such a sentence."""


_TOLD: Final = re.compile(r"decid|décid|decis|agree|acord|accord|beschlo|entschied|einig|реш|соглас")
"""A cue that tells of a decision ("decided", "agreed", "beschlossen", "решили"), not one that makes it
("let's go with five", "Postgres it is"): only such a cue can point back at decisions told elsewhere."""


def _points_back(sentence: str, cue: tuple[int, int], patterns: PatternSet) -> bool:
    """The sentence ends on its cue and names nothing decided: every word but the cue's is a function
    word, a filler or a pointer ("Uh these are the points um we agreed on", "Yeah that was already
    decided", "Like we agreed before") — a recap's heading, its list said in other sentences, or a
    reference back (issue 37, seventeenth round: over QMSum train's AMI meetings eight stored decisions
    were such, and none named a choice). Unspaced text is not judged."""
    if _CJK.search(sentence) or not _TOLD.search(sentence[cue[0]:cue[1]].lower()):
        return False
    words = [w.lower() for w in _WORD.findall(sentence[: cue[0]] + " " + sentence[cue[1]:])]
    return all(w in patterns.phrase_breaks or w in _POINTERS for w in _WORD.findall(
        sentence[cue[1]:].lower())) and all(w in patterns.phrase_breaks or w in _POINTERS for w in words)


def _markers(low: str, reasons: ReasonMarkers) -> list[tuple[re.Match[str], str, bool]]:
    """Reason markers of a sentence in order: (match, kind, the why keeps the marker)."""
    families = (("reason", reasons.reason, False), ("reason", reasons.reason_kept, True),
                ("before", reasons.reason_before, False), ("consequence", reasons.consequence, False))
    found = [(m.start(), rank, m, kind, keep) for rank, (kind, marker, keep) in enumerate(families)
             if marker is not None and marker.may_match(low) for m in marker.find_all(low)]
    found.sort(key=lambda f: (f[0], f[1]))
    return [(m, kind, keep) for _, _, m, kind, keep in found]


def _word_start(match: re.Match[str]) -> int:
    text = match.group(0)
    offset = len(text) - len(text.lstrip(" ,，、\t"))
    return match.start() + offset


def _split_reason(sentence: str, low: str, cue: int, previous: str, patterns: PatternSet) -> _Split:
    whole = _Split((0, len(sentence)), "")
    for marker, kind, keep in _markers(low, patterns.reasons):
        word = _word_start(marker)
        if kind == "reason":
            split = _after_marker(sentence, cue, marker, word, keep)
        elif kind == "before":
            split = _before_marker(sentence, cue, marker)
        else:
            split = _consequence(sentence, cue, marker, word, previous)
        if split is not None:
            return split
    return whole


def _after_marker(sentence: str, cue: int, marker: re.Match[str], word: int, keep: bool) -> _Split | None:
    reason_from = word if keep else marker.end()
    if marker.start() > cue:  # "we decided X because Y"
        return _Split((0, marker.start()), sentence[reason_from:])
    # "Since Y, we decided X": the reason runs to the clause mark before the decision
    comma = next((i for i in range(marker.end(), cue) if sentence[i] in _CLAUSE_MARKS), None)
    if comma is None:
        return None
    return _Split((comma + 1, len(sentence)), sentence[reason_from:comma])


def _before_marker(sentence: str, cue: int, marker: re.Match[str]) -> _Split | None:
    if marker.end() > cue:  # the reason must come before the decision
        return None
    return _Split((marker.end(), len(sentence)), sentence[: marker.start()])


def _consequence(sentence: str, cue: int, marker: re.Match[str], word: int, previous: str) -> _Split | None:
    if word == 0:  # "So we decided …": the sentence before is the reason
        return _Split((marker.end(), len(sentence)), previous)
    if marker.start() > cue:  # "we decided X, so Y": a consequence of the decision, no reason
        return None
    if sentence[marker.start()] in _CLAUSE_MARKS:  # "X is critical, so let's …"
        # ("Excellent, so we'll go with …": an interjection is no reason)
        return _Split((marker.end(), len(sentence)), _meaningful(sentence[: marker.start()]))
    return _Split((0, len(sentence)), previous)  # "Wir haben deshalb beschlossen, …"


def _meaningful(previous: str) -> str:
    # A one-word sentence ("Agreed.", "OK.") is no reason.
    return previous if _word_count(previous) > 2 else ""


def _decision_text(original: str, low: str, span: tuple[int, int], cue: int, previous: str,
                   patterns: PatternSet) -> DecisionText:
    start, end = span
    sentence, low_sentence = original[start:end], low[start:end]
    split = _split_reason(sentence, low_sentence, cue, _meaningful(previous), patterns)
    raw_what = sentence[split.what[0] : split.what[1]]
    what = _LEADING_JOINER.sub("", tidy(raw_what))
    if what[:1].islower():
        what = what[0].upper() + what[1:]
    cue_in_what = max(0, cue - split.what[0] - (len(raw_what) - len(raw_what.lstrip())))
    why = tidy(split.why)
    return DecisionText(
        what=clip_around(what, min(cue_in_what, len(what)), MAX_WHAT_CHARS),
        why=clip_words(why, MAX_WHY_CHARS),
        sentence=sentence,
    )


def _chosen_sentences(original: str, ends: list[int],
                      cues: list[tuple[int, int]]) -> dict[tuple[int, int], tuple[int, int]]:
    """Sentence span → its first decision cue (absolute spans), in the message's order."""
    chosen: dict[tuple[int, int], tuple[int, int]] = {}
    for cue in sorted(cues):
        chosen.setdefault(sentence_around(original, ends, cue[0]), cue)
    return chosen


def _is_question(sentence: str, patterns: PatternSet) -> bool:
    """A sentence that asks — not one that only asks for assent with a tag ("So we'll go with
    speech recognition, yeah?": said, in a meeting's recap; issue 37)."""
    if not sentence.rstrip().endswith(("?", "？")):
        return False
    tag = patterns.question_tag
    return tag is None or tag.search(sentence.lower()) is None


def _untagged(sentence: str, patterns: PatternSet) -> int:
    """Where ``sentence`` ends without its assent tag ("…, yeah?"): its length when it has none."""
    tag = patterns.question_tag
    found = tag.search(sentence.lower()) if tag is not None and sentence.rstrip().endswith(("?", "？")) else None
    return found.start() if found is not None else len(sentence)


def _previous_sentence(original: str, ends: list[int], start: int) -> str:
    i = bisect_right(ends, start)
    if i == 0:
        return ""
    lo, hi = sentence_around(original, ends, ends[i - 1] - 1)
    return original[lo:hi] if hi <= start else ""


def _recalled_or_hedged(lowered: str, cue: int, patterns: PatternSet) -> bool:
    """The cue's clause recalls a decision made before ("as we have decided in the last meeting",
    "we had decided on roles") or hedges it ("I guess we decided on material", "maybe we'll go
    with …"): a meeting's recap of its minutes was taken for three new decisions (issue 37)."""
    before = clause_before(lowered, cue)
    return any(p is not None and p.search(before) is not None for p in (patterns.recap, patterns.hedge))


def _on_condition(before: str, patterns: PatternSet) -> bool:
    """The sentence hedges or sets a condition before its cue, in an earlier clause too ("If it
    works well, we'll go for an orange one", "Maybe, for the next one, we'll use wood"): a
    choice for a case that may never come is none yet (issue 37, AMI)."""
    return patterns.hedge is not None and patterns.hedge.search(before) is not None


TAIL_CHARS: Final = 80
"""The longest fragment that goes on with a decision (``LanguagePack.decision_tail``)."""


def _with_tail(original: str, low: str, ends: list[int], end: int, patterns: PatternSet) -> int:
    """Where what was decided ends: after the next sentence of the message when that one is a
    verbless fragment going on with it ("We'll use the basic functions for a television. No
    teletext.": the teletext was decided too; eighteenth round), else at ``end``."""
    tail = patterns.decision_tail
    if tail is None or end >= len(original):
        return end
    start, stop = sentence_around(original, ends, end)
    if start < end or stop - start > TAIL_CHARS:
        return end
    fragment = low[start:stop].rstrip(" \t\r\n.!…")
    if not fragment or fragment.endswith(("?", "？")) or tail.fullmatch(fragment) is None:
        return end
    return stop


def _subject_end(lowered: str, cue: int, end: int) -> int:
    """Where the cue's first word ends: a cue that opens on its subject ("we're gonna use …", "we've
    chosen …") leaves "if " alone before it, and the packs' hedges read "if we" (eighteenth round:
    "If we're gonna use spongy material we have to think …" chose nothing)."""
    space = lowered.find(" ", cue, end)
    return end if space < 0 else space


def find_decisions(text: MatchText, patterns: PatternSet, steps: bool = False) -> list[DecisionText]:
    """One ``DecisionText`` per decision sentence of the message, in order; with ``steps``, a
    person's own step taken ("I just signed with …", ``PatternSet.step``) is one too (the
    decisions core's: no thread opens on it)."""
    found = list(iter_matches(patterns.decision, text))
    if steps:
        found += iter_matches(patterns.step, text)
    cues = [(m.start(), m.end()) for m in found
            if not patterns.is_negated(text.lowered, m.start())  # "not decided yet"
            and not _recalled_or_hedged(text.lowered, m.start(), patterns)]
    if not cues:
        return []
    original, low = text.original, text.lowered
    ends = sentence_ends(original)
    chosen = _chosen_sentences(original, ends, cues)
    out: list[DecisionText] = []
    for (start, end), (cue_start, cue_end) in chosen.items():
        cue = cue_start - start
        sentence = original[start:end]
        if _is_question(sentence, patterns) or _is_bare(sentence, (cue, cue_end - start), patterns.stopwords) \
                or _points_back(sentence, (cue, cue_end - start), patterns) \
                or _on_condition(low[start:_subject_end(low, cue_start, end)], patterns):
            continue
        said = start + _untagged(sentence, patterns)  # "…, yeah?" is no part of what was decided
        if said == end:
            said = _with_tail(original, low, ends, end, patterns)
        previous = _previous_sentence(original, ends, start)
        out.append(_decision_text(original, low, (start, said), cue, previous, patterns))
        if len(out) == MAX_MATCHES_PER_FAMILY:
            break
    return out


_RATIFY_TRAIL: Final = " \t\r\n.,!;:…。！、，¡👍🙌✅🎉🚀😀🙂😊"


def is_ratification(text: MatchText, patterns: PatternSet) -> bool:
    """The message's first sentence only agrees ("Agreed.", "Absolutely, let's do that", "Yeah,
    let's do it, John!", "Beschlossen.", "Договорились."): it decides what was proposed before it."""
    if patterns.ratification is None:
        return False
    ends = sentence_ends(text.original)
    first = text.lowered[: ends[0] if ends else len(text.lowered)].strip(_RATIFY_TRAIL)
    return bool(first) and patterns.ratification.fullmatch(first) is not None


def _thin(what: str, patterns: PatternSet) -> bool:
    """A proposal that names nothing but common verbs and function words ("make it happen", "do
    it again") or that hangs on a condition ("achieve great things if we join forces"): agreeing
    to it decides nothing a reader could act on."""
    lowered = what.lower()
    if patterns.condition is not None and patterns.condition.search(lowered) is not None:
        return True
    return not _CJK.search(what) and all(w in patterns.phrase_breaks for w in _WORD.findall(lowered))


def _went_on(original: str, ends: list[int], end: int) -> int:
    """Where the proposal ending at ``end`` ends with the sentences of its message that go on with it — each
    opening on "and" ("… out of that. And if you press the volume button …"; ``_LEADING_JOINER``)."""
    stop = sentence_around(original, ends, max(end - 1, 0))[1]
    while stop < len(original):
        start, after = sentence_around(original, ends, stop)
        if after <= stop or _LEADING_JOINER.match(original[start:after]) is None:
            break
        stop = after
    return max(stop, end)


def find_proposal(text: MatchText, patterns: PatternSet, rest: bool = False) -> str | None:
    """What the message proposes, as a decision would read once it is agreed ("How about we use
    Postgres for the event store?" → "Use Postgres for the event store"): its last proposal — with
    ``rest``, its whole sentence and the sentences after it that go on with it, the idea as its speaker
    put it ("We could make two buttons out of that. And if you press the volume button you control the
    volume with the scroll-wheel."; what an approval a few messages on agrees with, twenty-fifth round)."""
    if patterns.proposal is None:
        return None
    found = deque(patterns.proposal.finditer(text), maxlen=1)
    if not found:
        return None
    match = found[0]
    group = match.lastindex or 0  # the languages' sources are alternatives: the one that matched
    what = tidy(text.original[match.start(group) : match.end(group)]).rstrip("?？")
    if _word_count(what) < 2 or _thin(what, patterns):
        return None
    if rest:
        ends = sentence_ends(text.original)
        start = sentence_around(text.original, ends, match.start(group))[0]
        if patterns.condition is not None and patterns.condition.search(text.lowered[start:match.start(group)]):
            return None  # "if you don't do it, we can also make a nice bay": an alternative for a case
        what = tidy(text.original[start : _went_on(text.original, ends, match.end(group))]).rstrip("?？")
    return clip_words(what[0].upper() + what[1:], MAX_WHAT_CHARS)


_ASKING_WORDS: Final = 3
"""The longest question after a choice asked that only asks for assent ("So, let's go for Mando? Yeah? No
objection?")."""
_ASKED_TAG: Final = re.compile(r"[,\s]+(?:or|oder|right|yes|yeah|ja|no|ne|nicht wahr|isn['’]t it|is it not)\s*$")
"""A tag closing a choice asked ("Well we'll stick to banana, or?"): no part of what was chosen."""
_WEIGHED: Final = re.compile(r"\b(?:or|oder|ou|oppure|или)\b")
"""Two options weighed in one question ("do we keep it doubly curved or do we go for single curved?"): which
one a yes agrees to is not said."""


def _last_choice(original: str, ends: list[int], cues: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The span of the message's last sentence holding a cue, when no question without one comes after it
    but short ones that ask for assent ("Yeah?", "No objection?"): the answer after the message answers it."""
    bounds = [0, *ends] if ends and ends[-1] >= len(original.rstrip()) else [0, *ends, len(original)]
    for i in range(len(bounds) - 1, 0, -1):
        lo, hi = bounds[i - 1], bounds[i]
        sentence = original[lo:hi].strip()
        if not sentence:
            continue
        if any(lo <= c < hi for c, _ in cues):
            return sentence_around(original, ends, hi - 1)
        if sentence.endswith(("?", "？")) and _word_count(sentence) > _ASKING_WORDS:
            return None
    return None


def _put_to_the_group(low: str, start: int, cue_start: int, end: int, asked: bool, patterns: PatternSet) -> bool:
    """The choice is put to the others, not made or hedged: asked ("So, let's go for Mando?"), or said as
    the speaker's opinion ("I think we can then keep the single curved one") with no other hedge or
    condition before its cue ("I think maybe …", "I think if we are gonna use a touchscreen …")."""
    before = low[start:_subject_end(low, cue_start, end)]
    if asked:
        return not _recalled_or_hedged(low, cue_start, patterns) and not _on_condition(before, patterns)
    opinion = patterns.opinion
    if opinion is None or opinion.search(before) is None:
        return False  # a statement with no opinion before it was a decision, or hedged (``find_decisions``)
    clause = opinion.sub(" ", clause_before(low, cue_start))
    return not (patterns.recap is not None and patterns.recap.search(clause) is not None) \
        and not _on_condition(opinion.sub(" ", before), patterns)


def find_asked_choice(text: MatchText, patterns: PatternSet) -> DecisionText | None:
    """The choice a message puts to the others (issue 37, twenty-first round): its last sentence holding
    a decision cue that makes a choice, asked ("So, let's go for Mando? Yeah? No objection?", "Well we'll
    stick to banana, or?", "So we're going for an LCD screen?", "Wir nehmen Postgres?") or said as the
    speaker's opinion ("I think we can then keep the single curved one.", "Ich denke, wir nehmen
    Postgres."), with no question after it but short ones asking for assent. Not a cue that tells of a
    decision ("Have we decided on the chip?", "I think we all agreed on that"), nor a hedged, conditional,
    negated or bare one, nor a question that weighs two ("do we keep the shape doubly curved or do we go
    for single curved?"). What was chosen is the sentence without its question mark and tag; it is a
    decision only when another speaker's next message agrees (``assent_echo``, ``is_assent``)."""
    original, low = text.original, text.lowered
    found = sorted((m.start(), m.end()) for m in iter_matches(patterns.decision, text))
    if not found:
        return None
    ends = sentence_ends(original)
    span = _last_choice(original, ends, found)
    if span is None:
        return None
    start, end = span
    cues = [cue for cue in found if start <= cue[0] < end]
    if not cues or any(later[0] >= cues[0][1] for later in cues[1:]):
        return None  # no cue, or two choices weighed in one sentence (the patterns' overlapping matches are one)
    cue_start, cue_end = cues[0]
    sentence, lowered = original[start:end], low[start:end]
    at = (cue_start - start, cue_end - start)
    asked = sentence.rstrip().endswith(("?", "？"))
    if _TOLD.search(lowered[at[0]:at[1]]) or patterns.is_negated(low, cue_start) \
            or _is_bare(sentence, at, patterns.stopwords) \
            or not _put_to_the_group(low, start, cue_start, end, asked, patterns):
        return None
    said = sentence.rstrip().rstrip("?？").rstrip()
    tag = _ASKED_TAG.search(said.lower()) if asked else None
    said = said[: tag.start()] if tag is not None else said
    if _word_count(said[at[0]:]) < 2 or _WEIGHED.search(said.lower()) is not None:
        return None
    opening = len(said) - len(said.lstrip("¿¡ "))  # (Spanish opens its question with its mark)
    previous = _previous_sentence(original, ends, start)
    return _decision_text(original, low, (start + opening, start + len(said)), at[0] - opening, previous, patterns)


_ECHO_WORDS: Final = 4
"""The longest answer that agrees by saying the choice again ("Let's go with a simple chip?" — "Simple chip.")."""


def assent_echo(text: MatchText, patterns: PatternSet) -> tuple[str, ...] | None:
    """How the message may agree with a choice asked before it: ``()`` when its first sentence opens on a
    yes with no objection after it ("Yeah, yeah.", "Yep.", "Okay.", "Ja, genau."; ``LanguagePack.assent``),
    its words when it is one short sentence that may say the choice again ("Simple chip."; at most four
    words), else None — read before the question is, so that most answers cost one match."""
    if patterns.assent is None:
        return None
    ends = sentence_ends(text.original)
    first = text.lowered[: ends[0] if ends else len(text.lowered)].strip(_RATIFY_TRAIL)
    if not first:
        return None
    if patterns.assent.match(first) is not None:
        return ()
    words = _WORD.findall(first)
    if not words or len(words) > _ECHO_WORDS or first.endswith(("?", "？")) or len(ends) > 1:
        return None
    return tuple(words)


def is_assent(echo: tuple[str, ...], asked: str, patterns: PatternSet) -> bool:
    """An answer (``assent_echo``) agrees with the choice ``asked``: a yes, or the choice said again — its
    words all the question's, one of them more than a function word ("Simple chip.", not "So.")."""
    if not echo:
        return True
    said = {w.lower() for w in _WORD.findall(asked)}
    return all(w in said for w in echo) and any(w not in patterns.phrase_breaks for w in echo)


_BACK_CHANNEL_WORDS: Final = 2
"""The longest sentence an approval may follow in its message ("Yeah. That's really a good idea, I think.")."""
_REFUSAL: Final = re.compile(r"(?:no|nope|nah|nein|non|não|нет)(?!\w)")
"""A short no before an approval ("Nope. Good idea for later."): what follows is no approval of the idea."""


def is_approval(text: MatchText, patterns: PatternSet) -> bool:
    """The message approves the idea said before it (issue 37, twenty-fifth round): its first sentence that
    is more than a back-channel ("Yeah.", "Okay.", "Mm-hmm.": two words at most, no negation) opens on an
    approval (``LanguagePack.approval``: "That's really a good idea, I think.", "I agree.", "Ich finde, das
    ist eine gute Idee."), with no objection, hedge, condition or question after it in that sentence. A
    bare yes is the listener's back-channel, not an approval (twenty-first round)."""
    approval = patterns.approval
    if approval is None:
        return False
    low = text.lowered
    start = 0
    for end in [*sentence_ends(text.original), len(low)]:
        sentence = low[start:end].strip(_RATIFY_TRAIL)
        start = end
        if not sentence:
            continue
        if approval.match(sentence) is not None:
            return True
        if len(_WORD.findall(sentence)) > _BACK_CHANNEL_WORDS or "?" in sentence or "？" in sentence \
                or _REFUSAL.match(sentence) is not None \
                or (patterns.negation is not None and patterns.negation.search(sentence) is not None):
            return False
    return False
