"""Generate deploy/grafana/cortex-dashboard.json, the provisionable Cortex dashboard.

The datasource is the template variable ``${datasource}``; ``$cluster``, ``$namespace`` and
``$job`` scope every Cortex series (one Grafana for several clusters and installations: a
label a setup lacks matches "All"); ``$worker`` comes from the workers' readiness series and
filters every panel — through the metric's own ``worker`` label (a consumer's name:
``threads``, ``threads-shadow``, ``threads-3``; ``boot-api`` for an API), or, for a metric
without one, the pod's ``app.kubernetes.io/component`` label the PodMonitor copies
(``app_kubernetes_io_component``). The JetStream row reads the NATS chart's exporter sidecar
(``promExporter``, ``-prefix=nats -jsz=all``: ``nats_stream_*``, ``nats_consumer_*``), by
stream and consumer name. There is no agent variable on purpose: metrics never carry agent
ids (labels come from small fixed sets).

    python deploy/gen_dashboard.py          # write
    python deploy/gen_dashboard.py --check  # exit 1 when the JSON is out of date
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from generated import write_or_check

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD_FILE = ROOT / "deploy" / "grafana" / "cortex-dashboard.json"

DS = {"type": "prometheus", "uid": "${datasource}"}
# Which installation: the scope of every Cortex series.
SCOPE = 'cluster=~"$cluster", namespace=~"$namespace", job=~"$job"'
# Counters carry the worker's name; per-consumer gauges (pending, checkpoint, active) the
# consumer's (``threads-shadow``, ``threads-0`` with partitions), an API's health ``<worker>-api``.
CONSUMER_OF_WORKER = "($worker)(-shadow)?(-[0-9]+)?"
W = f'{SCOPE}, worker=~"{CONSUMER_OF_WORKER}(-api)?"'
# A metric without a worker label (the boot, LLM, API, recall and traces ones): the pod's component.
C = f'{SCOPE}, app_kubernetes_io_component=~"$worker"'
# The NATS exporter's series: Cortex's streams and the worker's consumers.
EVENTS = 'stream_name="CORTEX_EVENTS"'
JS_CONSUMER = f'{EVENTS}, consumer_name=~"{CONSUMER_OF_WORKER}"'
RATE = "$__rate_interval"


def target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def panel(title: str, description: str, targets: list[tuple[str, str]], unit: str = "short",
          kind: str = "timeseries", width: int = 8) -> dict[str, Any]:
    """A panel; ``targets`` are (PromQL, legend). Position is filled in by ``layout``."""
    refs = "ABCDEFGH"
    return {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"h": 8, "w": width, "x": 0, "y": 0},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "bottom", "calcs": ["lastNotNull", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}} if kind == "timeseries" else {},
        "targets": [target(expr, legend, refs[i]) for i, (expr, legend) in enumerate(targets)],
    }


def quantiles(metric: str, by: str, where: str = "") -> list[tuple[str, str]]:
    selector = f"{metric}_bucket{{{where}}}" if where else f"{metric}_bucket"
    return [(f"histogram_quantile({q}, sum by ({by}, le) (rate({selector}[{RATE}])))", f"{{{{{by}}}}} p{name}")
            for q, name in ((0.5, "50"), (0.99, "99"))]


ROWS: list[tuple[str, list[dict[str, Any]]]] = [
    ("Events", [
        panel("Event rate by worker and outcome",
              "Events handled per second. outcome: applied (a document changed), skipped (nothing to do), "
              "ignored (channel mode off), duplicate (a redelivery already applied), duplicate_event (a second "
              "copy of an OpenClaw store event), window_refill (re-read at start for the duplicate window), "
              "dead_lettered.",
              [(f"sum by (worker, outcome) (rate(cortex_events_total{{{W}}}[{RATE}]))", "{{worker}} {{outcome}}")],
              unit="ops"),
        panel("Handler latency p50 / p99", "Time to apply one event (cortex_handler_seconds).",
              quantiles("cortex_handler_seconds", "worker", W), unit="s"),
        panel("Batch latency p50 / p99", "Fetch-to-ack time of one batch: apply, commit, checkpoint, ack.",
              quantiles("cortex_batch_seconds", "worker", W), unit="s"),
    ]),
    ("Consumers", [
        panel("Consumer pending", "Events in CORTEX_EVENTS not yet delivered to the worker's consumer (its lag).",
              [(f"max by (worker) (cortex_consumer_pending{{{W}}})", "{{worker}}")]),
        panel("Ack pending and redeliveries",
              "Delivered but unacked, and redelivered by the server (a crash or an ack wait exceeded).",
              [(f"max by (worker) (cortex_consumer_ack_pending{{{W}}})", "{{worker}} ack pending"),
               (f"max by (worker) (cortex_consumer_redelivered{{{W}}})", "{{worker}} redelivered")]),
        panel("Active instances and readiness",
              "Instances holding the consumer's lease (exactly 1 expected) and ready instances "
              "(standbys count as ready).",
              [(f"sum by (worker) (cortex_worker_active{{{W}}})", "{{worker}} active"),
               (f"sum by (worker) (cortex_worker_ready{{{W}}})", "{{worker}} ready")]),
        panel("Event-time lag", "How far each worker's last applied event is behind the newest one any worker "
              "applied (event time, not wall time).",
              [(f"max(cortex_last_event_timestamp_seconds{{{SCOPE}}}) - max by (worker) "
                f"(cortex_last_event_timestamp_seconds{{{W}}})", "{{worker}}")], unit="s"),
        panel("Checkpoint", "Highest contiguous applied stream sequence per consumer.",
              [(f"max by (worker) (cortex_checkpoint_seq{{{W}}})", "{{worker}}")], unit="none"),
    ]),
    ("Failures", [
        panel("Dead letters", "Events dead-lettered to cortex.dlq.<worker> (reason: invalid input or a handler "
              "failing on every attempt). Inspect with `nats stream view CORTEX_DLQ`.",
              [(f"sum by (worker, reason) (increase(cortex_dead_letters_total{{{W}}}[{RATE}]))",
                "{{worker}} {{reason}}")]),
        panel("Retries", "Retries of a failing apply, commit, checkpoint or dead-letter publish; transient "
              "ones (store unreachable) repeat without limit while the worker is not ready.",
              [(f"sum by (worker, kind) (rate(cortex_retries_total{{{W}}}[{RATE}]))", "{{worker}} {{kind}}")],
              unit="ops"),
        panel("KV writes and conflicts", "Document writes and compare-and-set conflicts (a replay reset or "
              "two writers; each conflict is rebased, nothing is lost).",
              [(f"sum by (worker) (rate(cortex_kv_writes_total{{{W}}}[{RATE}]))", "{{worker}} writes"),
               (f"sum by (worker) (rate(cortex_kv_conflicts_total{{{W}}}[{RATE}]))", "{{worker}} conflicts")],
              unit="ops"),
    ]),
    ("Boot", [
        panel("Boot document size p50 / p99", "Characters of the BOOTSTRAP documents written, by trigger "
              "(limit CORTEX_BOOT_MAX_CHARS).",
              quantiles("cortex_boot_chars", "trigger", C), unit="none"),
        panel("Boot document age", "Wall time since the newest BOOTSTRAP document was written (any boot "
              "instance). Long ages are normal when no session starts; staleness is the lag panel.",
              [(f"time() - max(cortex_boot_generated_timestamp_seconds{{{C}}} > 0)", "age")], unit="s"),
        panel("Boot documents with a lagging source", "BOOTSTRAP documents whose source was stuck (still "
              "behind the trigger 60 s after the document was made), and documents completed once a source "
              "that lagged at the wait bound caught up, by source.",
              [(f"sum by (source) (increase(cortex_boot_lagging_total{{{C}}}[{RATE}]))", "{{source}} stuck"),
               (f"sum by (source) (increase(cortex_boot_completed_total{{{C}}}[{RATE}]))", "{{source}} completed")]),
        panel("Composed reads past the history", "Reads of a source document as of a trigger that found the "
              "wanted revision gone from the bucket's 16-revision history (a composed worker far behind its "
              "sources). Derived: an event-derived source (threads, decisions, commitments) derived from the "
              "agent's events instead, exactly. Latest used: any other source, read as it is now, so a replay "
              "may not reproduce that document.",
              [(f"sum by (bucket) (increase(cortex_asof_derived_total{{{C}}}[{RATE}]))", "{{bucket}} derived"),
               (f"sum(increase(cortex_asof_history_short_total{{{C}}}[{RATE}]))", "latest used")]),
        panel("Boot API latency p50 / p99", "cortex.api.boot.<agent>: a fresh assembly per request.",
              quantiles("cortex_api_seconds", "service", f'{C}, service="boot"'), unit="s"),
    ]),
    ("Traces", [
        panel("Failure findings by signal", "Findings the trace analyzer made (cortex_traces): doom_loop, "
              "repeat_fail, tool_fail, correction, dissatisfied, hallucination, unverified_claim.",
              [(f"sum by (signal) (increase(cortex_traces_findings_total{{{C}}}[{RATE}]))", "{{signal}}")]),
        panel("Findings triaged by Claude", "New findings the LLM triage kept or dismissed (with ANTHROPIC_API_KEY).",
              [(f"sum by (verdict) (increase(cortex_traces_triaged_total{{{C}}}[{RATE}]))", "{{verdict}}")]),
    ]),
    ("JetStream (the NATS exporter)", [
        panel("Server-side pending by consumer", "What the server holds for each of the worker's consumers "
              "on CORTEX_EVENTS (nats_consumer_num_pending, from the NATS chart's exporter): the same lag as "
              "cortex_consumer_pending, seen from the server, so it is there while a worker is down.",
              [(f"max by (consumer_name) (nats_consumer_num_pending{{{JS_CONSUMER}}})", "{{consumer_name}}")]),
        panel("Server-side ack pending and redeliveries", "Delivered but not acknowledged, and redelivered, "
              "as the server counts them per consumer.",
              [(f"max by (consumer_name) (nats_consumer_num_ack_pending{{{JS_CONSUMER}}})",
                "{{consumer_name}} ack pending"),
               (f"max by (consumer_name) (nats_consumer_num_redelivered{{{JS_CONSUMER}}})",
                "{{consumer_name}} redelivered")]),
        panel("Sequences behind the stream", "CORTEX_EVENTS' last sequence minus each consumer's ack floor: "
              "how far the worker's acknowledged events trail the stream.",
              [(f"max(nats_stream_last_seq{{{EVENTS}}}) - on() group_right() max by (consumer_name) "
                f"(nats_consumer_ack_floor_stream_seq{{{JS_CONSUMER}}})", "{{consumer_name}}")], unit="none"),
    ]),
    ("LLM", [
        panel("LLM calls by purpose and outcome", "ok, cache_hit (replays cost nothing), unavailable (no answer "
              "within the call's bound: structured path, asked again later), malformed (only unusable answers), "
              "failed (rejected request), refused, over_budget (CORTEX_LLM_DAILY_TOKENS).",
              [(f"sum by (purpose, outcome) (rate(cortex_llm_calls_total{{{C}}}[{RATE}]))", "{{purpose}} {{outcome}}")],
              unit="ops"),
        panel("LLM failures", "Calls that took the structured path: unavailable and malformed are asked again "
              "once the model answers; failed, refused, over_budget stay structured.",
              [(f'sum by (purpose, outcome) (increase(cortex_llm_calls_total'
                f'{{{C}, outcome=~"unavailable|malformed|failed|refused|over_budget"}}'
                f"[{RATE}]))", "{{purpose}} {{outcome}}")]),
        panel("LLM request latency p50 / p99",
              "One request to the model, answered or not (cortex_llm_request_seconds).",
              quantiles("cortex_llm_request_seconds", "purpose", C), unit="s"),
        panel("LLM request failures by cause", "unreachable, timeout, rate_limited, server_error, auth, not_found, "
              "rejected, malformed.",
              [(f"sum by (cause) (increase(cortex_llm_failures_total{{{C}}}[{RATE}]))", "{{cause}}")]),
        panel("LLM unreachable and deferred calls", "1 while a worker's model is unreachable (structured fallback); "
              "calls waiting to be asked again; their answers published as llm_answer events.",
              [(f"max by (worker) (cortex_llm_unreachable{{{C}}})", "{{worker}} unreachable"),
               (f"sum by (worker) (cortex_llm_deferred{{{C}}})", "{{worker}} deferred"),
               (f"sum by (worker, outcome) (increase(cortex_llm_enrichments_total{{{C}}}[{RATE}]))",
                "{{worker}} {{outcome}}")]),
        panel("LLM tokens", "Tokens per second by purpose and direction (input / output).",
              [(f"sum by (purpose, direction) (rate(cortex_llm_tokens_total{{{C}}}[{RATE}]))",
                "{{purpose}} {{direction}}")],
              unit="short"),
    ]),
    ("APIs", [
        panel("API latency p50 / p99", "Every cortex.api.<service>.<agent> endpoint (cortex_api_seconds).",
              quantiles("cortex_api_seconds", "service", C), unit="s"),
        panel("API requests by outcome", "ok, bad_request, error.",
              [(f"sum by (service, outcome) (rate(cortex_api_requests_total{{{C}}}[{RATE}]))",
                "{{service}} {{outcome}}")],
              unit="reqps"),
        panel("Recall latency p50 / p99", "Ranking and formatting one recall request inside the recall "
              "worker (cortex_recall_seconds); the request's round trip is the API panel's recall line.",
              [(f"histogram_quantile({q}, sum by (le) (rate(cortex_recall_seconds_bucket{{{C}}}[{RATE}])))", f"p{name}")
               for q, name in ((0.5, "50"), (0.99, "99"))], unit="s"),
        panel("Recall memory changes", "Memory store changes per second: added, merged (near duplicates), "
              "skipped, expired, demoted (tiering).",
              [(f"sum by (change) (rate(cortex_recall_memories_total{{{C}}}[{RATE}]))", "{{change}}")], unit="ops"),
    ]),
]


def layout(rows: list[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Rows of panels, 24 columns wide, with unique ids."""
    panels: list[dict[str, Any]] = []
    y = 0
    next_id = 1
    for title, row_panels in rows:
        panels.append({"type": "row", "title": title, "collapsed": False, "id": next_id,
                       "gridPos": {"h": 1, "w": 24, "x": 0, "y": y}, "panels": []})
        next_id += 1
        y += 1
        x = 0
        for p in row_panels:
            width = p["gridPos"]["w"]
            if x + width > 24:
                x, y = 0, y + 8
            p["gridPos"] = {"h": 8, "w": width, "x": x, "y": y}
            p["id"] = next_id
            next_id += 1
            panels.append(p)
            x += width
        y += 8
    return panels


def variable(name: str, label: str, series: str, label_name: str, regex: str = "") -> dict[str, Any]:
    """A query variable over ``label_name``'s values on ``series``; "All" matches any value, and a
    series without the label (no cluster label outside a multi-cluster setup) too."""
    query = f"label_values({series}, {label_name})"
    return {"name": name, "label": label, "type": "query", "datasource": DS, "definition": query,
            "query": {"query": query, "refId": name}, "refresh": 2, "multi": True, "includeAll": True,
            "allValue": ".*", "current": {}, "sort": 1, "hide": 0, "regex": regex}


def dashboard() -> dict[str, Any]:
    return {
        "title": "Cortex",
        "uid": "cortex-overview",
        "description": "Cortex workers: events, consumers, failures, BOOTSTRAP documents, JetStream, LLM and "
                       "APIs. Generated by deploy/gen_dashboard.py.",
        "tags": ["cortex", "nats"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "annotations": {"list": []},
        "links": [],
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0, "refresh": 1, "regex": ""},
            variable("cluster", "Cluster", "cortex_worker_ready", "cluster"),
            variable("namespace", "Namespace", 'cortex_worker_ready{cluster=~"$cluster"}', "namespace"),
            variable("job", "Job", 'cortex_worker_ready{cluster=~"$cluster", namespace=~"$namespace"}', "job"),
            # the worker a consumer or an API health belongs to: threads-shadow-3 and boot-api are threads, boot
            variable("worker", "Worker", f"cortex_worker_ready{{{SCOPE}}}", "worker",
                     regex="/^(.+?)(?:-shadow)?(?:-[0-9]+)?(?:-api)?$/"),
        ]},
        "panels": layout(ROWS),
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the JSON is out of date")
    args = parser.parse_args(argv)
    return write_or_check({DASHBOARD_FILE: render()}, args.check, "deploy/gen_dashboard.py")


if __name__ == "__main__":
    sys.exit(main())
