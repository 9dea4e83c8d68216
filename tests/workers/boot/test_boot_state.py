"""Header and state: execution mode by local hour, mood, last activity, and lag warnings.

Cases marked "port" come from alberthild/vainplex-openclaw
packages/openclaw-cortex/test/boot-context.test.ts (``getExecutionMode``, ``mood display``,
``staleness in output``, ``integrityWarning``). Staleness in a BootDoc is lag first (CONTRACT,
Time and replay); the reference's age warnings (``integrityWarning``) come on top, in event
time, with its thresholds as settings (issue 23).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import msgspec
import pytest
from briefing_sections import SECTIONS, knobs

from workers.boot import assemble_boot, execution_mode
from workers.boot.state import NOTHING_YET
from workers.briefing import describe_age
from workers.render import MOOD_EMOJI

MODES = {
    "Morning": "Morning — brief, directive, efficient",
    "Afternoon": "Afternoon — execution mode",
    "Evening": "Evening — strategic, philosophical possible",
    "Night": "Night — emergencies only",
}


@pytest.mark.parametrize(
    ("local_hour", "mode"),
    [(0, "Night"), (5, "Night"), (6, "Morning"), (11, "Morning"), (12, "Afternoon"), (17, "Afternoon"),
     (18, "Evening"), (21, "Evening"), (22, "Night"), (23, "Night")],
)
def test_execution_mode_follows_the_local_hour(local_hour, mode):
    """port: getExecutionMode returns one of the known modes — here for every boundary."""
    tz = ZoneInfo("America/New_York")
    now = datetime(2026, 2, 17, local_hour, 30, tzinfo=tz).astimezone(UTC)
    assert execution_mode(now, tz) == MODES[mode]


def test_execution_mode_uses_the_configured_zone_not_utc(make, settings):
    # 05:30 UTC is night in UTC, morning in Berlin (06:30) and afternoon in Tokyo (14:30).
    now = datetime(2026, 2, 17, 5, 30, tzinfo=UTC)
    assert execution_mode(now, ZoneInfo("UTC")) == MODES["Night"]
    assert execution_mode(now, ZoneInfo("Europe/Berlin")) == MODES["Morning"]
    assert execution_mode(now, ZoneInfo("Asia/Tokyo")) == MODES["Afternoon"]
    md = assemble_boot(SECTIONS, make.inputs(now=now), settings, ZoneInfo("Europe/Berlin"))
    assert "Mode: Morning — brief, directive, efficient\n" in md
    assert "Generated: 2026-02-17T05:30:00Z | Local: 06:30\n" in md


def test_execution_mode_respects_daylight_saving_time():
    tz = ZoneInfo("Europe/Berlin")
    # The same UTC hour is an hour later in local summer time (CEST, UTC+2) than in winter (CET, UTC+1).
    summer = datetime(2026, 7, 1, 16, 30, tzinfo=UTC)  # 18:30 CEST
    winter = datetime(2026, 1, 15, 16, 30, tzinfo=UTC)  # 17:30 CET
    assert execution_mode(summer, tz) == MODES["Evening"]
    assert execution_mode(winter, tz) == MODES["Afternoon"]


def test_includes_session_mood_when_not_neutral(make, settings, tz):
    """port: includes session mood if not neutral."""
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(mood="excited")), settings, tz)
    assert "Last session mood: excited 🔥\n" in md


@pytest.mark.parametrize("mood", [m for m in MOOD_EMOJI if m != "neutral"])
def test_every_mood_shows_with_its_emoji(make, settings, tz, mood):
    """port: shows frustrated mood with emoji — for every mood of the design."""
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(mood=mood)), settings, tz)
    assert f"Last session mood: {mood} {MOOD_EMOJI[mood]}\n" in md


def test_no_mood_line_for_neutral(make, settings, tz):
    """port: does not show mood line for neutral."""
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(mood="neutral")), settings, tz)
    assert "Last session mood:" not in md


def test_one_lagging_worker_is_named_in_a_visible_warning(make, settings, tz):
    """port: includes staleness warning — as lag of the threads worker."""
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(), lagging=["threads"]), settings, tz)
    assert (
        "\n\n⚠️ Data staleness: the threads worker is lagging — its sections may miss the latest events.\n"
        in md
    )


def test_several_lagging_workers_are_each_named_once_in_sorted_order(make, settings, tz):
    inputs = make.inputs(threads=make.threads(), lagging=["threads", "decisions", "knowledge", "threads"])
    md = assemble_boot(SECTIONS, inputs, settings, tz)
    assert (
        "⚠️ Data staleness: the decisions, knowledge, threads workers are lagging"
        " — their sections may miss the latest events.\n" in md
    )
    assert md.count("⚠️") == 1


def test_no_lag_and_all_data_gives_no_warning(make, settings, tz):
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(), decisions=make.decisions()), settings, tz)
    assert "⚠️" not in md
    assert "🚨" not in md


def test_old_activity_with_fresh_thread_data_is_stated_not_warned(make, settings, tz):
    """10 hours since the agent's last activity is a fact line; thread data two minutes old
    (its document's last event before the trigger) warrants no age warning."""
    inputs = make.inputs(threads=make.threads(), last_activity=make.now - timedelta(hours=10))
    md = assemble_boot(SECTIONS, inputs, settings, tz)
    assert "⚠️" not in md and "🚨" not in md
    assert "Last activity: 10h 0m ago (2026-02-17T01:30:02Z)\n" in md


@pytest.mark.parametrize(("age", "line"), [
    (timedelta(minutes=119), None),
    (timedelta(hours=3), "⚠️ Data staleness: Thread data is 3h old."),  # port: > 2h is staleness
    (timedelta(hours=10), "🚨 STALE DATA: Thread data is 10h old."),  # port: > 8h is STALE DATA
])
def test_thread_data_older_than_the_design_thresholds_is_warned(make, settings, tz, age, line):
    """port: integrityWarning's thresholds (120 and 480 minutes), measured in event time:
    from the threads document's last event to the conversation's latest (here the decisions
    worker's, a minute before the trigger)."""
    threads = msgspec.structs.replace(make.threads(),
                                      integrity=make.integrity(last_event_ts=make.now - age - timedelta(minutes=1)))
    decisions = msgspec.structs.replace(make.decisions(),
                                        integrity=make.integrity(last_event_ts=make.now - timedelta(minutes=1)))
    md = assemble_boot(SECTIONS, make.inputs(threads=threads, decisions=decisions), settings, tz)
    if line is None:
        assert "⚠️" not in md and "🚨" not in md
    else:
        assert line + "\n" in md and md.count("Thread data is") == 1


def test_an_agent_idle_overnight_gets_no_stale_data_warning(make, settings, tz):
    """Every document is as fresh as the conversation, which ended ten hours before this
    session start: the design's age warning ("🚨 STALE DATA: Thread data is 10h old", every
    morning) is not given; the age is stated as the last activity."""
    night = make.integrity(last_event_ts=make.now - timedelta(hours=10))
    inputs = make.inputs(threads=msgspec.structs.replace(make.threads(), integrity=night),
                         decisions=msgspec.structs.replace(make.decisions(), integrity=night))
    md = assemble_boot(SECTIONS, inputs, settings, tz)
    assert "⚠️" not in md and "🚨" not in md and "Thread data is" not in md
    assert "Last activity: 10h 0m ago (2026-02-17T01:30:02Z)\n" in md


def test_a_trigger_the_channels_worker_applied_is_not_conversation(make, settings, tz):
    """The channels document is written at every trigger (this session start included, read as
    made for it), so its last event is the trigger; its last message is what the conversation
    is measured by: the evening session start after a quiet afternoon warns nothing."""
    afternoon = make.integrity(last_event_ts=make.now - timedelta(hours=5))
    channels = msgspec.structs.replace(make.channels(), updated=make.now - timedelta(hours=5),
                                       integrity=make.integrity(last_event_ts=make.now))
    inputs = make.inputs(threads=msgspec.structs.replace(make.threads(), integrity=afternoon),
                         decisions=msgspec.structs.replace(make.decisions(), integrity=afternoon), channels=channels)
    assert "Thread data is" not in assemble_boot(SECTIONS, inputs, settings, tz)
    later = msgspec.structs.replace(channels, updated=make.now - timedelta(minutes=1))  # messages threads missed
    assert "⚠️ Data staleness: Thread data is 5h old.\n" in assemble_boot(SECTIONS, make.inputs(
        threads=make.doc(inputs, "threads"), decisions=make.doc(inputs, "decisions"), channels=later), settings, tz)


def test_the_age_thresholds_and_freshness_windows_are_settings(make, settings, tz):
    threads = msgspec.structs.replace(make.threads(),
                                      integrity=make.integrity(last_event_ts=make.now - timedelta(hours=3)))
    inputs = make.inputs(threads=threads, decisions=msgspec.structs.replace(
        make.decisions(), integrity=make.integrity(last_event_ts=make.now)))
    quiet = msgspec.structs.replace(settings, stale_warn_minutes=0, stale_alert_minutes=0)
    assert "Thread data is" not in assemble_boot(SECTIONS, inputs, quiet, tz)
    strict = msgspec.structs.replace(settings, stale_alert_minutes=60)
    assert "🚨 STALE DATA: Thread data is 3h old." in assemble_boot(SECTIONS, inputs, strict, tz)
    old = make.inputs(snapshot=make.snapshot(age=timedelta(minutes=90)),
                      narrative=make.narrative(age=timedelta(hours=40)))
    assert "Last Session Snapshot" not in assemble_boot(SECTIONS, old, settings, tz)
    assert "Narrative" not in assemble_boot(SECTIONS, old, settings, tz)
    longer = knobs(CORTEX_BOOT_SNAPSHOT_MAX_AGE_MINUTES="120", CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS="48")
    assert "Last Session Snapshot" in assemble_boot(SECTIONS, old, settings, tz, knobs=longer)
    # made 40 hours before: which 24 hours it tells, not "last 24h"
    assert "## 📖 Narrative (24h to 2026-02-15 20:30, 2 days ago)\n" in assemble_boot(SECTIONS, old, settings, tz,
                                                                                      knobs=longer)


def test_no_data_at_all_gets_its_own_line(make, settings, tz):
    """port: handles missing file gracefully — the warning now names the sources without data,
    while a worker is behind (with none behind, the agent is new: no fault to warn of)."""
    md = assemble_boot(SECTIONS, make.inputs(missing=["threads", "decisions"], lagging=["threads"]), settings, tz)
    assert (
        "⚠️ No data at all for this agent yet — no worker has produced a document"
        " (no data from: decisions, threads).\n" in md
    )


def test_no_data_at_all_without_a_missing_list_still_warns(make, settings, tz):
    md = assemble_boot(SECTIONS, make.inputs(lagging=["decisions"]), settings, tz)
    assert "⚠️ No data at all for this agent yet — no worker has produced a document.\n" in md


def test_some_sources_without_data_are_named(make, settings, tz):
    inputs = make.inputs(threads=make.threads(), missing=["knowledge", "commitments"])
    md = assemble_boot(SECTIONS, inputs, settings, tz)
    assert (
        "⚠️ No data yet from: commitments, knowledge — those workers have not produced anything"
        " for this agent.\n" in md
    )
    assert "No data at all" not in md


def test_lag_and_missing_lines_both_show_lag_first(make, settings, tz):
    inputs = make.inputs(threads=make.threads(), lagging=["decisions"], missing=["knowledge"])
    md = assemble_boot(SECTIONS, inputs, settings, tz)
    assert md.index("Data staleness") < md.index("No data yet from: knowledge")


def test_last_activity_line_says_how_long_ago(make, settings, tz):
    md = assemble_boot(SECTIONS, make.inputs(last_activity=make.now - timedelta(hours=3, minutes=5)), settings, tz)
    assert "Last activity: 3h 5m ago (2026-02-17T08:25:02Z)\n" in md


def test_last_activity_falls_back_to_newest_document_event(make, settings, tz):
    threads = make.threads()  # integrity.last_event_ts = now - 2 min
    decisions = make.decisions()
    md = assemble_boot(SECTIONS, make.inputs(threads=threads, decisions=decisions), settings, tz)
    assert "Last activity: 2m ago (2026-02-17T11:28:02Z)\n" in md


def test_no_activity_recorded(make, settings, tz):
    assert "Last activity: none recorded\n" in assemble_boot(SECTIONS, make.inputs(lagging=["threads"]), settings, tz)


def test_an_agent_new_to_cortex_is_told_so_without_a_warning(make, settings, tz):
    """No document at all and every worker caught up: a new agent, not a fault. Its first
    briefing warned "⚠️ No data at all for this agent yet — no worker has produced a document"."""
    md = assemble_boot(SECTIONS, make.inputs(missing=["threads", "decisions"]), settings, tz)
    assert "Last activity: none — nothing of this agent's conversations has reached Cortex yet\n" in md
    assert "⚠️" not in md and "No data" not in md
    # one document, or one worker behind: the usual lines
    assert NOTHING_YET not in assemble_boot(SECTIONS, make.inputs(threads=make.threads()), settings, tz)
    assert NOTHING_YET not in assemble_boot(SECTIONS, make.inputs(lagging=["threads"]), settings, tz)


@pytest.mark.parametrize(
    ("age", "text"),
    [
        (timedelta(seconds=-30), "just now"),
        (timedelta(seconds=59), "just now"),
        (timedelta(minutes=1), "1m ago"),
        (timedelta(minutes=59), "59m ago"),
        (timedelta(hours=1), "1h 0m ago"),
        (timedelta(hours=23, minutes=59), "23h 59m ago"),
        (timedelta(days=2, hours=4, minutes=10), "2d 4h ago"),
    ],
)
def test_describe_age(age, text):
    assert describe_age(age) == text
