"""``cortex eval briefing``: the labelled set, the defect checks, and the quality floors.

The numbers live in docs/briefing-eval.md; here the cores run on every conversation (a
second) and a few conversations run through the real pipeline (an embedded nats-server and
every worker, hashing embedder)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from shared.config import load_settings
from workers.evals import briefing
from workers.evals import cli as eval_cli
from workers.evals.briefing_checks import (
    boilerplate_summary,
    briefing_defects,
    fragment_defect,
    near_duplicate,
    repeated_why,
    stub_cut,
)

SOURCE = ("Sure. For the auth migration we decided to move token signing to the new key service, "
          "because the old HMAC secret is shared across services.")


def test_the_set_is_labelled_in_several_languages_with_every_case() -> None:
    dataset = briefing.load_dataset(briefing.SAMPLE_BRIEFING)
    convs = dataset.conversations
    assert len(convs) >= 15
    languages = {c.name.split("-")[0] for c in convs}
    assert len(languages) >= 8
    turns = [t for c in convs for t in c.turns]
    decisions = [d for t in turns for d in t.decisions]
    assert any(d.why for d in decisions) and any(not d.why for d in decisions)
    assert any(len(t.decisions) >= 2 for t in turns)  # several per message
    assert any(t.wish for t in turns) and any(t.commitments for t in turns)
    assert any(not c.threads for c in convs)  # chit-chat: no thread expected
    ends = [c for c in convs if [t.kind for t in c.turns][-2:] == ["session.end", "session.start"]]
    assert len(ends) == len(convs)
    assert all(c.turns[-1].gap_s <= 1 for c in ends)  # the next session starts at once


@pytest.mark.parametrize(
    ("fragment", "defect"),
    [
        ("For the auth migration we decided to move token signing to the new key service", None),
        ("Sure. For the auth migration we decided to move token signing to the new key ser", "cut_mid_word"),
        ("For the auth migration we decided to move token signing to the new key service…", None),
        ("For the auth migration we decided to move token signing to the new", "cut_without_ellipsis"),
        ("or the auth migration we decided", "cut_mid_word"),
        ("the old HMAC secret is shared across services", None),  # after "because": a clause
        ("we decided to move token signing to the new key service", "cut_without_ellipsis"),
        ("…we decided to move token signing to the new key service", None),
        ("nothing of the kind", None),  # not a quote: not judged
    ],
)
def test_fragment_checks_read_a_quote_where_it_sits(fragment: str, defect: str | None) -> None:
    assert fragment_defect(fragment, [SOURCE]) == defect


def test_cjk_fragments_end_at_sentence_or_clause_marks() -> None:
    source = "問い合わせが多いので、エラーメッセージを書き直すことに決めた。"
    assert fragment_defect("エラーメッセージを書き直すことに決めた", [source]) is None
    assert fragment_defect("問い合わせが多い", [source]) is None
    assert fragment_defect("エラーメッセージを書き", [source]) == "cut_without_ellipsis"


def test_repeated_why_duplicates_and_boilerplate() -> None:
    what = "We decided to load the tax tables once at startup"
    assert repeated_why(what, what + " because they change only twice a year.")
    assert repeated_why(what + " because they c", what)
    assert not repeated_why(what, "they change only twice a year")
    assert not repeated_why(what, "")
    assert near_duplicate("Agreed. The migration of the tokens is critical, so let's do the rollout. A",
                          "migration of the tokens is critical, so let's do the rollout.")
    assert not near_duplicate("keep two replicas per service", "review the staging costs next month")
    assert boilerplate_summary("Topic detected from albert", "auth migration")
    assert boilerplate_summary("", "auth migration")
    assert not boilerplate_summary("Move token signing to the key service; waiting for the rollout.", "auth")


def test_scoring_counts_hits_misses_and_extras() -> None:
    dataset = briefing.load_dataset(briefing.SAMPLE_BRIEFING)
    conv = next(c for c in dataset.conversations if c.name == "en-foster-chat")
    derived = briefing.run_cores(conv, briefing.eval_settings(dataset))
    score = briefing.score_conversation(conv, derived, briefing.eval_settings(dataset))
    rep = briefing.score_report(score)
    # no label: every thread, decision or promise found is a false positive
    assert rep["threads"]["tp"] == rep["decisions"]["tp"] == rep["commitments"]["tp"] == 0
    assert rep["commitments"]["fp"] == score.defects["wish_as_promise"]


def test_the_cli_writes_a_core_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "briefing.json"
    args = argparse.Namespace(file="sample", core_only=True, conversation=None, embedder=None, examples=False,
                              out=str(out), real=False, llm=False)
    import asyncio

    assert asyncio.run(eval_cli.cmd_eval_briefing(args, load_settings({}))) == 0
    report = json.loads(out.read_text())
    assert report["conversations"] >= 15
    assert set(report["core"]) >= {"threads", "decisions", "commitments", "defects", "why_accuracy"}
    assert "briefing eval" in capsys.readouterr().out


def test_an_unknown_conversation_is_one_clear_error() -> None:
    dataset = briefing.load_dataset(briefing.SAMPLE_BRIEFING)
    with pytest.raises(briefing.DatasetError, match="unknown conversation"):
        briefing.select(dataset, ["nope"])


# --- the floors: what issue 18 fixed stays fixed ------------------------------------------

FLOORS = {"threads": (0.95, 0.9), "decisions": (0.95, 0.95), "commitments": (0.95, 0.95)}
PIPELINE_SUBSET = ["en-auth-cued", "de-kundenportal", "en-backfill-compaction"]


def assert_clean(rep: dict[str, object], label: str) -> None:
    defects = rep["defects"]
    assert isinstance(defects, dict)
    assert not any(defects.values()), f"{label}: {defects}"
    for kind, (precision, recall) in FLOORS.items():
        scores = rep[kind]
        assert isinstance(scores, dict)
        assert scores["precision"] >= precision and scores["recall"] >= recall, f"{label} {kind}: {scores}"


def test_the_cores_meet_the_floors_on_every_conversation() -> None:
    """docs/briefing-eval.md: no reader-visible defect, precision and recall at least the floors."""
    dataset = briefing.load_dataset(briefing.SAMPLE_BRIEFING)
    total, _ = briefing.run_core_eval(dataset, briefing.eval_settings(dataset))
    rep = briefing.score_report(total)
    assert_clean(rep, "cores")
    assert rep["why_accuracy"] >= 0.95 and rep["due_accuracy"] >= 0.95


async def test_a_few_conversations_through_the_pipeline_come_out_clean() -> None:
    """Every worker on an embedded nats-server (hashing embedder): the stored documents and
    the session-start BOOTSTRAP that follows a session end at once have no defect — no
    repeated why, no cut without "…", no boilerplate summary, the narrative there, no lag
    line once every source caught up."""
    from workers.evals.briefing_e2e import run_pipeline_eval

    dataset = briefing.load_dataset(briefing.SAMPLE_BRIEFING)
    total, per = await run_pipeline_eval(dataset, load_settings({}), PIPELINE_SUBSET, "hashing")
    assert set(per) == set(PIPELINE_SUBSET)
    assert_clean(briefing.score_report(total), "pipeline")


# --- the BOOTSTRAP as a whole (the demo's briefing before issue 18's last fixes) ----------

DEMO_BEFORE = """# Context Briefing
Generated: 2026-02-17T10:05:00Z | Local: 10:05

## ⚡ State
Mode: Morning — brief, directive, efficient
Last activity: just now (2026-02-17T10:05:00Z)

## 🔥 Last Session Snapshot
# Hot Snapshot — 2026-02-17T10:00:00Z
## Last conversation before compaction

**Recent messages:**
- [assistant] For the kubernetes cluster the plan is to add a second node pool with 32 GB nodes.

**Thread state at compaction:**
- 2 open threads, 2 decisions pending

## 📖 Narrative (last 24h)
*Tuesday, 17. February 2026 — Narrative*

**Completed:**
- ✅ auth migration: The auth migration is done ✅ all services validate tokens. Decided: For…

**Open:**
- 🟡 kubernetes cluster upgrade: The old nodes run out of memory. Decided: For the kubernetes cluster the plan is \
to add a second node pool with 32 GB nodes.

**Decisions:**
- For the kubernetes cluster the plan is to add a second node pool with 32 GB nodes

**Timeline:**
- 09:30 Thread opened: kubernetes cluster upgrade

## 🧵 Active Threads

### 🟡 kubernetes cluster upgrade
Priority: medium | Last: 2026-02-17T09:34
Summary: The old nodes run out of memory.

## 🎯 Recent Decisions
- 🟡 **For the kubernetes cluster the plan is to add a second node pool with 32 GB nodes** (2026-02-17)

---
_Boot context | 1 active threads | 1 recent decisions | 0 open commitments_"""


def test_the_briefing_checks_count_what_the_demo_showed() -> None:
    found = briefing_defects(DEMO_BEFORE)
    kinds = [d for d, _ in found]
    # the decision in the narrative's Open line and Decisions block, then in Recent Decisions;
    # the thread's about in the narrative and in Active Threads (the snapshot's quote aside)
    assert kinds.count("repeat_in_section") == 1
    assert kinds.count("cross_section_repeat") == 2
    assert ("stub_cut", "- ✅ auth migration: The auth migration is done ✅ all services validate tokens. "
                        "Decided: For…") in found
    assert kinds.count("miscount") == 2  # "2 decisions pending" (waits), "1 active threads"
    assert kinds.count("stray_heading") == 2  # the snapshot's "# Hot Snapshot" and "## Last conversation…"
    assert "empty_section" not in kinds


def test_stub_cuts_and_clean_cuts() -> None:
    assert stub_cut("The auth migration is done. Decided: For…")
    assert stub_cut("The auth migration is done. Decided: For the…")
    assert stub_cut("Thanks! Next…")
    assert not stub_cut("The auth migration is done. Decided: For the auth migration…")
    assert not stub_cut("the finance team to confirm the new invoice…")
    assert not stub_cut("_… 3 more open threads not shown_")  # a count, not a cut
    assert not stub_cut("- … 4 earlier entries")
    assert not stub_cut("数据库迁移的问题已经解…")


def test_a_fact_said_once_per_briefing_is_no_repeat_and_an_empty_heading_is_counted() -> None:
    clean = DEMO_BEFORE.replace("**Decisions:**\n- For the kubernetes cluster the plan is to add a second node "
                                "pool with 32 GB nodes\n", "**Decisions:**\n")
    found = briefing_defects(clean)
    assert ("empty_section", "**Decisions:**") in found
    assert [d for d, _ in found].count("repeat_in_section") == 0
    # a thread title in the timeline, a heading and a narrative line is a reference, not a fact
    assert not any(text == "kubernetes cluster upgrade" for _, text in found)
    assert briefing_defects("# Context Briefing\n\n## 🧵 Active Threads\n\n## 🎯 Recent Decisions\n- x\n") == [
        ("empty_section", "## 🧵 Active Threads")]


def test_two_promises_made_the_same_day_are_no_repeated_fact() -> None:
    """"(Ana; promised 2023-07-03, 112 days ago)" on two commitment lines says when each was
    made, as a title names a thread: no fact said twice (the real-conversation set's briefings
    counted every such pair)."""
    md = ("# Context Briefing\n\n## 📋 Commitments (2 open)\n"
          "- 🔴 **OVERDUE**: send the report (Ana; promised 2023-07-03, 112 days ago)\n"
          "- 🔴 **OVERDUE**: book the venue (Ana; promised 2023-07-03, 112 days ago)\n")
    assert not [d for d, _ in briefing_defects(md) if d in ("repeat_in_section", "cross_section_repeat")]


def test_a_thread_last_active_before_it_opened_is_a_clock_mismatch() -> None:
    """The eval's Berlin briefings: Active Threads in UTC, the narrative's timeline local."""
    md = ("## 📖 Narrative (last 24h)\n*Monday, 02. March 2026 — Narrative*\n\n**Timeline:**\n"
          "- 09:06 Thread opened: billing rewrite\n\n## 🧵 Active Threads\n\n### 🟡 billing rewrite\n"
          "Priority: medium | Last: {last}\nSummary: The billing rewrite is behind schedule.\n")
    assert ("clock_mismatch", "billing rewrite: last 2026-03-02 08:16, opened 2026-03-02 09:06") in \
        briefing_defects(md.format(last="2026-03-02T08:16"))
    assert briefing_defects(md.format(last="2026-03-02 09:16")) == []


def test_the_pipeline_eval_reads_the_task_off_every_commitment_line() -> None:
    """The task a commitment line quotes is what the eval checks for cut words: a due time's
    colon ("Due 2026-02-18 09:00: …") or an overdue line's "(you; promised …)" must not move it."""
    from workers.evals.briefing_e2e import COMMITMENT_LINE

    lines = {
        "- 🟡 Due 2026-02-18 09:00: review the PR (claudia)": "review the PR",
        "- 🟡 Due Friday: ship v2 (you)": "ship v2",
        "- ⚪ Open: write the docs": "write the docs",
        "- 🔴 **OVERDUE**: write the guide (you; promised 2026-03-04, 8 days ago)": "write the guide",
        "- 🔴 **OVERDUE**: den Fix einbauen (Onboarding-Flow) (claudia; due 2026-02-16, yesterday)":
            "den Fix einbauen (Onboarding-Flow)",
    }
    for line, task in lines.items():
        found = COMMITMENT_LINE.match(line)
        assert found is not None and found.group(1) == task, line
