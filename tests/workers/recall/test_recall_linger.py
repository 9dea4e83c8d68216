"""Recall lingers longer than the other throughput workers for a batch at a live rate
(``workers.recall.spec.LINGER_MS``, ``WorkerSpec.linger_ms``): its per-batch work — an embedding
call, an engine update, a summary and a RecallDoc write per agent, a commit — is shared by the
events of a 50 ms wait, where the runtime's 20 ms left batches of a few events (docs/BENCHMARKS.md,
issue 39, twenty-fourth round). A trigger still ends the linger (the loop wakes on the triggers'
subjects), and the runtime's switch still turns it off."""

from __future__ import annotations

from shared.config import load_settings
from shared.runtime import loop_config
from workers.recall.spec import LINGER_MS, SPEC
from workers.registry import all_specs


def test_recall_lingers_its_own_longer_wait_and_still_wakes_on_the_triggers() -> None:
    settings = load_settings({})
    cfg = loop_config(settings, SPEC)
    assert LINGER_MS == 50
    assert cfg.linger_s == LINGER_MS / 1000
    assert cfg.linger_s > settings.runtime.throughput_linger_ms / 1000  # longer than the runtime's default
    assert cfg.wake_on  # a published session start ends the linger at once
    # the other throughput workers keep the runtime's linger
    others = [spec for name, spec in all_specs().items() if spec.priority == "throughput" and name != "recall"]
    assert others
    for spec in others:
        assert loop_config(settings, spec).linger_s == settings.runtime.throughput_linger_ms / 1000, spec.name


def test_the_runtimes_switch_turns_recalls_linger_off_too() -> None:
    off = load_settings({"CORTEX_RUNTIME_THROUGHPUT_LINGER_MS": "0"})
    cfg = loop_config(off, SPEC)
    assert cfg.linger_s == 0.0
    assert cfg.wake_on == ()  # nothing to wake: it never lingers
    # any other runtime linger leaves recall at its own
    other = load_settings({"CORTEX_RUNTIME_THROUGHPUT_LINGER_MS": "5"})
    assert loop_config(other, SPEC).linger_s == LINGER_MS / 1000
