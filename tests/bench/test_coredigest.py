"""``workers.bench.coredigest``: the hash of every revision the threads and decisions cores write,
by which a faster core is shown to derive the same documents."""

from __future__ import annotations

import msgspec
import pytest

from workers.bench.coredigest import MessageSet, bench_set, briefing_set, digest, main, timing


def test_the_digest_is_the_same_on_every_run_and_moves_with_any_revision() -> None:
    """Two runs over the written set agree; a changed message (one word more in one message)
    changes the digest of every core whose document it changes, and only the set's."""
    written = briefing_set()
    assert digest(written) == digest(briefing_set())
    streams = [list(s) for s in written.streams]
    first = streams[0][0]
    streams[0][0] = msgspec.structs.replace(first, content=first.content + " We decided to use Postgres.")
    changed = digest(MessageSet(written.name, written.settings, streams))
    before = digest(written)
    assert changed["threads"] != before["threads"]
    assert changed["decisions"] != before["decisions"]


def test_the_command_prints_each_set_with_its_digests_and_timings(capsys: pytest.CaptureFixture[str]) -> None:
    small = bench_set(events=300)
    assert sum(len(s) for s in small.streams) > 250
    assert all(v > 0 for v in timing(small, 1).values())
    assert main(["--events", "300", "--reps", "1", "--only", "bench"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("bench: ") and "threads=" in out and "µs/msg" in out
