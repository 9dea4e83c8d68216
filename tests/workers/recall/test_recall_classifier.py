"""Classifier cases.

The English cases are ported from the semantic-memory design's Go tests
(ajitpratap0/openclaw-cortex ``tests/classifier_test.go``); the German ones and the
tie-break cases are ours.
"""

from __future__ import annotations

import pytest

from shared.config import ALL_LANGUAGES
from workers.recall.classifier import TIE_BREAK_ORDER, classify, score_types

REFERENCE_CASES = [
    ("You must always validate input before processing", "rule"),
    ("Never expose API keys in client-side code", "rule"),
    ("Authentication is required for all API endpoints", "rule"),
    ("Step 1: Install dependencies. Step 2: Configure the database.", "procedure"),
    ("How to deploy the application to production", "procedure"),
    ("Run the test suite with: go test ./...", "procedure"),
    ("I prefer to use Go over Python for systems programming", "preference"),
    ("My favorite editor is Neovim", "preference"),
    ("Yesterday we discovered a race condition in the scheduler", "episode"),
    ("The incident occurred when the cache expired during peak load", "episode"),
    ("Go uses goroutines for concurrent programming", "fact"),
    ("The API returns JSON responses", "fact"),
]

GERMAN_CASES = [
    ("Wir dürfen niemals API-Schlüssel im Frontend speichern", "rule"),
    ("Tests müssen vor jedem Merge grün sein", "rule"),
    ("Zuerst installiere die Abhängigkeiten, danach konfiguriere die Datenbank", "procedure"),
    ("Ich bevorzuge Tabs statt Leerzeichen", "preference"),
    ("Mein Lieblingseditor ist Neovim", "preference"),
    ("Gestern ist beim Deployment ein Fehler aufgetreten", "episode"),
    ("Qdrant steht für eine Vektordatenbank", "fact"),
    ("Die API liefert JSON", "fact"),
]


@pytest.mark.parametrize(("text", "expected"), REFERENCE_CASES)
def test_reference_case_classifies_as_in_the_design(text: str, expected: str) -> None:
    assert classify(text).type == expected


@pytest.mark.parametrize(("text", "expected"), GERMAN_CASES)
def test_german_case_classifies(text: str, expected: str) -> None:
    assert classify(text).type == expected


def test_tie_breaks_by_fixed_order_not_by_chance() -> None:
    """A standing imperative (rule) and 'prefer' (preference) score one each: rule wins, every time."""
    text = "Always keep commits small, we prefer them"
    scores = score_types(text, ["en"])
    assert scores["rule"] == scores["preference"] == 1
    assert {classify(text).type for _ in range(20)} == {"rule"}
    assert classify(text).confidence == 0.5  # a tie costs confidence


def test_tie_break_order_follows_the_type_priorities() -> None:
    assert TIE_BREAK_ORDER == ("rule", "procedure", "fact", "episode", "preference")


def test_procedure_beats_episode_on_a_tie() -> None:
    scores = score_types("Yesterday I had to deploy", ["en"])
    assert scores["procedure"] == scores["episode"] == 1
    assert classify("Yesterday I had to deploy").type == "procedure"


def test_cues_match_whole_words_only() -> None:
    assert not any(score_types("Nevertheless the mustard is likely unremarkable", ["en"]).values())  # no cue
    assert classify("Nevertheless the mustard is likely unremarkable").type == "fact"


def test_default_fact_has_the_lowest_confidence() -> None:
    assert classify("The API returns JSON responses") == ("fact", 0.5)


def test_confidence_grows_with_evidence() -> None:
    one = classify("Never push to main")
    several = classify("You must never push to main; it is forbidden and mandatory to review")
    assert one.type == several.type == "rule"
    assert 0.5 < one.confidence < several.confidence <= 0.9


def test_languages_restrict_the_cue_tables() -> None:
    assert classify("Ich bevorzuge Tabs", ["en"]).type == "fact"
    assert classify("Ich bevorzuge Tabs", ["de"]).type == "preference"


# Issue 37: a rule is a standing instruction, not any sentence with must, always or never
# (the first three are the issue's, the others LoCoMo development conversations' kind).
NOT_RULES = [
    "It must be really awesome!", "Never say never!", "That's a memory I'll never forget.",
    "My face gets all puffy and itchy when I'm around certain animals, so I've always just stayed away",
    "I'm so glad we can always be there for each other.", "We don't go often, usually only once or twice a year.",
    "Don't forget to prepare emotionally, since the wait can be hard.", "Must have been traumatizing for you guys.",
    "They must have felt so appreciated.", "I'll do my best to make sure these kids have a safe and loving home.",
    "I'll always remember our camping trip last year.", "Never give up on your dreams!", "Always believe in yourself.",
    "From now on I'll run every day.", "Remember that time we went camping?", "Don't worry about it!",
    "You must try the pasta there!", "The wait must be hard.",
    "Then we shall start with a presentation from Raj.", "So we must make it look fancy.",  # a meeting's plan
    # QMSum's development meetings: what will be, what a thing does, a deed told ("prohibited")
    "So in the future", "The system will give fifty-three by default.", "We have prohibited 1,500 types of firearms.",
    "Municipalities play a crucial role at all times.", "From now on we'll be able to have things channelized.",
    "So don't fill these out.", "Don't destroy my giraffe.", "Don't don't don't say.",  # about what is at hand
    "Um this may not map very well to advanced functionality.", "You may not need to retrain the model.",
    "Das muss toll sein!", "Sag niemals nie.", "Nunca digas nunca.", "Mai dire mai.", "Никогда не сдавайся!",
    "心配しないでください。", "포기하지 마세요!", "不要担心。",
]
RULES = [
    "Always answer in German.", "Never deploy on Fridays.", "From now on, use the staging cluster for tests.",
    "Remember that the staging DB is shared.", "And remember our rule: never deploy to production on Fridays.",
    "Don't push to main.", "Antworte immer auf Deutsch.", "Ab sofort deployen wir nur dienstags.",
    "Responde siempre en alemán.", "Ne déploie jamais le vendredi.", "Désormais, réponds en français.",
    "Non fare mai il deploy di venerdì.", "Nunca faça deploy na sexta-feira.", "Всегда отвечай по-немецки.",
    "今後は日本語で答えてください。", "앞으로는 한국어로 대답해 주세요.", "以后请用中文回答。",
    "In future, ask before deleting files.", "By default, answer in German.", "Force-pushing to main is forbidden.",
    "From now on we deploy only on Tuesdays.", "Don't commit secrets to the repository.",
    "Passwords may not be stored in plain text.",
]


@pytest.mark.parametrize("text", NOT_RULES)
def test_a_sentence_with_always_or_never_is_no_rule(text: str) -> None:
    assert classify(text, ALL_LANGUAGES).type != "rule"


@pytest.mark.parametrize("text", RULES)
def test_a_standing_instruction_is_a_rule_in_every_language(text: str) -> None:
    assert classify(text, ALL_LANGUAGES).type == "rule"
