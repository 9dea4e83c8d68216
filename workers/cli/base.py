"""What every command module builds on: ``CliError`` (one line, an exit code), the
``Command`` type and ``run_command``, the wrapper every entry point runs a command in.
Command modules import this module, never the package (``workers.cli`` imports them)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from shared.config import Settings, SettingsError, load_settings
from shared.logs import configure
from shared.runtime import WorkerHost

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# how long an interrupted command's threads (an embedding, a store write) may take to finish
# their step once the command has unwound; past it the process ends without them
THREAD_GRACE_S = 5.0
# an interrupted command is cancelled again this often until it ends: Python 3.11's
# asyncio.wait_for drops a cancellation that arrives as the awaited result does (nats-py's
# requests wait so), and a polling loop would then run to its end
RECANCEL_S = 0.5

Command = Callable[[argparse.Namespace, Settings], Coroutine[Any, Any, int]]


class CliError(Exception):
    """A user-facing failure: printed as one line, exit code 1 (or ``code``)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def run_command(command: Callable[[Settings], Coroutine[Any, Any, int]], *, quiet: bool) -> int:
    """What every entry point does around its command: load the settings (an invalid one, or
    one of a worker's own settings its host reads at start-up: one line on stderr, exit 2),
    configure logging (WARNING when ``quiet``, else the setting) and run ``command(settings)``
    to its exit code: 128 + the signal when SIGINT or SIGTERM interrupts it (130, 143; see
    ``until_interrupted``)."""
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"cortex: {exc}", file=sys.stderr)
        return 2
    configure("WARNING" if quiet else settings.log_level, settings.log_format)
    try:
        return asyncio.run(until_interrupted(command(settings)))
    except KeyboardInterrupt:  # Ctrl-C before the loop took the signal
        return 128 + signal.SIGINT
    except SettingsError as exc:  # a worker's own settings, read when its host starts (WorkerSpec.config)
        print(f"cortex: {exc}", file=sys.stderr)
        return 2



async def until_interrupted(work: Coroutine[Any, Any, int]) -> int:
    """``work``'s exit code, or 128 + the signal when SIGINT or SIGTERM stops it: one line
    (``cortex: interrupted``) at once, then ``work`` is cancelled, so its ``finally`` blocks run
    (an embedded nats-server stopped, a temporary directory removed, no report half-written).
    Threads it left working get ``THREAD_GRACE_S`` to finish their step, then the process ends
    without them: a thread is joined at exit, and an embedding taking minutes must not hold a
    Ctrl-C. A second signal ends the process at once. Commands that are services (``up``,
    ``worker``, ``web``) install their own handlers over these: a requested stop is their
    normal end, exit 0."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    received: list[signal.Signals] = []
    cancelling: list[asyncio.Task[None]] = []  # held: a task only the loop refers to may be collected

    def interrupt(sig: signal.Signals) -> None:
        if received:
            _exit_now(128 + received[0])
        received.append(sig)
        print("cortex: interrupted", file=sys.stderr, flush=True)
        loop.set_exception_handler(_cancellation_is_no_error)
        cancelling.append(asyncio.create_task(_cancel_until_done(task, RECANCEL_S)))

    # a signal the process inherited ignored stays ignored (a background job of a script: the
    # terminal's Ctrl-C is not for it)
    taken = [sig for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN]
    for sig in taken:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no signals here
            loop.add_signal_handler(sig, interrupt, sig)
    try:
        return await task
    except asyncio.CancelledError:
        if not received:
            raise
    finally:
        for sig in taken:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
    code = 128 + received[0]
    await _tasks_ended(THREAD_GRACE_S)  # before the threads: a task's cleanup may still need one
    await _threads_finished(THREAD_GRACE_S)
    if _working_threads():
        _exit_now(code)
    return code


def _cancellation_is_no_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler once a command is interrupted: a future whose exception is
    a cancellation is what the interrupt asked for, not an error to log. (nats-py's drain gathers
    one task a subscription; cancelled again every ``RECANCEL_S`` and then swept by
    ``_tasks_ended``, the gathered future ends with a ``CancelledError`` nobody retrieves, and
    asyncio would log it at ERROR with a traceback after the one ``interrupted`` line.) Every
    other exception goes to asyncio's default handler, as before."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        log.debug("cancelled_at_interrupt", extra={"what": str(context.get("message", ""))[:200]})
        return
    loop.default_exception_handler(context)


async def _cancel_until_done(task: asyncio.Task[int], every_s: float) -> None:
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=every_s)


async def _tasks_ended(within_s: float) -> None:
    """The tasks the command left behind cancelled and waited for (what each raised taken)."""
    others = asyncio.all_tasks() - {asyncio.current_task()}
    for task in others:
        task.cancel()
    if others:
        done, _ = await asyncio.wait(others, timeout=within_s)
        for task in done:
            if not task.cancelled():
                task.exception()


async def _threads_finished(within_s: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.get_running_loop().shutdown_default_executor(), within_s)


def _working_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]


def _exit_now(code: int) -> None:
    """End the process without joining its threads (``os._exit``), the output flushed first."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


async def stop_in_process(host: WorkerHost, running: asyncio.Task[None], within_s: float) -> None:
    """End the workers a command runs in this process (``running``: ``host.run()``): the
    graceful stop (each batch finished or given back) within ``within_s``, else cancelled.
    A command being cancelled (Ctrl-C, SIGTERM) cancels them at once: an interrupted run has
    nothing left to finish, and a batch waiting on an embedding would hold the stop for minutes;
    the threads they left working then get ``THREAD_GRACE_S`` (a store write in a temporary
    directory removed under it would write it again). The cancellations ``until_interrupted``
    repeats while the command unwinds do not cut this short."""
    me = asyncio.current_task()
    stopping = asyncio.ensure_future(_stop_workers(host, running, within_s,
                                                   interrupted=me is not None and me.cancelling() > 0))
    while not stopping.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(stopping)
    if not running.cancelled() and running.exception() is not None:
        log.warning("workers_failed", extra={"error": repr(running.exception())})


async def _stop_workers(host: WorkerHost, running: asyncio.Task[None], within_s: float, *, interrupted: bool) -> None:
    host.stop.set()
    if not interrupted:
        await asyncio.wait({running}, timeout=within_s)
    running.cancel()
    await asyncio.wait({running})
    if interrupted:  # their threads' step finished before the caller removes the files they write
        await _threads_finished(THREAD_GRACE_S)
