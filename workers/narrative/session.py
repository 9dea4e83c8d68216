"""What happened in a session, without an LLM: who spoke, the news they told, what it was about.

The reference's structured narrative is a date, completed and open threads, decisions and
a timeline of sessions — "09:55–10:03 Session: s19" said when a chat happened, never what
happened in it (issue 37). The narrative worker now reads the agent's messages too and keeps
a digest of each session (``SessionDigest``, in ``NarrativeDoc.sessions``): its speakers and
message count, and its *news* — the few sentences that tell something that happened or is
planned, said by a speaker of themselves ("I passed the adoption agency interviews last
Friday!", "We took a road trip to the Grand Canyon."). A session's line in the briefing quotes
them, with the topics, decisions and promises of the session (from the threads, decisions and
commitments documents as of the trigger).

News is told from reaction by what a sentence is, in any language: the speaker speaks of
themselves (a first-person word of the language packs), says something specific (content
words, names, numbers, dates), and neither asks nor answers the other ("you", "your" — a
compliment, a question back), and tells that it happened or will: a time ("last Friday",
"gestern") or, in English, a verb in the past after "I" or "we". A sentence scores its
content words (at most six), three for the first person, one for each name or number (at
most two), two for a time and two for a deed (a content word: four letters, or two of a
Hangul or CJK word), minus four when it addresses the listener, and in English minus three for each word that
names nothing ("something", "stuff"), filler ("uh", "um") or word said again ("this is this is"; at
most two); ``MIN_NEWS_SCORE``
keeps it. Every fact is the event's: a replay makes the same
digest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Final

import msgspec

from schemas.docs import NewsItem, SessionDigest
from schemas.events import MessageEvent
from workers.conversation.patterns import prepare_text
from workers.conversation.sentences import sentence_spans
from workers.render import clip_words, one_line

MAX_NEWS: Final = 8  # kept per session: the best by score
SHOWN_NEWS: Final = 3  # quoted per session in the narrative
MIN_NEWS_SCORE: Final = 9
MAX_SPEAKERS: Final = 8
NEWS_CHARS: Final = 160
_MIN_WORDS, _MAX_WORDS = 5, 40

# First-person and second-person words of each language (lower case, whole words; the CJK
# ones anywhere). A sentence with the first is about its speaker; one with the second speaks
# to the listener.
_FIRST: Final[dict[str, str]] = {
    "en": r"i|i['’]m|i['’]ve|i['’]d|i['’]ll|my|we|we['’]re|we['’]ve|our|me|us",
    "de": r"ich|mein\w*|mich|mir|wir|uns\w*",
    "es": r"yo|mi|mis|me|nosotros|nuestr[oa]s?",
    "fr": r"je|j['’]\w+|mon|ma|mes|moi|nous|notre|nos",
    "it": r"io|mio|mia|miei|mie|mi|noi|nostr[oaie]",
    "pt": r"eu|meu|minha|meus|minhas|me|nós|nosso|nossa",
    "ru": r"я|мой|моя|мои|моё|мне|меня|мы|наш\w*",
    "ja": r"私|わたし|僕|ぼく|俺|うち",
    "ko": r"저는|제가|나는|내가|저희|우리",
    "zh": r"我",
}
_SECOND: Final[dict[str, str]] = {
    "en": r"you|your|yours|you['’]re|you['’]ve|you['’]ll|ya|yourself",
    "de": r"du|dein\w*|dich|dir|ihr|euch|euer\w*|sie",
    "es": r"tú|tu|tus|te|ti|usted|ustedes|vosotros",
    "fr": r"tu|ton|ta|tes|toi|vous|votre|vos",
    "it": r"tu|tuo|tua|tuoi|tue|ti|te|voi|vostr[oaie]",
    "pt": r"você|vocês|tu|teu|tua|seu|sua|te|ti",
    "ru": r"ты|твой|твоя|твои|тебя|тебе|вы|ваш\w*|вас|вам",
    "ja": r"あなた|君|きみ",
    "ko": r"당신|너|네가|너는",
    "zh": r"你|您",
}
# When a sentence says it happened or will ("last Friday", "gestern", "la semaine prochaine"):
# news, where a reflection ("acceptance is a long process") has no time.
_WHEN: Final[dict[str, str]] = {
    "en": (r"yesterday|today|tonight|tomorrow|recently|finally|ago|last\s+(?:night|week|weekend|month|year|monday"
           r"|tuesday|wednesday|thursday|friday|saturday|sunday|summer|winter|spring|fall)|this\s+(?:morning|week"
           r"|weekend|month)|next\s+(?:week|weekend|month|year)|on\s+(?:monday|tuesday|wednesday|thursday|friday"
           r"|saturday|sunday)"),
    "de": (r"gestern|heute|morgen|neulich|endlich|vorhin|letzte[nrs]?\s+(?:woche|monat|jahr|wochenende)"
           r"|nächste[nrs]?\s+(?:woche|monat|jahr)|am\s+wochenende|vor\s+\w+\s+(?:tagen|wochen|monaten)"),
    "es": (r"ayer|hoy|mañana|por\s+fin|la\s+semana\s+pasada|el\s+mes\s+pasado|el\s+año\s+pasado"
           r"|la\s+próxima\s+semana|el\s+fin\s+de\s+semana|hace\s+\w+\s+(?:días|semanas|meses)"),
    "fr": (r"hier|aujourd['’]hui|demain|enfin|la\s+semaine\s+dernière|le\s+mois\s+dernier|l['’]an\s+dernier"
           r"|la\s+semaine\s+prochaine|ce\s+week-end|il\s+y\s+a\s+\w+\s+(?:jours|semaines|mois)"),
    "it": (r"ieri|oggi|domani|finalmente|la\s+settimana\s+scorsa|il\s+mese\s+scorso|l['’]anno\s+scorso"
           r"|la\s+prossima\s+settimana|questo\s+weekend"),
    "pt": (r"ontem|hoje|amanhã|finalmente|semana\s+passada|mês\s+passado|ano\s+passado|próxima\s+semana"
           r"|fim\s+de\s+semana"),
    "ru": r"вчера|сегодня|завтра|наконец|на\s+прошлой\s+неделе|в\s+прошлом\s+месяце|на\s+следующей\s+неделе",
    "ja": r"昨日|今日|明日|先週|先月|去年|来週|来月|やっと|ついに",
    "ko": r"어제|오늘|내일|지난주|지난달|작년|다음\s*주|드디어",
    "zh": r"昨天|今天|明天|上周|上个月|去年|下周|下个月|终于",
}
# "I passed", "we went": the speaker did something (English; the other languages tell it by _WHEN)
_DID: Final = re.compile(r"(?<![\w'’])(?:i|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+|actually\s+)?"
                         r"(?:[a-z]+ed|went|got|took|made|had|saw|met|found|bought|began|ran|won|lost|gave|told"
                         r"|came|left|did|wrote|read|built|sold|drew|sang|flew|drove|swam|caught|threw|grew)\b"
                         # a state that changed: "I'm now part of the fire-fighting brigade"
                         r"|(?<![\w'’])(?:i['’]m|i\s+am|we['’]re|we\s+are)\s+(?:now|finally|officially)\b")
# Words that name nothing (English): "Something exciting happened recently for me", "we did stuff" tell no news;
# a speaker's fillers ("uh", "um") and words said twice mark a sentence said while thinking, not news worth quoting
_VAGUE: Final = re.compile(r"(?<![\w'’])(?:something|anything|stuff|things|whatever)(?![\w'’])")
_FILLER: Final = re.compile(r"(?<![\w'’])(?:uh|um|er|erm|hmm|mm)(?![\w'’])"
                           r"|(?<![\w'’])(\w+(?:\s+\w+)?)\s+\1(?![\w'’])")  # said again: "this is this is"
VAGUE_PENALTY: Final = 3
_CJK: Final = frozenset({"ja", "ko", "zh"})
_WORD: Final = re.compile(r"\w+")
_NAME_OR_NUMBER: Final = re.compile(r"(?<=\s)[A-ZÀ-ÖØ-ÞА-ЯЁ][\w'’-]+|\d+")


class _Words:
    """The first- and second-person words of some languages, as two regexes."""

    def __init__(self, languages: Sequence[str]) -> None:
        spaced = [c for c in languages if c in _FIRST and c not in _CJK]
        joined = [c for c in languages if c in _CJK]
        self.first = _alternation([_FIRST[c] for c in spaced], [_FIRST[c] for c in joined])
        self.second = _alternation([_SECOND[c] for c in spaced], [_SECOND[c] for c in joined])
        self.when = _alternation([_WHEN[c] for c in spaced], [_WHEN[c] for c in joined])
        self.did = _DID if "en" in languages else None


def _alternation(spaced: list[str], joined: list[str]) -> re.Pattern[str] | None:
    sources = [rf"(?<![\w'’])(?:{'|'.join(spaced)})(?![\w'’])"] if spaced else []
    sources += [f"(?:{'|'.join(joined)})"] if joined else []
    return re.compile("|".join(sources)) if sources else None


@lru_cache(maxsize=32)
def _words(languages: tuple[str, ...]) -> _Words:
    return _Words(languages)


def news_score(sentence: str, languages: tuple[str, ...]) -> int:
    """How much a sentence tells of something its speaker did or plans (``MIN_NEWS_SCORE``:
    news); 0 for a question or a sentence too short or too long to quote."""
    words = _WORD.findall(sentence)
    cjk = not any(ch == " " for ch in sentence)
    if sentence.rstrip().endswith(("?", "？")) or not (_MIN_WORDS <= len(words) <= _MAX_WORDS or cjk):
        return 0
    lowered = sentence.lower()
    found = _words(languages)
    content = sum(1 for w in words if len(w) >= (2 if w[0] >= "\u1100" else 4)) if not cjk else len(sentence) // 3
    score = min(content, 6)
    if found.first is not None and found.first.search(lowered):
        score += 3
    score += min(len(_NAME_OR_NUMBER.findall(sentence)), 2)
    score += sum(2 for happened in (found.when, found.did) if happened is not None and happened.search(lowered))
    if found.second is not None and found.second.search(lowered):
        score -= 4
    if "en" in languages:
        score -= VAGUE_PENALTY * min(len(_VAGUE.findall(lowered)) + len(_FILLER.findall(lowered)), 2)
    return max(score, 0)


def news_of(text: str, languages: tuple[str, ...]) -> list[tuple[str, int]]:
    """The sentences of a message that are news, with their scores, in order."""
    view = prepare_text(text).original
    out: list[tuple[str, int]] = []
    for start, end in sentence_spans(view):
        sentence = one_line(view[start:end])
        score = news_score(sentence, languages)
        if score >= MIN_NEWS_SCORE:
            out.append((sentence, score))
    return out


def speaker_of(event: MessageEvent) -> str:
    return one_line(event.sender or event.role)[:64] or event.role


def new_digest(session: str, started: datetime) -> SessionDigest:
    return SessionDigest(session=session, started=started, messages=0, speakers=[], news=[])


def digest_message(digest: SessionDigest, event: MessageEvent, languages: tuple[str, ...]) -> SessionDigest:
    """The digest after one more message of its session: counted, its speaker listed, its
    news kept when it is among the session's best (``MAX_NEWS``; ties: the earlier)."""
    speaker = speaker_of(event)
    speakers = digest.speakers if speaker in digest.speakers or len(digest.speakers) >= MAX_SPEAKERS \
        else [*digest.speakers, speaker]
    news = list(digest.news)
    if event.role != "assistant":  # what the agent tells is its work, in the other sections
        news += [NewsItem(speaker=speaker, text=text, ts=event.ts, score=score)
                 for text, score in news_of(event.content, languages)]
        news = sorted(news, key=lambda n: -n.score)[:MAX_NEWS]  # stable: the earlier wins a tie
    return msgspec.structs.replace(digest, messages=digest.messages + 1, speakers=speakers, news=news)


def shown_news(digest: SessionDigest) -> list[NewsItem]:
    """The session's best news (``SHOWN_NEWS``), in the order it was told."""
    best = sorted(digest.news, key=lambda n: -n.score)[:SHOWN_NEWS]
    return sorted(best, key=lambda n: n.ts)


def news_line(news: Iterable[NewsItem]) -> str:
    """``Caroline: “I passed the adoption agency interviews last Friday!”`` — each quoted whole
    or cut between words."""
    return " ".join(f"{one_line(n.speaker)}: “{clip_words(one_line(n.text), NEWS_CHARS)}”" for n in news)


def speakers_text(digest: SessionDigest) -> str:
    """"Caroline and Melanie, 24 messages" (names as first heard)."""
    names = digest.speakers
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}" if names else ""
    count = f"{digest.messages} message" + ("" if digest.messages == 1 else "s")
    return f"{who}, {count}" if who else count
