"""Pure core of the boot worker: one agent's documents in, BOOTSTRAP markdown out.

Boot keeps the frame: the header and state, the sections in their order, each within its
budget, the footer, the hard limit. The sections are the workers' (``WorkerSpec.briefing``,
``shared.briefing``), each made in its worker's folder; boot names none of them. Section
order and formats follow the reference's ``BootContextGenerator.generate`` (openclaw-cortex
``boot-context.ts``), extended with the sections of the later designs. Every time in the
document is measured against ``inputs.now``, the triggering event's time, so a replay of
the pipeline reproduces the document byte for byte.

Each fact is said once, where a reader looks for it: a section is made after every section
whose sayings it hears (``shared.briefing.render_order``) and leaves out what they said —

* a decision in Recent Decisions (with its why and date): a thread's summary leaves out
  its "Decided: …", the narrative its Decisions item; a decision a later one reversed is in
  none of them;
* an open thread in Active Threads (with its summary and wait): the narrative leaves out
  its Open item (and that of a thread closed since the narrative was written);
* the narrative keeps what no other section says: completed work and the timeline;
* a key memory that a summary, decision, reason or promise shown above already says is not
  repeated under Rules & Key Memories;
* the hot snapshot quotes the last messages as they were said, under one line saying when.

A decision or thread that a section's limit or budget leaves out is not "shown": the other
sections keep it. Text Claude wrote (a narrative of source ``llm``, an enhanced summary)
is not taken apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any
from zoneinfo import ZoneInfo

import msgspec

from shared.briefing import Briefing, BriefingSection, Rendered, Said, render_order
from shared.config import BootSettings
from workers.boot.budget import FOOTER_CHARS, HEADER_STATE_CHARS, enforce_limit, scaled
from workers.boot.inputs import BootInputs
from workers.boot.state import header_section, state_section
from workers.briefing import bounded, section


def revised(sections: Sequence[BriefingSection[Any]], briefing: Briefing) -> Briefing:
    """The briefing's documents after each section's ``revise`` (the model's reading)."""
    for s in sections:
        doc = briefing.doc(s.bucket, s.doc_type)
        if s.revise is not None and doc is not None:
            briefing = replace(briefing, docs=s.revise(doc, briefing))
    return briefing


def made(s: BriefingSection[Any], briefing: Briefing, said: Said, budget: int) -> Rendered:
    """One section: composed, or its title and the lines its render makes of its document
    (no document or no lines: no section)."""
    if s.compose is not None:
        return s.compose(briefing, said, budget)
    doc = briefing.doc(s.bucket, s.doc_type)
    return Rendered(section(f"## {s.title}", list(s.render(doc)), budget)[0] if doc is not None else "")


def assemble_boot(
    sections: Sequence[BriefingSection[Any]],
    inputs: BootInputs,
    settings: BootSettings,
    tz: ZoneInfo,
    max_chars: int | None = None,
    knobs: Iterable[msgspec.Struct] = (),
) -> str:
    """The BOOTSTRAP markdown for ``inputs``, at most ``max_chars`` plus the truncation marker.

    ``sections`` are every worker's, in placement order (``shared.briefing.placed``).
    ``max_chars`` overrides ``settings.max_chars`` (a request may ask for less); section
    budgets scale with it. ``knobs``: the sections' own (``BriefingSection.knobs``), their
    defaults for any not given. Sections without data are left out; header, state and footer
    are always there, so an agent with no data still gets a valid minimal document.
    """
    limit = settings.max_chars if max_chars is None else max_chars
    knobs_by_type = {type(k): k for k in knobs}
    briefing = revised(sections, Briefing(inputs.agent, inputs.now, tz, inputs.docs, inputs.person,
                                          knobs_by_type))
    said, rendered = Said(), {}
    for s in render_order(sections):
        rendered[s.name] = made(s, briefing, said, scaled(s.chars, limit))
        said = said.plus(rendered[s.name].says)
    state = state_section(sections, conversation_of(sections, inputs, briefing), tz, settings)
    footer = " | ".join(["_Boot context", *(rendered[s.name].footer for s in sections if rendered[s.name].footer)])
    parts = [bounded("\n".join([header_section(inputs.now, tz), state]), HEADER_STATE_CHARS),
             *(rendered[s.name].text for s in sections), "---", bounded(footer + "_", FOOTER_CHARS)]
    return enforce_limit("\n".join(p for p in parts if p), limit)


def conversation_of(sections: Sequence[BriefingSection[Any]], inputs: BootInputs, briefing: Briefing) -> BootInputs:
    """``inputs`` with the briefing's (revised) documents, as the sections read them, but for
    those that say nothing of the agent's conversations (``BriefingSection.conversation_data``):
    what the state reads."""
    aside = {s.bucket for s in sections if not s.conversation_data}
    return inputs.with_docs({bucket: doc for bucket, doc in briefing.docs.items() if bucket not in aside})
