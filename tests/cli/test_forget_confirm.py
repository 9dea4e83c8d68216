"""`cortex forget AGENT` typed at a terminal asks for the agent id instead of refusing; without a
terminal (a script, CI, a job) it still refuses unless given ``--yes``. The command runs under
a real pseudo-terminal (``pty.fork``: stdin, stdout and stderr on it, and it is the controlling
terminal, so Ctrl-C is a SIGINT); the test reads it until the prompt appears, then types."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

import nats
import pytest
from cortex_testkit import CORTEX_LIMIT_S, agent_events, cortex, demo_applied, docs_of

from shared.embedded import free_port

PROMPT = b"Type the agent id (alice) to confirm: "
CANCELLED = "forget of alice cancelled: nothing was removed"


class Terminal:
    """``cortex ARGS`` on a pseudo-terminal: what it prints is read from the master side,
    what a person types is written to it."""

    def __init__(self, *args: str, url: str, sigint_off: bool = False) -> None:
        env = {**os.environ, "CORTEX_NATS_URL": url, "CORTEX_EMBEDDER": "hashing"}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: exec at once, whatever happens
            try:
                if sigint_off:  # inherited by the command: ignored and blocked, as a parent can leave it
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                os.execve(sys.executable, [sys.executable, "-m", "workers", *args], env)
            finally:
                os._exit(127)
        self.seen = b""
        self.deadline = time.monotonic() + CORTEX_LIMIT_S

    def _read(self) -> bool:
        """One chunk of output (False once the command has closed the terminal)."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, self.deadline - time.monotonic()))
        if not ready:
            os.kill(self.pid, signal.SIGKILL)
            raise AssertionError(f"no output within {CORTEX_LIMIT_S:g} s; the terminal shows {self.seen!r}")
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: every end of the terminal's slave side is closed (the command ended)
            chunk = b""
        self.seen += chunk
        return bool(chunk)

    def read_until(self, text: bytes) -> None:
        while text not in self.seen:
            if not self._read():
                raise AssertionError(f"the command ended before printing {text!r}: {self.seen!r}")

    def type(self, keys: bytes) -> None:
        os.write(self.fd, keys)

    def finish(self) -> tuple[int, str]:
        """Read to the end; the exit code and everything the terminal showed."""
        try:
            while self._read():
                pass
            _, status = os.waitpid(self.pid, 0)
        finally:
            os.close(self.fd)
        return os.waitstatus_to_exitcode(status), self.seen.decode(errors="replace")


def answered(keys: bytes, url: str, sigint_off: bool = False) -> tuple[int, str]:
    term = Terminal("forget", "alice", url=url, sigint_off=sigint_off)
    term.read_until(PROMPT)
    term.type(keys)
    return term.finish()


async def test_forget_at_a_terminal_runs_only_when_the_agent_id_is_typed(
    nats_url: str, workers_procs: Any, wait_for: Any, tmp_path: Path
) -> None:
    assert cortex("init", url=nats_url).returncode == 0
    workers_procs.start("threads", nats_url)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    try:
        events, docs = await demo_applied(js, nats_url, tmp_path)

        code, shown = await asyncio.to_thread(answered, b"alice2\n", nats_url)
        assert code == 1, shown
        assert "every event, document, memory and dead letter of alice" in shown and "cannot be undone" in shown
        assert CANCELLED in shown and "Traceback" not in shown
        assert await agent_events(js, "alice") == events
        assert await docs_of(js, "alice") == docs

        code, shown = await asyncio.to_thread(answered, b"alice\n", nats_url)
        assert code == 0, shown
        assert "forgot alice:" in shown
        assert await agent_events(js, "alice") == 0
        assert await docs_of(js, "alice") == {}
    finally:
        await nc.close()


@pytest.mark.parametrize("keys", [b"\x03", b"\x04", b"ali\x04\x04"], ids=["ctrl-c", "ctrl-d", "part-then-ctrl-d"])
def test_forget_at_a_terminal_left_unanswered_is_cancelled_before_connecting(keys: bytes) -> None:
    """Nothing listens at the URL: a forget that went on would fail to connect instead."""
    code, shown = answered(keys, f"nats://127.0.0.1:{free_port()}")
    assert code == 1, shown
    assert CANCELLED in shown, shown
    assert "connect" not in shown and "Traceback" not in shown, shown


def test_forget_without_a_terminal_refuses_and_says_both_ways() -> None:
    result = cortex("forget", "alice", url=f"nats://127.0.0.1:{free_port()}")  # stderr is a pipe
    assert result.returncode == 1
    assert result.stderr == ("cortex: this removes every event, document, memory and dead letter of alice: "
                             "add --yes (or run it in a terminal to be asked)\n")



def test_ctrl_c_cancels_even_when_the_command_inherited_sigint_ignored_and_blocked() -> None:
    """The full suite on a fresh clone hung here twice: "Type the agent id (alice) to
    confirm: ^C", then nothing for 90 s. A process that inherits SIGINT ignored or blocked
    (SIG_IGN and the signal mask survive exec) never saw the Ctrl-C. The prompt takes
    Ctrl-C itself now, whatever it inherited."""
    code, shown = answered(b"\x03", f"nats://127.0.0.1:{free_port()}", sigint_off=True)
    assert code == 1, shown
    assert CANCELLED in shown and "Traceback" not in shown
