"""Topics nobody announced with a cue phrase, and what a thread's summary says."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.docs import Thread, ThreadsDoc
from schemas.events import MessageEvent
from shared.config import ThreadsSettings, parse_languages
from workers.compiled import is_compiled
from workers.conversation.patterns import get_patterns
from workers.summaries import compose_summary
from workers.threads import topics
from workers.threads.core import apply_message
from workers.threads.topics import HEAD_CHARS, WINDOW, phrases_of

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
BOTH = get_patterns(parse_languages("both"))
ALL = get_patterns(parse_languages("all"))
SETTINGS = ThreadsSettings()
_ids = itertools.count()


def run(*contents: str, patterns: Any = BOTH) -> ThreadsDoc:
    doc: ThreadsDoc | None = None
    for minute, content in enumerate(contents):
        event = MessageEvent(id=f"t{next(_ids)}", agent="a", session="s", ts=T0 + timedelta(minutes=minute),
                             role="user", content=content)
        doc = apply_message(doc, event, SETTINGS, patterns)
    assert doc is not None
    return doc


def titles(doc: ThreadsDoc) -> list[str]:
    return [t.title for t in doc.threads]


BILLING_AND_SEARCH = (
    "Morning! The billing rewrite is behind schedule, the invoice generator still uses the old tax tables.",
    "I looked at the billing rewrite yesterday. The tax tables are loaded from a CSV on every request.",
    "We decided to load the tax tables once at startup because they change only twice a year.",
    "Separate issue: the search latency regression is getting worse after Tuesday's deploy.",
    "The search latency regression started with the new ranking model.",
    "For the billing rewrite I'm waiting for the finance team to confirm the new invoice format.",
)


def test_a_working_conversation_finds_topics_nobody_announced() -> None:
    """Issue 18: a billing rewrite and a search latency regression, no "back to X" anywhere."""
    doc = run(*BILLING_AND_SEARCH)
    assert titles(doc) == ["billing rewrite", "search latency regression"]
    billing = next(t for t in doc.threads if t.title == "billing rewrite")
    assert billing.summary == ("The billing rewrite is behind schedule, the invoice generator still uses the "
                               "old tax tables. Waiting for: the finance team to confirm the new invoice format.")


def test_a_detail_of_a_broader_topic_is_no_thread_of_its_own() -> None:
    """"tax tables" came with "billing rewrite" (introduced first) in most of its mentions."""
    doc = run(*BILLING_AND_SEARCH)
    assert "tax tables" not in titles(doc)
    assert "tax tables" in doc.settled  # weighed once, settled as a detail


def test_chit_chat_that_repeats_itself_opens_no_thread() -> None:
    doc = run(
        "We finally met the foster care agency today. The kids are five and seven.",
        "Pancakes, lots of pancakes. The kids want pancakes every morning now.",
        "Pancakes every morning sounds like a lovely routine for the kids.",
        "Pancakes every morning it is, the kids keep asking for them.",
    )
    assert doc.threads == []
    assert doc.settled == []


def test_a_phrase_said_once_with_work_is_no_thread() -> None:
    assert run("We decided to move the staging cluster to bigger nodes.").threads == []


def test_phrases_are_content_words_with_one_linking_word_at_most() -> None:
    assert set(phrases_of("el informe de ventas del trimestre", ALL.stopwords)) >= {"informe de ventas"}
    assert "datenbank-upgrade" in phrases_of("beim datenbank-upgrade machen wir", ALL.stopwords)
    assert phrases_of("we are going to do it again", ALL.stopwords) == {}
    assert phrases_of("数据库迁移的问题", ALL.stopwords) == {}  # no spaces: cue phrases only
    # a clause ends at its punctuation: no phrase across "schedule, the"
    found = phrases_of("the billing rewrite is behind schedule, invoice generator", ALL.stopwords)
    assert "schedule invoice" not in found and "invoice generator" in found


def test_a_topic_nobody_announced_is_a_noun_phrase() -> None:
    """Issue 37: a chat's thanks and goodbyes opened threads ("Keep pushing", "Take care", "kind
    words", "feels like", "sign reminds", "gonna make", "Hey Joanna", "Uh-huh"), and a photo
    caption gave topics ("[shares a photo of a board game …]")."""
    breaks = ALL.phrase_breaks
    for said in ("I'll keep going and keep pushing!", "Take care, buddy!", "Your kind words mean a lot",
                 "it feels like all my hard work is paying off", "That sign reminds me", "I'm gonna make it",
                 "Hey Joanna! Uh-huh.", "Let's have a safe trip, even though I'm tired"):
        assert phrases_of(said.lower(), breaks) == {}, said
    assert list(phrases_of("the new dance studio is amazing", breaks)) == ["dance studio"]
    assert phrases_of("we love it! [shares a photo of a board game with a blue board]", breaks) == {}
    chat = ("Thanks! Your kind words mean a lot. I'll keep going with the studio.",
            "Your kind words really help. I'll keep going, promise!",
            "Take care! I'll keep going.")
    assert run(*chat, patterns=ALL).threads == []


def test_a_hedged_or_idle_promise_carries_no_work_for_a_topic() -> None:
    """The window's work is a promise as the commitments worker reads one: "I'll keep you posted"
    and "maybe I'll …" made two mentions of "pottery class" a thread."""
    assert run("The pottery class was fun, I'll keep you posted.",
               "Maybe I'll try the pottery class again someday.").threads == []
    assert titles(run("The pottery class starts Monday.", "I'll book the pottery class tomorrow.")) == [
        "pottery class"]


def test_a_topic_the_conversation_comes_back_to_is_a_thread_without_work() -> None:
    """Issue 37: a meeting said "speech recognition" in episodes all afternoon, with no decision,
    wait or promise in any window: no thread. Said twice in one window and again in a later one,
    it is one; said three times in one go (the garden chat's "back garden") it is not."""
    filler = ["Mm-hmm.", "Okay.", "Right, next slide please."] * 4
    first = ["Speech recognition could be a selling point.", "Is speech recognition expensive?"]
    later = ["The speech recognition chip costs more than we thought.", "We're still weighing speech recognition."]
    assert run(*first, *filler).threads == []
    doc = run(*first, *filler, *later)
    assert titles(doc) == ["speech recognition"]
    assert "speech recognition" not in doc.heard  # settled as a thread now
    once = run("The back garden looks healthy.", "Did the soil help the back garden?",
               "Basil grows well in a back garden.")
    assert once.threads == [] and once.heard == {"back garden": 3}


def test_the_phrases_heard_are_bounded() -> None:
    doc = None
    for n in range(topics.MAX_HEARD + 20):
        for said in (f"the {_word(n)} widget is here", f"is the {_word(n)} widget there"):
            event = MessageEvent(id=f"h{next(_ids)}", agent="a", session="s", ts=T0, role="user", content=said)
            doc = apply_message(doc, event, SETTINGS, BOTH)
    assert doc is not None and len(doc.heard) == topics.MAX_HEARD
    assert f"{_word(topics.MAX_HEARD + 19)} widget" in doc.heard and f"{_word(0)} widget" not in doc.heard


def _word(n: int) -> str:
    return "".join("abcdefghij"[int(d)] for d in f"{n:03d}") + "x"


def test_topics_a_thread_already_names_open_nothing_new() -> None:
    doc = run("Let's get back to the auth migration.", "The auth migration tokens are next; we decided on JWT.",
              "The auth migration tokens need a decision: we decided to rotate weekly.")
    assert titles(doc) == ["auth migration"]


def test_the_window_is_bounded_and_a_phrase_said_long_ago_counts_no_more() -> None:
    doc = run(*[f"chatter number {'x' * i} " + "y" * 1000 for i in range(3 * WINDOW)])
    assert len(doc.recent) == WINDOW and all(len(m.text) <= HEAD_CHARS for m in doc.recent)
    assert [m.n for m in doc.recent] == list(range(2 * WINDOW + 1, 3 * WINDOW + 1))
    far = run("we decided the billing rewrite waits", *(["nothing here at all"] * WINDOW),
              "we decided the billing rewrite goes")
    assert far.threads == []


def test_korean_and_japanese_topics_come_before_their_cue() -> None:
    """The reference captured the words after 에 대해 / について (the topic comes before)."""
    assert titles(run("결제 모듈에 대해 이야기해요. 환불 처리가 자주 실패합니다.", patterns=ALL)) == ["결제 모듈"]
    assert titles(run("ログイン画面について、エラー表示がわかりにくいです。", patterns=ALL)) == ["ログイン画面"]


def test_a_cue_sentence_that_only_names_the_topic_is_about_the_sentence_after_it() -> None:
    """The briefing showed "결제 모듈: 에 대해 이야기해요。" — the cue's tail for a summary."""
    (ko,) = run("결제 모듈에 대해 이야기해요. 환불 처리가 자주 실패합니다.", patterns=ALL).threads
    assert ko.about == "환불 처리가 자주 실패합니다"
    (en,) = run("Let's get back to the auth migration. The JWT rotation is still open.").threads
    assert en.about == "The JWT rotation is still open"
    (alone,) = run("Let's get back to the auth migration.").threads
    assert alone.about == "Let's get back to the auth migration"  # nothing follows: the cue sentence


def test_heartbeat_ok_and_negated_closures_close_no_thread() -> None:
    """Issue 15, item 20: Korean bare OK closed threads on "HEARTBEAT_OK" with CORTEX_LANGUAGE=all."""
    doc = run("결제 모듈에 대해 이야기해요.", "HEARTBEAT_OK 결제 모듈", patterns=ALL)
    assert [t.status for t in doc.threads] == ["open"]
    doc = run("Let's look at the release checklist.", "The release checklist is not done yet.",
              "The release checklist is in review, not closed.")
    assert [t.status for t in doc.threads] == ["open"]


def test_the_summary_says_what_it_is_about_and_where_it_stands() -> None:
    doc = run("Regarding the kubernetes cluster upgrade: we need the new node pool first, the old nodes run out.",
              "For the kubernetes cluster upgrade the plan is to drain the old nodes one by one.")
    (thread,) = doc.threads
    assert thread.about == "We need the new node pool first, the old nodes run out"
    assert thread.waiting_for == "need the new node pool first"  # already in what it is about: said once
    assert thread.summary == ("We need the new node pool first, the old nodes run out. Decided: For the kubernetes "
                              "cluster upgrade the plan is to drain the old nodes one by one.")
    waiting = run("back to the billing export", "The billing export is waiting for the finance sign-off.").threads[0]
    assert waiting.summary == "Back to the billing export. Waiting for: the finance sign-off."
    closed = run("back to the login bug", "The login bug is fixed ✅").threads[0]
    assert closed.summary == "The login bug is fixed ✅."  # the sentence that closed it


def test_a_summary_never_repeats_what_it_waits_for() -> None:
    thread = Thread(id="1", title="t", status="open", priority="medium", summary="", decisions=[],
                    waiting_for="valider le prix", mood="neutral", last_activity=T0, created=T0,
                    about="Il faut d'abord valider le prix avec la direction")
    assert compose_summary(thread) == "Il faut d'abord valider le prix avec la direction."
    cjk = msgspec.structs.replace(thread, about="关于数据库迁移，我们还没有确定时间", waiting_for=None)
    assert compose_summary(cjk) == "关于数据库迁移，我们还没有确定时间。"


def test_summaries_and_candidates_replay_byte_for_byte() -> None:
    first = msgspec.json.encode(run(*BILLING_AND_SEARCH))
    again = msgspec.json.encode(run(*BILLING_AND_SEARCH))
    # ids derive from event ids, which differ between the two runs: compare without them
    strip = msgspec.json.decode(first)
    other = msgspec.json.decode(again)
    for doc in (strip, other):
        for t in doc["threads"]:
            t.pop("id")
    assert strip == other


@given(st.lists(st.sampled_from(["billing", "rewrite", "the", "de", "\x00", "invoice-generator", " ", ",", "\n",
                                 "daten\x00bank", "x"]), max_size=40).map("".join))
@settings(max_examples=300, deadline=None)
def test_no_phrase_holds_a_nul_so_the_joined_window_matches_within_one_message(text: str) -> None:
    """``track`` looks for each phrase in the earlier messages joined by NUL: a phrase with a
    NUL could match across two of them."""
    assert not any("\x00" in phrase for phrase in phrases_of(text, ALL.stopwords))


def test_the_word_table_never_changes_the_phrases(monkeypatch: Any) -> None:
    """Each token's class is kept in a bounded table: full, emptied or too small to hold a
    message's words, the phrases are the same."""

    texts = ["the billing rewrite is behind schedule, the invoice generator still uses the old tax tables",
             "el informe de ventas del trimestre", "beim datenbank-upgrade machen wir **billing rewrite** weiter",
             "x" * 40 + " billing rewrite " + "y" * 40]
    first = [phrases_of(t, ALL.stopwords) for t in texts]
    assert [phrases_of(t, ALL.stopwords) for t in texts] == first  # from the table
    monkeypatch.setattr(topics, "_KINDS_MAX", 2)
    monkeypatch.setattr(topics, "_KINDS", topics._KindTables())
    assert [phrases_of(t, ALL.stopwords) for t in texts] == first  # emptied again and again
    assert first[0] == {"billing rewrite": 2, "behind schedule": 2, "invoice generator": 2, "tax tables": 2}


def test_the_word_table_is_no_part_of_the_pattern_fingerprint() -> None:
    """What a process has seen must not change its producer id: the table held as a module-level
    dict made the threads fingerprint differ between processes (caught by
    test_the_same_patterns_give_the_same_ids_in_every_process in a whole-suite run)."""
    from shared.fingerprint import tables

    before = tables(topics)
    phrases_of("a brand new phrase nobody said before in this process", ALL.stopwords)
    assert topics._KINDS.by_stopwords  # the table holds words now
    assert tables(topics) == before


def test_a_topic_only_talked_about_is_no_thread() -> None:
    """Issue 37 (LoCoMo, AMI): a chat repeats what it only talks about ("ice cream", "Harry
    Potter", "that stuffed animal"), a meeting what is on a slide ("project documents"): said in
    two windows, each opened a thread. A topic is one when someone has a stake in it."""
    filler = ["Haha true.", "Totally!", "Right?"] * 4
    talked = ["The lemon sorbet at the pier was unreal.", "Oh, the lemon sorbet there is the best!"]
    again = ["I still think about that lemon sorbet.", "The lemon sorbet was amazing, honestly."]
    doc = run(*talked, *filler, *again)
    assert doc.threads == [] and "lemon sorbet" in doc.heard  # heard, kept waiting for a stake


def test_a_stake_in_a_topic_opens_its_thread() -> None:
    """A first-person subject doing, planning or choosing something, a possessive before the
    phrase, or a state still going on, in the sentence of one of its mentions."""
    filler = ["Haha true.", "Totally!", "Right?"] * 4
    talked = ["The pottery studio downtown looks lovely.", "Oh, that pottery studio is lovely."]
    for stake in ("I've been looking into the pottery studio as a side business.",
                  "I'm going to rent space in the pottery studio.",
                  "Let's visit the pottery studio on Saturday.",
                  "My pottery studio needs a new kiln.",
                  "How's the pottery studio going?",
                  "Ich werde mich um das pottery studio kümmern."):
        doc = run(*talked, *filler, stake, "So the pottery studio, yes.")
        assert titles(doc) == ["pottery studio"], stake


def test_the_agent_working_on_a_topic_is_a_stake() -> None:
    """In a work conversation problems are said impersonally; the agent talking about one is
    working on it."""
    def said(role: str) -> ThreadsDoc:
        turns = [("user", "The payment webhook failures look odd."), ("user", "Hm, payment webhook failures again.")]
        turns += [("user", x) for x in ["Haha true.", "Totally!", "Right?"] * 4]
        turns += [(role, "The payment webhook failures come from a cold secrets cache."),
                  ("user", "Odd, the payment webhook failures.")]
        doc: ThreadsDoc | None = None
        for minute, (who, content) in enumerate(turns):
            event = MessageEvent(id=f"w{next(_ids)}", agent="a", session="s", ts=T0 + timedelta(minutes=minute),
                                 role=who, content=content)
            doc = apply_message(doc, event, SETTINGS, BOTH)
        assert doc is not None
        return doc

    assert titles(said("assistant")) == ["payment webhook failures"]
    assert titles(said("user")) == []


def _apart(*said: str, between: int = topics.RETURN_GAP) -> list[str]:
    """Each message followed by ``between`` messages that say no phrase at all."""
    return [line for one in said for line in (one, *(["Okay.", "Sure!", "Right."] * between)[:between])]


def test_a_subject_the_conversation_keeps_returning_to_is_a_thread() -> None:
    """Issue 37: a chat returns to someone's project once per session, months apart — never twice
    in one window, so the window saw nothing. Said in ``MIN_RETURNS`` separate episodes, with a
    stake in it, it is a thread; said as often in one go, it is one episode."""
    returns = ("I sent the first draft of my grant proposal to the foundation.",
               "No news on the grant proposal yet, they said April.",
               "My grant proposal made the shortlist!")
    assert titles(run(*_apart(*returns[: topics.MIN_RETURNS - 1]))) == []
    doc = run(*_apart(*returns))
    assert titles(doc) == ["grant proposal"]
    assert doc.returns["grant proposal"][0] == topics.MIN_RETURNS
    assert run(*returns).returns["grant proposal"] == (1, 3)  # said in one go: one episode
    assert run(*_apart(*returns, between=topics.RETURN_GAP - 2)).returns["grant proposal"][0] == 1  # too near


def test_a_returning_subject_needs_a_stake_of_its_own() -> None:
    """Talked about again and again, nobody's plan or project: no thread (a chat's "rainy weather").
    Nor when someone is busy elsewhere in its sentence ("I'm trying to make a real difference"): a
    return said once needs its own possessive or a state going on after it."""
    weather = ("The rainy weather here is gloomy.", "More rainy weather today.", "Rainy weather again, ugh.")
    doc = run(*_apart(*weather))
    assert titles(doc) == [] and doc.returns["rainy weather"][0] == 3
    busy = ("I'm trying to make a real difference here.", "We want a real difference for the kids.",
            "I'm hoping for a real difference, honestly.")
    assert titles(run(*_apart(*busy))) == []
    owned = (*busy[:2], "Our real difference is the price.")
    assert titles(run(*_apart(*owned))) == ["real difference"]


def test_the_returns_table_is_bounded_and_keeps_the_phrases_said_again() -> None:
    table: dict[str, tuple[int, int]] = {"grant proposal": (2, 1)}
    ordinal = 2
    for n in range(topics.MAX_RETURNS + 50):
        table, _ = topics.returned(table, [f"{_word(n)} widget"], ordinal)
        ordinal += 1
    assert len(table) <= topics.MAX_RETURNS and table["grant proposal"] == (2, 1)
    assert f"{_word(topics.MAX_RETURNS + 49)} widget" in table and f"{_word(0)} widget" not in table
    table, back = topics.returned(table, ["grant proposal"], ordinal)
    assert back == ["grant proposal"] and table["grant proposal"] == (3, ordinal)


def test_closed_word_classes_make_no_topic() -> None:
    """Issue 37: "express myself", "work together", "twenty five", "long time" and a speaker's
    restart ("different different") were phrases a conversation came back to."""
    breaks = ALL.phrase_breaks
    for said in ("I love to express myself", "we can work together on it", "it costs twenty five euros",
                 "long time no see"):
        assert phrases_of(said.lower(), breaks) == {}, said
    # ("different different colours" was the restart here: "different" is a break since the
    # twenty-fourth round)
    assert list(phrases_of("bright bright colours", breaks)) == ["bright colours"]
    assert list(phrases_of("the grant proposal budget", breaks)) == ["grant proposal", "grant proposal budget",
                                                                      "proposal budget"]


def test_the_settled_sets_are_each_documents_own_list_and_stay_bounded() -> None:
    """``_settled_set`` keeps each document list's set by the list's identity (the worker interleaves
    its agents): a settled phrase makes a new list, which gets its own set; an earlier list keeps its
    own; past the bound every answer is still its list's."""
    from workers.threads import topics

    first = ["billing rewrite", "tax tables"]
    second = [*first, "invoice generator"]  # a phrase settled: a new list
    other = ["dance studio"]  # another agent's document
    assert topics._settled_set(first) == frozenset(first)
    assert topics._settled_set(second) == frozenset(second)
    assert topics._settled_set(other) == frozenset(other)
    assert topics._settled_set(first) is topics._settled_set(first)  # kept, not built again
    assert "invoice generator" not in topics._settled_set(first)
    lists = [[f"phrase {i}"] for i in range(topics._SettledSets.LIMIT + 10)]
    assert all(topics._settled_set(s) == frozenset(s) for s in lists)
    assert all(topics._settled_set(s) == frozenset(s) for s in (first, second, other, *lists[:20]))


_TOKEN_CHARS = ".,;:!?()[]{}\"“”«»„…—–/|'’-_#*\\ \t\n\r\x0b\x0c\x1c\x1f\x85\u00a0\u2028\u3000abcXYZéß中文1"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_TOKEN_CHARS), max_size=60) | st.text(max_size=40))
def test_a_message_is_cut_into_the_tokens_the_token_regex_finds(text: str) -> None:
    """``phrases_of``'s tokens (marks spaced out and one ``split``) are ``_TOKENS.findall``'s, for
    every text: every mark, ASCII and not, and every kind of whitespace the regex's ``\\s`` knows."""
    assert topics._tokens_of(text) == topics._TOKENS.findall(text)
    assert topics._tokens_of(text.lower()) == topics._TOKENS.findall(text.lower())


def test_the_bench_messages_are_cut_as_the_token_regex_cuts_them() -> None:
    from workers.bench.events import backlog

    texts = [msgspec.json.decode(e.data, type=MessageEvent).content.lower() for e in backlog(600, 10, 7)
             if e.kind == "msg"]
    assert texts
    for text in texts:
        assert topics._tokens_of(text) == topics._TOKENS.findall(text)


def _staked(phrase: str, stake: str = "I'm going to call the {} on Saturday.", last: str = "So the {}, yes.",
            patterns: Any = BOTH) -> ThreadsDoc:
    """``phrase`` talked about twice, then said with a stake and once more (it opens a thread when
    written as a topic: ``test_a_stake_in_a_topic_opens_its_thread``)."""
    filler = ["Haha true.", "Totally!", "Right?"] * 4
    return run(f"The {phrase} downtown looks lovely.", f"Oh, that {phrase} is lovely.", *filler,
               stake.format(phrase), last.format(phrase), patterns=patterns)


def test_a_phrase_written_as_a_name_opens_no_thread() -> None:
    """Issue 37, twentieth round: AMI's meetings say their speakers' roles as names ("I heard our
    Industrial Designer talk about …", "the Project Manager"), and each opened a thread with a
    name for a title. A phrase every mention of the window writes with capitals, inside a
    sentence once at least, is a name, not a topic: weighed once and settled."""
    assert titles(_staked("pottery studio")) == ["pottery studio"]
    named = _staked("Pottery Studio")
    assert named.threads == [] and "pottery studio" in named.settled
    assert _staked("Release Manager").threads == []
    # German writes its nouns with a capital, its adjectives small inside a sentence: a name too
    assert _staked("Deutsche Bahn").threads == []
    # structural: every pack written with capitals has it (all ten enabled)
    assert titles(_staked("pottery studio", patterns=ALL)) == ["pottery studio"]
    assert _staked("Release Manager", patterns=ALL).threads == []


def test_capitals_only_where_a_sentence_starts_or_in_one_mention_are_no_name() -> None:
    """A phrase the window writes small once is a topic written as people write one; capitals
    where a sentence starts are the sentence's ("Pottery Studio: …" as a heading); an acronym is
    no name's word ("LCD display"); German writes every noun with a capital, so neither one word
    ("Rollback-Plan") nor a phrase with a linking word ("Ausfall des Servers") is a name."""
    assert titles(_staked("Pottery Studio", last="So the pottery studio, yes.")) == ["Pottery Studio"]
    assert titles(_staked("Pottery Studio", stake="{}: I'm going to call them on Saturday.",
                          last="{}, yes.")) == ["Pottery Studio"]
    assert titles(_staked("LCD display")) == ["LCD display"]
    assert titles(_staked("Ausfall des Servers")) == ["Ausfall des Servers"]
    german = run("Außerdem ist der Rollback-Plan für das Datenbank-Upgrade noch offen.",
                 "Beim Datenbank-Upgrade machen wir den Rollback über Snapshots. Der Rollback-Plan liegt im Wiki.",
                 "Gut. Ich werde den Rollback-Plan bis Freitag prüfen.")
    assert "Rollback-Plan" in titles(german)


def test_a_name_is_looked_for_only_in_a_phrase_about_to_open_a_thread(monkeypatch: Any) -> None:
    """The check costs nothing per message: asked of a promoted phrase only."""
    asked: list[str] = []
    real = topics._written_as_name

    def spy(key: str, mentions: list[topics.Mention]) -> bool:
        asked.append(key)
        return real(key, mentions)

    monkeypatch.setattr(topics, "_written_as_name", spy)
    run(*BILLING_AND_SEARCH)
    assert asked == ["billing rewrite", "search latency regression"]


def test_a_cue_topic_of_one_word_after_a_noun_phrase_is_titled_with_it() -> None:
    """Issue 37, twentieth round (LoCoMo): "I'm thinking about starting a community project
    regarding infrastructure" opened the thread "infrastructure"; a person writes down the noun
    phrase the word belongs to."""
    said = "I'm thinking about starting a community project regarding infrastructure, so maybe we can work together."
    assert titles(run(said)) == ["community project regarding infrastructure"]
    assert titles(run("Wir starten ein internes Projekt bzgl. Abrechnung.")) == ["internes Projekt bzgl. Abrechnung"]
    for plain, title in (("I have a question regarding pricing.", "pricing"),  # a function word before the cue
                         ("A community project regarding the infrastructure.", "infrastructure"),  # an article
                         ("OK, back to pricing.", "pricing"),  # a clause mark
                         ("Jetzt zu Abrechnung: wir brauchen die Zahlen.", "Abrechnung"),
                         ("Regarding pricing: we keep the old plans.", "pricing"),
                         ("A community project regarding payment gateway outages.", "payment gateway outages")):
        assert titles(run(plain)) == [title], plain


# Issue 37, twenty-third round: a phrase its speakers come back to after the talk moved on.
TIMETABLE = (
    "I'm trying to sort out the ferry timetable for our island trip next month.",
    "Oh nice, which island?",
    "The small one up north, with the lighthouse and the seals.",
    "Sounds lovely. Send me a picture when you get there.",
    "I've been comparing ferry timetable options all evening, the early boat is cheaper.",
)


def test_a_phrase_come_back_to_with_a_stake_opens_a_thread() -> None:
    """Said by someone planning it, the talk moves on for three messages, and it is said again by
    someone planning it: a subject they come back to, with no work word (``_came_back_to``). Its
    earlier mention ("the ferry timetable") is counted with the opening one, so it is no subject only
    talked of in general."""
    from workers.threads.briefing import talked_of_in_general

    doc = run(*TIMETABLE)
    assert titles(doc) == ["ferry timetable"]
    timetable = doc.threads[0]
    assert (timetable.mentions, timetable.definite) == (2, 1)
    assert not talked_of_in_general(timetable)


def test_a_phrase_said_in_one_stretch_or_without_a_stake_opens_none() -> None:
    """Said again in the next messages (one stretch of talk, an echo), or once without anyone's
    stake in it: nothing comes back, and the window's rule for a phrase said twice without work
    stands (no thread)."""
    stretch = ("I'm trying to sort out the ferry timetable for our island trip next month.",
               "I'm looking at the ferry timetable too, the early boat is cheaper.",
               "Oh nice, which island?", "The small one up north, with the lighthouse and the seals.",
               "Sounds lovely. Send me a picture when you get there.")
    assert titles(run(*stretch)) == []
    no_stake = ("There was a ferry timetable on the wall of the cafe.", *TIMETABLE[1:])
    assert titles(run(*no_stake)) == []
    # two messages apart is one stretch too
    close = (TIMETABLE[0], TIMETABLE[1], TIMETABLE[4], TIMETABLE[2], TIMETABLE[3])
    assert titles(run(*close)) == []


def test_the_earlier_mentions_are_counted_only_when_a_phrase_opens_a_thread(monkeypatch: Any) -> None:
    """The window's earlier mentions are read for the phrase that opens a thread, once, not for every
    message (``core._said_before``)."""
    from workers.threads import core

    if is_compiled("workers.threads.core"):  # a mypyc module calls its own functions natively
        pytest.skip("workers.threads.core is compiled: a replaced function is not seen by its callers "
                    "(the pure run checks the count; tests/workers/test_compiled.py, the outputs)")
    asked: list[str] = []
    original = core._said_before

    def counted(title: str, earlier: Any, definite: frozenset[str]) -> tuple[int, int]:
        asked.append(title)
        return original(title, earlier, definite)

    monkeypatch.setattr(core, "_said_before", counted)
    run(*TIMETABLE)
    assert asked == ["ferry timetable"]


# A made-up remark said, three messages of other talk, and said again by someone with a stake in it:
# the shape ``_came_back_to`` opens a thread on (twenty-third round). Its phrase is made of a modal or
# an adverb, a quantifier, a common verb — no title (twenty-fourth round).
_JUNK_RETURNS = {
    "de-quantifier": ("Ich habe den PR gelesen, ein paar Kleinigkeiten sind mir aufgefallen.", "Okay.", "Danke.",
                      "Gut so.", "Ich habe noch ein paar Kleinigkeiten notiert."),
    "de-modal": ("Ich habe überlegt, vielleicht könnte man das anders bauen.", "Okay.", "Danke.", "Gut so.",
                 "Wir haben gedacht, vielleicht könnte man das ganz weglassen."),
    "de-verb": ("Ich habe gesehen, die Zahlen sehen besser aus.", "Okay.", "Danke.", "Gut so.",
                "Ich habe nachgeschaut: die Zahlen sehen besser aus als gestern."),
    "fr-modal": ("Je vais voir, peut-être qu'on pourrait simplifier ça.", "D'accord.", "Merci.", "Bon.",
                 "Je vais essayer, peut-être qu'on pourrait tout refaire."),
    "fr-quantifier": ("Je vais relire, quelques petites choses à revoir.", "D'accord.", "Merci.", "Bon.",
                      "Je vais corriger quelques petites choses demain."),
    "es-quantifier": ("Estoy revisando, algunas cosas pendientes todavía.", "Vale.", "Gracias.", "Bueno.",
                      "Estoy mirando algunas cosas pendientes otra vez."),
    "es-modal": ("Estoy pensando, tal vez podríamos cambiarlo.", "Vale.", "Gracias.", "Bueno.",
                 "Estoy seguro, tal vez podríamos hacerlo mañana."),
    "it-quantifier": ("Sto leggendo, un paio di cose da sistemare.", "Va bene.", "Grazie.", "Bene.",
                      "Sto correggendo un paio di cose ancora."),
    "pt-modal": ("Estou pensando, talvez a gente pudesse mudar isso.", "Certo.", "Obrigado.", "Bom.",
                 "Estou achando que talvez a gente pudesse esperar."),
    "ru-quantifier": ("Я буду смотреть, пара мелочей осталась.", "Ладно.", "Спасибо.", "Хорошо.",
                      "Я буду исправлять пара мелочей завтра."),
    "en-verb": ("I'm writing back, the customer asked about the export again.", "Okay.", "Thanks.", "Good.",
                "I'm calling them, the customer asked twice now."),
    "en-adjective": ("We're trying a different approach for the cache.", "Okay.", "Thanks.", "Good.",
                     "We're testing a different approach anyway."),
}


@pytest.mark.parametrize("case", sorted(_JUNK_RETURNS))
def test_a_modal_an_adverb_or_a_quantifier_is_no_thread_title(case: str) -> None:
    """"Vielleicht könnte man …", "ein paar Kleinigkeiten", "die Zahlen sehen besser aus",
    "peut-être qu'on …", "quelques petites choses", "tal vez podríamos", "un paio di cose", "a gente
    pudesse", "пара мелочей", "the customer asked", "a different approach": come back to with a stake,
    they opened threads titled so; the packs' phrase breaks (``LanguagePack.verbs``) now end a phrase on
    them."""
    assert titles(run(*_JUNK_RETURNS[case], patterns=ALL)) == []


def test_a_noun_phrase_come_back_to_still_opens_in_each_language() -> None:
    """The same shape with a noun phrase opens its thread in German, Spanish and Russian: the breaks
    are the closed classes and the common verbs, not the topic's words."""
    assert titles(run("Ich arbeite an der neuen Suchmaske.", "Okay.", "Danke.", "Gut so.",
                      "Ich arbeite weiter an der neuen Suchmaske.", patterns=ALL)) == ["neuen Suchmaske"]
    assert titles(run("Estoy revisando el informe de ventas.", "Vale.", "Gracias.", "Bueno.",
                      "Estoy terminando el informe de ventas.", patterns=ALL)) == ["informe de ventas"]
    assert titles(run("Я буду обновлять поисковый индекс.", "Ладно.", "Спасибо.", "Хорошо.",
                      "Я буду проверять поисковый индекс завтра.", patterns=ALL)) == ["поисковый индекс"]


def test_the_breaks_hold_no_english_word() -> None:
    """The default languages are English and German together: a German (or other pack's) break that is
    an English word ("bin", "bald", "logo", "solo", "ai") would end English phrases too."""
    from workers.conversation.languages import DE, ES, FR, IT, PT, RU

    english = {"bin", "bald", "halt", "mag", "man", "fast", "logo", "solo", "fare", "diverse", "ai", "encore",
               "van", "sera", "mira"}
    for pack in (DE, ES, FR, IT, PT, RU):
        assert english.isdisjoint(pack.verbs), pack.code
