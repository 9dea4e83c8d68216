"""Cutting text the way a reader accepts: between words, marked, never mid-word; names as written."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from schemas.docs import Entity
from schemas.types import EntityType
from workers.render import clip_lines, clip_words, entity_names


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short enough", 20, "short enough"),
        ("Der Rollback-Plan liegt im Wiki", 20, "Der Rollback-Plan…"),
        ("auf flaky network tests", 17, "auf flaky…"),
        ("x" * 30, 10, "x" * 9 + "…"),  # one word longer than the room: cut where the limit falls
        ("first, second, third", 15, "first, second…"),  # no dangling comma before the mark
        ("数据库迁移的问题已经解决了", 6, "数据库迁移…"),  # no spaces: any character is a boundary
    ],
)
def test_clip_words(text: str, limit: int, expected: str) -> None:
    assert clip_words(text, limit) == expected
    assert len(clip_words(text, limit)) <= limit


def test_clip_lines_keeps_whole_lines_and_marks_a_cut_one() -> None:
    text = "line one is here\nline two is longer than the rest\nline three"
    assert clip_lines(text, 100) == text
    assert clip_lines(text, 17) == "line one is here"
    cut = clip_lines(text, 45)
    assert cut.startswith("line one is here\nline two") and cut.endswith("…") and len(cut) <= 45
    assert clip_lines("y" * 50, 10) == ""  # less than a useful piece of the only line: nothing


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        # the cut sentence would keep one word of its decision: the summary ends before it
        ("The auth migration is done ✅ all services validate tokens. Decided: For the auth migration we moved "
         "token signing.", 70, "The auth migration is done ✅ all services validate tokens."),
        ("Done. Decided: For the auth migration we moved token signing.", 35, "Done."),  # 3 words: a stub
        ("Done. Decided: For the auth migration we moved token signing.", 40, "Done. Decided: For the auth migration…"),
        ("It works. Thanks! Next I'll look at the bug once Maria sends the profile.", 24, "It works. Thanks!"),
        ("One long sentence without any end that is cut somewhere", 20, "One long sentence…"),  # the only one
        ("数据库迁移完成了。我们决定下周末迁移剩下的服务", 12, "数据库迁移完成了。"),
    ],
)
def test_a_cut_never_leaves_a_stub(text: str, limit: int, expected: str) -> None:
    assert clip_words(text, limit) == expected
    assert len(clip_words(text, limit)) <= limit


def _entity(id: str, type: EntityType, value: str, *mentions: str) -> Entity:
    return Entity(id=id, type=type, value=value, mentions=list(mentions), count=len(mentions), importance=0.5,
                  last_seen=datetime(2026, 2, 17, tzinfo=UTC), source=["regex"])


def test_an_organisation_is_shown_as_first_written_with_its_legal_suffix() -> None:
    names = entity_names([
        _entity("organization:acme-analytics", "organization", "Acme Analytics", "Acme Analytics GmbH"),
        _entity("organization:globex", "organization", "Globex", "Globex", "Globex Corp."),  # the longer form
        _entity("organization:initech", "organization", "Initech", "Initech"),  # never written with a suffix
        _entity("organization:umbrella", "organization", "Umbrella", "The Umbrella AG"),  # not this name's form
        _entity("person:maria", "person", "Maria", "Maria"),
        _entity("product:atlas", "product", "Atlas", "Atlas."),  # other types: the value, punctuation dropped
    ])
    assert names == {"organization:acme-analytics": "Acme Analytics GmbH", "organization:globex": "Globex Corp.",
                     "organization:initech": "Initech", "organization:umbrella": "Umbrella",
                     "person:maria": "Maria", "product:atlas": "Atlas"}
