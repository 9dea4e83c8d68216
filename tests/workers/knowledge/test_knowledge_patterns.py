"""Regex patterns: the reference's parity cases, then Cortex's deliberate differences.

Parity cases are ported from ``packages/openclaw-knowledge-engine/test/patterns.test.ts``
(alberthild/vainplex-openclaw); each docstring names the ``it(...)`` case.
"""

from __future__ import annotations

import re

import pytest

from workers.knowledge import patterns

Expected = str | list[str] | None


def found(pattern: re.Pattern[str], text: str) -> list[str] | None:
    """All matches, or None when there is none (the reference's ``String.match``)."""
    return [m.group() for m in pattern.finditer(text)] or None


def check(pattern: re.Pattern[str], text: str, expected: Expected) -> None:
    want = [expected] if isinstance(expected, str) else expected
    assert found(pattern, text) == want, text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("contact support at support@example.com", "support@example.com"),
        ("my email is john.doe123@sub.domain.co.uk.", "john.doe123@sub.domain.co.uk"),
        ("invalid-email@", None),
        ("user@localhost", None),
        ("test@.com", None),
        ("multiple emails: a@b.com and c@d.org", ["a@b.com", "c@d.org"]),
    ],
)
def test_email_matches_valid_addresses(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match valid email addresses'."""
    check(patterns.EMAIL, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("visit https://www.example.com for more info", "https://www.example.com"),
        ("check http://sub.domain.org/path?query=1", "http://sub.domain.org/path?query=1"),
        ("ftp://invalid.com", None),
        ("www.example.com", None),
        ("a link: https://a.co and another http://b.com/end.", ["https://a.co", "http://b.com/end"]),
    ],
)
def test_url_matches_http_and_https(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match valid URLs'."""
    check(patterns.URL, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The date is 2026-02-17.", "2026-02-17"),
        ("Timestamp: 2026-02-17T15:30:00Z", "2026-02-17T15:30:00Z"),
        ("With milliseconds: 2026-02-17T15:30:00.123Z", "2026-02-17T15:30:00.123Z"),
        ("Not a date: 2026-02-17T", None),
        ("Invalid format 2026/02/17", None),
    ],
)
def test_iso_date_matches_iso_8601(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match ISO 8601 dates'."""
    check(patterns.ISO_DATE, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("US date: 02/17/2026.", "02/17/2026"),
        ("EU date: 17.02.2026,", "17.02.2026"),
        ("Short year: 1.1.99", "1.1.99"),
        ("Two dates: 12/25/2024 and 24.12.2024", ["12/25/2024", "24.12.2024"]),
    ],
)
def test_common_date_matches_us_and_eu_forms(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match common date formats (US & EU)'."""
    check(patterns.COMMON_DATE, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Datum: 17. Februar 2026", "17. Februar 2026"),
        ("Am 1. Januar 2025 war es kalt.", "1. Januar 2025"),
        ("No match: 17 Februar 2026", None),
    ],
)
def test_german_date_matches_long_form(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match German date formats'."""
    check(patterns.GERMAN_DATE, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Date: February 17, 2026", "February 17, 2026"),
        ("On March 1st, 2025, we launched.", "March 1st, 2025"),
        ("Also August 2nd, 2024 and May 3rd, 2023.", ["August 2nd, 2024", "May 3rd, 2023"]),
        ("No match: February 17 2026", None),
    ],
)
def test_english_date_matches_long_form(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match English date formats'."""
    check(patterns.ENGLISH_DATE, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello, my name is Claude Keller.", ["Claude Keller"]),
        ("This is Jean-Luc Picard of the USS Enterprise.", ["Jean-Luc Picard", "USS Enterprise"]),
        ("Talk to O'Malley about it.", ["O'Malley"]),
        ("OpenClaw is a project.", ["OpenClaw"]),
        ("Not a name: lower case", None),
        ("Multiple: Forge and Atlas are agents.", ["Forge", "Atlas"]),
    ],
)
def test_proper_noun_matches_names_and_places(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match proper nouns (names, places)'."""
    check(patterns.PROPER_NOUN, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have an iPhone 15.", "iPhone 15"),
        ("We are using Windows 11.", "Windows 11"),
        ("The latest model is GPT-4.", "GPT-4"),
        ("Also look at ProductX.", "ProductX"),
        ("The Roman Empire used IV.", "Roman Empire used IV"),  # imperfect, as in the reference
    ],
)
def test_product_name_matches_versions_and_numerals(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match product-like names'."""
    check(patterns.PRODUCT_NAME, text, expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("He works at Acme GmbH.", "Acme GmbH"),
        ("The owner of Stark Industries, LLC is Tony Stark.", "Stark Industries, LLC"),
        ("Globex Corp. is another example.", "Globex Corp."),
        ("This also catches Acme Inc. and Cyberdyne Systems Ltd.", ["Acme Inc.", "Cyberdyne Systems Ltd."]),
        ("No match for Acme alone", None),
    ],
)
def test_organization_matches_legal_suffixes(text: str, expected: Expected) -> None:
    """patterns.test.ts: 'should match organization names with suffixes'."""
    check(patterns.ORGANIZATION, text, expected)


# --- Cortex's deliberate differences -------------------------------------------------


def test_names_do_not_fuse_across_lines() -> None:
    """The reference joined "Forge\\nAtlas" into one name; a line break now ends it."""
    check(patterns.PROPER_NOUN, "Forge\nAtlas", ["Forge", "Atlas"])


def test_names_with_latin_letters_match_whole() -> None:
    check(patterns.PROPER_NOUN, "Jürgen Müller met José.", ["Jürgen Müller", "José"])


def test_name_chain_is_bounded_at_six_words() -> None:
    check(patterns.PROPER_NOUN, "Aa Bb Cc Dd Ee Ff Gg Hh", ["Aa Bb Cc Dd Ee Ff", "Gg Hh"])


def test_organization_suffix_must_end_the_word() -> None:
    """The reference read "Acme AGENDA" as "Acme AG"."""
    check(patterns.ORGANIZATION, "see the Acme AGENDA", None)


def test_pronoun_i_is_not_a_roman_numeral() -> None:
    """The reference read "Atlas and I" as a product."""
    check(patterns.PRODUCT_NAME, "Then Atlas and I left.", None)


def test_common_date_needs_a_boundary_on_both_sides() -> None:
    """The reference's top-level alternation let "v1.2.30" match."""
    check(patterns.COMMON_DATE, "release v1.2.30 and 02/17/20261", None)


def test_url_does_not_swallow_a_space() -> None:
    """The reference took any character second, so "http://a b" was one URL."""
    check(patterns.URL, "http://a b", None)
    check(patterns.URL, "http://ab c", "http://ab")


def test_email_local_part_is_the_whole_run() -> None:
    assert found(patterns.EMAIL, "x" * 65 + "@example.com") is None
    check(patterns.EMAIL, "(mail: first.last+tag@example.co.uk)", "first.last+tag@example.co.uk")


def test_excluded_words_cover_the_reference_list() -> None:
    for word in patterns.EXCLUDED_WORDS:
        assert found(patterns.PROPER_NOUN, f"{word} rest") is None, word
    check(patterns.PROPER_NOUN, "Anna Theodor Isabel", ["Anna Theodor Isabel"])

