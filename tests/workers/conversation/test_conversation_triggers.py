"""The required-literal pre-check: it may only skip a regex that cannot match."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workers.conversation.languages import PACKS, UNIVERSAL_MOOD
from workers.conversation.patterns import SCAN_CHARS, Family, LiteralScan, Pattern, get_patterns
from workers.conversation.triggers import any_literal, required_literals, split_lead, unwrapped


def _distinct(texts: Iterable[str]) -> list[str]:
    """Each text once, in the order first met: the bench's backlog repeats its templates (29 750
    messages are 12 613 texts; 1 950 are 1 205), and every check here is a function of the text
    alone, so a repeat checks nothing new (the literal scan's kept answers have their own test)."""
    return list(dict.fromkeys(texts))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("(?:decided|decision|agreed)", ("decided", "decision", "agreed")),
        (r"(?:^|\s)(?:it |that )works(?:\s|[.!]|$)", ("it works", "that works")),
        (r"(?:^|\s)(?:is |all )?(?:done|fixed)(?:\s|[.!]|$)", ("done", "fixed")),  # ("is done" holds "done")
        (r"need[^\n]{0,200}first", ("first",)),
        (r"let['’]?s do", ("lets do", "let's do", "let’s do")),
        (r"\bab (?:jetzt|sofort),? wir", ("ab jetzt wir", "ab jetzt, wir", "ab sofort wir", "ab sofort, wir")),
        (r"(?:(?:läuft|geht) wieder|klappt jetzt)\b", ("läuft wieder", "geht wieder", "klappt jetzt")),
        (r"standardi[sz]e", ("standardise", "standardize")),
        (r"bzgl\.?", ("bzgl",)),
        (r"a+bc", ("bc",)),
        (r"(?:decided|agreed|agreed on)", ("decided", "agreed")),
        (r"x[^y]z", ("x",)),  # (a negated class is no list of characters)
        ("✅", ("✅",)),
    ],
)
def test_required_literals_of_a_pattern(source: str, expected: tuple[str, ...]) -> None:
    assert required_literals(source, spelled_out=True) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (r"let['’]?s do", ("s do",)),
        (r"(?:^|\s)(?:it |that )works(?:\s|[.!]|$)", ("works",)),
        (r"\bab (?:jetzt|sofort),? wir", ("jetzt", "sofort")),
        (r"(?:decided|agreed|agreed on)", ("decided", "agreed")),
    ],
)
def test_required_literals_not_spelled_out_are_runs_of_literal_characters(source: str, expected: tuple[str, ...]
                                                                         ) -> None:
    assert required_literals(source) == expected


@pytest.mark.parametrize("source", [r"\w+", r"(\w[\w\s-]{3,40})", r"(?:a|\d)", r"x?", r"\u00e4"])
def test_required_literals_are_unknown_when_a_match_needs_no_literal(source: str) -> None:
    assert required_literals(source) is None
    assert required_literals(source, spelled_out=True) is None


def _all_sources() -> list[str]:
    sources = [source for _, source in UNIVERSAL_MOOD]
    for pack in PACKS.values():
        sources += [*pack.decision, *pack.close, *pack.wait, *pack.topic, *pack.commitment, *pack.due]
        sources += [*pack.object_request]  # (twentieth round: a thing asked for, kept by its literals)
        sources += [source for _, source in pack.mood]
    return sources


@pytest.mark.parametrize("source", _all_sources())
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_match_of_a_language_pattern_contains_one_of_its_triggers(source: str, data: st.DataObject) -> None:
    """Soundness of the pre-check on the real packs: for generated texts that match the
    pattern, the matched text holds one of its triggers."""
    triggers = required_literals(source)
    spelled = required_literals(source, spelled_out=True)
    assert triggers, source
    assert spelled, source
    text = data.draw(st.from_regex(source, fullmatch=True))
    found = re.search(source, text)
    assert found is not None
    assert any(t in text for t in triggers), (source, text)
    assert any(t in text for t in spelled), (source, text)


_LETTERS = "abdenops ä✅-.!'"


@settings(max_examples=400, deadline=None, database=None)
@given(literals=st.lists(st.text(_LETTERS, max_size=5), max_size=8), text=st.text(_LETTERS, max_size=40))
def test_any_literal_finds_exactly_the_texts_holding_a_literal(literals: list[str], text: str) -> None:
    """The trie regex answers what ``any(literal in text ...)`` answers: literals sharing
    prefixes, one extending another, the empty one, regex syntax characters."""
    found = any_literal(literals)
    assert (found is not None and found.search(text) is not None) == any(lit in text for lit in literals)


def test_any_literal_merges_prefixes_and_drops_extensions() -> None:
    assert any_literal(["passes", "pass", "passed", "done", "do.", "don"]) is not None
    assert any_literal(["passes", "pass", "passed"]).pattern == "pass"  # type: ignore[union-attr]
    assert any_literal([]) is None


def _family_may_match_by_scans(family: Family, lowered: str, original: str) -> bool:
    """The pre-check as ``in`` scans, one per trigger (what the trie regex replaced); of a text
    the scan reads, one per trigger spelled out (``Pattern.scan_triggers``)."""
    if family.always:
        return True
    if LiteralScan.covers(lowered):
        return any(t in (lowered if p.lowered else original) for p in family for t in p.scan_triggers or ())
    return any(t in lowered for t in (*family.lowered_ascii, *family.lowered_other)) or any(
        t in original for t in (*family.original_ascii, *family.original_other))


def test_family_pre_check_answers_as_the_trigger_scans_on_the_bench_backlog() -> None:
    """Exhaustive on the bench's 29 750-message backlog (its 12 613 texts; every language's families), plus
    every trigger itself: the combined regex skips a family exactly when no trigger occurs."""
    import msgspec

    from schemas.events import MessageEvent
    from workers.bench.events import backlog
    from workers.conversation.languages import PACKS
    from workers.conversation.patterns import prepare_text

    decode = msgspec.json.Decoder(MessageEvent).decode
    texts = [prepare_text(t) for t in _distinct(decode(e.data).content for e in backlog(30000, 50) if e.kind == "msg")]
    patterns = get_patterns(tuple(PACKS))
    families = [getattr(patterns, name) for name in
                ("decision", "close", "wait", "topic", "commitment", "due", "mood", "frame", "arrival")]
    triggers = [prepare_text(t) for f in families
                for t in (*f.lowered_ascii, *f.lowered_other, *f.original_ascii, *f.original_other)]
    for family in families:
        for text in [*texts, *triggers]:
            assert family.may_match(text) == _family_may_match_by_scans(family, text.lowered, text.original), text


def _mood_sources() -> list[list[str]]:
    """Each mood's sources of every pack, as ``patterns._merged_mood`` joins them."""
    by_mood: dict[str, list[str]] = {}
    for mood, source in UNIVERSAL_MOOD:
        by_mood.setdefault(mood, []).append(source)
    for pack in PACKS.values():
        for mood, source in pack.mood:
            by_mood.setdefault(mood, []).append(source)
    return list(by_mood.values())


def _found(regex: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in regex.finditer(text)]


def _around(source: str, data: st.DataObject) -> str:
    text = data.draw(st.text("ab ,.!\n") | st.from_regex(source, fullmatch=True))
    return data.draw(st.text("x .", max_size=4)) + text + data.draw(st.text(" .y", max_size=4))


@pytest.mark.parametrize("source", _all_sources())
@settings(max_examples=30, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_an_unwrapped_pattern_finds_what_the_pattern_finds(source: str, data: st.DataObject) -> None:
    """``unwrapped`` only drops groups around a whole source: every match (span and
    groups) stays, on texts around the pattern's own matches."""
    text = _around(source, data)
    assert _found(re.compile(source), text) == _found(re.compile(unwrapped(source)), text)


@pytest.mark.parametrize("sources", _mood_sources())
@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_mood_joined_from_unwrapped_sources_finds_what_the_wrapped_join_finds(
        sources: list[str], data: st.DataObject) -> None:
    joined = "|".join(sources)
    text = "".join(_around(data.draw(st.sampled_from(sources)), data) for _ in range(3))
    assert _found(re.compile(joined), text) == _found(re.compile("|".join(map(unwrapped, sources))), text)


def test_unwrapped_drops_only_groups_around_the_whole_source() -> None:
    assert unwrapped("(?:wtf|argh)") == "wtf|argh"
    assert unwrapped("(?:(?:a|b))") == "a|b"
    for kept in ("(?:a)|(?:b)", "(?:a)?", "(?:a)b", "(a|b)", "(?:[)]|b)c", r"(?:a\)|b)c", "(?=a)"):
        assert unwrapped(kept) == kept


def _every_source() -> list[str]:
    """Every pattern source of every pack, the families issue 37 added included."""
    sources = _all_sources()
    for pack in PACKS.values():
        sources += [*pack.proposal, *pack.requested, *pack.frame, *pack.arrival, *pack.reason]
    return sources


@pytest.mark.parametrize("source", [s for s in _every_source() if split_lead(unwrapped(s))[0] is not None])
@settings(max_examples=15, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_pattern_with_its_lead_split_off_finds_what_the_pattern_finds(source: str, data: st.DataObject) -> None:
    """``split_lead``: the rest's matches kept where the leading assertions hold are the
    pattern's matches (spans and groups), on texts around its own matches."""
    text = "".join(_around(source, data) for _ in range(2))
    compiled = Pattern.compile(source, lowered=False)
    split = [(m.span(), m.groups()) for m in compiled.find_all(text)]
    assert split == _found(re.compile(source), text)


def test_a_lead_is_split_off_only_before_a_literal() -> None:
    assert split_lead(r"(?<![a-z])(?:decided|decision)") == (r"(?<![a-z])", "(?:decided|decision)")
    assert split_lead(r"\bwir (?:nehmen)") == (r"\b", "wir (?:nehmen)")
    for kept in (r"(?<![a-z])a|b",  # the lead guards one alternative only
                 r"(?<![\w'’])[\w.+#-]+ it is",  # a class: quadratic on a long word
                 r"(?<=(x))y",  # it captures
                 r"(?<![a-z])(?:a?b)", "decided"):
        assert split_lead(kept) == (None, kept), kept


def test_a_split_lead_scans_a_hostile_message_in_linear_time() -> None:
    """64 KiB of "xdecided": every occurrence fails the lead; each search finds the next one."""
    pattern = Pattern.compile(r"(?<![a-z])decided", lowered=False)
    assert pattern.lead is not None
    assert list(pattern.find_all("xdecided" * 8192)) == []
    assert [m.start() for m in pattern.find_all("decided xdecided, decided")] == [0, 18]


@settings(max_examples=400, deadline=None, database=None)
@given(literals=st.lists(st.text(_LETTERS, min_size=1, max_size=5), max_size=8), text=st.text(_LETTERS, max_size=40))
def test_the_literal_scan_finds_exactly_the_literals_a_text_holds(literals: list[str], text: str) -> None:
    """One pass finds every literal the text holds, overlapping ones and ones that extend
    others included, on either copy of the text, and nothing else."""
    scan = LiteralScan(literals, literals[::-1])
    holds = frozenset(lit for lit in literals if lit in text)
    assert scan.found(text, True) == holds
    assert scan.found(text, False) == holds
    assert scan.found(text + "", True) == holds  # the kept answer, asked again


@settings(max_examples=300, deadline=None, database=None)
@given(literals=st.lists(st.text(_LETTERS, min_size=1, max_size=4), min_size=1, max_size=8),
       texts=st.lists(st.text(_LETTERS, max_size=30), min_size=1, max_size=6),
       asked=st.lists(st.tuples(st.integers(0, 5), st.booleans()), max_size=40))
def test_the_literal_scan_keeps_two_answers_a_copy_and_each_is_the_text_s(
        literals: list[str], texts: list[str], asked: list[tuple[int, bool]]) -> None:
    """The scan keeps the last two texts' answers of each copy (by identity): whatever order texts
    are asked in — the message, a sentence of it, the message again — each answer is what a scan
    of that text finds, and ``kept`` answers of the last two texts a copy read only."""
    scan = LiteralScan(literals, literals)
    fresh = LiteralScan(literals, literals)
    read: dict[bool, list[str]] = {True: [], False: []}
    for index, lowered in asked:
        text = texts[index % len(texts)]
        kept = scan.kept(text, lowered)
        recent = read[lowered][-2:]
        assert (kept is not None) == any(t is text for t in recent)
        holds = fresh.found(text + "", lowered)  # (a new object: scanned afresh)
        assert kept is None or kept == holds
        assert scan.found(text, lowered) == holds == frozenset(lit for lit in literals if lit in text)
        if not (recent and recent[-1] is text):
            read[lowered] = [*(t for t in recent if t is not text), text]


def test_the_message_s_scan_outlives_a_sentence_s() -> None:
    """A sentence scanned between two questions about the message leaves the message's answer
    kept: the message is not scanned again (the automaton is asked only for the sentence)."""
    scan = LiteralScan(["done", "fixed"], ["done", "fixed"])
    message, sentence = "the build is fixed. the docs are done", "the docs are done"
    first = scan.found(message, True)
    assert scan.found(sentence, True) == frozenset({"done"})
    scan._automata = (None, None)  # a scan from here on would find nothing
    assert scan.found(message, True) is first == frozenset({"done", "fixed"})
    assert scan.kept(sentence, True) == frozenset({"done"})
    assert scan.found("the build", True) == frozenset()  # (scanned: nothing, as set above)
    assert scan.kept(sentence, True) is None  # only the last two are kept


def test_pattern_pre_checks_answer_as_their_trigger_scans_on_the_bench_backlog() -> None:
    """With the pattern set's scan, each pattern's pre-check answers what ``in`` tests of its
    triggers answer (spelled out where the scan reads the text), on the bench's messages (asked
    as the cores ask: the family first), on substrings of them (texts one pattern alone is asked
    about) and on texts too long to scan."""
    import msgspec

    from schemas.events import MessageEvent
    from workers.bench.events import backlog
    from workers.conversation.patterns import prepare_text

    decode = msgspec.json.Decoder(MessageEvent).decode
    texts = [prepare_text(t) for t in _distinct(decode(e.data).content for e in backlog(2000, 50) if e.kind == "msg")]
    patterns = get_patterns(tuple(PACKS))
    families = [f for f in (getattr(patterns, name) for name in patterns.__dataclass_fields__) if isinstance(f, Family)]
    markers = [m for m in (patterns.reasons.reason, patterns.reasons.consequence, patterns.proposal) if m is not None]
    members = [*(p for f in families for p in f), *markers]
    for text in texts:
        for family in families:
            family.may_match(text)
        for subject in (text.lowered, text.original, text.lowered[3:]):
            for pattern in members:
                expected = pattern.triggers is None or any(t in subject for t in pattern.scan_triggers or ())
                assert pattern.may_match(subject) == expected, (pattern.regex.pattern, subject)
    for text in texts[:10]:  # past the scan: the families' and patterns' own checks
        long = prepare_text(" ".join([text.original] * (SCAN_CHARS // len(text.original) + 1)))
        for family in families:
            assert family.may_match(long) == _family_may_match_by_scans(family, long.lowered, long.original)
        for pattern in members:
            subject = pattern.subject(long)
            expected = pattern.triggers is None or any(t in subject for t in pattern.triggers)
            assert pattern.may_match(subject) == expected


def test_a_familys_flags_answer_as_its_patterns_pre_checks() -> None:
    """``Family.flags`` (each pattern's pre-check asked in one go, what ``iter_matches``, the close
    words and the moods read) answers what each pattern's ``may_match`` answers, on the bench's
    messages, on texts too long to scan and on every trigger spelled out in every language's
    families; ``candidates`` keeps exactly the flagged patterns, in order, and none when the
    family's own pre-check fails."""
    import msgspec

    from schemas.events import MessageEvent
    from workers.bench.events import backlog
    from workers.conversation.patterns import prepare_text

    decode = msgspec.json.Decoder(MessageEvent).decode
    texts = [prepare_text(t) for t in _distinct(decode(e.data).content for e in backlog(2000, 50) if e.kind == "msg")]
    patterns = get_patterns(tuple(PACKS))
    families = [f for f in (getattr(patterns, name) for name in patterns.__dataclass_fields__) if isinstance(f, Family)]
    triggers = [prepare_text(t) for f in families for p in f for t in p.scan_triggers or ()]
    longs = [prepare_text(" ".join([t.original] * (SCAN_CHARS // len(t.original) + 1))) for t in texts[:10]]
    flagged = 0
    for text in [*texts, *triggers, *longs]:
        for family in families:
            flags = family.flags(text)
            assert flags == [p.may_match(p.subject(text)) for p in family], text
            expected = [p for p, ok in zip(family, flags, strict=True) if ok] if family.may_match(text) else []
            assert family.candidates(text) == expected
            flagged += sum(flags)
    assert flagged > len(texts)  # (the patterns were asked about texts they may match)


def test_any_of_answers_as_its_parts_pre_checks() -> None:
    """``AnyOf`` (the one pre-check a core asks before reading a message further: the decisions
    core's decision, topic and proposal words, the commitments core's close, promise and request
    words) answers the ``or`` of its parts' own pre-checks, for the sets of every language alone
    and all together, on the bench's messages, on every trigger spelled out and on texts too long
    to scan."""
    import msgspec

    from schemas.events import MessageEvent
    from workers.bench.events import backlog
    from workers.conversation.patterns import any_of, prepare_text

    decode = msgspec.json.Decoder(MessageEvent).decode
    texts = [prepare_text(t) for t in _distinct(decode(e.data).content for e in backlog(2000, 50) if e.kind == "msg")]
    longs = [prepare_text(" ".join([t.original] * (SCAN_CHARS // len(t.original) + 1))) for t in texts[:10]]
    for languages in [tuple(PACKS), *((code,) for code in PACKS)]:
        patterns = get_patterns(languages)
        gates = [(patterns.decision, patterns.topic, patterns.proposal),
                 (patterns.close, patterns.commitment, patterns.plan, patterns.delegated, patterns.requested,
                  patterns.assigned, patterns.request, patterns.object_request)]
        triggers = [prepare_text(t) for parts in gates for part in parts if part is not None
                    for p in (part if isinstance(part, Family) else (part,)) for t in p.scan_triggers or ()]
        for parts in gates:
            gate = any_of(*parts)
            assert gate.scan is not None
            passed = 0
            for text in [*texts, *triggers, *longs]:
                expected = any(p.may_match(text) if isinstance(p, Family) else p.may_match(p.subject(text))
                               for p in parts if p is not None)
                assert gate.may_match(text) == expected, (languages, text)
                passed += expected
            assert 0 < passed < len(texts) + len(triggers) + len(longs), languages


def test_the_signal_families_share_one_scan_that_answers_as_their_trigger_scans() -> None:
    """The signal patterns' families (corrections, questions, praise … of every signal pack) are
    given one scan of their own (``patterns.share_scan``): each family's pre-check and each
    pattern's answer what ``in`` tests of their triggers answer, on the bench's messages, on every
    trigger spelled out and on texts too long to scan — and the pattern set's scan is not theirs."""
    import msgspec

    from schemas.events import MessageEvent
    from workers.bench.events import backlog
    from workers.conversation.patterns import prepare_text
    from workers.conversation.signal_languages import SIGNAL_PACKS
    from workers.conversation.signal_patterns import get_signal_patterns

    decode = msgspec.json.Decoder(MessageEvent).decode
    texts = [prepare_text(t) for t in _distinct(decode(e.data).content for e in backlog(2000, 50) if e.kind == "msg")]
    signals = get_signal_patterns(tuple(SIGNAL_PACKS))
    families = [f for f in (getattr(signals, name) for name in signals.__dataclass_fields__) if isinstance(f, Family)]
    scans = {id(f._scan) for f in families} | {id(p._scan) for f in families for p in f}
    assert len(scans) == 1 and families[0]._scan is not None
    assert families[0]._scan is not get_patterns(tuple(PACKS)).decision._scan
    triggers = [prepare_text(t) for f in families for p in f for t in p.scan_triggers or ()]
    longs = [prepare_text(" ".join([t.original] * (SCAN_CHARS // len(t.original) + 1))) for t in texts[:10]]
    held = 0
    for text in [*texts, *triggers, *longs]:
        for family in families:
            expected = _family_may_match_by_scans(family, text.lowered, text.original)
            assert family.may_match(text) == expected, text
            held += expected
            assert family.flags(text) == [
                p.triggers is None or any(t in p.subject(text) for t in (
                    p.scan_triggers if LiteralScan.covers(text.lowered) else p.triggers) or ()) for p in family]
    assert held > len(texts)


def test_is_high_impact_answers_from_the_scan_as_its_regex_does() -> None:
    """The high-impact keywords are read by the pattern set's scan: of the text the scan has just
    read, ``is_high_impact`` answers from it what the keywords' regex answers — on the bench's
    messages and every keyword, in every language — and of any other text (a title, a text too
    long to scan) by the regex, without making the scan forget the message it read."""
    import msgspec

    from schemas.events import MessageEvent
    from workers.bench.events import backlog
    from workers.conversation.patterns import prepare_text

    decode = msgspec.json.Decoder(MessageEvent).decode
    patterns = get_patterns(tuple(PACKS))
    assert patterns.high_impact is not None and patterns._scan is patterns.decision._scan is not None
    texts = [prepare_text(t) for t in _distinct(decode(e.data).content for e in backlog(2000, 50) if e.kind == "msg")]
    texts += [prepare_text(f"so the {k} is next") for k in patterns.high_impact_keywords]
    texts += [prepare_text("x" * SCAN_CHARS + " " + patterns.high_impact_keywords[0])]
    scanned = high = 0
    for text in texts:
        patterns.decision.may_match(text)  # (the core's first question: the scan reads the message)
        expected = patterns.high_impact.search(text.lowered) is not None
        scanned += patterns._scan.kept(text.lowered, True) is not None
        assert patterns.is_high_impact(text.lowered) == expected, text
        title = text.original[:30].lower()
        assert patterns.is_high_impact(title) == (patterns.high_impact.search(title) is not None)
        assert patterns._scan.kept(text.lowered, True) is not None or not LiteralScan.covers(text.lowered)
        high += expected
    assert scanned == len(texts) - 1 and 0 < high < len(texts)
