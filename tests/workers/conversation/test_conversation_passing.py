"""A family's passing patterns are read once per text (``Family.passing``): the patterns whose
own pre-check passes, as ``iter_matches`` and the closures ran them one by one before."""

from __future__ import annotations

import msgspec

from schemas.events import MessageEvent
from workers.bench.events import backlog
from workers.conversation.languages import PACKS
from workers.conversation.patterns import (
    SCAN_CHARS,
    Family,
    get_patterns,
    prepare_text,
)


def _bench_texts(events: int) -> list[str]:
    decode = msgspec.json.Decoder(MessageEvent).decode
    return [decode(e.data).content for e in backlog(events, 50) if e.kind == "msg"]


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
