"""Each fact once, where a reader looks for it (issue 18): the assembly rules of the boot.

A decision lives in Recent Decisions (with its why), an open thread in Active Threads, the
narrative keeps completed work and the timeline, the hot snapshot quotes the last messages
under one line saying when. The cases are the defects ``cortex demo`` showed before: the
kubernetes decision said five times, the narrative's Open lines repeating Active Threads,
"2 decisions pending", "# Hot Snapshot" pasted inside the briefing, "1 active threads".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import msgspec
from briefing_sections import SECTIONS, knobs

from schemas.docs import NarrativeDoc, Thread
from workers.boot import assemble_boot
from workers.evals.briefing_checks import briefing_defects
from workers.narrative import build_structured_narrative
from workers.snapshot import build_snapshot_markdown, thread_state_line
from workers.summaries import compose_summary

K8S = "For the kubernetes cluster the plan is to add a second node pool with 32 GB nodes"
AUTH = "For the auth migration we decided to move token signing to the new key service"


def composed(make: Any, id: str, **kw: Any) -> Thread:
    """A thread whose summary the threads worker composed (about, decision, wait)."""
    t = make.thread(id, **kw)
    return msgspec.structs.replace(t, summary=compose_summary(t))


def demo_like(make: Any, tz: Any, **over: Any) -> Any:
    k8s = composed(make, "k8s", title="kubernetes cluster upgrade", about="The old nodes run out of memory",
                   decisions=[K8S])
    dash = composed(make, "dash", title="Performance-Bug im Dashboard", about="Die Ladezeit ist zu hoch",
                    waiting_for="die Profiling-Daten von Maria")
    auth = composed(make, "auth", title="auth migration", status="closed", about="The auth migration is done",
                    decisions=[AUTH], last_activity=make.now - timedelta(minutes=20))
    threads = make.threads(k8s, dash, auth)
    decisions = make.decisions(
        make.decision("d1", what=AUTH, why="the old HMAC secret is shared across services"),
        make.decision("d2", what=K8S, why="", extracted_at=make.now - timedelta(minutes=5)),
    )
    narrative_md = build_structured_narrative(make.now, tz, threads, decisions, [])
    snapshot_md, _ = build_snapshot_markdown(make.now - timedelta(minutes=5), [], 15, thread_state_line(threads))
    fields = {
        "threads": threads, "decisions": decisions,
        "narrative": make.narrative(narrative_md), "snapshot": make.snapshot(snapshot_md, age=timedelta(minutes=5)),
        **over,
    }
    return make.inputs(**fields)


def section_of(md: str, heading: str) -> str:
    start = md.index(heading)
    end = min(i for i in (md.find("\n## ", start + 1), md.find("\n---\n", start)) if i >= 0)
    return md[start:end]


def test_a_decision_is_said_once_in_recent_decisions(make, settings, tz):
    md = assemble_boot(SECTIONS, demo_like(make, tz), settings, tz)
    assert md.count(K8S) == 1 and md.count(AUTH) == 1
    assert K8S in section_of(md, "## 🎯 Recent Decisions")
    active = section_of(md, "## 🧵 Active Threads")
    assert "Summary: The old nodes run out of memory.\n" in active  # where it stands: in Recent Decisions
    assert "Decided" not in active and "Decisions:" not in active
    assert briefing_defects(md) == []


def test_a_thread_keeps_its_decision_when_recent_decisions_does_not_show_it(make, settings, tz):
    # older than the recency window: the thread is the only place that still says it
    inputs = demo_like(make, tz)
    old = make.decisions(make.decision("d2", what=K8S, date="2026-01-01", extracted_at=make.now - timedelta(days=47)))
    md = assemble_boot(SECTIONS, make.replaced(inputs, decisions=old), settings, tz)
    assert f"Summary: The old nodes run out of memory. Decided: {K8S}.\n" in md
    assert "## 🎯 Recent Decisions" not in md


def test_a_summary_not_composed_by_cortex_is_left_whole(make, settings, tz):
    """Claude's wording or an imported thread: not taken apart, even when it names the decision."""
    thread = make.thread("x", title="kubernetes cluster upgrade", summary=f"Nodes first. {K8S}.", decisions=[K8S])
    inputs = make.inputs(threads=make.threads(thread), decisions=make.decisions(make.decision("d", what=K8S)))
    md = assemble_boot(SECTIONS, inputs, settings, tz)
    assert f"Summary: Nodes first. {K8S}.\n" in md
    assert "Decisions:" not in md  # shown in Recent Decisions: not listed again under the thread


def test_the_narrative_keeps_completed_work_and_the_timeline_only(make, settings, tz):
    md = assemble_boot(SECTIONS, demo_like(make, tz), settings, tz)
    narrative = section_of(md, "## 📖 Narrative")
    assert "**Completed:**\n- ✅ auth migration (12:10): The auth migration is done." in narrative
    assert "**Open:**" not in narrative and "**Decisions:**" not in narrative
    assert "\n\n\n" not in narrative  # a dropped block leaves no blank lines behind


def test_the_narrative_keeps_an_open_thread_active_threads_does_not_show(make, tz):
    """Beyond the limit, the narrative's line is the only place a thread is named."""
    from shared.config import BootSettings

    md = assemble_boot(SECTIONS, demo_like(make, tz), BootSettings(), tz,
                       knobs=knobs(CORTEX_BOOT_MAX_THREADS_IN_BOOT="1"))
    narrative = section_of(md, "## 📖 Narrative")
    shown = section_of(md, "## 🧵 Active Threads")
    assert "Performance-Bug" in shown and "kubernetes cluster upgrade" not in shown  # same rank: by id
    assert "**Open:**\n- 🟡 kubernetes cluster upgrade: The old nodes run out of memory." in narrative
    assert "Performance-Bug im Dashboard:" not in narrative


def test_a_narrative_left_with_its_date_alone_is_no_section(make, settings, tz):
    inputs = demo_like(make, tz)
    closed_gone = make.threads(*(t for t in make.doc(inputs, "threads").threads if t.status == "open"))
    narrative_md = build_structured_narrative(make.now, tz, closed_gone, make.doc(inputs, "decisions"), [])
    md = assemble_boot(SECTIONS, make.replaced(inputs, threads=closed_gone, narrative=make.narrative(narrative_md)),
                       settings, tz)
    assert "## 📖 Narrative" not in md
    assert briefing_defects(md) == []


def test_a_narrative_claude_wrote_stays_whole(make, settings, tz):
    prose = f"*Tuesday, 17. February 2026 — Narrative*\n\nWe agreed: {K8S}."
    llm = msgspec.structs.replace(make.narrative(prose), source="llm")
    md = assemble_boot(SECTIONS, make.replaced(demo_like(make, tz), narrative=llm), settings, tz)
    assert f"We agreed: {K8S}." in section_of(md, "## 📖 Narrative")


def test_the_headings_of_a_narrative_a_model_wrote_are_no_sections_of_the_briefing(make, settings, tz):
    """``cortex eval briefing --llm`` found it: a model writes markdown, and its "## Tuesday"
    read as one of the briefing's own sections (stray_heading)."""
    prose = "## Tuesday\nWe agreed on the node pools.\n### Next ##\n- the dashboard"
    llm = msgspec.structs.replace(make.narrative(prose), source="llm")
    md = assemble_boot(SECTIONS, make.replaced(demo_like(make, tz), narrative=llm), settings, tz)
    narrative = section_of(md, "## 📖 Narrative")
    assert "**Tuesday**\nWe agreed on" in narrative and "**Next**\n- the dashboard" in narrative
    assert briefing_defects(md) == []


def test_an_open_item_of_a_thread_closed_since_the_narrative_is_left_out(make, settings, tz):
    inputs = demo_like(make, tz)
    stale = build_structured_narrative(make.now, tz, make.threads(composed(make, "auth", title="auth migration",
                                                                           about="Rotate the JWT keys")), None, [])
    assert "**Open:**\n- 🟡 auth migration: Rotate the JWT keys." in stale
    md = assemble_boot(SECTIONS, make.replaced(inputs, narrative=make.narrative(stale)), settings, tz)
    assert "Rotate the JWT keys" not in md  # Active Threads does not list it: closed since


def test_the_snapshot_quotes_the_messages_under_one_line_saying_when(make, settings, tz):
    md = assemble_boot(SECTIONS, demo_like(make, tz), settings, tz)
    snapshot = section_of(md, "## 🔥 Last Session Snapshot")
    assert snapshot.startswith("## 🔥 Last Session Snapshot\nCompacted 5m ago (2026-02-17T11:25:02Z).\n\n")
    assert "# Hot Snapshot" not in md and "## Last conversation" not in md
    assert "Thread state at compaction" not in md and "pending" not in md


def test_a_key_memory_a_thread_already_says_is_not_repeated(make, settings, tz):
    message = "Die Ladezeit ist zu hoch, und das muss immer unter zwei Sekunden bleiben."
    rule = "Never deploy to production on Fridays."
    md = assemble_boot(SECTIONS, demo_like(make, tz, key_memories=[message, rule]), settings, tz)
    assert message not in md
    assert f"## 📌 Rules & Key Memories\n- {rule}\n" in md


def test_counts_are_said_in_words(make, settings, tz):
    inputs = make.inputs(threads=make.threads(make.thread("1")),
                         decisions=make.decisions(make.decision("d")),
                         commitments=make.commitments(make.commitment("c")))
    assert assemble_boot(SECTIONS, inputs, settings, tz).endswith(
        "_Boot context | 1 active thread | 1 recent decision | 1 open commitment_")


def test_the_narrative_document_itself_is_not_cut_for_the_briefing(make, tz):
    """Read standalone, the narrative keeps its Open and Decisions blocks (each fact once
    inside it: the Decisions block has the decision, the Open line the thread)."""
    inputs = demo_like(make, tz)
    assert isinstance(make.doc(inputs, "narrative"), NarrativeDoc)
    standalone = make.doc(inputs, "narrative").markdown
    assert "**Open:**" in standalone and "**Decisions:**" in standalone
    assert standalone.count(K8S) == 1
    assert briefing_defects(standalone) == []
