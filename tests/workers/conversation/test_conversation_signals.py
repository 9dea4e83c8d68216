"""Parity: openclaw-cortex test/thread-tracker.test.ts (extractSignals, matchesThread) and
test/noise-filter.test.ts (isNoiseTopic), plus Cortex's own signal cases."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from shared.config import parse_languages
from workers.conversation.patterns import (
    MAX_MATCHES_PER_FAMILY,
    SCAN_HEAD_CHARS,
    SCAN_TAIL_CHARS,
    get_patterns,
    scan_view,
)
from workers.conversation.signals import _tokens, extract_signals, is_noise_topic, matches_title, words_of

BOTH = get_patterns(parse_languages("both"))
EN = get_patterns(("en",))
ALL = get_patterns(parse_languages("all"))


# ── matchesThread ──────────────────────────────────────────────────────────────────


def test_title_matches_when_two_title_words_appear() -> None:
    """thread-tracker.test.ts › matchesThread › matches when 2+ title words appear in text."""
    assert matches_title("auth migration OAuth2", words_of("the auth migration is progressing"))


def test_title_does_not_match_on_one_shared_word() -> None:
    """thread-tracker.test.ts › matchesThread › does not match with only 1 overlapping word."""
    assert not matches_title("auth migration OAuth2", words_of("auth is broken"))


def test_title_does_not_match_without_shared_words() -> None:
    """thread-tracker.test.ts › matchesThread › does not match with zero overlapping words."""
    assert not matches_title("auth migration OAuth2", words_of("the weather is nice"))


def test_title_matching_ignores_case() -> None:
    """thread-tracker.test.ts › matchesThread › is case-insensitive."""
    assert matches_title("Auth Migration", words_of("the AUTH MIGRATION works"))


def test_title_words_shorter_than_three_characters_do_not_count() -> None:
    """thread-tracker.test.ts › matchesThread › ignores words shorter than 3 characters."""
    assert not matches_title("a b c migration", words_of("a b c something"))


def test_title_matching_respects_a_custom_overlap() -> None:
    """thread-tracker.test.ts › matchesThread › respects custom minOverlap."""
    assert matches_title("auth migration OAuth2", words_of("auth migration OAuth2 is great"), 3)
    assert not matches_title("auth migration OAuth2", words_of("the auth migration is progressing"), 3)


def test_a_hyphenated_word_and_its_parts_name_each_other() -> None:
    """The demo: "Next I'll look at the dashboard performance bug once Maria sends the profile"
    did not name the thread "Performance-Bug im Dashboard" ("performance-bug" was one word), and
    "the onboarding flow is fixed" could not close "Onboarding-Flow". A hyphenated word is named
    by its parts and names them; a part alone is not the compound."""
    assert matches_title("Performance-Bug im Dashboard", words_of("Next I'll look at the dashboard performance bug"))
    assert matches_title("dashboard performance bug", words_of("Der Performance-Bug im Dashboard nervt"))
    assert matches_title("Onboarding-Flow", words_of("the onboarding flow is fixed"))
    assert not matches_title("Onboarding-Flow", words_of("the flow is fixed"))
    assert not matches_title("Performance-Bug im Dashboard", words_of("the performance of the dashboard"))
    assert not matches_title("e-mail", words_of("the mail server"))  # a part under three characters: one word


def test_empty_title_or_text_never_matches() -> None:
    """thread-tracker.test.ts › matchesThread › handles empty title / handles empty text."""
    assert not matches_title("", words_of("some text"))
    assert not matches_title("auth migration", words_of(""))


def test_punctuation_at_word_edges_does_not_hide_a_word() -> None:
    """Cortex: "migration." ends a sentence and still counts as "migration"."""
    assert matches_title("auth migration", words_of("We finished the auth migration."))


def test_a_cjk_title_matches_when_it_appears_whole() -> None:
    """Cortex: CJK has no spaces, so a Chinese title is one word and matches as a substring."""
    assert matches_title("数据迁移的问题", words_of("数据迁移的问题已经解决了"))
    assert not matches_title("数据迁移的问题", words_of("部署问题"))


# ── extractSignals ─────────────────────────────────────────────────────────────────


def test_decision_signals_are_extracted() -> None:
    """thread-tracker.test.ts › extractSignals › extracts decision signals."""
    signals = extract_signals("We decided to use TypeScript for all plugins", BOTH)
    assert signals.decisions
    assert "decided" in signals.decisions[0].what


def test_closure_signals_are_extracted() -> None:
    """thread-tracker.test.ts › extractSignals › extracts closure signals."""
    assert extract_signals("The bug is fixed and working now", BOTH).closes


def test_wait_signals_are_extracted() -> None:
    """thread-tracker.test.ts › extractSignals › extracts wait signals."""
    signals = extract_signals("We are waiting for the code review", BOTH)
    assert signals.waits
    # the reference kept the cue ("waiting for the code review"), so the briefing said
    # "Waiting for: waiting for …"; the wait is what is waited for
    assert signals.waits[0] == "the code review"


@pytest.mark.parametrize(("text", "wait"), [
    ("For the quarterly report export I'm waiting for the PDF library upgrade first.", "the PDF library upgrade"),
    ("Ich warte auf die Crash-Logs zuerst, dann der Fix.", "die Crash-Logs"),
    ("We need the new node pool first.", "need the new node pool first"),  # the cue's own "first": the phrase
    ("We are waiting for first aid.", "first aid"),  # not a trailing "first"
])
def test_a_trailing_first_is_not_what_a_wait_waits_for(text: str, wait: str) -> None:
    """The multi-day history's day-15 briefing said "Waiting for: the PDF library upgrade
    first." — when, not what."""
    assert extract_signals(text, BOTH).waits == (wait,)


def test_topic_signals_are_extracted() -> None:
    """thread-tracker.test.ts › extractSignals › extracts topic signals."""
    signals = extract_signals("Let's get back to the auth migration", BOTH)
    assert signals.topics
    assert "auth migration" in signals.topics[0]


@pytest.mark.parametrize(("text", "topics"), [
    ("Let's talk about the frontend build", ("frontend build",)),
    ("Let’s talk about the billing export, it is still broken.", ("billing export",)),
    ("Let's talk deployment strategy", ("deployment strategy",)),
    ("Let's talk about it", ()),
    ("Lass uns über das Release reden.", ("Release",)),
    ("Lass uns mal über den Frontend-Build reden", ("Frontend-Build",)),
    ("Lass uns über die Datenbankmigration sprechen, die Tabellen sind groß.", ("Datenbankmigration",)),
    ("Lass uns mal den Build anschauen", ("Build",)),
    ("Lass uns über das Reden-Training sprechen", ("Reden-Training",)),
])
def test_a_topic_cue_leaves_its_own_words_out_of_the_topic(text: str, topics: tuple[str, ...]) -> None:
    """"Let's talk about the frontend build" titled its thread "about the frontend build" and
    "Lass uns über das Release reden" "Release reden" (the reference's patterns do the same: a
    deviation, docs/contract-extensions.md); "Let's talk about it" opened a thread "about it"."""
    assert extract_signals(text, BOTH).topics == topics


def test_one_text_yields_several_kinds_of_signal() -> None:
    """thread-tracker.test.ts › extractSignals › extracts multiple signal types from same text."""
    signals = extract_signals("Back to the auth module. We decided to fix it. It's done!", BOTH)
    assert signals.topics
    assert signals.decisions
    assert signals.closes


def test_german_signals_are_extracted_with_both() -> None:
    """thread-tracker.test.ts › extractSignals › extracts German signals with 'both'."""
    assert extract_signals("Wir haben beschlossen, das zu machen", BOTH).decisions


@pytest.mark.parametrize("text", ["The sky is blue and the grass is green", ""])
def test_unrelated_or_empty_text_has_no_signals(text: str) -> None:
    """thread-tracker.test.ts › extractSignals › returns empty signals for unrelated text / handles empty text."""
    signals = extract_signals(text, BOTH)
    assert signals.decisions == ()
    assert not signals.closes
    assert signals.waits == ()
    assert signals.topics == ()


def test_a_decision_is_its_sentence_not_a_window_of_characters() -> None:
    """thread-tracker.test.ts › extractSignals › extracts context window around decisions (50 before, 100
    after): the reference's window is its defect — it starts and stops inside words and
    sentences. Here the decision is the sentence it is in, and a long one is cut between
    words and marked "…"."""
    text = "Some intro about the plan. We decided to use TypeScript for every plugin. Lunch later?"
    (decision,) = extract_signals(text, EN).decisions
    assert decision.what == "We decided to use TypeScript for every plugin"
    long_sentence = "We decided to use TypeScript " + "for plugin number seven " * 20 + "at last."
    (long,) = extract_signals(long_sentence, EN).decisions
    assert long.what.startswith("We decided to use TypeScript for plugin") and long.what.endswith("…")
    assert long.what[:-1].split()[-1] in {"for", "plugin", "number", "seven"}  # a whole word
    assert len(long.what) <= 160


def test_a_wait_is_its_clause_cut_between_words_with_an_ellipsis() -> None:
    """Design 4.1: a wait is the matched phrase plus 80 characters — cut inside words and
    sentences. Here: what follows a bare cue, up to the end of its clause, at most 80
    characters cut between words ("…"); a phrase that holds what is needed stays whole."""
    assert extract_signals("Sadly we are waiting for " + "z" * 100, EN).waits == ("z" * 79 + "…",)
    words = "Waiting for the " + " ".join(["review"] * 20) + ". Then lunch."
    (wait,) = extract_signals(words, EN).waits
    assert wait.startswith("the review review") and wait.endswith("review…") and len(wait) <= 80
    text = "We need the new node pool first, the old nodes run out of memory."
    assert extract_signals(text, EN).waits == ("need the new node pool first",)


def test_a_message_yields_at_most_fifty_signals_of_a_kind() -> None:
    """Cortex's guard against hostile input: thousands of "decided" are fifty decisions."""
    assert MAX_MATCHES_PER_FAMILY == 50
    assert len(extract_signals("We decided on Postgres. " * 5000, EN).decisions) == 50
    assert len(extract_signals("decided " * 5000, EN).decisions) == 1  # one sentence, one decision


def test_a_long_message_is_scanned_at_its_head_and_tail_only() -> None:
    """A paste longer than the scan window: signals at its start and end are found, the
    middle is skipped, and no word joins across the cut."""
    filler = "lorem ipsum " * 2000
    text = "We decided to use Postgres. " + filler + " we agreed to ship friday " + filler + "Waiting for the review."
    view = scan_view(text)
    assert len(view) == SCAN_HEAD_CHARS + len("\n\n") + SCAN_TAIL_CHARS
    assert view.startswith("We decided") and view.endswith("Waiting for the review.")
    signals = extract_signals(text, EN)
    assert any("use Postgres" in d.what for d in signals.decisions)
    assert not any("ship friday" in d.what for d in signals.decisions)
    assert signals.waits == ("the review",)
    assert scan_view("short text") == "short text"


def test_cjk_topics_are_extracted_with_all_languages() -> None:
    signals = extract_signals("我们回到数据库迁移吧", ALL)
    assert "数据库迁移吧" in signals.topics


# ── isNoiseTopic ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "topic",
    [
        pytest.param("foo", id="rejects short strings: foo"),
        pytest.param("ab", id="rejects short strings: ab"),
        pytest.param("", id="rejects short strings: empty"),
        pytest.param("that", id="rejects single blacklisted words: that"),
        pytest.param("this", id="rejects single blacklisted words: this"),
        pytest.param("nichts", id="rejects single blacklisted words: nichts"),
        pytest.param("alles", id="rejects single blacklisted words: alles"),
        pytest.param("das was es", id="rejects all-blacklisted multi-word: das was es"),
        pytest.param("the that it", id="rejects all-blacklisted multi-word: the that it"),
        pytest.param("ich habe nichts gepostet", id="rejects pronoun fragments: ich habe"),
        pytest.param("we should do something", id="rejects pronoun fragments: we should"),
        pytest.param("er hat gesagt", id="rejects pronoun fragments: er hat"),
        pytest.param("I think maybe", id="rejects pronoun fragments: I think"),
        pytest.param("line one\nline two", id="rejects topics with newlines"),
        pytest.param("a" * 61, id="rejects topics longer than 60 chars"),
        pytest.param("nichts gepostet habe", id="rejects 'nichts gepostet habe' (real-world noise)"),
    ],
)
def test_noise_topics_are_rejected(topic: str) -> None:
    """noise-filter.test.ts › isNoiseTopic (case in the id)."""
    assert is_noise_topic(topic, BOTH)


@pytest.mark.parametrize(
    "topic",
    [
        pytest.param("Auth Migration", id="accepts valid topic names: Auth Migration"),
        pytest.param("Plugin-Repo Setup", id="accepts valid topic names: Plugin-Repo Setup"),
        pytest.param("NATS Event Store", id="accepts valid topic names: NATS Event Store"),
        pytest.param("Cortex Demo", id="accepts valid topic names: Cortex Demo"),
        pytest.param("Security Audit", id="accepts valid topic names: Security Audit"),
        pytest.param("Deployment Pipeline", id="accepts valid topic names: Deployment Pipeline"),
        pytest.param("Darkplex Analyse", id="accepts german topic names: Darkplex Analyse"),
        pytest.param("Credential Rotation", id="accepts german topic names: Credential Rotation"),
        pytest.param("Thread Tracking Qualität", id="accepts german topic names: Thread Tracking Qualität"),
    ],
)
def test_real_topics_are_not_noise(topic: str) -> None:
    """noise-filter.test.ts › isNoiseTopic (case in the id)."""
    assert not is_noise_topic(topic, BOTH)


def test_noise_uses_the_enabled_languages_stop_words() -> None:
    """Cortex: the blacklist and pronouns are the enabled languages' (the reference always used en+de)."""
    assert is_noise_topic("nous avons fini", get_patterns(("fr",)))
    assert not is_noise_topic("nous avons fini", EN)


@pytest.mark.parametrize(("text", "topics"), [
    ("Beim Onboarding-Flow liegt es am Safari-Autofill. Ich werde den Fix morgen einbauen.", ["Onboarding-Flow"]),
    ("For the quarterly report export the plan is to generate CSV first.", ["quarterly report export"]),
    ("For the auth migration, I'll write the rollback script.", ["auth migration"]),
    ("As for the Payments service I'll ask Maria.", ["Payments"]),
    ("Für die neue Datenbank werde ich ein Backup machen.", ["neue Datenbank"]),
    ("Regarding the staging registry credentials: the token expired.", ["staging registry credentials"]),
    ("Zurück zum Onboarding-Flow: Jonas hat die Logs. Bei der Migration hakt es.", ["Onboarding-Flow", "Migration"]),
    ("For now I'll fix it. For example, this. For it.", []),  # no topic
    ("I looked for the bug everywhere, beim Kunden auch.", []),  # a frame opens a sentence
])
def test_message_topics_are_its_cue_topics_and_the_frames_its_sentences_open_on(text: str, topics: list[str]) -> None:
    from workers.conversation.patterns import prepare_text
    from workers.conversation.signals import message_topics

    found = message_topics(prepare_text(text), BOTH)
    assert [topic for _, topic in found] == topics
    assert all(text[at:].startswith(topic) for at, topic in found)
    cues = set(extract_signals(text, BOTH).topics)  # a frame opens no thread: only cue topics do
    assert cues <= set(topics) and ("Beim" not in text or "Onboarding-Flow" not in cues)


@settings(max_examples=1500, deadline=None, database=None)
@given(text=st.text("abc -.,!'“»\n\t\u2003\x1c(…", max_size=40),
       terms=st.lists(st.text("abc-.'( ", max_size=5), max_size=6), built=st.booleans())
@example(text="the (performance-bug, is", terms=["bug", "performance", "performance-bug", "bug,"], built=False)
@example(text="abcx abca xabc abc-ab aabc\u2003(abc…", terms=["abc", "abc-ab", "ab"], built=False)
@example(text="abca abca abca abca abca ab-abc", terms=["abc"], built=False)
@example(text="ab ab", terms=["ab ab", "b a"], built=False)
def test_a_word_that_is_no_substring_is_no_word_of_the_text(text: str, terms: list[str], built: bool) -> None:
    """``Words.has`` answers ``term in tokens`` whether or not the words were split out yet:
    its substring short cut never says no to a word of the text, and a term looked for where it
    stands (white space of any kind around it, edge marks, hyphenated parts, said more often than
    the places looked at) is a word exactly when the split says so."""
    words = words_of(text)
    said = _tokens(text.lower(), with_parts=True)  # a hyphenated word's parts are words of it too
    if built:
        assert words.tokens == said
    for term in terms:
        assert words.has(term) == (term in said)
