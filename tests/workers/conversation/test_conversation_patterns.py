"""Parity: openclaw-cortex test/patterns.test.ts and test/patterns-registry.test.ts.

English, German and "both" (en+de); the other languages are in
test_conversation_languages.py. Each test names its reference case in the docstring.
"""

from __future__ import annotations

import re

import pytest

from schemas.types import Mood
from shared.config import ALL_LANGUAGES, parse_languages
from workers.conversation.languages import PACKS
from workers.conversation.patterns import MOOD_ORDER, Family, PatternSet, get_patterns, prepare_text
from workers.conversation.signals import cue_topics, detect_mood

EN = get_patterns(("en",))
DE = get_patterns(("de",))
BOTH = get_patterns(parse_languages("both"))
ALL = get_patterns(parse_languages("all"))


def any_match(family: Family, text: str) -> bool:
    prepared = prepare_text(text)
    return any(p.search(prepared) is not None for p in family)


def capture_topics(family: Family, text: str) -> list[str]:
    prepared = prepare_text(text)
    return [text[m.start(1) : m.end(1)].strip() for p in family for m in p.finditer(prepared)]


def mood_matches(patterns: PatternSet, mood: Mood, text: str) -> bool:
    pattern = patterns.mood.patterns[MOOD_ORDER.index(mood)]
    return pattern.search(prepare_text(text)) is not None


# ── decision patterns ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("We decided to use TypeScript", id="matches 'decided'"),
        pytest.param("The decision was to go with plan B", id="matches 'decision'"),
        pytest.param("We agreed on MIT license", id="matches 'agreed'"),
        pytest.param("let's do it this way", id="matches 'let's do'"),
        pytest.param("lets do it this way", id="matches 'lets do' without apostrophe"),
        pytest.param("the plan is to deploy Friday", id="matches 'the plan is'"),
        pytest.param("approach: use atomic writes", id="matches 'approach:'"),
        pytest.param("DECIDED to use ESM", id="is case-insensitive"),
    ],
)
def test_english_decision_patterns_match(text: str) -> None:
    """patterns.test.ts › decision patterns › English (case in the id)."""
    assert any_match(EN.decision, text)


@pytest.mark.parametrize(
    "text",
    [
        "I am undecided",
        "We disagreed on the license",
        "this needs a decision today",
        "waiting for a decision from legal",
    ],
)
def test_english_decision_words_inside_other_words_or_pending_are_no_decision(text: str) -> None:
    """patterns.test.ts › decision patterns › English › "matches partial words like 'undecided'":
    the reference's own case is its defect — "I am undecided" became a decision. Here a cue
    word inside another word ("undecided", "disagreed") and a decision still to be made
    ("needs a decision") match no decision pattern; "the decision is/was/to …" still does."""
    assert not any_match(EN.decision, text)
    assert any_match(EN.decision, "the decision is to ship")


@pytest.mark.parametrize(
    ("text", "decided"),
    [
        ("Let's go with option B.", True),
        ("We'll go with Postgres, since we need transactions.", True),
        ("We chose Grafana Cloud because self-hosting costs too much time.", True),
        ("We opted for weekly releases.", True),
        ("We settled on a 2-week sprint.", True),
        ("Let's go with them to lunch.", False),
        ("We'll go with you to the airport.", False),
        ("We went with the kids to the zoo.", False),
        ("Which one should we go with?", False),
    ],
)
def test_an_english_choice_said_as_one_is_a_decision(text: str, decided: bool) -> None:
    """Cortex's own, as the Romance packs' "vamos con", "opté pour": the reference's English
    knew only "decided", "agreed", "let's do", … — "Let's go with option B" decided nothing."""
    assert any_match(EN.decision, text) is decided


def test_english_decision_patterns_ignore_unrelated_text() -> None:
    """patterns.test.ts › decision patterns › English › does not match unrelated text."""
    assert not any_match(EN.decision, "The weather is nice today")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Wir haben uns entschieden", id="matches 'entschieden'"),
        pytest.param("Wir haben beschlossen, TS zu nehmen", id="matches 'beschlossen'"),
        pytest.param("Das machen wir so", id="matches 'machen wir'"),
        pytest.param("Dann wir machen das anders", id="matches 'wir machen'"),
        pytest.param("Der plan ist, morgen zu deployen", id="matches 'der plan ist'"),
        pytest.param("Ansatz: atomare Schreibvorgänge", id="matches 'ansatz:'"),
    ],
)
def test_german_decision_patterns_match(text: str) -> None:
    """patterns.test.ts › decision patterns › German (case in the id)."""
    assert any_match(DE.decision, text)


def test_german_decision_patterns_ignore_english_text() -> None:
    """patterns.test.ts › decision patterns › German › does not match English-only text."""
    assert not any_match(DE.decision, "We decided to use TypeScript")


def test_both_decision_patterns_match_either_language() -> None:
    """patterns.test.ts › decision patterns › both › matches English / German patterns, has combined patterns."""
    assert any_match(BOTH.decision, "We decided to go")
    assert any_match(BOTH.decision, "Wir haben beschlossen")
    assert len(BOTH.decision) >= 2


# ── close patterns ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("patterns", "text"),
    [
        pytest.param(EN, "That's done now", id="en matches 'done'"),
        pytest.param(EN, "Bug is fixed", id="en matches 'fixed'"),
        pytest.param(EN, "Problem solved!", id="en matches 'solved'"),
        pytest.param(EN, "Issue closed", id="en matches 'closed'"),
        pytest.param(EN, "It works perfectly", id="en matches 'works'"),
        pytest.param(EN, "Task complete ✅", id="en matches '✅'"),
        pytest.param(DE, "Das ist erledigt", id="de matches 'erledigt'"),
        pytest.param(DE, "Bug ist gefixt", id="de matches 'gefixt'"),
        pytest.param(DE, "Problem gelöst", id="de matches 'gelöst'"),
        pytest.param(DE, "Bin fertig damit", id="de matches 'fertig'"),
        pytest.param(DE, "Es funktioniert jetzt", id="de matches 'funktioniert'"),
        pytest.param(BOTH, "It's done", id="both matches English 'done'"),
        pytest.param(BOTH, "Ist erledigt", id="both matches German 'erledigt'"),
    ],
)
def test_close_patterns_match(patterns: PatternSet, text: str) -> None:
    """patterns.test.ts › close patterns (language and case in the id)."""
    assert any_match(patterns.close, text)


def test_english_close_patterns_ignore_ongoing_work() -> None:
    """patterns.test.ts › close patterns › English › does not match unrelated text."""
    assert not any_match(EN.close, "Still working on it")


@pytest.mark.parametrize("text", ["That was abandoned", "The frameworks differ", "prefixed names", "undone"])
def test_close_words_inside_other_words_do_not_close(text: str) -> None:
    """Why the reference's word-bounded close patterns replace the design's substring ones."""
    assert not any_match(BOTH.close, text)


@pytest.mark.parametrize(("conditional", "said"), [
    ("Once the login bug is fixed, we deploy.", "The login bug is fixed, we deploy."),
    ("We deploy when the login bug is done.", "We deploy now, the login bug is done."),
    ("If it works, we ship on Friday.", "If you ask me, it works now."),
    ("Until it is fixed we cannot ship.", "It is fixed, once and for all."),
    ("Sobald der Login-Bug gefixt ist, deployen wir.", "Der Login-Bug ist gefixt, wir deployen."),
    ("Wenn das erledigt ist, sag Bescheid.", "Das ist erledigt, sag Bescheid."),
    ("Cuando esté resuelto, lo desplegamos.", "Ya está resuelto, lo desplegamos."),
    ("Dès que c'est fait, on déploie.", "C'est fait, on déploie."),
    ("Quando è risolto, facciamo il deploy.", "È risolto, facciamo il deploy."),
    ("Assim que estiver resolvido, fazemos o deploy.", "Está resolvido, fazemos o deploy."),
    ("Как только будет исправлено, выкатим.", "Уже исправлено, выкатим."),
])
def test_a_condition_before_a_close_word_closes_nothing(conditional: str, said: str) -> None:
    """"Once the login bug is fixed, we deploy." closed the login bug's thread (the reference
    closes on any close word). A condition word before the close word in its clause makes it
    not yet so, in every language with one; in an earlier clause, or after the word, it
    does not ("If you ask me, it works now.", "fixed, once and for all")."""
    assert not ALL.closes(prepare_text(conditional))
    assert ALL.first_closure(prepare_text(conditional)) is None
    assert ALL.closes(prepare_text(said))


# ── wait patterns ──────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("patterns", "text"),
    [
        pytest.param(EN, "We are waiting for the review", id="en matches 'waiting for'"),
        pytest.param(EN, "This is blocked by the API change", id="en matches 'blocked by'"),
        pytest.param(EN, "We need the auth module first", id="en matches 'need...first'"),
        pytest.param(DE, "Ich warte auf das Review", id="de matches 'warte auf'"),
        pytest.param(DE, "Blockiert durch API-Änderung", id="de matches 'blockiert durch'"),
        pytest.param(DE, "Brauche das Auth-Modul erst", id="de matches 'brauche...erst'"),
    ],
)
def test_wait_patterns_match(patterns: PatternSet, text: str) -> None:
    """patterns.test.ts › wait patterns (language and case in the id)."""
    assert any_match(patterns.wait, text)


def test_english_wait_patterns_ignore_unrelated_text() -> None:
    """patterns.test.ts › wait patterns › English › does not match unrelated text."""
    assert not any_match(EN.wait, "Let's continue with the work")


def test_need_first_is_bounded_to_two_hundred_characters() -> None:
    """The deliberate bound on the reference's need.*first (linear cost on hostile input)."""
    assert any_match(EN.wait, "need " + "x" * 190 + " first")
    assert not any_match(EN.wait, "need " + "x" * 300 + " first")
    assert not any_match(EN.wait, "we need it\nfirst thing tomorrow")


# ── topic patterns ─────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Let's get back to the auth migration", "auth migration", id="after 'back to'"),
        pytest.param("now about the deployment pipeline", "deployment pipeline", id="after 'now about'"),
        pytest.param("regarding the security audit", "security audit", id="after 'regarding'"),
    ],
)
def test_english_topic_patterns_capture_the_topic(text: str, expected: str) -> None:
    """patterns.test.ts › topic patterns › English › captures topic after … (case in the id)."""
    topics = capture_topics(EN.topic, text)
    assert topics
    assert expected in topics[0]


def test_english_topic_patterns_need_a_topic_marker() -> None:
    """patterns.test.ts › topic patterns › English › does not match without topic text."""
    assert not any_match(EN.topic, "just a random sentence")


def test_english_topic_is_at_most_forty_one_characters() -> None:
    """patterns.test.ts › topic patterns › English › limits captured topic to 40 chars."""
    topics = capture_topics(
        EN.topic, "back to the very long topic name that exceeds forty characters limit here and keeps going"
    )
    assert topics
    assert len(topics[0]) <= 41


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("Zurück zu der Auth-Migration", "Auth-Migration", id="after 'zurück zu'"),
        pytest.param("Jetzt zu dem Deployment", "Deployment", id="after 'jetzt zu'"),
        pytest.param("Bzgl. dem Security Audit", "Security Audit", id="after 'bzgl.'"),
        pytest.param("bzgl dem Security Review", "Security Review", id="after 'bzgl' without dot"),
        pytest.param("wegen der API-Änderung", "API-Änderung", id="after 'wegen'"),
    ],
)
def test_german_topic_patterns_capture_the_topic(text: str, expected: str) -> None:
    """patterns.test.ts › topic patterns › German › captures topic after … (case in the id)."""
    topics = capture_topics(DE.topic, text)
    assert topics
    assert expected in topics[0]


def test_german_topic_skips_a_whole_article_only() -> None:
    """The reference's ``dem?`` left "r Auth-Migration"; a whole article is skipped now."""
    assert capture_topics(DE.topic, "Zurück zu der Auth-Migration") == ["Auth-Migration"]
    assert capture_topics(DE.topic, "zurück zum Deployment-Plan") == ["Deployment-Plan"]


def test_german_topic_keeps_umlauts() -> None:
    """Python's Unicode \\w (JavaScript's is ASCII-only) keeps "für Äpfel" in the topic."""
    assert capture_topics(DE.topic, "zurück zu der Datenbankmigration für Äpfel") == [
        "Datenbankmigration für Äpfel"
    ]


def test_topics_keep_their_original_case_although_matching_is_on_lowered_text() -> None:
    assert capture_topics(EN.topic, "BACK TO the OAuth2 Rollout") == ["OAuth2 Rollout"]


def test_both_topic_patterns_capture_either_language() -> None:
    """patterns.test.ts › topic patterns › both › captures English / German topics."""
    assert capture_topics(BOTH.topic, "back to the auth flow")
    assert capture_topics(BOTH.topic, "zurück zu dem Plugin")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "back to" returns to a topic where a clause starts, or after "let's get/go/come"
        ("I'll get back to you on the pricing question tomorrow", []),
        ("Going back to school next week", []),
        ("We decided to roll back to version 2.3 because the new connection pool leaks", []),
        ("They take us back to simpler times but it's nice", []),
        ("Have you ever considered going back to acting?", []),
        ("OK, back to the pricing question.", ["pricing question"]),
        ("Back to the payment gateway integration: the keys arrived.", ["payment gateway integration"]),
        ("Let's go back to the onboarding flow", ["onboarding flow"]),
        # the topic ends before a conjunction, a pronoun, an auxiliary or a time word
        ("Uh so let's talk about our bonuses and the raises we're getting", ["bonuses"]),
        ("Let's talk again soon!", []),
        ("Regarding your political goals?", ["political goals"]),
        ("Let's discuss the budget for our team", ["budget"]),
        ("Back to the disk pressure on db-2: the volume is at 94 percent.", ["disk pressure on db-2"]),
        ("I wouldn't know about the costs of them.", []),  # "now about" inside "know about"
    ],
)
def test_english_cue_topics_are_returns_to_a_topic_and_stop_at_the_clause(text: str, expected: list[str]) -> None:
    """Issue 37: "I'll get back to you on the pricing question tomorrow" opened "you on the pricing
    question tomorrow", "They take us back to simpler times but it's nice" "simpler times but it"."""
    assert [topic for _, topic in cue_topics(prepare_text(text), BOTH)] == expected


def test_french_on_ends_a_french_topic_not_an_english_one() -> None:
    """A topic's end words are its own language's: French "on" is a pronoun, English "on" a preposition."""
    assert [t for _, t in cue_topics(prepare_text("Parlons de la migration du CRM : on verra"), ALL)] == [
        "migration du CRM"]
    assert [t for _, t in cue_topics(prepare_text("Parlons du budget on verra demain"), ALL)] == ["budget"]
    assert [t for _, t in cue_topics(prepare_text("Zurück zum Release und dann Pause"), ALL)] == ["Release"]
    assert [t for _, t in cue_topics(prepare_text("Ich gehe zurück zur Schule"), ALL)] == []


def test_english_topic_accepts_the_typographic_apostrophe() -> None:
    # (the reference's topic was "about the release plan": a cue's words are left out here)
    assert capture_topics(EN.topic, "let’s talk about the release plan") == ["release plan"]


# ── detectMood ─────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("text", "mood"),
    [
        pytest.param("", "neutral", id="returns 'neutral' for empty string"),
        pytest.param("The sky is blue", "neutral", id="returns 'neutral' for unrelated text"),
        pytest.param("oh fuck, that's broken", "frustrated", id="frustrated for 'fuck'"),
        pytest.param("shit, it broke again", "frustrated", id="frustrated for 'shit'"),
        pytest.param("So ein Mist", "frustrated", id="frustrated for 'mist'"),
        pytest.param("Das ist so nervig", "frustrated", id="frustrated for 'nervig'"),
        pytest.param("damn, not again", "frustrated", id="frustrated for 'damn'"),
        pytest.param("wtf is happening", "frustrated", id="frustrated for 'wtf'"),
        pytest.param("Schon wieder kaputt", "frustrated", id="frustrated for 'schon wieder'"),
        pytest.param("this sucks", "frustrated", id="frustrated for 'sucks'"),
        pytest.param("Das ist geil!", "excited", id="excited for 'geil'"),
        pytest.param("That's awesome!", "excited", id="excited for 'awesome'"),
        pytest.param("nice work!", "excited", id="excited for 'nice'"),
        pytest.param("Deployed! 🚀", "excited", id="excited for '🚀'"),
        pytest.param("Das ist perfekt", "excited", id="excited for 'perfekt'"),
        pytest.param("be careful with that", "tense", id="tense for 'careful'"),
        pytest.param("that's risky", "tense", id="tense for 'risky'"),
        pytest.param("this is urgent", "tense", id="tense for 'urgent'"),
        pytest.param("Vorsicht damit", "tense", id="tense for 'vorsicht'"),
        pytest.param("Dringend fixen", "tense", id="tense for 'dringend'"),
        pytest.param("All done!", "productive", id="productive for 'done'"),
        pytest.param("Bug fixed", "productive", id="productive for 'fixed'"),
        pytest.param("deployed to staging", "productive", id="productive for 'deployed'"),
        pytest.param("Task ✅", "productive", id="productive for '✅'"),
        pytest.param("shipped to prod", "productive", id="productive for 'shipped'"),
        pytest.param("what if we used Rust?", "exploratory", id="exploratory for 'what if'"),
        pytest.param("Was wäre wenn wir Rust nehmen?", "exploratory", id="exploratory for 'was wäre wenn'"),
        pytest.param("I have an idea", "exploratory", id="exploratory for 'idea'"),
        pytest.param("let's experiment with this", "exploratory", id="exploratory for 'experiment'"),
        pytest.param("maybe we should try", "exploratory", id="exploratory for 'maybe'"),
        pytest.param("this sucks but then it works!", "productive", id="last match wins: frustrated then productive"),
        pytest.param("Awesome but be careful", "tense", id="last match wins: excited then tense"),
        pytest.param("THIS IS AWESOME", "excited", id="case-insensitive mood detection"),
    ],
)
def test_detect_mood(text: str, mood: Mood) -> None:
    """patterns.test.ts › detectMood (case in the id)."""
    assert detect_mood(text, BOTH) == mood


def test_detect_mood_design_examples() -> None:
    """Design section 9 › detectMood: "damn annoying" is frustrated, last match wins."""
    assert detect_mood("This is damn annoying", BOTH) == "frustrated"
    assert detect_mood("This sucks but then it works!", BOTH) == "productive"


def test_a_tie_at_one_position_goes_to_the_earlier_mood() -> None:
    """"läuft" is excited and productive in German: the reference's mood order decides."""
    assert detect_mood("läuft", BOTH) == "excited"


def test_the_design_keeps_yes_as_excited() -> None:
    assert detect_mood("yes! it builds", BOTH) == "excited"


@pytest.mark.parametrize(("text", "mood"), [
    ("Nothing urgent. The payment gateway is on staging.", "neutral"),
    ("Nothing urgent; all pipelines are green.", "neutral"),
    ("No rush.", "neutral"),
    ("It's not urgent", "neutral"),
    ("It isn't urgent at all", "neutral"),
    ("Kein Stress.", "neutral"),
    ("Das ist nicht dringend.", "neutral"),
    ("Nichts Dringendes heute.", "neutral"),
    ("Not urgent, but be careful with the migration", "tense"),  # "careful" is not negated
    ("Urgent: the certificate expires tonight, nothing urgent otherwise", "tense"),  # the first is said
    ("not too urgent", "tense"),  # only a negation word right before the mood word takes it back
    ("Nothing urgent, awesome work!", "excited"),
])
def test_a_negated_mood_word_counts_for_no_mood(text: str, mood: Mood) -> None:
    """"Nothing urgent." read as tense (the reference ignores negation): the briefing said the
    calm Sunday session's mood was tense. Cortex's own rule: a negation word right before a
    mood word takes it back."""
    assert detect_mood(text, BOTH) == mood


def test_mood_patterns_cover_every_mood_but_neutral() -> None:
    """patterns.test.ts › MOOD_PATTERNS › contains all mood types except neutral; each is a RegExp."""
    assert len(BOTH.mood) == len(MOOD_ORDER) == 5
    assert "neutral" not in MOOD_ORDER
    assert all(isinstance(p.regex, re.Pattern) for p in BOTH.mood)


# ── getPatterns / registry ─────────────────────────────────────────────────────────


def test_english_patterns_exclude_german() -> None:
    """patterns.test.ts › getPatterns › returns only English patterns for 'en'."""
    assert any_match(EN.decision, "decided")
    assert not any_match(EN.decision, "beschlossen")


def test_german_patterns_exclude_english() -> None:
    """patterns.test.ts › getPatterns › returns only German patterns for 'de'."""
    assert any_match(DE.decision, "beschlossen")
    assert not any_match(DE.decision, "decided")


def test_both_merges_english_and_german() -> None:
    """patterns.test.ts › getPatterns › returns merged patterns for 'both'."""
    assert BOTH.languages == ("en", "de")
    assert any_match(BOTH.decision, "decided")
    assert any_match(BOTH.decision, "beschlossen")


@pytest.mark.parametrize("languages", [("en",), ("de",), ("en", "de"), ALL_LANGUAGES])
def test_every_language_set_has_every_pattern_family(languages: tuple[str, ...]) -> None:
    """patterns.test.ts › getPatterns › each language has all pattern types."""
    patterns = get_patterns(languages)
    for family in (patterns.decision, patterns.close, patterns.wait, patterns.topic, patterns.commitment):
        assert len(family) > 0


def test_merged_families_are_the_sum_of_their_packs() -> None:
    """patterns-registry.test.ts › pattern merging › merges decision / close patterns from multiple packs."""
    assert len(BOTH.decision) == len(PACKS["en"].decision) + len(PACKS["de"].decision)
    assert len(BOTH.close) == len(PACKS["en"].close) + len(PACKS["de"].close)


def test_three_languages_merge() -> None:
    """patterns-registry.test.ts › pattern merging › merges 3+ languages correctly."""
    patterns = get_patterns(("en", "de", "fr"))
    assert any_match(patterns.decision, "decided")
    assert any_match(patterns.decision, "beschlossen")
    assert any_match(patterns.decision, "décidé de faire")


def test_unknown_language_codes_are_ignored() -> None:
    """patterns-registry.test.ts › loadSync / load › ignores unknown language codes."""
    assert get_patterns(("en", "xx", "yy")).languages == ("en",)


def test_no_language_gives_empty_families() -> None:
    """patterns-registry.test.ts › loadSync › returns empty patterns for no languages."""
    patterns = get_patterns(())
    assert len(patterns.decision) == 0
    assert len(patterns.close) == 0


def test_languages_load_in_the_given_order() -> None:
    """patterns-registry.test.ts › load › loads multiple languages / all builtin languages."""
    assert get_patterns(("en", "de", "fr", "es")).languages == ("en", "de", "fr", "es")
    assert get_patterns(ALL_LANGUAGES).languages == ALL_LANGUAGES
    assert len(ALL_LANGUAGES) == 10


def test_pattern_sets_are_cached_per_language_tuple() -> None:
    """patterns-registry.test.ts › caching › returns same patterns / blacklist / keywords on repeated calls;
    invalidates on a new language set."""
    again = get_patterns(("en", "de"))
    assert again is BOTH
    assert again.topic_blacklist is BOTH.topic_blacklist
    assert again.high_impact_keywords is BOTH.high_impact_keywords
    assert get_patterns(("en",)) is not BOTH
    assert len(BOTH.decision) > len(EN.decision)


def test_blacklists_merge_per_language() -> None:
    """patterns-registry.test.ts › blacklist merging › merges blacklists; single language has only its own."""
    assert {"the", "nothing", "das", "nichts"} <= BOTH.topic_blacklist
    assert "the" in EN.topic_blacklist
    assert "das" not in EN.topic_blacklist
    assert isinstance(EN.topic_blacklist, frozenset)


def test_high_impact_keywords_merge_without_duplicates() -> None:
    """patterns-registry.test.ts › keywords merging › merges keywords, deduplicates shared ones, is a sequence."""
    assert "architecture" in BOTH.high_impact_keywords
    assert "architektur" in BOTH.high_impact_keywords
    assert BOTH.high_impact_keywords.count("migration") == 1
    assert isinstance(EN.high_impact_keywords, tuple)


@pytest.mark.parametrize(
    "pair",
    [("architecture", "architektur"), ("security", "sicherheit"), ("delete", "löschen"),
     ("production", "deploy"), ("strategy", "strategie")],
)
def test_high_impact_keywords_name_both_languages(pair: tuple[str, str]) -> None:
    """patterns.test.ts › HIGH_IMPACT_KEYWORDS › contains architecture / security / deletion / production /
    strategy keywords."""
    assert set(pair) <= set(BOTH.high_impact_keywords)


def test_high_impact_keywords_are_the_designs_list() -> None:
    """patterns.test.ts › HIGH_IMPACT_KEYWORDS › is a non-empty array (design section 7's 19 words)."""
    design = {
        "architecture", "architektur", "security", "sicherheit", "migration", "delete", "löschen",
        "production", "produktion", "deploy", "breaking", "major", "critical", "kritisch",
        "strategy", "strategie", "budget", "contract", "vertrag",
    }
    assert set(BOTH.high_impact_keywords) == design
    assert len(BOTH.high_impact_keywords) > 10


def test_merged_mood_matches_universal_emoji_and_language_words() -> None:
    """patterns-registry.test.ts › mood patterns › returns all five moods; matches universal emoji;
    matches language-specific words."""
    assert mood_matches(EN, "frustrated", "argh")
    assert mood_matches(EN, "excited", "🚀")
    assert mood_matches(EN, "productive", "✅")
    assert mood_matches(BOTH, "frustrated", "damn it")
    assert mood_matches(BOTH, "frustrated", "Mist!")


def test_all_languages_merge_patterns_blacklists_and_keywords() -> None:
    """patterns-custom.test.ts › loading all languages › merges patterns; all languages contribute to
    blacklist and keywords."""
    assert len(ALL.decision) >= 10
    assert len(ALL.close) >= 10
    assert {"the", "das", "le", "这个", "これ", "이것", "это"} <= ALL.topic_blacklist
    assert {"architecture", "architektur", "sécurité", "架构"} <= set(ALL.high_impact_keywords)


# ── lower-casing once ──────────────────────────────────────────────────────────────


def test_prepared_text_stays_aligned_with_the_original() -> None:
    """İ lowers to two characters; it is kept so every span still fits the original."""
    prepared = prepare_text("İstanbul: back to the Auth Migration")
    assert len(prepared.lowered) == len(prepared.original)
    assert capture_topics(EN.topic, prepared.original) == ["Auth Migration"]


@pytest.mark.parametrize("code", sorted(code for code, pack in PACKS.items() if not pack.case_sensitive))
def test_case_insensitive_packs_are_written_in_lower_case(code: str) -> None:
    """Patterns on the lowered text must not contain upper-case letters (they could never match)."""
    pack = PACKS[code]
    sources = [*pack.decision, *pack.close, *pack.wait, *pack.topic, *pack.commitment, *pack.due]
    sources += [source for _, source in pack.mood]
    for source in sources:
        letters = re.sub(r"\\.", "", source)  # escapes such as \s and \w are not letters
        assert letters == letters.lower(), source


def test_the_last_clause_break_is_the_last_of_any_break() -> None:
    """The negation and condition windows' clause cut and ``clause_before`` find the last break in
    one match: the same position as the ``max`` of every break's ``rfind``, on texts of breaks,
    letters and CJK marks (none, one, many; at either end)."""
    import random

    from workers.conversation import patterns as p
    from workers.conversation import sentences as s

    rng = random.Random(7)
    alphabet = "ab ,;:.!?。，、！？；：\n—–xé"
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert p._last_break(p._LAST_CLAUSE_BREAK, text) == max(map(text.rfind, p._CLAUSE_BREAKS))
        assert p._last_break(p._LAST_CONDITION_BREAK, text) == max(map(text.rfind, p._CONDITION_BREAKS))
        pos = rng.randint(0, len(text))
        # (``clause_before`` reaches 80 characters back: a text of 40 is reached whole)
        cut = max(text.rfind(mark, 0, pos) for mark in s._CLAUSE_BREAKS)
        assert s.clause_before(text, pos) == text[cut + 1: pos]
    long = "a, b " + "x" * 200
    assert s.clause_before(long, len(long)) == long[-80:]  # no break within reach: the reach
