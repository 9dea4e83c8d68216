"""Entity extraction and merging.

Parity cases are ported from ``packages/openclaw-knowledge-engine/test/entity-extractor.test.ts``
(alberthild/vainplex-openclaw); each docstring names the ``describe``/``it`` case.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.docs import Entity
from workers.knowledge.extract import (
    MAX_MENTIONS,
    MAX_SCAN_CHARS,
    MAX_VALUE_CHARS,
    canonicalize,
    entity_id,
    extract_entities,
    initial_importance,
    merge_entities,
)

TS = datetime(2026, 2, 17, 10, 30, tzinfo=UTC)
LATER = datetime(2026, 2, 18, 9, 0, tzinfo=UTC)


def entity(**fields: object) -> Entity:
    base = Entity(
        id="person:claude", type="person", value="Claude", mentions=["Claude"],
        count=1, importance=0.7, last_seen=TS, source=["regex"],
    )
    return msgspec.structs.replace(base, **fields)


def test_extracts_a_simple_email_entity() -> None:
    """entity-extractor.test.ts: extract / 'should extract a simple email entity'."""
    entities = extract_entities("My email is test@example.com.", TS)
    assert len(entities) == 1
    found = entities[0]
    assert found.type == "email"
    assert found.value == "test@example.com"
    assert found.id == "email:test@example.com"
    assert found.mentions == ["test@example.com"]


def test_extracts_multiple_different_entities() -> None:
    """entity-extractor.test.ts: extract / 'should extract multiple different entities'."""
    entities = extract_entities("Contact Atlas via atlas@acme.com on 2026-02-17.", TS)
    assert len(entities) == 3
    assert sorted(e.value for e in entities) == ["2026-02-17", "Atlas", "atlas@acme.com"]


def test_counts_multiple_mentions_of_the_same_entity() -> None:
    """entity-extractor.test.ts: extract / 'should handle multiple mentions of the same entity'."""
    entities = extract_entities("Project OpenClaw is great. I love OpenClaw!", TS)
    assert len(entities) == 1
    found = entities[0]
    assert found.type == "unknown"
    assert found.value == "OpenClaw"
    assert found.count == 2
    assert found.mentions == ["OpenClaw"]


def test_identifies_and_canonicalizes_an_organization() -> None:
    """entity-extractor.test.ts: extract / 'should correctly identify and canonicalize an organization'."""
    entities = extract_entities("I work for Acme GmbH. It is a German company.", TS)
    org = next(e for e in entities if e.type == "organization")
    assert org.value == "Acme"
    assert org.id == "organization:acme"
    assert org.mentions == ["Acme GmbH"]


def test_extracts_dates_in_various_formats() -> None:
    """entity-extractor.test.ts: extract / 'should extract dates in various formats'."""
    text = "Event dates: 2026-01-01, 02/03/2024, and 4. Mar 2025 is the German date."
    dates = [e for e in extract_entities(text, TS) if e.type == "date"]
    assert sorted(e.value for e in dates) == ["02/03/2024", "2026-01-01", "4. Mar 2025"]


def test_returns_nothing_for_text_without_entities() -> None:
    """entity-extractor.test.ts: extract / 'should return an empty array for text with no entities'."""
    assert extract_entities("this is a plain sentence.", TS) == []


def test_merges_two_disjoint_lists() -> None:
    """entity-extractor.test.ts: mergeEntities / 'should merge two disjoint lists of entities'."""
    a = [entity()]
    b = [entity(id="org:acme", type="organization", value="Acme", importance=0.8, mentions=["Acme"], source=["llm"])]
    assert len(merge_entities(a, b)) == 2


def test_merges_entities_with_the_same_id() -> None:
    """entity-extractor.test.ts: mergeEntities / 'should merge entities with the same ID'."""
    a = [entity()]
    b = [entity(count=2, importance=0.85, mentions=["claude's", "Claude"], source=["llm"])]
    merged = merge_entities(a, b)
    assert len(merged) == 1
    one = merged[0]
    assert one.id == "person:claude"
    assert one.count == 3
    assert one.importance == 0.85
    assert sorted(one.mentions) == sorted(["Claude", "claude's"])
    assert sorted(one.source) == ["llm", "regex"]


def test_merge_handles_an_empty_list() -> None:
    """entity-extractor.test.ts: mergeEntities / 'should handle an empty list'."""
    a = [entity()]
    assert merge_entities(a, []) == a
    assert merge_entities([], a) == a
    assert merge_entities([], []) == []


# --- Cortex additions ----------------------------------------------------------------


def test_entities_carry_the_event_time_not_the_clock() -> None:
    assert {e.last_seen for e in extract_entities("Atlas met Forge on 2026-02-17.", TS)} == {TS}


def test_merge_keeps_the_later_last_seen_and_never_modifies_inputs() -> None:
    a, b = [entity()], [entity(last_seen=LATER, mentions=["CLAUDE"])]
    before = msgspec.json.encode([a, b])
    merged = merge_entities(a, b)
    assert merged[0].last_seen == LATER
    assert merged[0].mentions == ["Claude", "CLAUDE"]
    assert msgspec.json.encode([a, b]) == before


def test_initial_importance_by_type() -> None:
    assert [initial_importance(t, "x") for t in ("organization", "person", "product", "location")] == [
        0.8, 0.7, 0.6, 0.5,
    ]
    assert [initial_importance(t, "x") for t in ("date", "email", "url")] == [0.4, 0.4, 0.4]
    assert initial_importance("unknown", "Claude Keller") == 0.5
    assert initial_importance("unknown", "Jean-Luc") == 0.5
    assert initial_importance("unknown", "Claude") == 0.3


def test_extracted_importance_follows_the_type() -> None:
    text = "Claude Keller of Acme GmbH uses Windows 11 since 2026-01-01, see https://acme.example.com."
    by_id = {e.id: e.importance for e in extract_entities(text, TS)}
    assert by_id["organization:acme"] == 0.8
    assert by_id["product:windows-11"] == 0.6
    assert by_id["date:2026-01-01"] == 0.4
    assert by_id["url:https://acme.example.com"] == 0.4
    assert by_id["unknown:claude-keller"] == 0.5


def test_ids_are_type_and_lowercase_slug() -> None:
    assert entity_id("organization", canonicalize("Stark Industries, LLC", "organization")) == (
        "organization:stark-industries"
    )
    assert entity_id("unknown", canonicalize("Claude Keller.", "unknown")) == "unknown:claude-keller"


def test_mentions_are_capped_per_entity() -> None:
    local = "abcdefghijklmnopqrstuvwxyz"
    # 25 spellings of one address (one letter upper-cased), all the same lower-case id.
    spellings = [local] + [local[:k] + local[k].upper() + local[k + 1 :] for k in range(1, 25)]
    found = extract_entities(" ".join(f"{s}@example.com" for s in spellings), TS)
    assert [e.id for e in found] == ["email:abcdefghijklmnopqrstuvwxyz@example.com"]
    assert found[0].count == 25
    assert found[0].mentions == [f"{s}@example.com" for s in spellings[:MAX_MENTIONS]]
    many = [entity(mentions=[f"Claude{i}" for i in range(15)]), entity(mentions=[f"C{i}" for i in range(15)])]
    assert len(merge_entities(many[:1], many[1:])[0].mentions) == MAX_MENTIONS


def test_overlong_matches_are_not_entities() -> None:
    url = "https://example.com/" + "a" * MAX_VALUE_CHARS
    assert extract_entities(f"see {url} now", TS) == []


def test_only_the_head_of_a_long_message_is_scanned() -> None:
    filler = "x " * (MAX_SCAN_CHARS // 2)
    found = extract_entities(f"Atlas {filler} Forge", TS)
    assert [e.value for e in found] == ["Atlas"]


def test_pattern_prechecks_change_no_result() -> None:
    """The pre-checks (``@``, ``://``, digits, legal suffixes, the product hint) only skip
    scans that would find nothing: the entities equal those of running all nine patterns."""
    from workers.bench.events import EventSource
    from workers.knowledge import patterns as kp
    from workers.knowledge.extract import _record

    def unguarded(text: str) -> list[Entity]:
        found: dict[str, Entity] = {}
        for _name, pattern, entity_type in kp.ENTITY_PATTERNS:
            for match in pattern.finditer(text):
                _record(found, match.group().strip(), entity_type, TS)
        return list(found.values())

    source = EventSource(8, 3)
    texts = [msgspec.json.decode(source.message(agent).data)["content"] for agent in source.agents * 40]
    texts += ["Mail anna@example.org, see https://x.io/a on 2026-03-01 or 1.2.2026 or 3. März 2026",
              "Acme GmbH and Foo Inc. met Bar AG on March 3rd, 2026", "AGENDA for Python 3.12 and GPT-4",
              "Final Fantasy VII and Rocky II", "we shipped ProductX, then Age of Empires X", "Atlas and I",
              "the CLI and the API", "Chapter XIV of Book I", "Ubuntu Jammy v22.04 on ARM"]
    # the product scan's pre-check: what it lets through, what it skips
    assert kp.PRODUCT_HINT.search("Final Fantasy VII") and kp.PRODUCT_HINT.search("Age of Empires X")
    assert not kp.PRODUCT_HINT.search("Atlas and I met Forge at Berlin.")
    for text in texts:
        assert extract_entities(text, TS) == unguarded(text), text


@given(st.text(alphabet="IVXLCDMiva Zz09-.\t\nÄé_", max_size=40))
@settings(max_examples=200, deadline=None)
def test_no_product_name_without_its_hint(text: str) -> None:
    """Whatever the text, a PRODUCT_NAME match implies a digit or PRODUCT_HINT (the scan's pre-check)."""
    from workers.knowledge import patterns as kp

    if kp.PRODUCT_NAME.search(text):
        assert kp.DIGIT.search(text) or kp.PRODUCT_HINT.search(text), text


def values(text: str) -> list[str]:
    return [e.value for e in extract_entities(text, TS)]


def test_chat_sentence_openers_are_not_entities() -> None:
    """Cortex goes further than the reference (docs/contract-extensions.md, "Entity noise"): the
    demo conversation's thanks, interjections and German openers were half its entities."""
    assert values("Awesome, that's brilliant! 🚀 Great work on the auth migration.") == []
    assert values("Thanks! Next I'll look at the dashboard bug. Nice momentum today!") == []
    assert values("Sure. Regarding the cluster upgrade: agreed.") == []
    assert values("Wir haben beschlossen, Redis zu nehmen. Jetzt geht es los.") == ["Redis"]
    assert values("Beim Deployment hat Maria geholfen.") == ["Deployment", "Maria"]  # nouns stay


def test_an_opener_inside_a_name_or_before_one_leaves_the_name() -> None:
    assert values("Thanks Maria, see you.") == ["Maria"]  # was "Thanks Maria"
    assert values("Hey John! Yeah, sounds good.") == ["John"]  # was "Hey John" and "Yeah"
    assert values("We shipped it to Great Britain.") == ["Great Britain"]  # praise word inside a name
    assert values("OK, ask Claude Keller.") == ["Claude Keller"]


def test_a_praise_word_is_dropped_only_alone_at_a_sentence_start() -> None:
    assert values("Done! 🚀 Great work. Next, the rollout.") == []
    assert values("We build the site with Next and deploy it.") == ["Next"]  # mid-sentence: a name
    assert values("Beijing was great. Seeing you there was fun.") == ["Beijing", "Seeing"]  # gerunds stay


def test_a_quantity_is_not_a_product() -> None:
    """The reference read "with 32 GB" (the demo) and "for 3 days" as products: half of LoCoMo's
    53 product mentions were such quantities."""
    for text in ("add a node pool with 32 GB nodes", "it took 30 seconds", "For 3 weeks", "seit 3 Tagen",
                 "the score was 10", "the top-10 list"):
        assert [e.value for e in extract_entities(text, TS) if e.type == "product"] == [], text
    assert [e.value for e in extract_entities("upgrade node 18 first", TS) if e.type == "product"] == ["node 18"]
    assert [e.value for e in extract_entities("I played Witcher 3 for 3 weeks", TS)
            if e.type == "product"] == ["Witcher 3"]
