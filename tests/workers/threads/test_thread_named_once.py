"""The open threads a message names are asked once a message (issue 39, twenty-first round):
``end_waits`` and ``_close_matching`` read the core's ``_named`` instead of matching every title
again, and the threads a closure leaves named are those of it still open. Each is compared with
what the stage answered by itself, on every message of the bench backlog and the written sets."""

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
