"""`cortex publish -` fed by a live producer (issue 44 item 2): each line is stored when it
arrives, not when the next one does; an acknowledgement that never comes is reported after
a deadline; at a terminal it says what it waits for and the first Ctrl-C ends it."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import subprocess
import sys
from typing import Any

import nats
from cortex_testkit import wait_until

EVENT = {"type": "msg.received", "agent": "main", "session": "s", "ts": "2026-02-17T10:00:00Z", "role": "user"}


def cortex_env(url: str) -> dict[str, str]:
    return {**os.environ, "CORTEX_NATS_URL": url}


def line(i: int) -> bytes:
    return json.dumps({**EVENT, "id": f"live-{i}", "content": f"hello {i}"}).encode() + b"\n"


def publish_proc(url: str, *args: str, **popen: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "workers", "publish", "-", *args], env=cortex_env(url),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)


async def stored(url: str) -> int:
    nc = await nats.connect(url)
    try:
        return int((await nc.jetstream().stream_info("CORTEX_EVENTS")).state.messages)
    finally:
        await nc.close()


async def test_each_line_of_a_slow_producer_is_stored_when_it_arrives(nats_url: str, wait_for: Any) -> None:
    """Before: a line was not sent until the next one arrived (the read blocked the loop with
    the line's publish unflushed and its acknowledgement unawaited), so a quiet producer's
    last event sat in the command for as long as it stayed quiet."""
    assert subprocess.run([sys.executable, "-m", "workers", "init"], env=cortex_env(nats_url),
                          capture_output=True).returncode == 0
    proc = publish_proc(nats_url, stdin=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for i in (1, 2):
            proc.stdin.write(line(i))
            proc.stdin.flush()  # and nothing more: the producer goes quiet

            async def arrived(n: int = i) -> bool:
                return await stored(nats_url) == n

            await wait_for(arrived, within=20, interval=0.1)
        proc.stdin.close()  # the end of the input: the command reports and returns
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert proc.stdout.read().decode().strip() == "published 2, duplicates 0, rejected 0"


async def test_an_acknowledgement_that_never_comes_is_reported_after_the_deadline(nats_url: str) -> None:
    """A subscriber that takes the events and never answers (no stream behind the subject):
    before, the command waited for the acknowledgement for ever."""
    nc = await nats.connect(nats_url)
    try:
        async def never_reply(msg: Any) -> None:
            pass

        await nc.subscribe("cortex.>", cb=never_reply)
        await nc.flush()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "workers", "publish", "-", "--timeout", "1", env=cortex_env(nats_url),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(line(1)), timeout=60)
    finally:
        await nc.close()
    assert proc.returncode == 1
    assert out.decode().strip() == "published 0, duplicates 0, rejected 1 (lines 1)"
    assert err.decode().startswith("line 1: rejected: no acknowledgement within 1 s"), err


def test_at_a_terminal_it_says_what_it_reads_and_the_first_ctrl_c_ends_it(nats_url: str) -> None:
    """Before: no word of what it waited for, and a Ctrl-C fell on the blocked read (asyncio
    only noted it): the command went on waiting until a second one."""
    assert subprocess.run([sys.executable, "-m", "workers", "init"], env=cortex_env(nats_url),
                          capture_output=True).returncode == 0
    controller, terminal = pty.openpty()
    proc = publish_proc(nats_url, stdin=terminal, start_new_session=True,
                        # a person's shell gives the command the default Ctrl-C (a test runner may not)
                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(terminal)
    assert proc.stderr is not None
    try:
        assert proc.stderr.readline().decode().strip() == "cortex publish: reading JSON lines from stdin, Ctrl-D to end"
        os.write(controller, line(1))
        wait_until(lambda: asyncio.run(stored(nats_url)) == 1, within=20)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130
    finally:
        proc.kill()
        os.close(controller)
    assert "published 1, duplicates 0, rejected 0 before Ctrl-C" in proc.stderr.read().decode()
