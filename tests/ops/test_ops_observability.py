"""The Grafana dashboard, its provisioning and the alert rules: they parse, follow the
provisioning pattern, and use only metric names the workers' code exports (or names
proposed in issue 7 and listed as pending, skipped with the reason)."""

from __future__ import annotations

import json
import re
from typing import Any

import gen_dashboard
import pytest
from ops_support import (
    PROMETHEUS_BUILTINS,
    ROOT,
    exported_metric_names,
    load_yaml,
    promql_metric_names,
)

DASHBOARD = json.loads((ROOT / "deploy/grafana/cortex-dashboard.json").read_text())
ALERTS = load_yaml("deploy/prometheus/alerts.yaml")
LABEL_VALUES = re.compile(r"label_values\((\w+)\s*,\s*\w+\)")


def dashboard_exprs() -> list[str]:
    return [t["expr"] for p in DASHBOARD["panels"] for t in p.get("targets", [])]


def alert_rules() -> list[dict[str, Any]]:
    return [rule for group in ALERTS["groups"] for rule in group["rules"]]


def used_metric_names() -> set[str]:
    names: set[str] = set()
    for expr in dashboard_exprs() + [r["expr"] for r in alert_rules()]:
        names |= promql_metric_names(expr)
    for variable in DASHBOARD["templating"]["list"]:
        names |= set(LABEL_VALUES.findall(variable.get("definition", "")))
    return names


# --------------------------------------------------------------------------- dashboard


def test_dashboard_is_generated_from_its_script() -> None:
    assert (ROOT / "deploy/grafana/cortex-dashboard.json").read_text() == gen_dashboard.render(), \
        "run python deploy/gen_dashboard.py"


def test_dashboard_uses_the_datasource_variable_everywhere() -> None:
    variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    for panel in DASHBOARD["panels"]:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert all(t["datasource"]["uid"] == "${datasource}" for t in panel["targets"])


def test_the_variables_scope_cluster_namespace_job_and_worker_in_a_chain() -> None:
    """Issue 44 item 7: one Grafana over several clusters and installations — $cluster, then
    $namespace within it, $job within that, $worker within the three (every worker has a
    readiness series: the API worker too, which counts no events)."""
    variables = {v["name"]: v for v in DASHBOARD["templating"]["list"]}
    assert [v["name"] for v in DASHBOARD["templating"]["list"]] == ["datasource", "cluster", "namespace", "job",
                                                                     "worker"]
    assert variables["cluster"]["definition"] == "label_values(cortex_worker_ready, cluster)"
    assert variables["namespace"]["definition"] == 'label_values(cortex_worker_ready{cluster=~"$cluster"}, namespace)'
    assert '$namespace' in variables["job"]["definition"] and variables["job"]["definition"].endswith(", job)")
    assert all(f"${name}" in variables["worker"]["definition"] for name in ("cluster", "namespace", "job"))
    for name in ("cluster", "namespace", "job", "worker"):
        v = variables[name]
        assert v["query"]["query"] == v["definition"] and v["multi"] and v["includeAll"] and v["allValue"] == ".*"
    extract = re.compile(variables["worker"]["regex"].strip("/"))
    assert [extract.match(w).group(1) for w in ("threads", "threads-shadow-3", "boot-api", "api-api")] == [  # type: ignore[union-attr]
        "threads", "threads", "boot", "api"]


def test_every_panel_honours_worker_and_every_cortex_series_the_scope() -> None:
    """Before: no scope variables, and half the panels (boot, LLM, API, recall, traces) ignored
    $worker. A cortex_* selector carries cluster, namespace and job; every query names $worker."""
    for panel in DASHBOARD["panels"]:
        for t in panel.get("targets", []):
            assert "$worker" in t["expr"], (panel["title"], t["expr"])
            for selector in re.findall(r"(cortex_\w+)(\{[^}]*\})?", t["expr"]):
                assert all(f"{label}=~\"${label}\"" in selector[1] for label in ("cluster", "namespace", "job")), (
                    panel["title"], selector)


def test_jetstream_panels_read_the_exporter_already_deployed() -> None:
    """The NATS chart's exporter sidecar (k8s/helm/nats-values.yaml: promExporter) with -jsz=all."""
    nats_values = load_yaml("k8s/helm/nats-values.yaml")
    assert nats_values["promExporter"]["enabled"] is True
    row = [p for p in DASHBOARD["panels"] if p["type"] != "row" and "nats_consumer_" in json.dumps(p["targets"])]
    assert {p["title"] for p in row} >= {"Server-side pending by consumer", "Sequences behind the stream"}


def test_dashboard_panels_have_unique_ids_and_fit_the_grid() -> None:
    ids = [p["id"] for p in DASHBOARD["panels"]]
    assert len(ids) == len(set(ids))
    for panel in DASHBOARD["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24


@pytest.mark.parametrize("title", [
    "Event rate by worker and outcome", "Handler latency p50 / p99", "Consumer pending",
    "Ack pending and redeliveries", "Dead letters", "KV writes and conflicts", "Boot document size p50 / p99",
    "Boot document age", "LLM calls by purpose and outcome", "LLM failures", "LLM tokens",
    "API latency p50 / p99", "Recall latency p50 / p99"])
def test_dashboard_has_the_panel(title: str) -> None:
    assert title in {p["title"] for p in DASHBOARD["panels"]}


def test_every_panel_query_parses_as_promql() -> None:
    for expr in dashboard_exprs():
        assert promql_metric_names(expr), expr


def test_provisioning_follows_the_file_provider_pattern() -> None:
    dashboards = load_yaml("deploy/grafana/provisioning/dashboards/cortex.yaml")
    assert dashboards["apiVersion"] == 1
    assert [p["type"] for p in dashboards["providers"]] == ["file"]
    assert dashboards["providers"][0]["options"]["path"]
    datasources = load_yaml("deploy/grafana/provisioning/datasources/prometheus.yaml")
    assert datasources["apiVersion"] == 1
    assert [d["type"] for d in datasources["datasources"]] == ["prometheus"]


# --------------------------------------------------------------------------- alerts


def test_alert_rules_are_well_formed() -> None:
    names = [r["alert"] for r in alert_rules()]
    assert len(names) == len(set(names))
    for rule in alert_rules():
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        assert promql_metric_names(rule["expr"])
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"])


@pytest.mark.parametrize("alert", ["CortexConsumerLagGrowing", "CortexDeadLetters", "CortexWorkerDown",
                                   "CortexBootStale"])
def test_the_alert_exists(alert: str) -> None:
    assert alert in {r["alert"] for r in alert_rules()}


def test_worker_down_watches_the_pod_monitor_job() -> None:
    rule = next(r for r in alert_rules() if r["alert"] == "CortexWorkerDown")
    assert 'up{job="cortex"}' in rule["expr"].replace(" ", "")


def test_runbook_links_point_at_existing_sections() -> None:
    headings = re.findall(r"^#+ (.+)$", (ROOT / "docs/operations.md").read_text(), flags=re.M)
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
    for rule in alert_rules():
        page, _, anchor = rule["annotations"]["runbook_url"].partition("#")
        assert page.endswith("/docs/operations.md") and anchor in anchors, rule["alert"]


# --------------------------------------------------------------------------- metric names


@pytest.mark.parametrize("name", sorted(used_metric_names()))
def test_metric_is_exported_by_the_code(name: str) -> None:
    if name in PROMETHEUS_BUILTINS:
        return
    if name in exported_metric_names():
        return
    pytest.fail(f"{name} is used by the dashboard or the alerts but no worker exports it")

