"""Pure core of the boot worker: one agent's documents in, BOOTSTRAP markdown out.

Section order and formats follow the reference's ``BootContextGenerator.generate``
(openclaw-cortex ``boot-context.ts``), extended with the sections of the later designs
(pending operations and lessons from recent failures right after the threads, commitments,
known facts, other channels, rules and key memories). Every time in the
document is measured against ``inputs.now``, the triggering event's time, so a replay of
the pipeline reproduces the document byte for byte.

Each fact is said once, where a reader looks for it:

* a decision in Recent Decisions (with its why and date): a thread's summary leaves out
  its "Decided: …", the narrative its Decisions item; a decision a later one reversed
  ("… from Redis to Memcached after all") is in none of them (``work.replaced_decisions``);
* an open thread in Active Threads (with its summary and wait): the narrative leaves out
  its Open item (and that of a thread closed since the narrative was written);
* the narrative keeps what no other section says: completed work and the timeline;
* a key memory that a summary, decision, reason or promise shown above already says (the
  message a thread is about, taken for a rule) is not repeated under Rules & Key Memories;
* the hot snapshot quotes the last messages as they were said (quotes stay, whatever they
  repeat), under one line saying when; its own headings and its thread count at compaction
  give way to the briefing's headings and to Active Threads.

A section another worker declares (``WorkerSpec.briefing``) follows the section it names,
within its own budget; it is the worker's render of its document, said as it says it.

A decision or thread that a section's limit or budget leaves out is not "shown": the other
sections keep it. Text Claude wrote (a narrative of source ``llm``, an enhanced summary)
is not taken apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

from shared.config import BootSettings
from shared.footprint import PLACEMENTS
from workers.boot.budget import Budgets, bounded, enforce_limit, scaled, scaled_budgets, section
from workers.boot.context import (
    channels_section,
    fact_sentences,
    facts_section,
    key_memories_section,
    narrative_section,
    snapshot_section,
)
from workers.boot.inputs import BootInputs, Briefed
from workers.boot.state import header_section, state_section
from workers.boot.traces import lessons_section, operations_section, shown_operations
from workers.boot.work import (
    briefed_threads,
    commitments_section,
    decisions_section,
    false_claims,
    false_closures,
    recent_decisions,
    replaced_decisions,
    thread_summary,
    threads_section,
)
from workers.extraction.view import model_view
from workers.narrative.enhance import enhance_commitments, enhance_decisions, enhance_threads
from workers.render import entity_names, one_line, plural


@dataclass(frozen=True)
class _Work:
    """The work sections, their footer, and what they show (for the sections that must not
    say it again): the raw titles of threads the narrative's Open block need not list, the
    raw whats of the decisions Recent Decisions shows or a later decision reversed."""

    sections: list[str]
    footer: str
    open_titles: list[str]
    decisions: list[str]
    said: list[str]  # every summary, wait, decision, reason and promise the work sections show


def _work_sections(inputs: BootInputs, settings: BootSettings, tz: ZoneInfo, budgets: Budgets) -> _Work:
    """Threads, then what the agent's tools left pending and what its failures taught
    (``workers.boot.traces``), then decisions and commitments — in Claude's wording where
    the narrative holds one (``workers.narrative.enhance``) — and the footer that counts
    what they show.

    Each fact once: Recent Decisions shows a decision with its why, so a thread's summary
    leaves out the "Decided: …" of a decision shown there."""
    overlay = inputs.narrative.enhanced if inputs.narrative is not None else None
    raw_decisions = inputs.decisions.decisions if inputs.decisions is not None else []
    replaced = replaced_decisions(raw_decisions)  # judged on the decisions as said, once
    decisions = recent_decisions(
        enhance_decisions(raw_decisions, overlay),
        inputs.now, tz, settings.decision_recency_days, settings.max_decisions_in_boot, replaced,
    )
    decisions_text, n_decisions = decisions_section(decisions, budgets.decisions)
    shown_decisions = {d.id for d in decisions[:n_decisions]}
    # shown there, or reversed by a later decision: no thread or narrative says them again
    said_decisions = shown_decisions | replaced
    decision_whats = [one_line(d.what) for d in raw_decisions if d.id in said_decisions]
    raw_threads = inputs.threads.threads if inputs.threads is not None else []
    threads = enhance_threads(raw_threads, overlay)
    findings = inputs.traces.findings if inputs.traces is not None else []
    facts = fact_sentences(inputs.knowledge.facts, entity_names(inputs.knowledge.entities)) \
        if inputs.knowledge is not None else []
    threads_text, n_threads = threads_section(threads, settings.max_threads_in_boot, budgets.threads, tz,
                                              decision_whats, inputs.now, false_claims(findings), facts)
    operations = inputs.operations.operations if inputs.operations is not None else []
    operations_text = operations_section(operations, tz, budgets.operations)
    listed = [op.id for op in shown_operations(operations, operations_text, tz)]
    # a claim found false also reopens what it closed, and no thread states it as where things stand
    lessons_text = lessons_section(findings, inputs.now, budgets.lessons, tz)
    briefed = briefed_threads(threads, decision_whats, facts)
    shown_open = briefed[:n_threads]
    # the narrative's Open items of threads shown here, or closed since it was written, or that
    # only state a fact Known Facts shows
    said_threads = {t.id for t in shown_open} | ({t.id for t in threads} - {t.id for t in briefed})
    open_titles = [t.title for t in raw_threads if t.id in said_threads or t.status != "open"]
    commitments = enhance_commitments(inputs.commitments.commitments if inputs.commitments is not None else [],
                                      overlay)
    commitments_text, n_open = commitments_section(commitments, inputs.now, tz, budgets.commitments,
                                                   operations, listed, findings,
                                                   undated_days=settings.commitment_days)
    said = [text for t in shown_open
            for text in (thread_summary(t, decision_whats), t.waiting_for or "")]
    said += [text for d in decisions[:n_decisions] for text in (d.what, d.why)]
    reopened = false_closures(commitments, findings)
    said += [c.what for c in commitments if c.status != "done" or c.id in reopened]
    footer = (
        f"_Boot context | {plural(n_threads, 'active thread')} | {plural(n_decisions, 'recent decision')}"
        f" | {plural(n_open, 'open commitment')}_"
    )
    return _Work([threads_text, operations_text, lessons_text, decisions_text, commitments_text], footer,
                 open_titles, decision_whats, said)


def _context_sections(inputs: BootInputs, budgets: Budgets, said: list[str]) -> list[str]:
    facts = inputs.knowledge.facts if inputs.knowledge is not None else []
    channels = inputs.channels.channels if inputs.channels is not None else []
    names = entity_names(inputs.knowledge.entities) if inputs.knowledge is not None else {}
    return [
        facts_section(facts, budgets.facts, names),
        channels_section(channels, budgets.channels),
        key_memories_section(inputs.key_memories, budgets.memories, said),
    ]


def assemble_boot(
    inputs: BootInputs,
    settings: BootSettings,
    tz: ZoneInfo,
    max_chars: int | None = None,
) -> str:
    """The BOOTSTRAP markdown for ``inputs``, at most ``max_chars`` plus the truncation marker.

    ``max_chars`` overrides ``settings.max_chars`` (a request may ask for less); section
    budgets scale with it. Sections without data are left out; header, state and footer
    are always there, so an agent with no data still gets a valid minimal document.
    """
    limit = settings.max_chars if max_chars is None else max_chars
    budgets = scaled_budgets(limit)
    inputs = model_view(inputs, tz)  # what a model found beyond the patterns, when one read the conversation
    work = _work_sections(inputs, settings, tz, budgets)
    placed = zip(PLACEMENTS, [
        bounded("\n".join([header_section(inputs.now, tz), state_section(inputs, tz, settings)]),
                budgets.header_state),
        snapshot_section(inputs.snapshot, inputs.now, budgets.snapshot,
                         timedelta(minutes=settings.snapshot_max_age_minutes)),
        narrative_section(inputs.narrative, inputs.now, budgets.narrative, tz, work.open_titles, work.decisions,
                          timedelta(hours=settings.narrative_max_age_hours), work.said),
        *work.sections,
        *_context_sections(inputs, budgets, work.said),
    ], strict=True)
    sections = []
    for name, text in placed:  # each declared section after the one it names
        sections += [text, *(declared_section(b, limit) for b in inputs.briefings if b.section.after == name)]
    sections += ["---", bounded(work.footer, budgets.footer)]
    return enforce_limit("\n".join(s for s in sections if s), limit)


def declared_section(briefed: Briefed, limit: int) -> str:
    """A section another worker declares (``WorkerSpec.briefing``): its title and the lines
    its render makes of its document, within its budget scaled to ``limit``; no lines, no
    section."""
    spec = briefed.section
    return section(f"## {spec.title}", list(spec.render(briefed.doc)), scaled(spec.chars, limit))[0]
