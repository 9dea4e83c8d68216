"""The BOOTSTRAP document as a whole: sections present with data, absent without, in order.

Cases marked "port" come from alberthild/vainplex-openclaw
packages/openclaw-cortex/test/boot-context.test.ts (``BootContextGenerator — generate``);
file ages became document timestamps measured against the trigger's time.
"""

from __future__ import annotations

import random
from datetime import timedelta

import msgspec
from briefing_sections import SECTIONS, knobs

from workers.boot import assemble_boot
from workers.narrative import TimelineEntry, build_structured_narrative
from workers.snapshot.briefing import snapshot_section

SECTION_HEADINGS = [
    "# Context Briefing",
    "## ⚡ State",
    "## 🔥 Last Session Snapshot",
    "## 📖 Narrative (last 24h)",
    "## 🧵 Active Threads",
    "## 🎯 Recent Decisions",
    "## 📋 Commitments",
    "## 🧠 Known Facts",
    "## 📡 Other Channels",
    "## 📌 Rules & Key Memories",
    "_Boot context |",
]


def full_inputs(make):
    return make.inputs(
        threads=make.threads(make.thread("t1", title="auth migration", priority="high"), mood="excited"),
        decisions=make.decisions(make.decision("d1", what="decided to use TypeScript")),
        commitments=make.commitments(make.commitment("c1", what="draft the architecture doc")),
        snapshot=make.snapshot(),
        narrative=make.narrative(),
        knowledge=make.knowledge(make.fact("f1", subject="Albert", predicate="works at", object="Vainplex")),
        channels=make.channels(make.channel("telegram")),
        key_memories=["Never deploy on Fridays"],
    )


def test_every_section_appears_when_its_data_exists(make, settings, tz):
    md = assemble_boot(SECTIONS, full_inputs(make), settings, tz)
    for heading in SECTION_HEADINGS:
        assert heading in md, heading


def test_sections_come_in_the_design_order(make, settings, tz):
    md = assemble_boot(SECTIONS, full_inputs(make), settings, tz)
    positions = [md.index(h) for h in SECTION_HEADINGS]
    assert positions == sorted(positions)
    assert md.index("\n---\n") < md.index("_Boot context |")


def test_empty_state_gives_valid_minimal_document_with_header_and_footer(make, settings, tz):
    """port: handles empty state gracefully."""
    md = assemble_boot(SECTIONS, make.inputs(), settings, tz)
    assert md.startswith("# Context Briefing\nGenerated: 2026-02-17T11:30:02Z | Local: 12:30\n")
    assert "## ⚡ State\nMode: Afternoon — execution mode\n" in md
    assert md.endswith("---\n_Boot context | 0 active threads | 0 recent decisions | 0 open commitments_")
    assert len(md) > 50
    for heading in SECTION_HEADINGS[2:-1]:
        assert heading not in md, heading


def test_minimal_document_exact_text(make, settings, tz):
    md = assemble_boot(SECTIONS, make.inputs(missing=["threads"], threads=None), settings, tz)
    assert md == (
        "# Context Briefing\n"
        "Generated: 2026-02-17T11:30:02Z | Local: 12:30\n"
        "\n"
        "## ⚡ State\n"
        "Mode: Afternoon — execution mode\n"
        "Last activity: none — nothing of this agent's conversations has reached Cortex yet\n"
        "\n"
        "---\n"
        "_Boot context | 0 active threads | 0 recent decisions | 0 open commitments_"
    )
    md = assemble_boot(SECTIONS, make.inputs(missing=["threads"], threads=None, lagging=["threads"]), settings, tz)
    assert "Last activity: none recorded\n" in md
    assert "⚠️ No data at all for this agent yet — no worker has produced a document (no data from: threads).\n" in md


def test_produces_header_and_generated_line(make, settings, tz):
    """port: produces valid markdown with header."""
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads()), settings, tz)
    assert "# Context Briefing" in md
    assert "Generated:" in md


def test_includes_execution_mode(make, settings, tz):
    """port: includes execution mode."""
    assert "Mode:" in assemble_boot(SECTIONS, make.inputs(threads=make.threads()), settings, tz)


def test_includes_active_threads_section_with_waits_and_decisions(make, settings, tz):
    """port: includes active threads section."""
    thread = make.thread("1", title="auth migration", priority="high", summary="Migrating to OAuth2",
                         decisions=["use PKCE"], waiting_for="code review", mood="productive")
    md = assemble_boot(SECTIONS, make.inputs(threads=make.threads(thread)), settings, tz)
    assert "🧵 Active Threads" in md
    assert "### 🟠 auth migration [productive]\n" in md
    # local time (Berlin), as the header's "Local:" and the timeline; the reference showed UTC
    assert "Priority: high | Last: 2026-02-17 12:20\n" in md
    assert "Summary: Migrating to OAuth2\n" in md
    assert "⏳ Waiting for: code review\n" in md
    assert "Decisions: use PKCE\n" in md


def test_closed_threads_are_excluded_from_active_threads(make, settings, tz):
    threads = make.threads(make.thread("1", title="open one"),
                           make.thread("2", title="closed one", status="closed"))
    md = assemble_boot(SECTIONS, make.inputs(threads=threads), settings, tz)
    assert "open one" in md
    assert "closed one" not in md
    assert "| 1 active thread |" in md  # the reference said "1 active threads"


def test_includes_recent_decisions_section(make, settings, tz):
    """port: includes recent decisions section."""
    decisions = make.decisions(make.decision("d1", what="decided to use TypeScript", why="Type safety",
                                             impact="high"))
    md = assemble_boot(SECTIONS, make.inputs(decisions=decisions), settings, tz)
    assert (
        "## 🎯 Recent Decisions\n- 🟠 **decided to use TypeScript** (2026-02-17)\n  Why: Type safety\n"
    ) in md


def test_includes_narrative_when_fresh(make, settings, tz):
    """port: includes narrative when fresh."""
    md = assemble_boot(SECTIONS, make.inputs(narrative=make.narrative()), settings, tz)
    assert "## 📖 Narrative (last 24h)\nToday was productive. Built the cortex plugin.\n" in md


def test_excludes_narrative_older_than_36_hours(make, settings, tz):
    """port: excludes narrative when stale (>36h)."""
    narrative = make.narrative("Old narrative content here", age=timedelta(hours=48))
    md = assemble_boot(SECTIONS, make.inputs(narrative=narrative), settings, tz)
    assert "Old narrative content" not in md
    assert "📖 Narrative" not in md


def test_narrative_freshness_boundary_is_36_hours(make, settings, tz):
    young = make.narrative("young narrative", age=timedelta(hours=36) - timedelta(seconds=1))
    old = make.narrative("old narrative", age=timedelta(hours=36))
    assert "young narrative" in assemble_boot(SECTIONS, make.inputs(narrative=young), settings, tz)
    assert "old narrative" not in assemble_boot(SECTIONS, make.inputs(narrative=old), settings, tz)


def test_a_narrative_written_earlier_says_which_24_hours_it_tells(make, settings, tz):
    """The narrative tells the 24 hours up to the event it was made at (a session's end, a
    compaction) and is shown for 36 hours after: under "last 24h", a briefing the next
    morning told day-and-a-half-old entries as the last day's. The heading names the end of
    its window in local time (Berlin here); "last 24h" only for one made within the minute."""
    made = make.now - timedelta(hours=12)  # 00:30 in Berlin, the briefing's day
    timeline = [TimelineEntry(ts=made - timedelta(hours=23), kind="session_start", text="s-old")]
    markdown = build_structured_narrative(made, tz, None, None, timeline)
    md = assemble_boot(SECTIONS, make.inputs(narrative=make.narrative(markdown, age=timedelta(hours=12))), settings, tz)
    assert "Narrative (last 24h)" not in md
    # the entry is 35 hours before the briefing, within the 24 hours the heading names
    assert "## 📖 Narrative (24h to 00:30 today)\n*Tuesday, 17. February 2026 — Narrative*\n\n**Timeline:**\n" \
           "- 2026-02-16 01:30 Session started: s-old\n" in md

    def heading(age: timedelta, **env: str) -> str:
        narrative = make.narrative(age=age)
        text = assemble_boot(SECTIONS, make.inputs(narrative=narrative), settings, tz, knobs=knobs(**env))
        return next(line for line in text.split("\n") if "📖" in line)

    assert heading(timedelta(seconds=59)) == "## 📖 Narrative (last 24h)"
    assert heading(timedelta(minutes=1)) == "## 📖 Narrative (24h to 12:29 today)"
    assert heading(timedelta(hours=20)) == "## 📖 Narrative (24h to 16:30 yesterday)"
    # silent for days (a longer max age): its date and how long ago, never "last 24h"
    assert heading(timedelta(days=6), CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS="168") == \
        "## 📖 Narrative (24h to 2026-02-11 12:30, 6 days ago)"


def test_a_dated_narrative_heading_takes_its_room_from_the_narrative(make, settings, tz):
    """The section stays within the reference's size (its heading and 2000 characters)."""
    fresh = "## 📖 Narrative (last 24h)\n"
    for age in (timedelta(0), timedelta(hours=20), timedelta(days=6)):
        narrative = make.narrative("N" * 2500, age=age)
        md = assemble_boot(SECTIONS, make.inputs(narrative=narrative), settings, tz,
                           knobs=knobs(CORTEX_BOOT_NARRATIVE_MAX_AGE_HOURS="168"))
        section = "## 📖" + md.split("## 📖", 1)[1].split("\n\n", 1)[0]
        assert len(section) == len(fresh) + 2000, section[:60]


def test_includes_hot_snapshot_when_fresh(make, settings, tz):
    """port: includes hot snapshot when fresh — under a line saying when, without the
    snapshot's own heading (a "# Hot Snapshot" inside the briefing reads as one of its own)."""
    md = assemble_boot(SECTIONS, make.inputs(snapshot=make.snapshot(age=timedelta(minutes=5))), settings, tz)
    assert ("## 🔥 Last Session Snapshot\nCompacted 5m ago (2026-02-17T11:25:02Z).\n\nRecent conversation...\n"
            in md)
    assert "# Hot Snapshot" not in md


def test_a_snapshot_of_no_messages_is_no_section(make, settings, tz):
    empty = msgspec.structs.replace(make.snapshot("# Hot Snapshot\n\n(No recent messages captured)\n"),
                                    messages_snapshotted=0)
    md = assemble_boot(SECTIONS, make.inputs(snapshot=empty), settings, tz)
    assert "Last Session Snapshot" not in md and "No recent messages" not in md


def test_excludes_hot_snapshot_older_than_one_hour(make, settings, tz):
    """port: excludes hot snapshot when stale (>1h)."""
    snapshot = make.snapshot("# Old Snapshot\nOld conversation...", age=timedelta(hours=2))
    md = assemble_boot(SECTIONS, make.inputs(snapshot=snapshot), settings, tz)
    assert "Old Snapshot" not in md
    assert "🔥 Last Session Snapshot" not in md


def test_snapshot_freshness_boundary_is_one_hour(make, settings, tz):
    young = make.snapshot("young snapshot", age=timedelta(minutes=59, seconds=59))
    old = make.snapshot("old snapshot", age=timedelta(hours=1))
    assert "young snapshot" in assemble_boot(SECTIONS, make.inputs(snapshot=young), settings, tz)
    assert "old snapshot" not in assemble_boot(SECTIONS, make.inputs(snapshot=old), settings, tz)


def test_freshness_is_measured_against_the_trigger_time_not_the_clock(make, settings, tz):
    """A snapshot from 2026 is fresh for a trigger 10 minutes later, whenever the test runs."""
    snapshot = make.snapshot("snapshot of the trigger's hour", age=timedelta(minutes=10))
    assert "snapshot of the trigger's hour" in assemble_boot(SECTIONS, make.inputs(snapshot=snapshot), settings, tz)


def test_includes_footer_with_stats(make, settings, tz):
    """port: includes footer with stats (counted in words: the reference's "1 active threads" miscounted)."""
    md = assemble_boot(SECTIONS, full_inputs(make), settings, tz)
    assert md.endswith("---\n_Boot context | 1 active thread | 1 recent decision | 1 open commitment_")


def test_excludes_decisions_older_than_recency_days(make, settings, tz):
    """port: excludes decisions older than decisionRecencyDays."""
    old = make.decision("old", what="old decision about fonts", date="2026-01-18", why="legacy")
    md = assemble_boot(SECTIONS, make.inputs(decisions=make.decisions(old)), settings, tz)
    assert "old decision about fonts" not in md
    assert "🎯 Recent Decisions" not in md


def test_limits_threads_to_max_threads_in_boot(make, settings, tz):
    """port: limits threads to maxThreadsInBoot."""
    threads = make.threads(*(make.thread(f"t-{i}") for i in range(15)))
    md = assemble_boot(SECTIONS, make.inputs(threads=threads), settings, tz,
                       knobs=knobs(CORTEX_BOOT_MAX_THREADS_IN_BOOT="3", CORTEX_BOOT_MAX_TOPICS_IN_BOOT="15"))
    assert md.count("\n### ") == 3
    assert "_… 12 more open threads not shown_" in md


def test_sections_without_data_are_absent(make, settings, tz):
    md = assemble_boot(SECTIONS, make.inputs(
        commitments=make.commitments(make.commitment("c1", status="done")),
        knowledge=make.knowledge(),
        channels=make.channels(
            make.channel("webchat", layer="foreground"), make.channel("old", layer="archived")
        ),
        key_memories=["", "   "],
        decisions=make.decisions(),
        threads=make.threads(make.thread("x", status="closed")),
    ), settings, tz)
    for heading in SECTION_HEADINGS[2:-1]:
        assert heading not in md, heading


def test_same_inputs_give_the_same_string(make, settings, tz):
    inputs = full_inputs(make)
    assert assemble_boot(SECTIONS, inputs, settings, tz) == assemble_boot(SECTIONS, inputs, settings, tz)


def test_output_does_not_depend_on_document_list_order(make, settings, tz):
    threads = [make.thread(f"t{i}", priority=p, last_activity=make.now - timedelta(minutes=i % 3))
               for i, p in enumerate(["low", "high", "medium", "critical", "high", "medium"] * 2)]
    decisions = [make.decision(f"d{i}", extracted_at=make.now - timedelta(minutes=i % 2)) for i in range(8)]
    shuffled_threads, shuffled_decisions = threads[:], decisions[:]
    random.Random(7).shuffle(shuffled_threads)
    random.Random(7).shuffle(shuffled_decisions)
    a = make.inputs(threads=make.threads(*threads), decisions=make.decisions(*decisions))
    b = make.inputs(threads=make.threads(*shuffled_threads), decisions=make.decisions(*shuffled_decisions))
    assert assemble_boot(SECTIONS, a, settings, tz) == assemble_boot(SECTIONS, b, settings, tz)


def test_reference_demo_briefing(make, settings, tz):
    """The reference demo's state (demo/SAMPLE-OUTPUT.md): mood excited, closed thread left out."""
    threads = make.threads(
        make.thread("a", title="the auth migration", status="closed", priority="high"),
        make.thread("b", title="dem Performance-Bug", waiting_for="den Review von Alexey"),
        make.thread("c", title="the Kubernetes cluster", last_activity=make.now - timedelta(minutes=1)),
        mood="excited",
    )
    md = assemble_boot(SECTIONS, make.inputs(threads=threads), settings, tz)
    assert "Last session mood: excited 🔥" in md
    active = md[md.index("## 🧵 Active Threads"):]
    assert active.index("the Kubernetes cluster") < active.index("dem Performance-Bug")
    assert "the auth migration" not in md


def test_a_snapshot_over_its_budget_loses_its_oldest_messages_not_the_last_said(make, settings, tz):
    said = [f"- [user] message {i} " + "words " * 30 for i in range(10)]
    snapshot = make.snapshot("# Hot Snapshot\n\n**Recent messages:**\n" + "\n".join(said) + "\n",
                             age=timedelta(minutes=5))
    section = snapshot_section(snapshot, make.now, 1000)
    assert len(section) <= 1000 + len("## 🔥 Last Session Snapshot\n\n")
    assert said[-1].rstrip() in section and "message 0 " not in section  # the newest whole, the oldest gone
    kept = [line for line in section.splitlines() if line.startswith("- ")]
    assert [line.rstrip() for line in kept] == [line.rstrip() for line in said[-len(kept):]] and len(kept) >= 3
    assert "**Recent messages:**" in section
