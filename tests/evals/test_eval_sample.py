"""The recall evaluation harness on the shipped sample: a real nats-server, the real recall
worker and embedder. Quality is printed, asserted only for sanity (the numbers live in
docs/recall-eval.md); the run must stay well under a minute."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import msgspec
import pytest

from schemas.events import MessageEvent
from shared.config import load_settings
from workers.evals import SAMPLE_LOCOMO
from workers.evals import cli as eval_cli
from workers.evals.harness import (
    EvalOptions,
    QuotedTurns,
    _recall_spec,
    conversation_events,
    first_evidence_rank,
    first_quoting_rank,
    metrics,
    percentile,
)
from workers.evals.locomo import DatasetError, load_locomo, parse_dia_ids, parse_locomo, parse_session_date
from workers.recall.capture import capture_message


def test_the_sample_is_well_formed_and_self_consistent() -> None:
    convs = load_locomo(SAMPLE_LOCOMO)
    assert len(convs) == 2
    for conv in convs:
        assert 35 <= len(conv.turns) <= 45
        assert conv.skipped_questions == 0
        known = {t.dia_id for t in conv.turns}
        assert all(e in known for q in conv.questions for e in q.evidence)
        assert [t.ts for t in conv.turns] == sorted(t.ts for t in conv.turns)
    questions = [q for c in convs for q in c.questions]
    assert 18 <= len(questions) <= 24
    assert {q.category for q in questions} == {1, 2, 3, 4}  # category 5 is read but never scored


def test_malformed_evidence_and_dates_are_recovered_or_skipped() -> None:
    assert parse_dia_ids("D8:6; D9:17") == ["D8:6", "D9:17"]
    assert parse_dia_ids("D:11:26") == ["D11:26"]
    assert parse_dia_ids("D30:05") == ["D30:5"]
    assert parse_dia_ids("D") == []
    date = parse_session_date("1:56 pm on 8 May, 2023")
    assert date is not None and (date.year, date.month, date.day, date.hour, date.minute) == (2023, 5, 8, 13, 56)
    data = [{"conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "no date",
                              "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hello"}]},
             "qa": [{"question": "q1", "evidence": ["D1:1"], "category": 4},
                    {"question": "q2", "evidence": ["D7:7"], "category": 2},
                    {"question": "q3", "evidence": [], "category": 5}]}]
    (conv,) = parse_locomo(data)
    assert [q.question for q in conv.questions] == ["q1"] and conv.skipped_questions == 1
    with pytest.raises(DatasetError):
        parse_locomo({"not": "a list"})


def test_scoring_counts_the_first_evidence_memory() -> None:
    assert first_evidence_rank(["D1:2", None, "D1:1"], ["D1:1"]) == 3
    assert first_evidence_rank(["D1:2"], ["D1:1"]) is None
    m = metrics([1, 3, None, 7])
    assert m == {"n": 4, "recall@1": 0.25, "recall@5": 0.5, "recall@10": 0.75, "mrr": round((1 + 1 / 3 + 1 / 7) / 4, 4)}
    assert percentile([5.0, 1.0, 3.0, 2.0, 4.0], 50) == 3.0 and percentile([], 95) == 0.0


def test_quoted_credit_counts_only_turns_a_window_really_quotes() -> None:
    """A context window quotes up to two earlier turns of its session; a turn is credited
    only when its line is in the returned text (never across sessions)."""
    conv = load_locomo(SAMPLE_LOCOMO)[0]
    first, second, third = conv.turns[0], conv.turns[1], conv.turns[2]
    quoted = QuotedTurns(conv)
    window = "\n".join(["On 1 May 2023:", f"{first.speaker}: {' '.join(first.text.split())}",
                        f"{second.speaker}:  {second.text}", f"{third.speaker}: {third.text}"])
    # the second line's doubled space is not how a window writes it: not credited
    assert quoted.of(third.dia_id, window) == {third.dia_id, first.dia_id}
    assert quoted.of(third.dia_id, f"{third.speaker}: {third.text}") == {third.dia_id}
    # a reply window quotes the turn after its own
    reply = "\n".join(["On 1 May 2023:", f"{first.speaker}: {first.text}", f"{second.speaker}: {second.text}"])
    assert quoted.of(first.dia_id, reply) == {first.dia_id, second.dia_id}
    assert quoted.of(None, window) == set()
    opener = next(t for t in conv.turns if t.session != first.session)
    assert quoted.of(opener.dia_id, window) == {opener.dia_id}
    assert first_quoting_rank([{"D1:3"}, {"D1:1", "D1:2"}], ["D1:1"]) == 2
    assert first_quoting_rank([{"D1:3"}], ["D1:1"]) is None


def test_a_photo_turn_is_published_as_a_gateway_with_media_understanding_sends_it() -> None:
    """The dataset's caption is the image's description in OpenClaw's body; recall's
    turn memory of it (what was said) is the line the harness credits a window for quoting."""
    data = [{"conversation": {"speaker_a": "Mel", "speaker_b": "Caro", "session_1_date_time": "1:56 pm on 8 May, 2023",
                              "session_1": [{"speaker": "Mel", "dia_id": "D1:1", "text": "Look what we made!",
                                             "blip_caption": "a photo of a clay bowl", "img_url": ["x"]},
                                            {"speaker": "Caro", "dia_id": "D1:2", "text": "Lovely!"}]},
             "qa": []}]
    (conv,) = parse_locomo(data)
    (_, payload, _), _ = conversation_events("locomo-0", conv, sessions=False)
    event = msgspec.json.decode(payload, type=MessageEvent)
    assert event.content == "[Image]\nUser text:\nLook what we made!\nDescription:\na photo of a clay bowl"
    turn, shown = capture_message(event)
    assert (turn.content, shown.content) == ("Mel: Look what we made!", "Mel: [image: a clay bowl]")
    window = f"On 8 May 2023:\n{turn.content}\nCaro: Lovely!"
    assert QuotedTurns(conv).of("D1:2", window) == {"D1:1", "D1:2"}
    (_, bare, _), _ = conversation_events("locomo-0", conv, captions=False, sessions=False)
    assert msgspec.json.decode(bare, type=MessageEvent).content == "Look what we made!"


def test_live_traffic_is_messages_only_with_the_feedback_applied() -> None:
    conv = load_locomo(SAMPLE_LOCOMO)[0]
    eval_events = conversation_events("locomo-0", conv)
    live_events = conversation_events("locomo-0", conv, sessions=False)
    assert {s.split(".")[1] for s, _, _ in eval_events} == {"session", "msg"}
    assert [e for e in eval_events if ".msg." in e[0]] == live_events
    assert "feedback" in _recall_spec(EvalOptions(traffic="live")).families
    assert "feedback" not in _recall_spec(EvalOptions()).families


async def test_cortex_eval_recall_on_the_shipped_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="cortex")
    eval_cli.register(parser.add_subparsers(dest="command", required=True))
    out = tmp_path / "report.json"
    args = parser.parse_args(["eval", "recall", "sample", "--out", str(out), "--details"])
    settings = load_settings({"CORTEX_DATA_DIR": str(tmp_path / "unused")})

    started = time.monotonic()
    assert await args.handler(args, settings) == 0
    elapsed = time.monotonic() - started

    printed = capsys.readouterr()
    with capsys.disabled():
        print(f"\n{printed.out}(harness ran {elapsed:.1f}s)")
    assert "all (1-4)" in printed.out and "ingest" in printed.err
    rep = json.loads(out.read_text())
    assert rep["conversations"] == 2 and rep["turns"] == 80 and rep["questions"] == 21
    assert set(rep["by_category"]) == {"1", "2", "3", "4"}
    assert sum(c["n"] for c in rep["by_category"].values()) == rep["overall"]["n"] == 21
    for m in [rep["overall"], *rep["by_category"].values()]:
        assert 0.0 <= m["recall@1"] <= m["recall@5"] <= m["recall@10"] <= 1.0 and 0.0 <= m["mrr"] <= 1.0
    assert rep["overall"]["recall@10"] > 0
    # a memory quoting an evidence turn is at or before the first one that came from it
    assert rep["overall_quoted"]["recall@10"] >= rep["overall"]["recall@10"]
    assert all(d["text_rank"] is not None and d["text_rank"] <= d["rank"] for d in rep["details"] if d["rank"])
    assert rep["ingest"]["dead_letters"] == 0 and rep["ingest"]["memories"] > 0
    assert 0 < rep["latency_ms"]["p50"] <= rep["latency_ms"]["p95"]
    assert len(rep["details"]) == 21 and all(len(d["returned_turns"]) <= 10 for d in rep["details"])
    # the live traffic's run beside it: the same questions, its own ingest (no session events)
    live = rep["live"]
    assert live["options"]["traffic"] == "live" and rep["options"]["traffic"] == "eval"
    assert live["overall"]["n"] == 21 and live["ingest"]["events"] == 80 and rep["ingest"]["events"] > 80
    assert "live traffic" in printed.out and "eval traffic" in printed.out
    # the static embedder's vocabulary, per run: the live run meets no word the eval run had not
    vocabulary, live_vocabulary = rep["ingest"]["vocabulary"], live["ingest"]["vocabulary"]
    assert vocabulary["words_learnt"] >= vocabulary["prefetched"] >= 0 and vocabulary["learn_s"] >= 0
    assert (live_vocabulary["words_learnt"], live_vocabulary["prepare_s"]) == (0, 0)
    assert printed.out.count("vocabulary: ") == 2


def test_the_module_entry_point_reports_an_invalid_setting_in_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m workers.evals.cli``: the settings are loaded before anything runs, as by ``cortex``."""
    monkeypatch.setenv("CORTEX_THREADS_PRUNE_DAYS", "500")
    assert eval_cli.main(["eval", "recall", "sample"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == ["cortex: CORTEX_THREADS_PRUNE_DAYS='500': expected an integer between 1 and 90"], err
