"""Patterns led by their first characters (``triggers.led_by_class``, applied by ``patterns.compile_led``
to every pattern of a ``PatternSet`` and of the signal patterns): the rewritten regex finds exactly the
original's matches — spans and groups, over whole texts and over windows (``pos``/``endpos``, as the
negation and condition checks search) — for every rewritten pattern of every language pack, over the
bench messages, the written eval sets, the tests' sentences, the development split's conversations
(when the corpora are on this machine) and generated text."""

from __future__ import annotations

import ast
import dataclasses
import os
import random
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import MessageEvent
from workers.conversation import patterns as patterns_module
from workers.conversation import triggers as triggers_module
from workers.conversation.languages import PACKS
from workers.conversation.patterns import Family, Pattern, get_patterns
from workers.conversation.signal_languages import SIGNAL_PACKS
from workers.conversation.signal_patterns import get_signal_patterns
from workers.conversation.triggers import led_by_class

_TESTS = Path(__file__).resolve().parents[2]
_LOCOMO = Path(os.environ.get("CORTEX_LOCOMO", "/work/evalset-data/locomo10.json"))
_QMSUM = Path(os.environ.get("CORTEX_QMSUM", "/work/evalset-data/qmsum_root"))
_LANGUAGE_SETS = [*((code,) for code in PACKS), ("en", "de"), tuple(PACKS)]


def _regexes(value: object, seen: set[int]) -> Iterator[re.Pattern[str]]:
    """Every compiled regex of a pattern set (its families', patterns', fields'), in field order."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern):
        yield value
    elif isinstance(value, Pattern):
        yield value.regex
        if value.lead is not None:
            yield value.lead
    elif isinstance(value, Family):
        for pattern in value.patterns:
            yield from _regexes(pattern, seen)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _regexes(getattr(value, field.name), seen)


def _as_written(languages: tuple[str, ...]) -> tuple[object, object]:
    """The pattern set and the signal patterns of ``languages`` compiled from the sources as written."""
    get_signal_patterns(languages)  # (its mood patterns, cached, compiled first as the workers compile them)
    keep = triggers_module.led_by_class  # patterns.compile_led calls it through the module (compiled or not)
    triggers_module.led_by_class = lambda source, flags=0: source  # type: ignore[assignment]
    try:
        written = patterns_module._pattern_set(languages)
        signals = get_signal_patterns.__wrapped__(languages)  # type: ignore[attr-defined]
        return written, dataclasses.replace(signals, mood=None)
    finally:
        triggers_module.led_by_class = keep  # type: ignore[assignment]


@cache
def _rewritten_pairs() -> tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]:
    """(as written, as compiled) of every regex the rewrite changed, over every language set."""
    pairs: dict[tuple[str, str, int], tuple[re.Pattern[str], re.Pattern[str]]] = {}
    for languages in _LANGUAGE_SETS:
        written, written_signals = _as_written(languages)
        compiled = patterns_module._pattern_set(languages)
        signals = get_signal_patterns.__wrapped__(languages)  # type: ignore[attr-defined]
        compiled_signals = dataclasses.replace(signals, mood=None)
        for old_set, new_set in ((written, compiled), (written_signals, compiled_signals)):
            olds, news = list(_regexes(old_set, set())), list(_regexes(new_set, set()))
            assert len(olds) == len(news)
            for old, new in zip(olds, news, strict=True):
                assert old.flags == new.flags and old.groups == new.groups and old.groupindex == new.groupindex
                if old.pattern != new.pattern:
                    pairs[old.pattern, new.pattern, old.flags] = (old, new)
    return tuple(pairs.values())


def _found(regex: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in regex.finditer(text)]


def _windowed(regex: re.Pattern[str], text: str) -> list[tuple[int, int] | None]:
    """Searches of windows of the text, as ``is_negated``/``is_conditional`` make them."""
    out: list[tuple[int, int] | None] = []
    for start in range(0, len(text), 29):
        found = regex.search(text, start, start + 24)
        out.append(found.span() if found is not None else None)
    return out


def _assert_same(texts: list[str], windows: bool = True) -> None:
    pairs = _rewritten_pairs()
    for subject in dict.fromkeys(t for text in texts for t in (text, text.lower())):
        for old, new in pairs:
            assert _found(new, subject) == _found(old, subject), (old.pattern, subject)
            if windows:
                assert _windowed(new, subject) == _windowed(old, subject), (old.pattern, subject)


def _test_sentences() -> list[str]:
    """Every string of the conversation, threads and decisions tests (the language packs' example
    sentences among them)."""
    texts: list[str] = []
    for folder in ("conversation", "threads", "decisions"):
        for path in sorted((_TESTS / "workers" / folder).glob("test_*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) > 2:
                    texts.append(node.value)
    return texts


def test_the_hot_patterns_are_rewritten_to_open_on_their_first_characters() -> None:
    # the negation, condition and hedge checks and the first decision pattern opened on ``\b``,
    # look-behinds or nested groups: ``re`` tried them at every position of a text
    written, _ = _as_written(("en", "de"))
    compiled = get_patterns(("en", "de"))
    for name in ("negation", "condition", "hedge"):
        old, new = getattr(written, name), getattr(compiled, name)
        assert old.pattern != new.pattern
        assert new.pattern[0].isalpha() or (new.pattern.startswith("(?:") and new.pattern[3].isalpha())
    assert compiled.decision.patterns[0].regex.pattern != written.decision.patterns[0].regex.pattern  # type: ignore[attr-defined]
    assert len(_rewritten_pairs()) >= 20


def test_led_by_class_spells_out_first_characters_and_keeps_groups() -> None:
    assert led_by_class(r"\bnot\b|n['’]t\b|\bnever\b") == r"n(?:(?<=\bn)ot\b|['’]t\b|(?<=\bn)ever\b)"
    assert led_by_class(r"[ab]?c+d") == "(?:ac+d|bc+d|cc*d)"
    # a capturing group after a choice stays where it is, written once
    assert led_by_class(r"(?:^|(?<=\n))(?:for|as for) (\w+)") == (
        r"(?:f(?<=(?:^|(?<=\n))f)or|a(?<=(?:^|(?<=\n))a)s for) (\w+)")
    # nothing is rewritten that would copy a capturing group, open on a broad class, or that already skips
    for source in (r"(?:a|b)?c(\w+)", r"(?:^|\s)done", r"\w+ it is", r"wtf|argh", r"(?:ab|cd)e", r"(?i:\bno)|x",
                   r"(a|b)c", r"\bx?"):
        assert led_by_class(source) == source, source


def test_the_bench_messages_match_as_written() -> None:
    from workers.bench.events import backlog

    _assert_same([msgspec.json.decode(e.data, type=MessageEvent).content
                  for e in backlog(1500, 20, 7) if e.kind == "msg"])


def test_the_written_eval_sets_and_the_tests_sentences_match_as_written() -> None:
    from workers.bench.coredigest import briefing_set

    data = Path(__file__).resolve().parents[3] / "workers" / "evals" / "data"
    texts = [m.content for name in ("briefing.json", "briefing_holdout.json")
             for stream in briefing_set(data / name).streams for m in stream]
    assert len(texts) > 50
    _assert_same([*texts, *_test_sentences()])


@pytest.mark.skipif(not (_LOCOMO.exists() and _QMSUM.exists()),
                    reason="the development corpora are not on this machine")
def test_the_development_split_matches_as_written() -> None:
    from workers.bench.coredigest import dev_set

    texts = [m.content for stream in dev_set(str(_LOCOMO), str(_QMSUM)).streams for m in stream]
    assert len(texts) > 1000
    _assert_same(texts, windows=False)


_ALPHABET = sorted({c for old, _ in _rewritten_pairs() for c in old.pattern if c.isalpha() or c in "'’ .,!?\n:;-"}
                   | set(" \n\t.,!?'’"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ALPHABET) | st.sampled_from(["not ", "nicht ", " n't", "if ", "we ", "i ", "so, "]),
                max_size=30).map("".join))
def test_generated_text_matches_as_written(text: str) -> None:
    _assert_same([text])


def test_signal_patterns_of_every_language_compile() -> None:
    for code in SIGNAL_PACKS:
        assert get_signal_patterns((code,)).languages == (code,)


def test_texts_of_each_pattern_s_own_words_match_as_written() -> None:
    # per rewritten regex, 150 texts strung from its own words and punctuation (seeded): whole-text
    # matches, windowed searches, and ``match``/``fullmatch`` (the acceptance and ratification checks)
    rng = random.Random(20)
    for old, new in _rewritten_pairs():
        words = [w for w in re.findall(r"[^\W\d_]+|['’]", old.pattern) if len(w) < 15] or ["x"]
        pieces = [*words, " ", " ", "\n", ". ", ", ", "? ", "!", "-", "(", ")", ":", "  ", "\t"]
        for _ in range(150):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
            for subject in (text, text.capitalize()):
                assert _found(new, subject) == _found(old, subject), (old.pattern, subject)
                for start in range(0, len(subject) + 1, 3):
                    a, b = old.search(subject, start, start + 11), new.search(subject, start, start + 11)
                    assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (old.pattern, subject)
                for method in ("match", "fullmatch"):
                    a, b = getattr(old, method)(subject), getattr(new, method)(subject)
                    assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), (old.pattern, subject)
