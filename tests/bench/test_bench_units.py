"""Pure parts of the benchmark harness: statistics, freshness matching, budget rows,
the event generator and the hostile inputs (no server)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import msgspec
import pytest

from schemas.events import MessageEvent, SessionEvent
from shared.codec import Envelope, Limits, decode_event
from shared.names import stored_form
from workers.bench import budget
from workers.bench.capacity import agents_at, holds, next_rate
from workers.bench.config import QUICK, make_config
from workers.bench.events import backlog
from workers.bench.freshness import Published, Watches, covered_at, cpu_per_event, match, until_complete
from workers.bench.hostile import MAX_BYTES, pathological
from workers.bench.ingest import store_event
from workers.bench.results import (
    BareCalls,
    CapacityProbe,
    CapacityResult,
    IngestResult,
    Latency,
    LimitResult,
    McpResult,
    PartitionRun,
    RateResult,
    RecallResult,
    Report,
    ScaleoutResult,
    ToolLatency,
    WorkerResult,
)
from workers.bench.scaleout import applied_per_partition, model_ratio
from workers.bench.stats import percentile, summarize


def test_percentile_interpolates_between_closest_ranks() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([5.0], 0.99) == 5.0
    assert percentile([0.0, 10.0], 0.99) == pytest.approx(9.9)
    with pytest.raises(ValueError):
        percentile([], 0.5)


def test_summarize_reports_milliseconds_and_lost_samples() -> None:
    lat = summarize([0.001, 0.002, 0.003], lost=2)
    assert (lat.n, lat.lost, lat.p50_ms, lat.max_ms) == (3, 2, 2.0, 3.0)
    assert summarize([], lost=4) == Latency(n=0, lost=4)


def test_match_pairs_each_event_with_the_first_revision_covering_it() -> None:
    published = [Published("a", 10, 1.0, "msg"), Published("a", 12, 1.5, "msg"), Published("b", 11, 1.2, "msg"),
                 Published("a", 20, 3.0, "msg")]
    seen = {"a": [(0.5, 3), (1.25, 10), (2.0, 12)], "b": [(1.3, 11)]}
    latencies, lost = match(published, seen)
    assert sorted(round(x, 3) for x in latencies) == [0.1, 0.25, 0.5]
    assert lost == 1  # seq 20 of agent a was never covered


def test_cpu_per_event_is_each_process_s_share_busiest_first_and_skips_a_missing_reading() -> None:
    before = {"threads": 1.0, "recall": 2.0, "bench": 0.5, "gone": 1.0}
    after = {"threads": 1.5, "recall": 5.0, "bench": 0.6, "new": 3.0}
    cpu = cpu_per_event(before, after, 1000)
    assert cpu == {"recall": 3.0, "threads": 0.5, "bench": 0.1}
    assert list(cpu) == ["recall", "threads", "bench"]


def test_backlog_is_deterministic_valid_and_mixes_languages_and_sessions() -> None:
    events = backlog(600, 10, seed=3)
    assert events == backlog(600, 10, seed=3)
    assert len({e.id for e in events}) == 600
    kinds = {e.kind for e in events}
    assert {"msg", "session.start"} <= kinds
    assert len({e.agent for e in events}) == 10
    contents = []
    for e in events:
        family = e.subject.split(".")[1]
        decoded = msgspec.json.decode(e.data, type=MessageEvent if family == "msg" else SessionEvent)
        assert decoded.agent == e.agent and decoded.id == e.id
        if isinstance(decoded, MessageEvent):
            contents.append(decoded.content)
    assert any("beschlossen" in c or "Jetzt zu" in c for c in contents)
    assert any("decided" in c or "get back to" in c for c in contents)


def test_pathological_messages_stay_within_the_content_limit() -> None:
    for name, text in pathological(random.Random(1)).items():
        assert MAX_BYTES * 0.95 <= len(text.encode()) <= MAX_BYTES, name


def test_quick_config_keeps_explicit_values() -> None:
    config = make_config(True, events=123, rates=None)
    assert config.events == 123 and config.quick
    assert config.rates == QUICK["rates"]


def test_budget_rows_compare_with_the_issue_targets_and_never_fail_on_missing_data() -> None:
    report = Report(limit=LimitResult(msgs_per_s=40000.0, runs_msgs_per_s=[40000.0], events=10))
    report.workers = {
        "threads": WorkerResult(worker="threads", msgs_per_s=22000.0, ratio=0.55),
        "decisions": WorkerResult(worker="decisions", msgs_per_s=5000.0, ratio=0.125),
        "knowledge": WorkerResult(worker="knowledge", skipped="not yet available"),
    }
    report.freshness.rates = [RateResult(rate=1000, duration_s=1.0,
                                         threads=Latency(n=5, p50_ms=1.0, p95_ms=2.0, p99_ms=3.0),
                                         decisions=Latency(n=5, lost=1, p50_ms=1.0, p95_ms=2.0, p99_ms=3.0),
                                         boot=Latency(n=0, lost=3))]
    rows = {r.name: r for r in budget.rows(report)}
    assert rows["threads sustained"].verdict == "pass"
    assert rows["decisions sustained"].verdict == "miss"
    assert rows["knowledge"].verdict == "skipped"
    assert rows["publish → threads doc @1000/s"].verdict == "pass"
    assert rows["publish → decisions doc @1000/s"].verdict == "miss"  # lost samples are a miss
    assert rows["session start → BootDoc @1000/s"].verdict == "miss"
    assert rows["threads, 2 partitions"].verdict == "n/a"


def test_the_complete_briefing_is_reported_beside_the_first_one_without_a_budget() -> None:
    """Above capacity the first BootDoc may name a source still behind (workers.boot.early): the
    run also says when each was complete, and how many never were by its end."""
    report = Report(limit=LimitResult(msgs_per_s=40000.0, runs_msgs_per_s=[40000.0], events=10))
    fast = Latency(n=10, p50_ms=300.0, p95_ms=600.0, p99_ms=800.0)
    report.freshness.rates = [RateResult(rate=1000, duration_s=1.0, threads=fast, decisions=fast, boot=fast,
                                         boot_complete=Latency(n=7, lost=3, p50_ms=900.0, p99_ms=9000.0)),
                              RateResult(rate=500, duration_s=1.0, threads=fast, decisions=fast, boot=fast)]
    rows = {r.name: r for r in budget.rows(report)}
    complete = rows["session start → complete BootDoc @1000/s"]
    assert (complete.verdict, complete.target) == ("info", "(no budget)") and "(3 lost)" in complete.value
    assert "session start → complete BootDoc @500/s" not in rows  # a result from before the row existed


def test_recall_indexing_is_judged_cold_against_three_hundred_and_warm_against_a_thousand() -> None:
    """Issue 39's bar, "≥ 1 000 events/s warm and ≥ 300 cold in one process": one row each, with
    events per CPU-second beside the wall-clock rate; a warm backlog not measured says why."""
    measured = RecallResult(embedder="default", messages=1000, memories=2847, index_msgs_per_s=350.0,
                            index_cpu_s=3.0, index_msgs_per_cpu_s=333.3, warm_messages=1000, warm_memories=5893,
                            warm_index_msgs_per_s=442.0, warm_index_cpu_s=1.5, warm_index_msgs_per_cpu_s=666.7)
    rows = {r.name: r for r in budget.rows(Report(recall=measured))}
    cold = rows["indexing cold, a fresh process, 1,000 events (default)"]
    warm = rows["indexing warm, the same process, 1,000 more events (default)"]
    assert (cold.value, cold.target, cold.verdict) == ("350 msgs/s (333 per CPU-second)", "≥ 300 msgs/s", "pass")
    assert (warm.value, warm.target, warm.verdict) == ("442 msgs/s (667 per CPU-second)", "≥ 1,000 msgs/s", "miss")
    not_warm = msgspec.structs.replace(measured, warm_index_msgs_per_s=None, warm_index_msgs_per_cpu_s=None,
                                       warm_skipped="the cold backlog was not indexed within 60 s")
    row = next(r for r in budget.rows(Report(recall=not_warm)) if r.name.startswith("indexing warm"))
    assert (row.value, row.verdict) == ("the cold backlog was not indexed within 60 s", "skipped")
    broke = msgspec.structs.replace(not_warm, warm_skipped="failed: worker recall exited with code 1")
    assert next(r for r in budget.rows(Report(recall=broke)) if r.name.startswith("indexing warm")).verdict == "failed"


def test_an_mcp_tool_is_judged_by_what_it_adds_to_its_nats_round_trip() -> None:
    fast = ToolLatency(mcp=Latency(n=9, p50_ms=3.5, p99_ms=9.0), direct=Latency(n=9, p50_ms=2.0, p99_ms=4.0),
                       added_p50_ms=1.5, added_p99_ms=5.0)
    slow = ToolLatency(mcp=Latency(n=9, lost=1, p50_ms=8.0, p99_ms=9.0), direct=Latency(n=9, p50_ms=2.0, p99_ms=4.0),
                       added_p50_ms=6.0, added_p99_ms=5.0)
    report = Report(mcp=McpResult(agent="a", transport="stdio",
                                  tools={"cortex_threads": fast, "cortex_boot": slow, "cortex_recall": ToolLatency()}))
    rows = {r.name.split()[0]: r for r in budget.rows(report) if r.section == "mcp"}
    assert rows["cortex_threads"].verdict == "pass"
    assert rows["cortex_threads"].value == "+1.50 ms p50 / +5.00 ms p99 (MCP p50 3.50 ms, NATS p50 2.00 ms)"
    assert rows["cortex_boot"].verdict == "miss" and "(1 failed)" in rows["cortex_boot"].value
    assert rows["cortex_recall"].verdict == "n/a"  # nothing measured
    quicker = ToolLatency(mcp=Latency(n=9, p50_ms=1.0), direct=Latency(n=9, p50_ms=1.5), added_p50_ms=-0.5)
    row = next(r for r in budget.rows(Report(mcp=McpResult(transport="stdio", tools={"cortex_boot": quicker})))
               if r.section == "mcp")
    assert row.value.startswith("-0.50 ms p50 / — p99") and row.verdict == "pass"  # noise both ways
    skipped = {r.name: r for r in budget.rows(Report(mcp=McpResult(skipped="not selected (--only)")))}
    assert skipped["mcp"].verdict == "skipped"


def test_the_mcp_floor_and_the_sdk_yardstick_are_reported_beside_the_tools_not_judged() -> None:
    measured = McpResult(transport="stdio", floor=BareCalls(back_to_back=Latency(n=9, p50_ms=0.8, p99_ms=1.4),
                                                            at_rest=Latency(n=9, p50_ms=1.9, p99_ms=3.1),
                                                            server_cpu_ms=0.3, client_cpu_ms=0.4),
                         reference=BareCalls(back_to_back=Latency(n=9, p50_ms=2.5, p99_ms=4.0), server_cpu_ms=1.1,
                                             client_cpu_ms=0.5),
                         reference_server="the MCP SDK's MCPServer (mcp 9.9), one tool, its stdio transport")
    yardstick, floor = [r for r in budget.rows(Report(mcp=measured)) if r.section == "mcp"]
    assert floor.name.startswith("tools/call over stdio answered without NATS") and floor.verdict == "info"
    assert floor.value == ("0.80 ms p50 / 1.40 ms p99 back to back, 1.90 ms p50 / 3.10 ms p99 at rest; "
                           "CPU/call server 0.30 ms + client 0.40 ms")
    assert yardstick.name == ("tools/call over stdio to the MCP SDK's MCPServer (mcp 9.9), one tool, its stdio "
                              "transport, refused at the SDK's argument check (the yardstick)")
    assert yardstick.value == "2.50 ms p50 / 4.00 ms p99 back to back; CPU/call server 1.10 ms + client 0.50 ms"
    assert yardstick.verdict == "info"
    assert not [r for r in budget.rows(Report(mcp=McpResult(transport="stdio"))) if r.section == "mcp"]  # not measured
    from_node = [r for r in budget.rows(Report(mcp_node=measured)) if r.section == "mcp"]
    assert [r.name.split(" to ")[0] for r in from_node] == [
        "tools/call over stdio from the TypeScript SDK's client",
        "tools/call over stdio from the TypeScript SDK's client answered without NATS (the floor)"]
    skipped = [r for r in budget.rows(Report(mcp_node=McpResult(skipped="no node"))) if r.section == "mcp"]
    assert [(r.name, r.verdict) for r in skipped] == [("mcp from the TypeScript SDK's client", "skipped")]


@pytest.mark.parametrize(("cores", "ratio", "verdict"), [(2, 1.7, "info"), (2, 1.1, "info"), (8, 1.7, "pass"),
                                                         (8, 1.1, "miss")])
def test_the_scaleout_target_is_claimed_only_with_a_free_core_per_partition(cores: int, ratio: float,
                                                                              verdict: str) -> None:
    report = Report(scaleout=ScaleoutResult(cores=cores, partitions_1_msgs_per_s=1000.0,
                                            partitions_2_msgs_per_s=1000.0 * ratio, partitions_2_ratio=ratio))
    row = {r.name: r for r in budget.rows(report)}["threads, 2 partitions"]
    assert row.verdict == verdict
    assert f"{ratio:.2f}× one" in row.value and f"{cores} cores" in row.value


def test_each_partition_applies_its_agents_events() -> None:
    events = backlog(500, 10, 7, "cortex")
    counts = applied_per_partition(events, 2)
    assert sum(counts) == len(events) and all(counts)


def test_the_scaleout_model_is_paced_by_the_busiest_partition() -> None:
    """Each partition is delivered only its agents' events: N× for an even spread, less as the
    busiest partition's share grows, nothing at all when one partition has every event."""
    assert model_ratio([500, 500]) == pytest.approx(2.0)
    assert model_ratio([250, 750]) == pytest.approx(4 / 3)
    assert model_ratio([1000, 0]) == pytest.approx(1.0)
    assert model_ratio([]) == 0.0


def test_the_pending_row_passes_only_when_each_partition_has_exactly_its_agents_events() -> None:
    def row(pending: list[int]) -> Any:
        run = PartitionRun(partitions=2, events=1000, applied=[400, 600], pending=pending)
        report = Report(scaleout=ScaleoutResult(cores=2, runs=[PartitionRun(partitions=1), run]))
        return next(r for r in budget.rows(report) if r.name.startswith("2 partitions: pending"))

    assert row([400, 600]).verdict == "pass" and "400 + 600 = 1,000" in row([400, 600]).value
    assert row([1000, 1000]).verdict == "miss"  # every partition reading everything


@pytest.mark.parametrize(("ratio", "verdict"), [(0.89, "pass"), (0.8, "pass"), (0.79, "miss"), (None, "n/a")])
def test_the_ingest_row_holds_the_store_to_eighty_percent_of_contract_subjects(ratio: float | None,
                                                                                 verdict: str) -> None:
    report = Report(ingest=IngestResult(events=100, contract_msgs_per_s=1000.0, ratio=ratio,
                                        openclaw_msgs_per_s=None if ratio is None else 1000.0 * ratio))
    row = next(r for r in budget.rows(report) if r.section == "ingest")
    assert row.verdict == verdict


def test_bench_events_become_what_the_plugin_publishes_and_decode_back_to_the_same_messages() -> None:
    """The ingest phase's store: each backlog event in the npm plugin's envelope, and the
    decoder turns it back into the message it was (sender aside for the agent's own)."""
    for event in backlog(300, 5):
        item = store_event(event)
        assert item is not None
        subject, data = item
        envelope = msgspec.json.decode(data)
        assert subject == f"bench.openclaw.events.{event.agent}.{envelope['type'].replace('.', '_')}"
        assert "Nats-Msg-Id" not in envelope and isinstance(envelope["ts"], int)
        stored = "cortex.openclaw." + subject.split(".", 3)[3]
        decoded = decode_event("cortex", stored_form("cortex", stored), 1, data, Limits())
        assert isinstance(decoded, Envelope), decoded
        original = decode_event("cortex", stored_form("cortex", event.subject), 1, event.data, Limits())
        assert isinstance(original, Envelope)
        assert (decoded.family, decoded.kind, decoded.event.id, decoded.event.ts) == (
            original.family, original.kind, original.event.id, original.event.ts)
        if isinstance(original.event, MessageEvent):
            assert isinstance(decoded.event, MessageEvent)
            assert (decoded.event.content, decoded.event.role) == (original.event.content, original.event.role)


def test_the_capacity_search_doubles_while_a_rate_holds_then_bisects() -> None:
    """50, 100, 200, 400 hold and 800 does not: then 600, and between whatever held and failed."""
    assert next_rate(None, None, 50, 3200) == 50
    assert next_rate(400, None, 50, 3200) == 800
    assert next_rate(400, None, 50, 600) is None  # never above the maximum
    assert next_rate(400, 800, 50, 3200) == 600
    assert next_rate(600, 800, 50, 3200) == 700
    assert next_rate(None, 50, 50, 3200) == 25  # not even the first: look below it
    assert next_rate(600, 620, 50, 3200) is None  # closer than 5 % of what held: done


def test_a_rate_holds_only_within_the_freshness_budget_with_nothing_lost_or_left_behind() -> None:
    fast = Latency(n=10, p50_ms=1.0, p95_ms=2.0, p99_ms=5.0)
    good = RateResult(rate=100, duration_s=30, threads=fast, decisions=fast,
                      boot=Latency(n=3, p50_ms=20.0, p95_ms=40.0, p99_ms=90.0))
    assert holds(good)
    assert not holds(msgspec.structs.replace(good, boot=Latency(n=3, p50_ms=20.0, p95_ms=40.0, p99_ms=150.0)))
    assert not holds(msgspec.structs.replace(good, threads=Latency(n=10, p50_ms=1.0, p95_ms=2.0, p99_ms=25.0)))
    assert not holds(msgspec.structs.replace(good, decisions=Latency(n=10, lost=1, p50_ms=1.0, p95_ms=2.0,
                                                                     p99_ms=5.0)))
    assert not holds(msgspec.structs.replace(good, undrained={"recall": 12}))
    assert not holds(msgspec.structs.replace(good, boot=Latency(n=0)))  # no BootDoc measured at all


def test_the_capacity_row_gives_the_rate_and_the_agents_it_serves_against_five_hundred() -> None:
    report = Report()
    report.capacity = CapacityResult(msgs_per_s=600, agents=agents_at(600), duration_s=30,
                                     probes=[CapacityProbe(rate=400, holds=True), CapacityProbe(rate=800, holds=False),
                                             CapacityProbe(rate=600, holds=True)])
    row = next(r for r in budget.rows(report) if r.section == "capacity")
    assert row.value == "600 msg/s = 360 agents at 100 events/min" and row.verdict == "pass"
    assert "400 ✓, 800 ✗, 600 ✓" in row.name
    report.capacity = CapacityResult(msgs_per_s=200, agents=agents_at(200), duration_s=30,
                                     probes=[CapacityProbe(rate=200, holds=True), CapacityProbe(rate=400, holds=False)])
    assert next(r for r in budget.rows(report) if r.section == "capacity").verdict == "miss"


def test_below_the_budget_rate_a_briefing_is_held_to_one_second_and_at_it_to_fifty_ms() -> None:
    report = Report()
    slow = Latency(n=5, p50_ms=500.0, p95_ms=900.0, p99_ms=1200.0)
    fast = Latency(n=5, p50_ms=1.0, p95_ms=2.0, p99_ms=3.0)
    report.freshness.rates = [RateResult(rate=200, duration_s=1.0, threads=fast, decisions=fast, boot=slow)]
    rows = {r.name: r for r in budget.rows(report)}
    assert rows["session start → BootDoc @200/s"].verdict == "miss"
    assert rows["session start → BootDoc @200/s"].target == "p99 < 1000 ms"


async def test_a_rate_waits_for_every_session_starts_complete_briefing_within_its_limit() -> None:
    """After the drain, freshness waits (bounded) until every session start has a complete BootDoc
    — one a lagging source completed when it caught up — so "none missing" is asked of a pipeline
    given the time to complete them, and the wait is reported."""

    class Harness:
        pipeline: tuple[Any, ...] = ()

        def check_alive(self, procs: Any) -> None:
            pass

    watches = Watches(None)  # type: ignore[arg-type]  # its KV watches are not started: filled by hand
    starts = [Published("a", 5, 0.0, "session.start"), Published("b", 7, 0.0, "session.start")]
    watches.complete["a"].append((1.0, 5))
    assert await until_complete(Harness(), watches, starts, 0.05) is None  # type: ignore[arg-type]
    waiting = asyncio.create_task(until_complete(Harness(), watches, starts, 60.0))  # type: ignore[arg-type]
    watches.complete["b"].append((2.0, 9))  # b's complete document (a later one covers it too)
    assert await waiting is not None
    assert covered_at(starts, watches.complete) == {5: 1.0, 7: 2.0}


def test_a_profiled_worker_is_timed_by_its_cpu_clock_and_its_profile_written_when_it_exits(tmp_path: Any) -> None:
    """``--profile``: ``python -m workers.bench.cpuprof OUT ARGS…`` runs ``python -m workers ARGS…``
    under cProfile on the process's CPU clock (the time a worker waits in ``epoll`` or spends
    descheduled is no one's) and writes the profile when the command exits, however it exits."""
    import pstats
    import subprocess
    import sys

    out = tmp_path / "cli.prof"
    done = subprocess.run([sys.executable, "-m", "workers.bench.cpuprof", str(out), "--help"], capture_output=True,
                          timeout=120, check=False)
    assert done.returncode == 0 and b"usage" in done.stdout
    profiled = {f"{path}:{name}" for path, _, name in pstats.Stats(str(out)).stats}  # type: ignore[attr-defined]
    assert any(key.endswith("workers/cli/__init__.py:main") for key in profiled)


async def test_a_worker_measured_alone_runs_unniced_and_the_pipeline_in_its_priority_classes(
        tmp_path: Any, wait_for: Any) -> None:
    """Issue 39, eleventh round: the pipeline's throughput workers are niced as a user's would be
    (shared.priority); a worker measured alone (workers, recall, fairness, scaleout) is not —
    its rate is its own, not what the machine's other load leaves a niced process. What each
    process was started with, read from /proc (test_priority: what the worker does with it)."""
    import os
    from pathlib import Path

    from shared.embedded import free_port
    from workers.bench.procs import NICENESS, Processes

    async def environ(pid: int) -> dict[str, str]:
        # Popen returns once exec has closed its close-on-exec pipe, which the kernel does
        # before it sets the new image's environment up: for that moment /proc shows none.
        # A started worker stays alive (it retries the empty port), so its environment appears.
        async def written() -> bytes:
            return await asyncio.to_thread(Path(f"/proc/{pid}/environ").read_bytes)

        raw: bytes = await wait_for(written, within=30)
        return dict(p.decode().split("=", 1) for p in raw.split(b"\0") if b"=" in p)

    base = {k: v for k, v in os.environ.items() if k != NICENESS}
    for given in (None, "15"):  # the caller's setting reaches the pipeline, never a worker alone
        procs = Processes(tmp_path, f"nats://127.0.0.1:{free_port()}",
                          base if given is None else {**base, NICENESS: given})
        try:
            alone = procs.start("knowledge")
            fleet = procs.start("knowledge", pipeline=True)
            assert (await environ(alone.pid)).get(NICENESS) == "0"
            assert (await environ(fleet.pid)).get(NICENESS) == given
        finally:
            procs.stop_all()
