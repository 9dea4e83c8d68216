"""Header and state sections: when the briefing was made, the mode, the mood, freshness.

Staleness is lag (contract: Time and replay): a source worker that had not applied
everything before the trigger is named in a visible line, a source with no data at all
gets its own line, and the age of the agent's last activity is stated as a fact. Age is
the plugin design's warning on top: thread data two hours (eight: "STALE DATA") behind the
conversation the other workers have seen, thresholds in ``CORTEX_BOOT_STALE_*_MINUTES``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from schemas.types import Mood
from shared.briefing import BriefingSection
from shared.config import BootSettings
from workers.boot.inputs import BootInputs, activity
from workers.briefing import describe_age
from workers.render import MOOD_EMOJI, as_utc, iso_seconds, join_names

# The design's ExecutionMode strings (section 7), chosen by the local hour.
MORNING = "Morning — brief, directive, efficient"
AFTERNOON = "Afternoon — execution mode"
EVENING = "Evening — strategic, philosophical possible"
NIGHT = "Night — emergencies only"
DEFAULT_BOOT = BootSettings()


def execution_mode(now: datetime, tz: ZoneInfo) -> str:
    """The mode for the local hour of ``now``: 6–12, 12–18, 18–22, otherwise night."""
    hour = as_utc(now).astimezone(tz).hour
    if 6 <= hour < 12:
        return MORNING
    if 12 <= hour < 18:
        return AFTERNOON
    if 18 <= hour < 22:
        return EVENING
    return NIGHT


def header_section(now: datetime, tz: ZoneInfo) -> str:
    local = as_utc(now).astimezone(tz)
    return "\n".join(["# Context Briefing", f"Generated: {iso_seconds(now)} | Local: {local:%H:%M}", ""])


def _last_activity(inputs: BootInputs) -> datetime | None:
    if inputs.last_activity is not None:
        return inputs.last_activity
    stamps = [
        as_utc(ts)
        for doc in inputs.documents()
        if (ts := doc.integrity.last_event_ts) is not None
    ]
    return max(stamps, default=None)


NOTHING_YET = "Last activity: none — nothing of this agent's conversations has reached Cortex yet"


def _new_to_cortex(inputs: BootInputs) -> bool:
    """No worker behind, and nothing before the session starting now (``first_session``) or
    no document at all: a new agent (or one Cortex was just set up for, or a mistyped id) —
    not a fault. Its first briefing warned "⚠️ No data at all for this agent yet — no worker
    has produced a document", which read as Cortex being broken, and one asked for at that
    start said "Last activity: just now" of the start itself."""
    if inputs.lagging:
        return False
    return inputs.first_session or (inputs.last_activity is None
                                    and not inputs.documents())


def last_activity_line(inputs: BootInputs) -> str:
    if _new_to_cortex(inputs):
        return NOTHING_YET
    last = _last_activity(inputs)
    if last is None:
        return "Last activity: none recorded"
    return f"Last activity: {describe_age(as_utc(inputs.now) - as_utc(last))} ({iso_seconds(last)})"


def _lag_line(lagging: list[str]) -> str:
    names = join_names(lagging)
    if len(set(lagging)) == 1:
        return f"⚠️ Data staleness: the {names} worker is lagging — its sections may miss the latest events."
    return f"⚠️ Data staleness: the {names} workers are lagging — their sections may miss the latest events."


def _missing_line(inputs: BootInputs) -> str:
    if _new_to_cortex(inputs):
        return ""
    if not inputs.documents():  # and a worker behind: its data may be on its way
        suffix = f" (no data from: {join_names(inputs.missing)})" if inputs.missing else ""
        return f"⚠️ No data at all for this agent yet — no worker has produced a document{suffix}."
    if inputs.missing:
        return (
            f"⚠️ No data yet from: {join_names(inputs.missing)} — "
            "those workers have not produced anything for this agent."
        )
    return ""


def _documents(sections: Sequence[BriefingSection[Any]], inputs: BootInputs) -> list[tuple[BriefingSection[Any], Any]]:
    """Each section's document there is, with its section."""
    return [(s, doc) for s in sections if isinstance(doc := inputs.docs.get(s.bucket), s.doc_type)]


def session_mood(sections: Sequence[BriefingSection[Any]], inputs: BootInputs) -> Mood:
    """The mood of the agent's last session, as the section that tells it reads its document
    (``BriefingSection.mood``: the threads'); neutral when none does."""
    return next((s.mood(doc) for s, doc in _documents(sections, inputs) if s.mood is not None), "neutral")


def _age_warning(name: str, minutes: float, settings: BootSettings) -> str:
    hours = round(minutes / 60)
    if settings.stale_alert_minutes and minutes > settings.stale_alert_minutes:
        return f"🚨 STALE DATA: {name} is {hours}h old."
    if settings.stale_warn_minutes and minutes > settings.stale_warn_minutes:
        return f"⚠️ Data staleness: {name} is {hours}h old."
    return ""


def age_lines(sections: Sequence[BriefingSection[Any]], inputs: BootInputs,
              settings: BootSettings = DEFAULT_BOOT) -> list[str]:
    """The plugin design's age warning: thread data older than the alert minutes is
    "STALE DATA", older than the warn minutes "Data staleness" (its thresholds, 480 and
    120 minutes by default); nothing while younger or when there is no thread data.

    Old, here, is behind the conversation: measured from the last event of a document the
    age line watches (``BriefingSection.ages``: the threads') to the latest event of the
    documents the agent's messages change (``BriefingSection.follows_messages``: threads,
    decisions, commitments, knowledge, channels; ``activity``, the channels document's last
    message), as of the trigger. The design measured it to the
    trigger, and so warned "STALE DATA: Thread data is 10h old" every morning: an agent idle
    overnight has thread data exactly as fresh as its conversation, which "Last activity"
    states. Threads behind the messages the other workers have seen (the threads worker
    switched off, say) still warn; a worker behind the trigger is named by the lag line."""
    present = _documents(sections, inputs)
    conversation = [as_utc(ts) for s, doc in present if s.follows_messages and (ts := activity(doc)) is not None]
    lines = []
    for s, doc in present:
        last = doc.integrity.last_event_ts
        if s.ages and last is not None:
            minutes = (max(conversation, default=as_utc(last)) - as_utc(last)).total_seconds() / 60
            lines.append(_age_warning(s.ages, minutes, settings))
    return [line for line in lines if line]


def staleness_lines(sections: Sequence[BriefingSection[Any]], inputs: BootInputs,
                    settings: BootSettings = DEFAULT_BOOT) -> list[str]:
    """The visible warnings: lagging workers, old thread data, then sources without data."""
    lines = [_lag_line(inputs.lagging)] if inputs.lagging else []
    missing = _missing_line(inputs)
    return lines + age_lines(sections, inputs, settings) + ([missing] if missing else [])


def state_section(sections: Sequence[BriefingSection[Any]], inputs: BootInputs, tz: ZoneInfo,
                  settings: BootSettings = DEFAULT_BOOT) -> str:
    """The state: the mode, the last session's mood, the last activity and the warnings, of
    every section's document (``sections``, the registry's: none is named here)."""
    lines = ["## ⚡ State", f"Mode: {execution_mode(inputs.now, tz)}"]
    mood = session_mood(sections, inputs)
    # The reference leaves a neutral mood unsaid: only a notable mood changes behaviour.
    if mood != "neutral":
        lines.append(f"Last session mood: {mood} {MOOD_EMOJI.get(mood, '')}".rstrip())
    lines.append(last_activity_line(inputs))
    warnings = staleness_lines(sections, inputs, settings)
    if warnings:
        lines += ["", *warnings]
    lines.append("")
    return "\n".join(lines)
