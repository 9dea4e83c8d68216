"""The sentence ends (``workers.conversation.sentences``): ``_END_SCAN``, the scan the cores use,
finds exactly ``_END``'s matches — the pattern that says what a sentence end is — for every text."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.events import MessageEvent
from workers.conversation import sentences

_CHARS = ".!?…。！？\n\"'”’»)]\\ \t\r\x0b\x0c\x1c\u00a0\u3000ab1. 20"


def _spans(found: object) -> list[tuple[int, int]]:
    return [m.span() for m in found]  # type: ignore[attr-defined]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(_CHARS), max_size=40) | st.text(max_size=30))
def test_the_led_scan_finds_the_end_pattern_s_matches(text: str) -> None:
    assert _spans(sentences._END_SCAN.finditer(text)) == _spans(sentences._END.finditer(text))


def test_the_bench_messages_end_where_the_end_pattern_ends_them() -> None:
    from workers.bench.events import backlog

    texts = [msgspec.json.decode(e.data, type=MessageEvent).content for e in backlog(600, 10, 7) if e.kind == "msg"]
    texts += ["Am 20. März. Done!! “Really?” he said… Next。好！\nok", "v4.2 is out... (really.) x"]
    for text in texts:
        assert _spans(sentences._END_SCAN.finditer(text)) == _spans(sentences._END.finditer(text))
    assert sentences.sentence_ends("Done. Next!") == [5, 11]
