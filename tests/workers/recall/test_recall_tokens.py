"""Token estimate and budget trimming.

Cases ported from the semantic-memory design's Go tests (ajitpratap0/openclaw-cortex
``tests/tokenizer_test.go``), plus the exact estimate and our first-memory truncation.
"""

from __future__ import annotations

import pytest

from workers.recall.tokens import (
    DEFAULT_BUDGET_TOKENS,
    estimate_tokens,
    format_memories_with_budget,
    truncate_to_token_budget,
)

MEMORIES = [
    "Memory one: Go is great",
    "Memory two: Testing is important",
    "Memory three: Qdrant is a vector database",
    "Memory four: Claude can extract memories",
]


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [("", 0, 0), ("hello", 1, 3), ("Go is a great programming language", 5, 15), ("word " * 100, 80, 200)],
)
def test_estimate_is_in_the_references_range(text: str, low: int, high: int) -> None:
    assert low <= estimate_tokens(text) <= high


def test_estimate_is_the_mean_of_word_and_byte_rules() -> None:
    # 6 words -> int(7.8) = 7; 34 bytes -> 8; (7 + 8) // 2 = 7
    assert estimate_tokens("Go is a great programming language") == 7
    # umlauts are two bytes each in UTF-8: "Größenänderung" is 17 bytes, 1 word
    assert estimate_tokens("Größenänderung") == (1 + 17 // 4) // 2


def test_truncate_within_budget_returns_text() -> None:
    assert truncate_to_token_budget("short text", 100) == "short text"


def test_truncate_over_budget_cuts_at_a_word_with_ellipsis() -> None:
    text = "word " * 200
    out = truncate_to_token_budget(text, 10)
    assert len(out) < len(text)
    assert out.endswith("...")


def test_truncate_zero_budget_is_empty() -> None:
    assert truncate_to_token_budget("some text", 0) == ""


def test_all_memories_fit_a_large_budget() -> None:
    out = format_memories_with_budget(MEMORIES, 10_000)
    assert out.included == len(MEMORIES)
    assert "Memory one" in out.text and "Memory four" in out.text
    assert out.text.count("\n---\n") == len(MEMORIES) - 1


def test_partial_fit_keeps_ranked_prefix() -> None:
    out = format_memories_with_budget(MEMORIES, 15)
    assert out.included == 1
    assert out.text == "Memory one: Go is great"
    assert out.tokens == estimate_tokens(MEMORIES[0]) + 2


def test_budget_stops_at_first_memory_that_does_not_fit() -> None:
    """A small memory after a big one is not pulled forward past it."""
    out = format_memories_with_budget(["tiny one", "x " * 400, "tiny two"], 60)
    assert out.text == "tiny one"


def test_empty_input_and_zero_budget_give_nothing() -> None:
    assert format_memories_with_budget([], 100) == ("", 0, 0)
    assert format_memories_with_budget(MEMORIES, 0) == ("", 0, 0)


def test_oversized_first_memory_is_truncated_to_fit() -> None:
    long_note = "Die Größenänderung der Übersichtsseite " * 400
    out = format_memories_with_budget([long_note, "next"], 100)
    assert out.included == 1
    assert out.text.endswith("...")
    assert out.tokens <= 100


def test_default_budget_is_2000() -> None:
    assert DEFAULT_BUDGET_TOKENS == 2000
