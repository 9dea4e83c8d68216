"""The embedded server's lock file: what it records, what a command finds through it, and
which server left behind the next owner of a data dir stops — only one that serves that
data dir's store (a pid the kernel has given to anything else is left alone)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from shared.embedded import (
    LOCK_FILE,
    EmbeddedNats,
    LockRecord,
    format_lock,
    parse_lock,
    running_url,
    serves_store,
)


def test_the_lock_file_reads_back_what_it_records_and_tolerates_older_and_damaged_ones() -> None:
    assert parse_lock(format_lock(41, "nats://127.0.0.1:4222", 42)) == LockRecord(41, "nats://127.0.0.1:4222", 42)
    assert parse_lock("pid 41, nats://127.0.0.1:4222") == LockRecord(41, "nats://127.0.0.1:4222", None)  # older
    assert parse_lock("") == LockRecord(None, None, None)
    assert parse_lock("pid -3, nats-server pid x, \x00garbage") == LockRecord(None, None, None)


def a_dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)
    return gone.pid


def test_a_command_finds_the_server_of_a_live_owner_only(tmp_path: Path) -> None:
    with EmbeddedNats(str(tmp_path / "live")) as server:
        assert running_url(tmp_path / "live") == server.url
        assert parse_lock((tmp_path / "live" / LOCK_FILE).read_text()).server == server.pid
    assert running_url(tmp_path / "live") is None  # a clean stop clears the lock file
    (tmp_path / "dead").mkdir()
    (tmp_path / "dead" / LOCK_FILE).write_text(format_lock(a_dead_pid(), "nats://127.0.0.1:4999", None))
    assert running_url(tmp_path / "dead") is None  # its owner was killed: its URL leads nowhere


def test_a_lock_naming_a_server_of_another_store_leaves_that_server_alone(tmp_path: Path) -> None:
    """A pid in a stale lock may since belong to anything: here another data dir's server."""
    with EmbeddedNats(str(tmp_path / "other")) as other:
        assert other.pid is not None
        mine = tmp_path / "mine"
        mine.mkdir()
        (mine / LOCK_FILE).write_text(format_lock(a_dead_pid(), other.url, other.pid))
        with EmbeddedNats(str(mine)) as server:
            assert server.left_behind is None
            assert server.port != other.port
        assert serves_store(other.pid, other.store)  # still running
