"""The trace analyzer's settings as the cores take them: compiled once, at the entry point."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from shared.config import TracesSettings, parse_redact_patterns, parse_signals
from workers.conversation.signal_patterns import SignalPatterns, get_signal_patterns

# Per agent, whatever the input: the chains followed at once, the steps each remembers,
# the failure fingerprints kept for repeat_fail and the sessions each lists.
MAX_CHAINS: Final = 8
MAX_STEPS: Final = 48
MAX_FAILURE_PRINTS: Final = 200
MAX_PRINT_SESSIONS: Final = 20
MAX_FINDING_EVENTS: Final = 20
# Excerpts (characters, redacted, cut between words).
TEXT_CHARS: Final = 160
ERROR_CHARS: Final = 200
# A run starting more than this after the previous one ended starts a new chain (reference).
RUN_GAP: Final = timedelta(minutes=5)
# In one session, the same failure again in a new turn more than this after it last failed is
# another occasion of a repeat_fail (Cortex's own: OpenClaw's main chat keeps one session key).
REPEAT_GAP: Final = timedelta(hours=8)


@dataclass(frozen=True, slots=True)
class TraceConfig:
    patterns: SignalPatterns
    signals: frozenset[str]
    gap: timedelta
    max_findings: int
    redact: tuple[re.Pattern[str], ...]


def trace_config(settings: TracesSettings, languages: tuple[str, ...]) -> TraceConfig:
    return TraceConfig(
        patterns=get_signal_patterns(languages),
        signals=parse_signals(settings.signals),
        gap=timedelta(minutes=settings.gap_minutes),
        max_findings=settings.max_findings,
        redact=parse_redact_patterns(settings.redact_patterns),
    )
