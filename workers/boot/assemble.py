"""Pure core of the boot worker: one agent's documents in, BOOTSTRAP markdown out.

Section order and formats follow the reference's ``BootContextGenerator.generate``
(openclaw-cortex ``boot-context.ts``), extended with the sections of the later designs
(commitments, known facts, other channels, rules and key memories). Every time in the
document is measured against ``inputs.now``, the triggering event's time, so a replay of
the pipeline reproduces the document byte for byte.
"""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from shared.config import BootSettings
from workers.boot.budget import Budgets, bounded, enforce_limit, scaled_budgets
from workers.boot.context import (
    channels_section,
    facts_section,
    key_memories_section,
    narrative_section,
    snapshot_section,
)
from workers.boot.inputs import BootInputs
from workers.boot.state import header_section, state_section
from workers.boot.work import commitments_section, decisions_section, recent_decisions, threads_section
from workers.narrative.enhance import enhance_commitments, enhance_decisions, enhance_threads


def _work_sections(
    inputs: BootInputs, settings: BootSettings, tz: ZoneInfo, budgets: Budgets
) -> tuple[list[str], str]:
    """Threads, decisions and commitments — in Claude's wording where the narrative holds
    one (``workers.narrative.enhance``) — and the footer that counts what they show."""
    overlay = inputs.narrative.enhanced if inputs.narrative is not None else None
    threads = enhance_threads(inputs.threads.threads if inputs.threads is not None else [], overlay)
    threads_text, n_threads = threads_section(threads, settings.max_threads_in_boot, budgets.threads)
    decisions = recent_decisions(
        enhance_decisions(inputs.decisions.decisions if inputs.decisions is not None else [], overlay),
        inputs.now, tz, settings.decision_recency_days, settings.max_decisions_in_boot,
    )
    decisions_text, n_decisions = decisions_section(decisions, budgets.decisions)
    commitments = enhance_commitments(inputs.commitments.commitments if inputs.commitments is not None else [],
                                      overlay)
    commitments_text, n_open = commitments_section(commitments, inputs.now, tz, budgets.commitments)
    footer = (
        f"_Boot context | {n_threads} active threads | {n_decisions} recent decisions"
        f" | {n_open} open commitments_"
    )
    return [threads_text, decisions_text, commitments_text], footer


def _context_sections(inputs: BootInputs, budgets: Budgets) -> list[str]:
    facts = inputs.knowledge.facts if inputs.knowledge is not None else []
    channels = inputs.channels.channels if inputs.channels is not None else []
    names = {e.id: e.value for e in inputs.knowledge.entities} if inputs.knowledge is not None else {}
    return [
        facts_section(facts, budgets.facts, names),
        channels_section(channels, budgets.channels),
        key_memories_section(inputs.key_memories, budgets.memories),
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
    work, footer = _work_sections(inputs, settings, tz, budgets)
    sections = [
        bounded("\n".join([header_section(inputs.now, tz), state_section(inputs, tz, settings)]),
                budgets.header_state),
        snapshot_section(inputs.snapshot, inputs.now, budgets.snapshot,
                         timedelta(minutes=settings.snapshot_max_age_minutes)),
        narrative_section(inputs.narrative, inputs.now, budgets.narrative,
                          timedelta(hours=settings.narrative_max_age_hours)),
        *work,
        *_context_sections(inputs, budgets),
        "---",
        bounded(footer, budgets.footer),
    ]
    return enforce_limit("\n".join(s for s in sections if s), limit)
