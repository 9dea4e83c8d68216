"""Ctrl-C (SIGINT) or SIGTERM on a long command: it stops within seconds, says one line,
stops the nats-server it started, removes its temporary files and exits 128 + the signal.

Before: SIGTERM had no handler (the process was killed, its temporary directory left), and
Ctrl-C on `cortex eval briefing` waited for the in-process workers' graceful stop and then
for a recall embedding thread: 30 s and more."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cortex_testkit import nats_servers_under, stop_process, wait_until

INTERRUPTED = "cortex: interrupted"


def interrupt(tmp_path: Path, args: list[str], after: str, sig: signal.Signals) -> tuple[int, str]:
    """``args`` run (module and arguments) until ``after`` is in its output, then ``sig``:
    its exit code and its whole output."""
    scratch = tmp_path / "tmp"  # every temporary directory the command makes lands here
    scratch.mkdir()
    # unbuffered: the output in the order it was written, so what came after the signal shows
    env = {**os.environ, "TMPDIR": str(scratch), "CORTEX_DATA_DIR": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
    env.pop("CORTEX_NATS_URL", None)
    log = tmp_path / "out.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                # a person's shell gives the command the default Ctrl-C (a test runner may
                                # not; an inherited SIG_IGN is kept); only a signal call in the child
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509
    try:
        wait_until(lambda: after in log.read_text(errors="replace"), within=240)
        proc.send_signal(sig)
        code = proc.wait(timeout=60)  # generous on a loaded machine; it takes about a second
    finally:
        stop_process(proc)
    text = log.read_text(errors="replace")
    wait_until(lambda: not nats_servers_under(tmp_path), within=10)
    assert not list(scratch.iterdir()), f"left behind: {sorted(p.name for p in scratch.iterdir())}"
    return code, text


@pytest.mark.parametrize(("args", "after", "sig"), [
    # the report this case came from: workers in this process, an embedded nats-server, an embedding thread
    (["workers", "eval", "briefing"], "waiting for every worker", signal.SIGTERM),
    (["workers", "eval", "recall", "sample"], "ingesting", signal.SIGINT),
    # with --web the demo serves until Ctrl-C, so the signal always finds it running (the plain demo
    # can finish between "deriving" and the signal on a fast machine); deriving or serving, one line
    (["workers", "demo", "--web"], "deriving", signal.SIGINT),
    (["workers.bench", "--quick"], "[backlog] published", signal.SIGTERM),  # the bench's own entry
], ids=["eval-briefing-SIGTERM", "eval-recall-SIGINT", "demo-SIGINT", "bench-SIGTERM"])
def test_a_long_command_stops_on_a_signal_with_one_line_and_nothing_left(
        tmp_path: Path, args: list[str], after: str, sig: signal.Signals) -> None:
    code, text = interrupt(tmp_path, args, after, sig)
    assert code == 128 + sig, text[-3000:]
    assert text.count(INTERRUPTED) == 1, text[-3000:]
    after_signal = text.split(INTERRUPTED, 1)[1]
    # no traceback, no error: the bench may still print the line of the phase under way (nats-py
    # turns a cancellation into its own errors, which the bench reports and moves on from)
    assert "Traceback" not in after_signal and "ERROR" not in after_signal, after_signal[-3000:]
    if args[0] == "workers":
        assert not after_signal.strip(), f"more than the one line after the signal: {after_signal[-3000:]}"


def test_after_an_interrupt_a_future_ended_by_cancellation_is_not_logged_as_an_error(
        caplog: pytest.LogCaptureFixture) -> None:
    """nats-py's drain gathers one task a subscription; an interrupt that cancels them leaves
    the gathered future with a CancelledError nobody retrieves. Once interrupted, the loop's
    handler lets that pass silently — and still logs any other exception as asyncio would."""
    import asyncio
    import logging

    from workers.cli.base import _cancellation_is_no_error

    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.DEBUG):
            _cancellation_is_no_error(loop, {"message": "_GatheringFuture exception was never retrieved",
                                             "exception": asyncio.CancelledError()})
            assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
            _cancellation_is_no_error(loop, {"message": "Task exception was never retrieved",
                                             "exception": RuntimeError("a real failure")})
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "Task exception was never retrieved" in errors[0].getMessage()
    finally:
        loop.close()
