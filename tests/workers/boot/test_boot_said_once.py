"""Each fact once across the briefing's sections, in the cases a multi-day history met:
a thread whose summary is a claim the Lessons call false, a thread that only states a fact
Known Facts shows, a session's news that the narrative's Completed item already says."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from briefing_sections import SECTIONS

from schemas.docs import Finding, TraceDoc
from shared.config import BootSettings
from workers.boot.assemble import assemble_boot
from workers.evals.briefing_checks import briefing_defects
from workers.traces.core import empty_trace_doc

from .conftest import NOW, Make


def _claim(quote: str) -> TraceDoc:
    found = Finding(id="f1", signal="hallucination", severity="critical", summary="success claimed after a failure",
                    events=["e-1"], first_ts=NOW - timedelta(hours=1), last_ts=NOW - timedelta(hours=1),
                    tool="deploy_staging", quote=quote)
    return TraceDoc(updated=NOW, findings=[found], integrity=empty_trace_doc(NOW).integrity)


def test_a_thread_whose_summary_is_a_claim_found_false_points_to_the_lessons(
        make: Make, settings: BootSettings, tz: ZoneInfo) -> None:
    claim = "The staging deploy is done and payments run on staging."
    inputs = make.inputs(threads=make.threads(make.thread("t1", title="staging deploy", summary=claim)),
                         traces=_claim(claim))
    markdown = assemble_boot(SECTIONS, inputs, settings, tz)
    threads = markdown.split("## 🧵 Active Threads", 1)[1].split("\n## ", 1)[0]
    assert "### 🟡 staging deploy" in threads and claim not in threads
    assert "Summary: the last claim here was found false (see Lessons)" in threads
    assert markdown.count(claim) == 1  # the Lessons quote it
    assert [d for d in briefing_defects(markdown) if d[0] == "cross_section_repeat"] == []


def test_a_thread_that_only_states_a_known_fact_is_left_to_known_facts(
        make: Make, settings: BootSettings, tz: ZoneInfo) -> None:
    said = "By the way, Maria works at Globex Corp now, she left Acme last week."
    fact = make.fact("f1", subject="Maria", predicate="works-at", object="Globex Corp")
    inputs = make.inputs(threads=make.threads(make.thread("t1", title="Globex Corp", summary=said),
                                              make.thread("t2", title="billing export", summary="Finance wants CSV.")),
                         knowledge=make.knowledge(fact))
    markdown = assemble_boot(SECTIONS, inputs, settings, tz)
    assert "- Maria works at Globex Corp" in markdown and said not in markdown
    assert "### 🟡 billing export" in markdown and "1 active thread" in markdown
    assert briefing_defects(markdown) == []
    # a thread that also waits for something is still one to follow
    waiting = make.thread("t1", title="Globex Corp", summary=said, waiting_for="Maria's new address")
    markdown = assemble_boot(SECTIONS, make.inputs(threads=make.threads(waiting), knowledge=make.knowledge(fact)),
                             settings, tz)
    assert "### 🟡 Globex Corp" in markdown


def test_a_sessions_news_the_narratives_completed_item_says_is_not_quoted_again(
        make: Make, settings: BootSettings, tz: ZoneInfo) -> None:
    narrative = make.narrative(
        "**Completed:**\n- ✅ staging registry credentials (15:01): The token expired, I renewed it.\n\n"
        "**Sessions:**\n- 15:00–15:30 s-b: albert and claudia, 2 messages\n"
        "  albert: “Regarding the staging registry credentials: the token expired, I renewed it.”\n"
        "  claudia: “I passed the adoption agency interviews last Friday!”\n")
    markdown = assemble_boot(SECTIONS, make.inputs(narrative=narrative), settings, tz)
    assert markdown.count("the token expired, I renewed it") + markdown.count("The token expired, I renewed it") == 1
    assert "claudia: “I passed the adoption agency interviews last Friday!”" in markdown
    assert briefing_defects(markdown) == []
