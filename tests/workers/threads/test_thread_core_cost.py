"""The threads core's work a message, less of it (issue 39, twenty-first round), each piece compared
with what the stage answered by itself on every message of the bench backlog and the written sets:
the open threads a message names asked once (``end_waits`` and ``_close_matching`` read the core's
``_named``; the threads a closure leaves named are those of it still open), a summary kept by what
``compose_summary`` reads, ``follow_claims``' check of the frames' words, the titles' words and
substrings cached a title."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from schemas.docs import Thread, ThreadsDoc
from schemas.events import MessageEvent
from shared.config import load_settings
from workers.bench.events import backlog
from workers.conversation.patterns import PatternSet, get_patterns, prepare_text
from workers.conversation.signals import extract_signals, matches_title, words_of
from workers.threads import core
from workers.threads.waits import end_waits


def _bench() -> list[list[MessageEvent]]:
    per_agent: dict[str, list[MessageEvent]] = {}
    for ev in backlog(3000, 30, 11):
        if ev.kind == "msg":
            per_agent.setdefault(ev.agent, []).append(msgspec.json.decode(ev.data, type=MessageEvent))
    return list(per_agent.values())


def _written() -> list[list[MessageEvent]]:
    from workers.bench.coredigest import briefing_set

    return briefing_set().streams


def _states(streams: list[list[MessageEvent]], patterns: PatternSet) -> Iterator[tuple[ThreadsDoc, MessageEvent]]:
    settings = load_settings({}).threads
    for stream in streams:
        doc: ThreadsDoc | None = None
        for event in stream:
            if doc is not None and doc.threads:
                yield doc, event
            doc = core.apply_message(doc, event, settings, patterns)


def _matched(threads: list[Thread], lowered: str) -> set[str]:
    words = words_of(lowered)
    return {t.id for t in threads if t.status == "open" and matches_title(t.title, words)}


@pytest.mark.parametrize("streams", [_bench, _written])
def test_the_stages_answer_with_the_named_ids_as_they_did_by_themselves(streams: object) -> None:
    patterns = get_patterns(load_settings({}).languages)
    checked = named_some = ended = closed = 0
    for doc, event in _states(streams(), patterns):  # type: ignore[operator]
        text = prepare_text(event.content)
        signals = extract_signals(text, patterns)
        threads = list(doc.threads)
        naming = core._named(threads, words_of(text))
        assert naming == _matched(threads, text.lowered)  # (the gate before the titles says no more)
        alone = end_waits(threads, text, event, patterns, doc.recent, signals.closes)
        assert end_waits(threads, text, event, patterns, doc.recent, signals.closes, naming) == alone
        after = core._close_matching(alone, naming, event.ts, text, patterns)
        # the closures as each title matched by itself closed them, and what stays named
        for before, now in zip(alone, after, strict=True):
            said = before.status == "open" and matches_title(before.title, words_of(text))
            assert now.status == ("closed" if said else before.status)
        assert {i for i in naming if any(t.id == i and t.status == "open" for t in after)} == \
            _matched(after, text.lowered)
        checked += 1
        named_some += bool(naming)
        ended += alone != threads
        closed += after != alone
    assert checked > 20 and named_some > 5 and closed > 0
    if streams is _bench:
        assert checked > 1000 and ended > 5 and closed > 5


def _threads_seen(streams: list[list[MessageEvent]], patterns: PatternSet) -> Iterator[tuple[list[Thread], str]]:
    for doc, event in _states(streams, patterns):
        yield list(doc.threads), event.content


@pytest.mark.parametrize("streams", [_bench, _written])
def test_a_kept_summary_is_the_one_composed(streams: object) -> None:
    """``_summarised`` keeps a summary by what it reads of a thread: for every thread of every
    document the cores write, and the same thread touched, decided, waiting, closed or about
    something else, the kept summary is ``compose_summary``'s."""
    import msgspec.structs

    from workers.summaries import compose_summary

    patterns = get_patterns(load_settings({}).languages)
    seen = 0
    for threads, content in _threads_seen(streams(), patterns):  # type: ignore[operator]
        for t in threads:
            variants = [t, msgspec.structs.replace(t, mentions=t.mentions + 1, last_activity=t.last_activity),
                        msgspec.structs.replace(t, decisions=[*t.decisions, content[:60]]),
                        msgspec.structs.replace(t, waiting_for=content[:40] or None),
                        msgspec.structs.replace(t, status="closed" if t.status == "open" else "open"),
                        msgspec.structs.replace(t, about=content[:80]), msgspec.structs.replace(t, about="")]
            for v in variants:
                assert core._summary_of(v) == compose_summary(v)
                seen += 1
    assert seen > 100


_FACTS = ["Our deploy day is Tuesday.", "The standup is at 9:30.", "Die Datenbank läuft auf Postgres 14.",
          "STRASSE Größe is 40 cm.", "The ΣΥΣΤΗΜΑ version is 2.1."]


@pytest.mark.parametrize("streams", [_bench, _written])
def test_a_message_without_a_frame_s_words_has_no_sentence_with_them(streams: object) -> None:
    """``follow_claims`` skips a message that does not hold every word of some frame (case-folded):
    each sentence of it whose words hold a frame is in a message that passes the check — over the
    bench's and the written sets' messages against their threads' frames and a few facts'."""
    from workers.conversation.sentences import sentence_spans
    from workers.threads.summary import _fact_frames, _word_set

    patterns = get_patterns(load_settings({}).languages)
    facts = _fact_frames(tuple(_FACTS))
    held = 0
    for threads, content in _threads_seen(streams(), patterns):  # type: ignore[operator]
        frames = (*_fact_frames(tuple(t.about for t in threads)), *facts)
        for text in (content, content.upper(), f"{content} {_FACTS[len(content) % len(_FACTS)].upper()}"):
            folded = text.casefold()
            passes = any(all(map(folded.__contains__, frame)) for frame in frames)
            for a, b in sentence_spans(text):
                if any(frame <= _word_set(text[a:b]) for frame in frames):
                    assert passes, text
                    held += 1
    assert held > 10


def _title_substrings_whole(titles: tuple[str, ...]) -> tuple[str, ...]:
    """``title_substrings`` as it was written before this round (every title's literals each time)."""
    from workers.conversation.signals import _title_match

    literals: list[str] = []
    for title in titles:
        whole, terms = _title_match(title)
        literals += [whole] if whole is not None else [w for term, parts in terms for w in (term, *parts)]
    return tuple(dict.fromkeys(literals))


def _titles_words_whole(titles: tuple[str, ...], stopwords: frozenset[str]) -> frozenset[str]:
    from workers.threads.topics import _words

    return frozenset(w for title in titles for w in _words(title.lower().replace("-", " "), stopwords)) | frozenset(
        t.lower() for t in titles)


@pytest.mark.parametrize("streams", [_bench, _written])
def test_the_titles_words_and_substrings_are_each_title_s_together(streams: object) -> None:
    from workers.conversation.signals import title_substrings
    from workers.threads.topics import _titles_words

    patterns = get_patterns(load_settings({}).languages)
    extra = ("Datenbank-Upgrade", "Performance-Bug im Dashboard", "결제 모듈", "支付网关", "e-mail flow",
             "the E-Mail flow")
    seen = 0
    for threads, _ in _threads_seen(streams(), patterns):  # type: ignore[operator]
        titles = tuple(t.title for t in threads)
        for some in (titles, titles[::-1], (*titles, *extra), titles[1:] + titles[:1]):
            assert title_substrings(some) == _title_substrings_whole(some)
            assert _titles_words(some, patterns.phrase_breaks) == _titles_words_whole(some, patterns.phrase_breaks)
            seen += 1
    assert seen > 50
