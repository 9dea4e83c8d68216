"""Claims: what one statement says is so, so a newer statement can replace an older one.

Recall supersedes a memory by a newer one that contradicts it (``workers.recall.conflicts``),
and a thread's summary follows the fact it states (``workers.threads``): both read the claim
a sentence makes here, without a model, in every language pack. A *claim* is ``frame`` +
``value`` + ``negated``; two claims **conflict** when their frames are equal and either
their values differ (same polarity) or their polarities differ (same value).

Two rules read it; a sentence is first set in order: one sentence of at most 240
characters, not a question; a leading "No," / "Yes," is an interjection, not a negation;
after a colon, the statement that follows it ("Let's talk about the deploy schedule: our
deploy day is Tuesday");
the markers of a change are set aside — a trailing "since the upgrade", "as of May",
"seit gestern", "desde el lunes", "depuis lundi", "dal 2024", "a partir de hoje" and the
words "now", "currently", "jetzt", "ahora", "maintenant", "ora", "agora", "теперь"…;
negations ("not", "never", "no longer", "n't", "nicht (mehr)", "no", "ne … plus", "non",
"não", "не") set ``negated`` and leave the words; a leading article or "our" goes.

* **The copula** (as before, now in every language pack): the value is what follows the
  last present-tense copula (is/are, ist/sind, es/son/está/están, est/sont, è/sono,
  é/são/está/estão — not was/were: two trips are no change; not ``'s``, as often a genitive)
  when it starts at most two words after it, looks like a value — a number or time, a
  weekday or month, a name (capitalised), a yes/no/on/off word — and is at most four words:
  "The deploy day is **Tuesday**", "El día de despliegue es el **jueves**".
* **A value at the end** (beyond the copula): a statement in the present whose last at most
  four words start with a value — a number, version, time or date, or (after a verb that
  holds one value at a time: works at, lives in, runs on, moved to, reports to…) a name:
  "The API runs on **Postgres 14**" → "The API runs on Postgres 16 since the upgrade",
  "Maria works at **Acme**" → "Maria works at Globex now", "I have **2** kids" → "I have 3
  kids". The value is its value words (numbers, names, dates); its other words stay in the
  frame ("2 kids" and "3 cats" are two frames). A sentence that tells of the past or of one
  occasion ("was", "went", "-ed", "yesterday", "today", "last week", "gestern", "hier",
  "ayer"…) claims nothing here: "I ran 5 miles today" and "I ran 10 miles today" are two runs.
* **Japanese, Korean, Chinese** (no spaces): the topic before は / 은 / 는 / 是 is the frame,
  what follows (less です / 입니다 / 了 and "now": 今は, 現在, 이제, 지금, 现在) the value:
  "デプロイ日は火曜日です" → "デプロイ日は木曜日です".

A frame spoken in the first or second person singular ("my", "I", "your", "mein", "mi",
"mon", "mio", "meu", "мой"…) is the speaker's own: it is keyed with the sender, so Melanie's
"my dog is called Max" and Caroline's "my dog is called Rex" never meet. A subject that is
only a pronoun ("it is Tuesday") has no claim: what it refers to is unknown.
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Final, NamedTuple

from workers.conversation.due import DAY_AND_MONTH_NAMES

MAX_CLAIM_CHARS: Final = 240  # a longer text is not "one clear statement"
MAX_VALUE_WORDS: Final = 4
MIN_FRAME_WORDS: Final = 2
MAX_CJK_VALUE_CHARS: Final = 16

# Present tense only: "I was in Paris" and "I was in Rome" are two trips, not a change.
_COPULAS: Final = frozenset({"is", "are", "ist", "sind", "es", "son", "está", "están", "est", "sont", "è", "sono",
                             "é", "são", "estão"})
_NEGATIONS: Final = frozenset({
    "not", "never", "no", "nicht", "nie", "niemals", "kein", "keine", "keinen", "keinem", "keiner", "nunca", "jamás",
    "ne", "n'", "n’", "pas", "jamais", "non", "não", "не", "нет", "никогда",
    "no-longer", "not-anymore", "no-more", "nicht-mehr", "ya-no", "ne-plus", "non-più", "não-mais", "больше-не",
})
_FILLERS: Final = frozenset({
    "now", "currently", "still", "actually", "officially", "nowadays", "anymore", "jetzt", "nun", "aktuell",
    "mittlerweile", "inzwischen", "derzeit", "ahora", "actualmente", "ya", "todavía", "maintenant", "actuellement",
    "désormais", "dorénavant", "toujours", "ora", "adesso", "attualmente", "ormai", "ancora", "agora", "atualmente",
    "ainda", "já", "теперь", "сейчас", "уже",
})
_LEADING: Final = frozenset({
    "the", "a", "an", "our", "so", "ok", "okay", "fyi", "btw", "also", "and", "but", "der", "die", "das", "den", "dem",
    "ein", "eine", "unser", "unsere", "unseren", "unserem", "und", "aber", "el", "la", "los", "las", "un", "una",
    "nuestro", "nuestra", "nuestros", "nuestras", "y", "pero", "le", "les", "une", "notre", "nos", "l'", "l’", "et",
    "mais", "il", "lo", "gli", "uno", "nostro", "nostra", "nostri", "nostre", "e", "ma", "o", "os", "as", "um", "uma",
    "nosso", "nossa", "nossos", "nossas", "mas", "наш", "наша", "наше", "наши", "и", "но",
})
# Singular first and second person: "my dog" is the speaker's own ("our" is shared).
_PERSONAL: Final = frozenset({
    "i", "my", "me", "mine", "you", "your", "yours", "ich", "mein", "meine", "meiner", "meinen", "meinem", "mir",
    "mich", "du", "dein", "deine", "deiner", "deinen", "deinem", "dir", "dich", "yo", "mi", "mis", "tu", "tus", "te",
    "je", "j'", "j’", "mon", "ma", "mes", "moi", "ton", "ta", "tes", "toi", "io", "mio", "mia", "miei", "mie", "tuo",
    "tua", "tuoi", "tue", "eu", "meu", "minha", "meus", "minhas", "teu", "você", "я", "мой", "моя", "моё",
    "мои", "ты", "твой", "твоя", "твоё", "твои", "меня", "мне",
})
_PRONOUNS: Final = frozenset({
    "it", "this", "that", "he", "she", "they", "these", "those", "there", "here", "es", "dies", "er", "sie", "man",
    "what", "who", "which", "was", "wer", "él", "ella", "ellos", "ellas", "esto", "eso", "elle", "ils", "elles", "ce",
    "c'", "c’", "cela", "ça", "lui", "lei", "loro", "questo", "quello", "ciò", "ele", "ela", "eles", "elas", "isso",
    "isto", "он", "она", "оно", "они", "это", "то",
})
_VALUE_WORDS: Final = frozenset({
    "yes", "no", "on", "off", "true", "false", "enabled", "disabled", "ja", "nein", "aktiv", "inaktiv", "noon",
    "midnight", "mittags", "weekly", "daily", "monthly", "täglich", "wöchentlich", "sí", "oui", "non", "sim", "não",
})
_DATE_WORDS: Final = DAY_AND_MONTH_NAMES | {
    "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays", "montags", "dienstags",
    "mittwochs", "donnerstags", "freitags",
}
# The second half of a split negation ("n'est plus", "non è più", "não é mais"), dropped with it.
_NEGATION_TAILS: Final = frozenset({"plus", "più", "mais"})
# Verbs that hold one value at a time, after which a name is a value ("works at Acme").
_FUNCTIONAL: Final = frozenset({
    "works", "work", "lives", "live", "runs", "run", "moved", "reports", "report", "belongs", "leads", "owns",
    "arbeitet", "arbeite", "wohnt", "wohne", "läuft", "gehört", "leitet", "trabaja", "trabajo", "vive", "vivo",
    "funciona", "travaille", "habite", "tourne", "dirige", "lavora", "lavoro", "abita", "gira", "trabalha",
    "trabalho", "mora", "moro", "roda", "работает", "работаю", "живёт", "живет", "живу",
})
# The past or one occasion: no claim by the value-at-the-end rule (two runs are no change).
_EPISODIC: Final = frozenset({
    "was", "were", "did", "had", "went", "ran", "got", "made", "saw", "came", "took", "gave", "met", "told", "said",
    "ago", "yesterday", "today", "tonight", "tomorrow", "last", "just", "war", "waren", "wurde", "wurden", "hatte",
    "hatten", "gestern", "heute", "morgen", "letzte", "letzten", "letztes", "vorhin", "fue", "fueron", "era", "eran",
    "ayer", "hoy", "mañana", "pasado", "pasada", "était", "étaient", "été", "hier", "aujourd'hui", "demain",
    "dernier", "dernière", "fu", "erano", "ieri", "oggi", "domani", "scorso", "scorsa", "foi", "foram", "eram",
    "ontem", "hoje", "amanhã", "passado", "passada", "был", "была", "было", "были", "вчера", "сегодня", "завтра",
    "прошлой", "прошлом", "прошлый",
})
_INTERJECTION: Final = re.compile(
    r"(?i)^\s*(?:no|nope|yes|yeah|yep|ok|okay|nein|ja|doch|sí|si|non|oui|não|sim|нет|да)\s*[,!.:;—–-]\s*")
_SINCE: Final = re.compile(
    r"(?i)(?:,\s*|\s+)(?:since|as of|from now on|starting(?: from)?|seit|ab sofort|ab jetzt|desde|a partir de|"
    r"depuis|à partir de|dès|da quando|dal|dalla|dallo|dai|a partire da|с тех пор|начиная с)\b.*$")
_SINCE_PHRASE: Final = re.compile(
    r"(?i)(?:^|\s)(?:since|seit|desde|depuis|dal|dalla|с)\s+(?:(?:the|dem|der|den|einem|el|la|le|les|il|lo|o|a|um)\s+)?"
    r"[\w.:/-]+,?(?=\s)")
_MULTI_NEGATION: Final = re.compile(
    r"(?i)\b(?:no longer|not anymore|no more|nicht mehr|ya no|non più|não mais|больше не)\b"
    r"|\bn['’](?=\w+\s+plus\b)|\bne\b(?=\s+\w+\s+plus\b)")
_CONTRACTED: Final = re.compile(r"(?i)\b(\w+?)n[’']t\b")  # "doesn't", "isn't": the word and a negation
_ELISION: Final = re.compile(r"(?i)\b([ldjcnmst]|qu|dell|dall|nell|sull|un)['’](?=\w)")  # "l'API" → "l' API"
_WORD: Final = re.compile(r"[\w’'.:/@+-]+")
_EDGE_PUNCT: Final = re.compile(r"^[^\w]+|[^\w%'’]+$")
_INNER_END: Final = re.compile(r"[.!?]\s+\S|[。！？]\s*\S")
_UNSPACED: Final = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_CLAIM: Final = re.compile(r"^(?P<frame>[^は是은는]{2,40}?)(?:は|是|은|는)\s*(?P<value>.+)$")
_CJK_NOW: Final = re.compile(r"(?:今は|現在は|現在|もう|이제는|이제|지금은|지금|现在|目前|现已|已经)\s*")
_CJK_TAIL: Final = re.compile(r"(?:です|でした|だ|になりました|になった|입니다|이에요|예요|이다|了|啦)?[。.!！]*$")
_CJK_NEGATION: Final = re.compile(r"ではありません|じゃない|ではない|ません|아닙니다|아니다|않|不是|不再|没有")
_CJK_PAST: Final = re.compile(r"でした|だった|었|았|昨日|어제|昨天")


class Claim(NamedTuple):
    key: str  # what the claim is about: its frame (with the speaker when personal), hashed
    value: str  # the value, lower-cased ("" when the statement has none)
    negated: bool


def _words(text: str) -> list[str]:
    text = _MULTI_NEGATION.sub(lambda m: " " + m.group(0).strip().lower().replace(" ", "-") + " ", text)
    text = _CONTRACTED.sub(lambda m: f"{m.group(1)} not", text)
    text = _ELISION.sub(lambda m: f"{m.group(1)}' ", text)
    return [w for w in (_EDGE_PUNCT.sub("", raw) for raw in _WORD.findall(text)) if w]


def _is_date(word: str) -> bool:
    return any(ch.isdigit() for ch in word) or word.casefold() in _DATE_WORDS


def _value_like(word: str) -> bool:
    """A number or time, a weekday, month or yes/no word, or a name (capitalised)."""
    return _is_date(word) or word.casefold() in _VALUE_WORDS or word[:1].isupper()


def _after_copula(words: list[str]) -> tuple[list[str], list[str]] | None:
    """(frame words, value words) by the copula rule, or None when it does not apply."""
    copula = max((i for i, w in enumerate(words) if w.casefold() in _COPULAS), default=-1)
    if copula < 1:
        return None
    after = [i for i in range(copula + 1, min(len(words), copula + 4)) if words[i].casefold() not in _FILLERS]
    start = next((i for i in after if _value_like(words[i])), None)
    if start is None or len(words) - start > MAX_VALUE_WORDS:
        return None
    return words[:start], words[start:]


def _episodic(words: list[str]) -> bool:
    return any(w.casefold() in _EPISODIC or (w.islower() and len(w) > 4 and w.endswith("ed")) for w in words)


def _at_the_end(words: list[str]) -> tuple[list[str], list[str]] | None:
    """(frame words, value words) by the value-at-the-end rule, or None."""
    if _episodic(words):
        return None
    functional = any(w.casefold() in _FUNCTIONAL for w in words)
    for start in range(max(1, len(words) - MAX_VALUE_WORDS), len(words)):
        word = words[start]
        if _is_date(word) or (functional and word[:1].isupper()):
            tail = words[start:]
            value = [w for w in tail if _is_date(w) or (functional and w[:1].isupper())]
            # the value's words are one slot in the frame ("Acme Analytics GmbH" and "Globex" alike)
            frame = words[:start] + [w for i, w in enumerate(tail) if w not in value or i == 0]
            return [("…" if w in value else w) for w in frame], value
    return None


def _prepared(text: str) -> str | None:
    """The sentence as one line without its interjection, or None when it is no single statement."""
    text = " ".join(text.split())
    if not text or len(text) > MAX_CLAIM_CHARS or text.endswith(("?", "？")) or _INNER_END.search(text):
        return None
    text = _INTERJECTION.sub("", text).strip()
    # "Let's talk about the deploy schedule: our deploy day is Tuesday" states what follows the colon
    _, colon, tail = text.rpartition(": ")
    return tail if colon and len(tail.split()) >= MIN_FRAME_WORDS + 1 else text


def _without_since_phrase(text: str) -> str:
    """The sentence without a change marker and the phrase it starts, in the middle of the
    sentence ("Die API läuft seit dem Upgrade auf Postgres 16")."""
    return " ".join(_SINCE_PHRASE.sub(" ", text).split())


def _keyed(frame: list[str], sender: str | None) -> str | None:
    personal = any(w in _PERSONAL for w in frame)
    if personal and not sender:
        return None
    basis = f"{sender.casefold() if personal and sender else ''}\x1f{' '.join(frame)}"
    return hashlib.sha256(basis.encode()).hexdigest()[:32]


def _mostly_unspaced(text: str) -> bool:
    """Written mostly in a script without spaces between words (or Korean, by its particles)."""
    if not _UNSPACED.search(text):
        return False
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and sum(1 for ch in letters if _UNSPACED.match(ch)) * 2 > len(letters)


def _unspaced_claim(text: str, sender: str | None) -> Claim | None:
    """The claim of a Japanese, Korean or Chinese statement: topic, then value."""
    match = _CJK_CLAIM.match(_CJK_NOW.sub("", text).rstrip("。.!！ "))
    if match is None or _CJK_PAST.search(text):
        return None
    value = _CJK_TAIL.sub("", match.group("value").strip()).strip()
    negated = bool(_CJK_NEGATION.search(value))
    value = _CJK_NEGATION.sub("", value).strip()
    if not value or len(value) > MAX_CJK_VALUE_CHARS:
        return None
    key = _keyed([match.group("frame").strip().casefold()], sender)
    return None if key is None else Claim(key=key, value=value.casefold(), negated=negated)


@functools.lru_cache(maxsize=1 << 14)
def claim_of(text: str, sender: str | None = None) -> Claim | None:
    """The claim one sentence makes, or None (not one clear statement). Cached: a thread's
    ``about`` is read again at every message that makes a claim."""
    prepared = _prepared(text)
    if not prepared:
        return None
    # a change marker ends the sentence ("… Postgres 16 since the upgrade") or starts a
    # phrase inside it ("… läuft seit dem Upgrade auf Postgres 16"): the reading with a value wins
    claim = _claim(_SINCE.sub("", prepared).strip(), sender)
    if claim is not None and claim.value:
        return claim
    inside = _without_since_phrase(prepared)
    other = _claim(inside, sender) if inside != prepared else None
    return other if other is not None and (other.value or claim is None) else claim


def _claim(prepared: str, sender: str | None) -> Claim | None:
    if _mostly_unspaced(prepared):
        return _unspaced_claim(prepared, sender)
    words = _words(prepared)
    negated = any(w.casefold() in _NEGATIONS for w in words)
    dropped = _NEGATIONS | _FILLERS | (_NEGATION_TAILS if negated else frozenset())
    words = [w for w in words if w.casefold() not in dropped]
    while words and words[0].casefold() in _LEADING:
        words = words[1:]
    if not words or words[0].casefold() in _PRONOUNS:
        return None
    split = _after_copula(words) or _at_the_end(words)
    frame_words, value_words = split if split is not None else (words, [])
    frame = [w.casefold() for w in frame_words]
    if len(frame) < (MIN_FRAME_WORDS if value_words else MIN_FRAME_WORDS + 1):
        return None
    key = _keyed(frame, sender)
    if key is None:
        return None
    return Claim(key=key, value=" ".join(w.casefold() for w in value_words), negated=negated)


def conflicts(new: Claim | None, old: Claim | None) -> bool:
    """Whether ``new`` replaces ``old``: one frame, and another value or the other polarity."""
    if new is None or old is None or new.key != old.key:
        return False
    return new.value != old.value or new.negated != old.negated
