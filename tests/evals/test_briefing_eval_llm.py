"""``cortex eval briefing --llm``: the eval's sets through the configured model, its scores
beside the structured path's. Here the model is a small OpenAI-compatible server the test
starts (a real socket, canned answers): this proves the path runs end to end — the workers
call the model, the model's reading reaches the scored documents and the report — and
claims no quality number (canned answers have none)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import ChatServer

from shared.config import load_settings
from workers.evals import cli as eval_cli


def with_model(url: str) -> Any:
    return load_settings({"CORTEX_LLM_PROVIDER": "openai", "CORTEX_LLM_BASE_URL": url,
                          "CORTEX_LLM_MODEL": "local-model", "CORTEX_LLM_MODEL_NARRATIVE": "local-writer",
                          "CORTEX_EMBEDDER": "hashing"})


def args(**overrides: Any) -> argparse.Namespace:
    base = {"file": "sample", "core_only": False, "conversation": ["en-auth-cued"], "embedder": "hashing",
            "examples": False, "out": None, "real": False, "llm": True}
    return argparse.Namespace(**{**base, **overrides})


async def test_the_sample_set_runs_through_the_model_beside_the_structured_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.json"
    with ChatServer() as server:
        assert await eval_cli.cmd_eval_briefing(args(out=str(out)), with_model(server.url)) == 0
    report = json.loads(out.read_text())
    assert report["model"] == "openai local-model, local-writer"
    assert set(report["pipeline_llm"]) == set(report["pipeline"]) >= {"threads", "decisions", "commitments"}
    printed = capsys.readouterr().out
    assert "pipeline (stored documents" in printed and "pipeline with the model (openai local-model" in printed
    asked = {body["tools"][0]["function"]["name"] if body.get("tools") else body["model"]
             for _, _, body in server.requests}
    # the model read the session window, worded the briefing, wrote the narrative
    assert {"record_reading", "improved_briefing", "local-writer"} <= asked


async def test_without_a_model_the_llm_run_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert await eval_cli.cmd_eval_briefing(args(), load_settings({})) == 2
    assert await eval_cli.cmd_eval_briefing(args(core_only=True), with_model("http://127.0.0.1:9/v1")) == 2
    assert "--llm runs the pipeline with a model" in capsys.readouterr().err
