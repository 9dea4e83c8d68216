"""A text said before is answered from a table (``memo_by_text``), and a family's passing patterns
are read once per text (``Family.passing``): the same answers as the functions computed anew."""

from __future__ import annotations

import msgspec

from schemas.events import MessageEvent
from shared.config import parse_languages
from workers.bench.events import backlog
from workers.conversation import patterns as patterns_module
from workers.conversation import signals as signals_module
from workers.conversation.languages import PACKS
from workers.conversation.patterns import (
    MEMO_CHARS,
    MEMO_TEXTS,
    SCAN_CHARS,
    Family,
    MatchText,
    PatternSet,
    clear_memos,
    get_patterns,
    memo_by_text,
    prepare_text,
)
from workers.conversation.promises import find_delegated, find_promises
from workers.conversation.signals import detect_mood, extract_signals
from workers.conversation.statements import find_decisions
from workers.threads.topics import _phrases_of, phrases_of


def _bench_texts(events: int) -> list[str]:
    decode = msgspec.json.Decoder(MessageEvent).decode
    return [decode(e.data).content for e in backlog(events, 50) if e.kind == "msg"]


def test_a_text_said_again_is_answered_as_it_was_computed_anew() -> None:
    """Over the bench's messages (most said again), each memoised function answers a fresh copy of
    a text (another string object, so no cache by identity helps) as the unwrapped function does
    for it, with every table emptied first."""
    texts = _bench_texts(3000)
    assert len(set(texts)) < len(texts)  # the generator repeats: the tables answer some
    for languages in (("en", "de"), parse_languages("all")):
        patterns = get_patterns(languages)
        clear_memos()
        for text in texts:
            fresh = "".join(list(text))  # an equal string, not the same object
            mt = prepare_text(fresh)
            assert extract_signals(mt, patterns) == signals_module._signals.__wrapped__(mt, patterns)  # type: ignore[attr-defined]
            assert detect_mood(mt, patterns) == signals_module._mood.__wrapped__(mt, patterns)  # type: ignore[attr-defined]
            assert find_decisions(mt, patterns) == find_decisions.__wrapped__(mt, patterns)  # type: ignore[attr-defined]
            assert find_promises(mt, patterns) == find_promises.__wrapped__(mt, patterns)  # type: ignore[attr-defined]
            assert find_delegated(mt, patterns) == find_delegated.__wrapped__(mt, patterns)  # type: ignore[attr-defined]
            assert patterns.closes(mt) == patterns_module._closes.__wrapped__(mt, patterns)  # type: ignore[attr-defined]
            stop = patterns.phrase_breaks
            assert phrases_of(mt.lowered, stop) == _phrases_of(mt.lowered, stop)


def test_the_memo_keys_on_the_text_and_the_pattern_set() -> None:
    """Another pattern set asking about the same text gets its own answer (German words say
    nothing to the English patterns), a long text is never kept, and a full table drops its
    older half."""
    calls: list[str] = []

    @memo_by_text
    def languages_of(text: MatchText, patterns: PatternSet) -> tuple[str, ...]:
        calls.append(text.original)
        return patterns.languages

    en, de = get_patterns(("en",)), get_patterns(("de",))
    text = prepare_text("Wir haben entschieden, Postgres zu nehmen.")
    assert languages_of(text, en) == ("en",)
    assert languages_of(prepare_text(str(text.original)), en) == ("en",)
    assert languages_of(text, de) == ("de",)
    assert calls == [text.original, text.original]
    assert find_decisions(text, de) and not find_decisions(text, en)

    long = prepare_text("x" * (MEMO_CHARS + 1))
    languages_of(long, en)
    languages_of(long, en)
    assert calls[-2:] == [long.original, long.original]

    calls.clear()
    for i in range(MEMO_TEXTS + 1):
        languages_of(prepare_text(f"message {i}"), en)
    languages_of(prepare_text("message 0"), en)  # taken first: dropped with the older half
    languages_of(prepare_text(f"message {MEMO_TEXTS}"), en)  # the latest: kept
    assert calls[-1] == "message 0"
    assert len(calls) == MEMO_TEXTS + 2


def test_a_family_passes_the_patterns_whose_pre_check_passes() -> None:
    """``Family.passing`` is, in order, the patterns whose own pre-check passes — scanned texts,
    substrings, texts too long to scan — and none when the family's pre-check fails."""
    patterns = get_patterns(tuple(PACKS))
    families = [f for f in (getattr(patterns, name) for name in patterns.__dataclass_fields__)
                if isinstance(f, Family)]
    texts = [prepare_text(t) for t in _bench_texts(1000)]
    texts += [prepare_text(t.original[5:]) for t in texts[:50]]
    texts += [prepare_text(" ".join([t.original] * (SCAN_CHARS // len(t.original) + 1))) for t in texts[:5]]
    texts += [prepare_text("Das ist erledigt, wir haben beschlossen: ab jetzt Postgres.")]
    for text in texts:
        for family in families:
            expected = tuple(p for p in family if p.may_match(p.subject(text)))
            assert family.passing(text) == expected
            assert family.passing(text) == expected  # (the kept answer)
            assert bool(expected) == family.may_match(text)
