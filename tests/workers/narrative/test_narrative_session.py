"""What happened in a session (issue 37): the narrative said "Session: session_19" and nothing of it.

The English turns are of the kind LoCoMo's development conversations (0-4) have; a
session summary of theirs says what a reader expects ("Caroline tells Melanie that she passed
the adoption agency interviews last Friday").
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from schemas.docs import Commitment, CommitmentsDoc, Integrity, SessionDigest, Thread, ThreadsDoc
from schemas.events import MessageEvent
from shared.config import ALL_LANGUAGES
from workers.narrative.core import build_structured_narrative, for_briefing
from workers.narrative.session import MIN_NEWS_SCORE, digest_message, new_digest, news_score, shown_news
from workers.narrative.timeline import TimelineEntry

TZ = ZoneInfo("UTC")
START = datetime(2023, 10, 22, 9, 55, tzinfo=UTC)
EN = ("en", "de")

SESSION = [
    ("Caroline", "Woohoo Melanie! I passed the adoption agency interviews last Friday! I'm so excited and thankful."),
    ("Melanie", "Congrats, Caroline! Adoption sounds awesome. I'm so happy for you."),
    ("Melanie", "These figurines I bought yesterday remind me of family love. Tell me, what's your vision?"),
    ("Caroline", "Thanks so much, Melanie! It's beautiful!"),
    ("Melanie", "You're so strong and inspiring."),
    ("Caroline", "Thanks, Melanie. Your support really means a lot."),
]


def digest_of(turns: list[tuple[str, str]], languages: tuple[str, ...] = EN) -> SessionDigest:
    digest = new_digest("session_19", START)
    for i, (sender, text) in enumerate(turns):
        event = MessageEvent(id=f"e{i}", agent="a", session="session_19", ts=START + timedelta(seconds=30 * i),
                             role="user", sender=sender, content=text, channel="webchat")
        digest = digest_message(digest, event, languages)
    return digest


def test_a_session_digest_keeps_who_spoke_and_the_news_they_told() -> None:
    digest = digest_of(SESSION)
    assert digest.messages == 6
    assert digest.speakers == ["Caroline", "Melanie"]
    assert [(n.speaker, n.text) for n in shown_news(digest)] == [
        ("Caroline", "I passed the adoption agency interviews last Friday!"),
        ("Melanie", "These figurines I bought yesterday remind me of family love."),
    ]


@pytest.mark.parametrize("sentence", [
    "Congrats, Caroline!", "I'm so happy for you.", "You're so strong and inspiring.",
    "Tell me, what's your vision for the future?", "Did you go to the museum last week with the kids?",
    "Your support really means a lot.",
    "Something exciting happened recently for me.",  # names nothing
])
def test_reactions_questions_and_compliments_are_no_news(sentence: str) -> None:
    assert news_score(sentence, EN) < MIN_NEWS_SCORE


@pytest.mark.parametrize("sentence", [
    "Gestern habe ich endlich die Prüfung für den Bootsführerschein bestanden.",
    "La semana pasada mi hermana y yo corrimos el maratón de Valencia.",
    "Hier, j'ai enfin terminé la rénovation de notre cuisine à Lyon.",
    "Ieri ho finalmente finito di ristrutturare la cucina di casa mia.",
    "Ontem eu finalmente terminei a reforma da cozinha em Lisboa.",
    "Вчера я наконец закончил ремонт кухни в нашей квартире.",
    "昨日、私はやっと新しい仕事の面接に合格しました。",
    "어제 저는 드디어 새 회사 면접에 합격했어요.",
    "昨天我终于通过了新公司的面试。",
])
def test_news_is_told_in_every_language(sentence: str) -> None:
    assert news_score(sentence, ALL_LANGUAGES) >= MIN_NEWS_SCORE


def test_the_agents_own_sentences_are_no_news() -> None:
    digest = new_digest("s", START)
    event = MessageEvent(id="e1", agent="a", session="s", ts=START, role="assistant", sender="claudia",
                         content="I deployed the payment service to production last Friday at 14:00.")
    digest = digest_message(digest, event, EN)
    assert digest.messages == 1 and digest.news == []


def _threads(*threads: Thread) -> ThreadsDoc:
    return ThreadsDoc(updated=START, threads=list(threads), integrity=Integrity(), session_mood="neutral")


def test_the_narrative_says_what_happened_in_the_session_not_only_when() -> None:
    ended = START + timedelta(minutes=8)
    digest = digest_of(SESSION)
    digest = SessionDigest(session=digest.session, started=digest.started, ended=ended, messages=digest.messages,
                           speakers=digest.speakers, news=digest.news)
    thread = Thread(id="t1", title="adoption agencies", status="open", priority="medium", summary="",
                    decisions=[], waiting_for=None, mood="neutral", last_activity=START + timedelta(minutes=1),
                    created=START + timedelta(minutes=1))
    promise = Commitment(id="c1", who="Melanie", what="send the photos", status="open",
                         created=START + timedelta(minutes=2), source_event="e2")
    timeline = [TimelineEntry(ts=START, kind="session_start", text="session_19"),
                TimelineEntry(ts=ended, kind="session_end", text="session_19")]
    markdown = build_structured_narrative(ended, TZ, _threads(thread), None, timeline, [digest],
                                          CommitmentsDoc(updated=ended, commitments=[promise], integrity=Integrity()))
    assert "**Sessions:**" in markdown
    assert "- 09:55–10:03 session_19: Caroline and Melanie, 6 messages" in markdown
    assert "  Topics: adoption agencies · 1 promise" in markdown
    assert "Caroline: “I passed the adoption agency interviews last Friday!”" in markdown
    assert "Session: session_19" not in markdown  # told above, not again as a bare timeline line
    briefed = for_briefing(markdown, ["adoption agencies"], [])
    assert "I passed the adoption agency interviews last Friday!" in briefed


def test_a_state_that_changed_is_news() -> None:
    assert news_score("I'm now part of the fire-fighting brigade.", EN) >= MIN_NEWS_SCORE


def test_words_said_again_and_fillers_lower_a_sentences_score() -> None:
    plain = news_score("We had a long talk about the casing and the buttons last week.", EN)
    assert news_score("We had a long talk about the the casing and the buttons last week.", EN) == plain - 3
    assert news_score("We had uh a long talk about um the casing and the buttons last week.", EN) == plain - 6
