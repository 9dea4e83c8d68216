"""Sections a worker declares (``WorkerSpec.briefing``): read like every section's document,
placed by their order, within their scaled budget; none without lines."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from briefing_sections import SECTIONS

from schemas.docs import Integrity
from shared.briefing import BriefingSection, placed, render_order
from shared.config import load_settings
from shared.health import Health
from shared.runtime import WorkerContext, WorkerSpec, with_briefings
from workers.boot import assemble_boot
from workers.boot.sources import BootSources


class NotesDoc(msgspec.Struct, kw_only=True):
    notes: list[str]
    integrity: Integrity


def lines(doc: NotesDoc) -> list[str]:
    return [f"- {n}" for n in doc.notes]


# after Active Threads (300), before Pending Operations (400)
NOTES = BriefingSection("📝 Notes", "cortex_notes", NotesDoc, lines, chars=400, order=350)
TODOS = BriefingSection("✅ Todos", "cortex_todos", NotesDoc, lines, chars=400, order=350)
WITH_NOTES = placed([*((w, s) for s in SECTIONS for w in [s.name]), ("notes", NOTES), ("todos", TODOS)])


def notes(*items: str, make: Any) -> NotesDoc:
    return NotesDoc(notes=list(items), integrity=make.integrity())


def test_a_declared_section_takes_its_place_by_its_order(make, settings, tz):
    inputs = make.inputs(threads=make.threads(make.thread("1")), decisions=make.decisions(make.decision("1")),
                         docs={"cortex_notes": notes("call the bank", make=make),
                               "cortex_todos": notes("file taxes", make=make)})
    md = assemble_boot(WITH_NOTES, inputs, settings, tz)
    assert "\n## 📝 Notes\n- call the bank\n\n## ✅ Todos\n- file taxes\n\n## 🎯 Recent Decisions" in md
    assert md.index("## 🧵 Active Threads") < md.index("## 📝 Notes")


def test_a_declared_section_without_lines_is_no_section(make, settings, tz):
    plain = make.inputs(threads=make.threads(make.thread("1")))
    empty = plain.with_docs({**plain.docs, "cortex_notes": notes(make=make)})
    assert assemble_boot(WITH_NOTES, empty, settings, tz) == assemble_boot(SECTIONS, plain, settings, tz)
    assert "Notes" not in assemble_boot(WITH_NOTES, empty, settings, tz)


@pytest.mark.parametrize("max_chars", [4000, 16000])
def test_a_declared_section_keeps_whole_lines_within_its_scaled_budget(make, settings, tz, max_chars):
    items = [f"note number {i:02d} " + "x" * 30 for i in range(40)]
    inputs = make.inputs(docs={"cortex_notes": notes(*items, make=make)})
    md = assemble_boot(WITH_NOTES, inputs, settings, tz, max_chars)
    section = md[md.index("## 📝 Notes"): md.index("\n---\n")]
    assert 0 < len(section) <= NOTES.chars * max_chars // 16000
    assert all(line in [f"- {i}" for i in items] for line in section.splitlines()[1:] if line)


def context(catalog: list[WorkerSpec]) -> WorkerContext:
    settings = load_settings({})
    return WorkerContext(nc=None, js=None, settings=settings, worker="boot", consumer="boot",  # type: ignore[arg-type]
                         producer="boot@test", health=Health("boot"), catalog={s.name: s for s in catalog})


async def build(ctx: WorkerContext) -> Any:
    raise NotImplementedError


NOTES_SPEC = WorkerSpec(name="notes", families=("msg",), build=build, buckets=("cortex_notes",), briefing=(NOTES,))


def test_boot_reads_a_declared_section_like_every_other(make):
    sources = BootSources(context([NOTES_SPEC]))
    assert sources.sources == [NOTES.source("notes")] and sources.sections == [NOTES.named("notes")]
    reading = {"cortex_notes": notes("a", make=make)}
    inputs = sources._boot_inputs("main", make.now, dict(reading), ["notes"])
    assert inputs.docs == reading and inputs.lagging == ["notes"]
    absent = sources._boot_inputs("main", make.now, {}, [])
    assert absent.docs == {} and "notes" not in absent.missing  # only when relevant: no "no data" line


def test_the_registry_gives_a_briefing_reader_every_declared_source():
    reader = WorkerSpec(name="reader", families=("msg",), build=build, sources=(), reads_briefings=True)
    assert with_briefings(reader, [NOTES_SPEC, reader]).sources == (NOTES.source("notes"),)
    assert with_briefings(NOTES_SPEC, [NOTES_SPEC]) is NOTES_SPEC
    assert with_briefings(reader, [NOTES_SPEC]).waits_on == ("notes",)


def test_a_briefing_reads_one_of_the_workers_own_buckets():
    with pytest.raises(ValueError, match="not one of its buckets"):
        WorkerSpec(name="notes", families=("msg",), build=build, briefing=(NOTES,))



def test_every_registered_section_reads_and_hears_what_another_declares():
    buckets = {s.bucket for s in SECTIONS}
    said = {kind for s in SECTIONS for kind in s.says}
    for s in SECTIONS:
        assert set(s.reads) <= buckets - {s.bucket}, s.name
        assert set(s.hears) <= said, s.name
    # each fact once: a section is made after those whose sayings it hears (the narrative, placed
    # second, after threads, decisions and commitments), else in its place
    assert [s.name for s in render_order(SECTIONS)] == [
        "snapshot", "operations", "lessons", "decisions", "commitments", "facts", "threads", "narrative", "channels",
        "memories", "extraction"]


def test_sections_that_hear_each_other_are_refused():
    a = BriefingSection("A", "cortex_a", NotesDoc, lines, name="a", says=("x",), hears=("y",))
    b = BriefingSection("B", "cortex_b", NotesDoc, lines, name="b", says=("y",), hears=("x",))
    with pytest.raises(ValueError, match="hear each other"):
        render_order([a, b])
    assert [s.name for s in render_order([b, NOTES.named("notes")])] == ["b", "notes"]
