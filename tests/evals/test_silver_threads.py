"""``workers.evals.silver_threads``: silver thread labels from the corpora's own annotations (LoCoMo's
events, QMSum's topics), and the phrase ranker learnt on them, left one conversation out. A two-session
chat and a two-meeting AMI series written here (no corpus text), the structures only (the embedder's
table is a build artefact)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cortex_testkit import PLAN_FIRST, PLAN_LABELS, PLAN_SECOND, locomo_corpus, two_sessions

from shared.config import load_settings
from workers.conversation.patterns import get_patterns
from workers.evals.real_eval import RealOptions, load_real_set, real_settings
from workers.evals.real_threads_ranker import THRESHOLDS, prepare
from workers.evals.silver_threads import (
    NEGATIVE_EVERY,
    agreement,
    agreement_report,
    held,
    leave_one_out,
    locomo_conversations,
    main,
    qmsum_conversations,
    report,
    silver_rows,
)

_plan = two_sessions("silver", PLAN_FIRST, PLAN_SECOND)


def _sample(i: int) -> dict[str, Any]:
    sample: dict[str, Any] = dict(_plan(i))
    sample["event_summary"] = {
        "events_session_1": {"Ana": ["Ana applies to a study abroad program in Galway."], "Ben": [],
                             "date": "3 May, 2024"},
        "events_session_2": {"Ana": ["Ana waits to hear back from the study abroad program."], "Ben": [],
                             "date": "10 May, 2024"},
    }
    sample["session_summary"] = {"session_1_summary": "Ana told Ben about the program. Ben likes ice cream."}
    return sample


def _meeting(turns: list[tuple[str, str]], topics: list[dict[str, Any]]) -> dict[str, Any]:
    return {"topic_list": topics, "general_query_list": [], "specific_query_list": [],
            "meeting_transcripts": [{"speaker": s, "content": t} for s, t in turns]}


@pytest.fixture
def corpora(tmp_path: Path) -> tuple[Path, Path, Path]:
    locomo, labels = locomo_corpus(tmp_path, _sample, PLAN_LABELS)
    (labels / "dev" / "locomo-1.json").write_text(json.dumps({**PLAN_LABELS, "conversation": "1"}))
    root = tmp_path / "QMSum" / "data" / "ALL"
    for split in ("train", "val", "test"):
        (root / split).mkdir(parents=True)
    (root / "train" / "ES2099a.json").write_text(json.dumps(_meeting(
        [("Project Manager", "Today we talk about the battery life."),
         ("Industrial Designer", "The battery life should last a year. Nice weather today."),
         ("Marketing", "Lunch is at noon in the big hall.")],
        [{"topic": "Battery life of the remote", "relevant_text_span": [["0", "1"]]},
         {"topic": "Lunch", "relevant_text_span": [["2", "2"]]}])))
    (root / "train" / "ES2099b.json").write_text(json.dumps(_meeting(
        [("Project Manager", "The battery life is settled.")],
        [{"topic": "Closing", "relevant_text_span": [["0", "0"]]}])))
    return locomo, labels, tmp_path / "QMSum"


def test_the_annotations_hold_the_phrases(corpora: tuple[Path, Path, Path]) -> None:
    locomo, _, qmsum = corpora
    assert held("study abroad program", frozenset({"study", "abroad", "program", "galway"}), frozenset())
    assert not held("abroad program", frozenset({"study", "abroad"}), frozenset())  # its head word is not held
    assert not held("ice cream", frozenset({"ice"}), frozenset())
    patterns = get_patterns(real_settings(load_settings({})).languages)
    ((series, topics),) = qmsum_conversations(str(qmsum))
    assert series.name == "qmsum-ES2099" and [t.session for t in series.turns] == [1, 1, 1, 2]
    meetings = silver_rows(series, series.name, topics, patterns, None)
    assert meetings.y.sum() == 2  # "battery life" in the first meeting's topic span, twice; not in the second's
    chats = locomo_conversations(str(locomo), summaries=False)
    assert [c.name for c, _ in chats] == [f"locomo-{i}" for i in range(5)]
    conv, events = chats[0]
    rows = silver_rows(conv, conv.name, events, patterns, None)
    assert rows.y.sum() >= 2 and rows.x.shape == (len(rows.y), 13)  # Ana's plan (its phrases) in both sessions
    assert len(rows.y) - rows.y.sum() <= max(1, 12 // NEGATIVE_EVERY)  # the negatives thinned
    with_summaries = locomo_conversations(str(locomo), summaries=True)[0][1]
    assert len(with_summaries) == len(events) + 3  # "Ana told Ben about the program." is Ana's and Ben's …
    assert sum(n.speaker == "Ben" for n in with_summaries) == 2  # … "Ben likes ice cream." Ben's only


def test_the_ranker_learnt_on_silver_alone_finds_the_plan(corpora: tuple[Path, Path, Path]) -> None:
    locomo, labels, qmsum = corpora
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    settings = real_settings(load_settings({}))
    patterns = get_patterns(settings.languages)
    conversations = [prepare(item, settings, patterns, None) for item in items]
    silver = [silver_rows(c, c.name, n, patterns, None) for c, n in
              [*qmsum_conversations(str(qmsum)), *locomo_conversations(str(locomo), False)]]
    scored = leave_one_out(conversations, silver, "silver")
    never, _ = scored.fixed[THRESHOLDS[-1]]
    assert (never.tp, never.fn) == (0, 4)
    every, last = scored.fixed[0.5]
    assert every.tp == 4 and last.tp == 2  # learnt from the other chats' events only
    assert set(scored.per) == {"locomo-0", "locomo-1"}
    assert leave_one_out(conversations, silver, "silver", chats=True).fixed[0.5][0].tp == 4  # both are chats
    found = agreement(items, locomo_conversations(str(locomo), False), patterns)
    assert set(found) == {"locomo-0", "locomo-1"} and all(tp >= 1 for tp, _, _ in found.values())


def test_the_report_and_the_command_line(corpora: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    locomo, labels, qmsum = corpora
    items, _ = load_real_set(RealOptions(split="dev", locomo=str(locomo), labels=str(labels)))
    text = report(items, real_settings(load_settings({})), str(locomo), str(qmsum), with_vectors=False,
                  variants=("hand", "silver"))
    assert "  qmsum: 1 conversations, 2 positive" in text and "\nsilver:\n" in text and "nested by F0.5" in text
    agreed = agreement_report(items, real_settings(load_settings({})), str(locomo), None, summaries=True)
    assert agreed.splitlines()[1].startswith("  locomo-0: ") and "  all: P " in agreed
    assert main(["--locomo", str(locomo.parent / "missing.json")]) == 1
    assert "silver_threads:" in capsys.readouterr().err
