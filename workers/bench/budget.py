"""The performance budget of issue 9, and one table row per measured value against it.

The harness never asserts speed: a missed target is a ``miss`` row, reported honestly.
"""

from __future__ import annotations

from typing import Final

from workers.bench.publisher import SHORTFALL as PUBLISH_SHORTFALL
from workers.bench.results import BareCalls, Latency, McpResult, Report, Row, ScaleoutResult

WORKER_RATIO: Final = 0.5  # each regex worker ≥ 50 % of the bare consume rate
FRESH_P99_MS: Final = 10.0  # threads/decisions documents at 1 000 msg/s
BOOT_P99_MS: Final = 50.0  # BootDoc after a session start at 1 000 msg/s
BUDGET_RATE: Final = 1000  # the rate the freshness budget is stated for
NO_CLIFF_BOOT_P99_MS: Final = 1000.0  # BootDoc after a session start at every other rate (issue 39)
CAPACITY_RATE: Final = 500  # the pipeline holds its freshness at this rate at least (issue 39)
CAPACITY_FRESH_P99_MS: Final = 20.0  # a rate holds: threads and decisions documents within this at p99,
CAPACITY_BOOT_P99_MS: Final = 100.0  # and a BootDoc within this after a session start (workers.bench.capacity)
AGENT_EVENTS_PER_MIN: Final = 100  # a gateway's agent publishes 50-100 events a minute: capacity as agents
API_BOOT_P50_MS: Final = 5.0
API_QUERY_P99_MS: Final = 10.0
MCP_ADDED_P50_MS: Final = 2.0  # what an MCP tool call adds to its NATS round trip
RECALL_P50_MS: Final = 20.0
RECALL_P95_MS: Final = 50.0
RECALL_INDEX_RATE: Final = 1000.0  # warm, one process (issue 39; issue 9 asked 200)
RECALL_COLD_INDEX_RATE: Final = 300.0  # cold: a fresh process on a fresh store (issue 39)
HOSTILE_RATIO: Final = 20.0
RSS_MB: Final = 150.0
SCALEOUT_RATIO: Final = 1.6
SCALEOUT_PARTITIONS: Final = 2
INGEST_RATIO: Final = 0.8  # the OpenClaw store → threads doc, against the same events on contract subjects
REGEX_WORKERS: Final = frozenset({"threads", "decisions", "channels", "knowledge"})


def _skip(reason: str) -> str:
    """A phase that did not run: ``failed`` when it broke, ``skipped`` when not selected or not available."""
    return "failed" if reason.startswith("failed:") else "skipped"


def _verdict(ok: bool | None) -> str:
    if ok is None:
        return "n/a"
    return "pass" if ok else "miss"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} ms"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} msgs/s"


def _under(value: float | None, limit: float) -> bool | None:
    return None if value is None else value < limit


def _limit_rows(report: Report) -> list[Row]:
    lim = report.limit
    if lim.skipped:
        return [Row(section="limit", name="bare consume", value=lim.skipped, target="", verdict=_skip(lim.skipped))]
    return [Row(section="limit", name=f"bare consume (fetch {lim.batch}, decode, ack)", value=_rate(lim.msgs_per_s),
                target="the ceiling", verdict="info")]


def _worker_rows(report: Report) -> list[Row]:
    rows = []
    for name, w in report.workers.items():
        if w.skipped:
            rows.append(Row(section="workers", name=name, value=w.skipped, target="", verdict=_skip(w.skipped)))
            continue
        ratio = f" = {w.ratio:.0%} of limit" if w.ratio is not None else ""
        budgeted = name in REGEX_WORKERS
        ok = None if w.ratio is None else w.ratio >= WORKER_RATIO
        rows.append(Row(section="workers", name=f"{name} sustained", value=f"{_rate(w.msgs_per_s)}{ratio}",
                        target=f"≥ {WORKER_RATIO:.0%} of limit" if budgeted else "(no budget)",
                        verdict=_verdict(ok) if budgeted else "info"))
    return rows


def _latency_row(section: str, name: str, lat: Latency, which: str, limit: float | None) -> Row:
    value = lat.p99_ms if which == "p99" else lat.p50_ms
    shown = f"p50 {_ms(lat.p50_ms)} / p95 {_ms(lat.p95_ms)} / p99 {_ms(lat.p99_ms)}"
    if lat.lost:
        shown += f" ({lat.lost} lost)"
    if limit is None:
        return Row(section=section, name=name, value=shown, target="(no budget)", verdict="info")
    ok = _under(value, limit)
    if lat.lost:
        ok = False
    return Row(section=section, name=name, value=shown, target=f"{which} < {limit:g} ms", verdict=_verdict(ok))


def _freshness_rows(report: Report) -> list[Row]:
    fr = report.freshness
    if fr.skipped:
        return [Row(section="freshness", name="freshness", value=fr.skipped, target="", verdict=_skip(fr.skipped))]
    rows = []
    for r in fr.rates:
        budgeted = r.rate == BUDGET_RATE
        label = f"@{r.rate}/s" if r.rate_reached is not False else f"@{r.rate}/s (delivered {r.achieved_rate:g})"
        if r.rate_reached is not None:  # a run before the field has none
            rows.append(Row(section="freshness", name=f"publisher @{r.rate}/s",
                            value=f"{r.achieved_rate:,.1f} msg/s delivered of {r.rate:,} asked",
                            target=f"≥ {1 - PUBLISH_SHORTFALL:.0%} of the rate asked",
                            verdict=_verdict(r.rate_reached)))
        rows.append(_latency_row("freshness", f"publish → threads doc {label}", r.threads, "p99",
                                 FRESH_P99_MS if budgeted else None))
        rows.append(_latency_row("freshness", f"publish → decisions doc {label}", r.decisions, "p99",
                                 FRESH_P99_MS if budgeted else None))
        rows.append(_latency_row("freshness", f"session start → BootDoc {label}", r.boot, "p99",
                                 BOOT_P99_MS if budgeted else NO_CLIFF_BOOT_P99_MS))
        if r.boot_complete.n or r.boot_complete.lost:  # a run before the row existed has none
            rows.append(_latency_row("freshness", f"session start → complete BootDoc {label}", r.boot_complete,
                                     "p99", None))
    return rows


def _capacity_rows(report: Report) -> list[Row]:
    cap = report.capacity
    if cap.skipped:
        return [Row(section="capacity", name="capacity", value=cap.skipped, target="", verdict=_skip(cap.skipped))]
    probes = ", ".join(f"{p.rate} {'✓' if p.holds else '✗'}" for p in cap.probes)
    value = (f"{cap.msgs_per_s:,} msg/s = {cap.agents:,} agents at {AGENT_EVENTS_PER_MIN} events/min"
             if cap.msgs_per_s is not None and cap.agents is not None else "not even the first rate")
    ok = None if not cap.probes else cap.msgs_per_s is not None and cap.msgs_per_s >= CAPACITY_RATE
    return [Row(section="capacity",
                name=f"highest rate holding threads/decisions p99 < {CAPACITY_FRESH_P99_MS:g} ms and BootDoc p99 "
                     f"< {CAPACITY_BOOT_P99_MS:g} ms for {cap.duration_s:g} s (probes: {probes})",
                value=value, target=f"≥ {CAPACITY_RATE} msg/s", verdict=_verdict(ok))]


def _api_rows(report: Report) -> list[Row]:
    api = report.api
    if api.skipped:
        return [Row(section="api", name="api", value=api.skipped, target="", verdict=_skip(api.skipped))]
    rows = []
    for service, lat in api.endpoints.items():
        if service == "boot":
            rows.append(_latency_row("api", "cortex.api.boot (full state)", lat, "p50", API_BOOT_P50_MS))
        else:
            rows.append(_latency_row("api", f"cortex.api.{service}", lat, "p99", API_QUERY_P99_MS))
    return rows


def _added(value: float | None) -> str:
    return _ms(value) if value is None or value < 0 else f"+{_ms(value)}"


def _bare_value(bare: BareCalls) -> str:
    value = f"{_ms(bare.back_to_back.p50_ms)} p50 / {_ms(bare.back_to_back.p99_ms)} p99 back to back"
    if bare.at_rest.n:
        value += f", {_ms(bare.at_rest.p50_ms)} p50 / {_ms(bare.at_rest.p99_ms)} p99 at rest"
    if bare.server_cpu_ms is not None and bare.client_cpu_ms is not None:
        value += f"; CPU/call server {_ms(bare.server_cpu_ms)} + client {_ms(bare.client_cpu_ms)}"
    return value


def _mcp_rows(mcp: McpResult, client: str = "") -> list[Row]:
    """One client's rows; ``client`` names it in each row (the Python SDK's rows keep the bare names)."""
    by = f" from the {client}" if client else ""
    if mcp.skipped:
        return [Row(section="mcp", name=f"mcp{by}", value=mcp.skipped, target="", verdict=_skip(mcp.skipped))]
    rows = []
    if mcp.reference.back_to_back.n:
        rows.append(Row(section="mcp", name=f"tools/call over {mcp.transport}{by} to {mcp.reference_server}, refused "
                                            "at the SDK's argument check (the yardstick)",
                        value=_bare_value(mcp.reference), target="the SDK alone, no Cortex code", verdict="info"))
    if mcp.floor.back_to_back.n:
        rows.append(Row(section="mcp", name=f"tools/call over {mcp.transport}{by} answered without NATS (the floor)",
                        value=_bare_value(mcp.floor), target="part of every added time", verdict="info"))
    for tool, lat in mcp.tools.items():
        lost = f" ({lat.mcp.lost} failed)" if lat.mcp.lost else ""
        value = (f"{_added(lat.added_p50_ms)} p50 / {_added(lat.added_p99_ms)} p99 "
                 f"(MCP p50 {_ms(lat.mcp.p50_ms)}, NATS p50 {_ms(lat.direct.p50_ms)}){lost}")
        if lat.server_cpu_ms is not None and lat.client_cpu_ms is not None:
            value += f"; CPU/call server {_ms(lat.server_cpu_ms)} + client {_ms(lat.client_cpu_ms)}"
        rows.append(Row(section="mcp", name=f"{tool} over {mcp.transport}{by}, added to its NATS round trip",
                        value=value, target=f"+ < {MCP_ADDED_P50_MS:g} ms p50",
                        verdict=_verdict(_under(lat.added_p50_ms, MCP_ADDED_P50_MS))))
    return rows


def _plugin_rows(report: Report) -> list[Row]:
    """The OpenClaw plugin's added time per turn, beside the bare NATS request (no budget: the
    plugin's own deadline bounds it; how often a turn would have hit that deadline is shown)."""
    pl = report.plugin
    if pl.skipped:
        return [Row(section="plugin", name="openclaw plugin", value=pl.skipped, target="", verdict=_skip(pl.skipped))]
    rows = []
    for name, call in (("boot at session start", pl.boot), ("recall per turn", pl.recall)):
        over = f", {call.over_default_timeout} over its {pl.default_timeout_ms} ms deadline" \
            if call.over_default_timeout else ""
        value = (f"p50 {_ms(call.plugin.p50_ms)} / p99 {_ms(call.plugin.p99_ms)} ({_added(call.added_p50_ms)} / "
                 f"{_added(call.added_p99_ms)} over NATS p50 {_ms(call.direct.p50_ms)} / p99 "
                 f"{_ms(call.direct.p99_ms)}){over}")
        rows.append(Row(section="plugin", name=f"openclaw plugin: {name} (Node {pl.node})", value=value,
                        target=f"deadline {pl.default_timeout_ms} ms", verdict="info"))
    rows.append(_latency_row("plugin", "openclaw plugin: a session's first turn, both asks", pl.first_turn, "p99",
                             None))
    return rows


def _recall_rows(report: Report) -> list[Row]:
    rc = report.recall
    if rc.skipped:
        return [Row(section="recall", name="recall", value=rc.skipped, target="", verdict=_skip(rc.skipped))]
    at = f" at {rc.memories} memories" if rc.memories is not None else ""
    q = rc.query
    rows = [
        Row(section="recall", name=f"query{at} ({rc.embedder})",
            value=f"p50 {_ms(q.p50_ms)} / p95 {_ms(q.p95_ms)}" + (f" ({q.lost} failed)" if q.lost else ""),
            target=f"p50 < {RECALL_P50_MS:g} ms, p95 < {RECALL_P95_MS:g} ms at 100 k",
            verdict="info" if rc.scale_memories else _verdict(_recall_ok(q))),
        _index_row(f"indexing cold, a fresh process, {rc.messages:,} events ({rc.embedder})", rc.index_msgs_per_s,
                   rc.index_msgs_per_cpu_s, RECALL_COLD_INDEX_RATE),
    ]
    if rc.warm_skipped:
        rows.append(Row(section="recall", name=f"indexing warm, the same process ({rc.embedder})",
                        value=rc.warm_skipped, target=f"≥ {RECALL_INDEX_RATE:,.0f} msgs/s",
                        verdict=_skip(rc.warm_skipped)))
    else:
        rows.append(_index_row(f"indexing warm, the same process, {rc.warm_messages:,} more events ({rc.embedder})",
                               rc.warm_index_msgs_per_s, rc.warm_index_msgs_per_cpu_s, RECALL_INDEX_RATE))
    if rc.scale_memories:
        sq = rc.scale_query
        failed = f" ({sq.lost} failed)" if sq.lost else ""
        cpu = f", {rc.scale_query_cpu_ms:g} ms CPU a query" if rc.scale_query_cpu_ms is not None else ""
        rows.append(Row(section="recall", name=f"query at {rc.scale_memories:,} memories of one agent ({rc.embedder})",
                        value=f"p50 {_ms(sq.p50_ms)} / p95 {_ms(sq.p95_ms)}{failed}{cpu}",
                        target=f"p50 < {RECALL_P50_MS:g} ms, p95 < {RECALL_P95_MS:g} ms at 100 k",
                        verdict=_verdict(_recall_ok(sq))))
    return rows


def _index_row(name: str, rate: float | None, per_cpu: float | None, target: float) -> Row:
    """Events per second indexed (wall clock, the verdict) with events per CPU-second beside it."""
    ok = None if rate is None else rate >= target
    return Row(section="recall", name=name,
               value=_rate(rate) + (f" ({per_cpu:,.0f} per CPU-second)" if per_cpu else ""),
               target=f"≥ {target:,.0f} msgs/s", verdict=_verdict(ok))


def _recall_ok(q: Latency) -> bool | None:
    if q.lost:
        return False
    return None if q.p50_ms is None or q.p95_ms is None else q.p50_ms < RECALL_P50_MS and q.p95_ms < RECALL_P95_MS


def _hostile_rows(report: Report) -> list[Row]:
    h = report.hostile
    if h.skipped:
        return [Row(section="hostile", name="hostile input", value=h.skipped, target="", verdict=_skip(h.skipped))]
    ok = None if h.worst_ratio is None else h.worst_ratio <= HOSTILE_RATIO
    return [Row(section="hostile", name=f"64 KiB pathological vs {h.normal_bytes} B normal (worst: {h.worst})",
                value=f"{h.worst_ratio}×", target=f"≤ {HOSTILE_RATIO:g}×", verdict=_verdict(ok))]


def _memory_rows(report: Report) -> list[Row]:
    rows = []
    for phase, table in (("backlog", report.memory.backlog), ("pipeline", report.memory.pipeline)):
        for worker, mb in table.items():
            excepted = worker == "recall"
            rows.append(Row(section="memory", name=f"{worker} peak RSS ({phase})", value=f"{mb:.1f} MB",
                            target="(recall excepted)" if excepted else f"< {RSS_MB:g} MB",
                            verdict="info" if excepted else _verdict(mb < RSS_MB)))
    return rows


def _pending_rows(so: ScaleoutResult) -> list[Row]:
    """The server filters: each partition's pending count is its agents' events, the sum the
    backlog (not N times it)."""
    two = next((r for r in so.runs if r.partitions == SCALEOUT_PARTITIONS and r.pending), None)
    if two is None:
        return []
    ok = two.pending == two.applied
    return [Row(section="scaleout", name=f"{SCALEOUT_PARTITIONS} partitions: pending per partition at the start",
                value=f"{' + '.join(f'{p:,}' for p in two.pending)} = {sum(two.pending):,} "
                      f"(their agents' events: {' + '.join(f'{a:,}' for a in two.applied)})",
                target="exactly its agents' events; nothing read twice", verdict=_verdict(ok))]


def _scaleout_rows(report: Report) -> list[Row]:
    so = report.scaleout
    if so.skipped:
        return [Row(section="scaleout", name="scale-out", value=so.skipped, target="", verdict=_skip(so.skipped))]
    # The target assumes a free core per partition besides the server's: claimed (pass/miss)
    # only on a machine with that many cores, reported as info otherwise.
    claimable = so.cores >= SCALEOUT_PARTITIONS + 1
    ratio = f" = {so.partitions_2_ratio:.2f}× one" if so.partitions_2_ratio is not None else ""
    ok = None if so.partitions_2_ratio is None else so.partitions_2_ratio >= SCALEOUT_RATIO
    rows = [
        Row(section="scaleout", name="threads, 1 partition", value=_rate(so.partitions_1_msgs_per_s),
            target="", verdict="info"),
        Row(section="scaleout", name="threads, 2 partitions",
            value=f"{_rate(so.partitions_2_msgs_per_s)}{ratio} ({so.cores} cores, shared with the server)",
            target=f"≥ {SCALEOUT_RATIO:g}× with a free core per partition"
                   + ("" if claimable or ok is None else f" (not claimed on {so.cores} cores)"),
            verdict=_verdict(ok) if claimable or ok is None else "info"),
    ]
    rows.extend(_pending_rows(so))
    if so.partitions_2_model_ratio is not None:
        rows.append(Row(section="scaleout", name="threads, 2 partitions on free cores (model: busiest partition)",
                        value=f"{so.partitions_2_model_ratio:.2f}× one",
                        target=f"≥ {SCALEOUT_RATIO:g}× (a model, not a measurement)", verdict="info"))
    if so.limit_2_processes_msgs_per_s is not None:
        ratio = f" = {so.limit_2_ratio:.2f}× one process" if so.limit_2_ratio else ""
        rows.append(Row(section="scaleout", name=f"bare consume, 2 processes ({so.cores} cores, shared with server)",
                        value=f"{_rate(so.limit_2_processes_msgs_per_s)}{ratio}",
                        target="not claimed on 2 cores", verdict="info"))
    return rows


def _ingest_rows(report: Report) -> list[Row]:
    ing = report.ingest
    if ing.skipped:
        return [Row(section="ingest", name="OpenClaw store", value=ing.skipped, target="", verdict=_skip(ing.skipped))]
    ok = None if ing.ratio is None else ing.ratio >= INGEST_RATIO
    pairs = f"; pairs {' / '.join(f'{r:.0%}' for r in ing.runs_ratio)}" if len(ing.runs_ratio) > 1 else ""
    cpu = (f"; CPU {ing.openclaw_cpu_us:.0f} vs {ing.contract_cpu_us:.0f} µs per event"
           if ing.openclaw_cpu_us and ing.contract_cpu_us else "")
    value = (f"{_rate(ing.openclaw_msgs_per_s)} = {ing.ratio:.0%} of {_rate(ing.contract_msgs_per_s)} on contract "
             f"subjects{pairs}{cpu}" if ing.ratio is not None else "—")
    return [
        Row(section="ingest", name=f"OpenClaw store → threads doc, backfill of {ing.events} events "
                                   "(both sides at once, a server each)",
            value=value, target=f"≥ {INGEST_RATIO:.0%} of contract subjects", verdict=_verdict(ok)),
        Row(section="ingest", name="the server copying the store into CORTEX_EVENTS (stream source)",
            value=_rate(ing.copy_msgs_per_s), target="", verdict="info"),
    ]


def _fairness_rows(report: Report) -> list[Row]:
    fair = report.fairness
    if fair.skipped:
        return [Row(section="fairness", name="quiet agent beside a burst", value=fair.skipped, target="",
                    verdict=_skip(fair.skipped))]
    rows = []
    for run in fair.runs:
        beside = f" beside a burst of {run.burst}" if run.burst else ", alone"
        order = {"1": " (in stream order: read-ahead 1)", "default": ""}.get(run.read_ahead,
                                                                          f" (read-ahead {run.read_ahead})")
        cpu = f"; burst drained in {run.drain_s:.2f} s, {run.cpu_us_per_event:.0f} µs CPU per event" if (
            run.burst and run.drain_s is not None and run.cpu_us_per_event is not None) else ""
        behind = f"; its first message after {run.first_quiet_behind} of the burst" if (
            run.first_quiet_behind is not None) else ""
        via = f", both agents on the {run.source}" if run.source != "contract" else ""
        rows.append(Row(section="fairness", name=f"{run.worker}: quiet agent{beside}{via}{order}, p50 / max",
                        value=f"{run.quiet.p50_ms} / {run.quiet.max_ms} ms{behind}{cpu}", target="", verdict="info"))
    return rows


def rows(report: Report) -> list[Row]:
    return [
        *_limit_rows(report), *_worker_rows(report), *_freshness_rows(report), *_capacity_rows(report),
        *_api_rows(report),
        *_mcp_rows(report.mcp), *_mcp_rows(report.mcp_node, "TypeScript SDK's client"), *_plugin_rows(report),
        *_recall_rows(report), *_hostile_rows(report), *_memory_rows(report), *_scaleout_rows(report),
        *_ingest_rows(report), *_fairness_rows(report),
    ]
