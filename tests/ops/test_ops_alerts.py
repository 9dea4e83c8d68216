"""The alert rules under promtool (Debian's `prometheus` package: the first run puts its
promtool beside the venv's python, tests/support/promtool_setup.py; where that cannot be
done the promtool tests skip saying why, and fail under CI's CORTEX_REQUIRE_PROMTOOL=1), and
the series the rules rely on, as a real worker exports them."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import promtool_setup
import pytest
import yaml
from cortex_testkit import wait_until
from ops_support import ROOT, load_yaml

from shared.embedded import free_port
from shared.metrics import DEAD_LETTER_REASONS
from workers.registry import all_specs

ALERTS = ROOT / "deploy/prometheus/alerts.yaml"


@functools.cache
def _ensured() -> tuple[Path | None, str]:
    return promtool_setup.ensure()  # once per test process: a failed download is not tried again


def promtool() -> str:
    found, why = _ensured()
    if found is None:
        if os.environ.get("CORTEX_REQUIRE_PROMTOOL") == "1":
            pytest.fail(f"promtool is required here and could not be set up: {why}")
        pytest.skip(f"promtool could not be set up ({why}): `{promtool_setup.ENABLE}` enables these tests")
    return str(found)


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], cwd=cwd, capture_output=True, text=True, timeout=60)


# the first promtool test of a fresh venv downloads Debian's package (19 MB)
SETUP_TIMEOUT = pytest.mark.timeout(promtool_setup.TIMEOUT_S * 2)


@SETUP_TIMEOUT
def test_the_rules_pass_promtools_check_and_lint() -> None:
    result = run("check", "rules", "--lint=all", "--lint-fatal", str(ALERTS), cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@SETUP_TIMEOUT
def test_the_rules_pass_their_unit_tests() -> None:
    """deploy/prometheus/alerts_test.yaml: a lone first dead letter fires, a worker whose
    series are all gone fires CortexWorkerAbsent for it, JetStream storage over 80 % fires."""
    result = run("test", "rules", "alerts_test.yaml", cwd=ROOT / "deploy/prometheus")
    assert result.returncode == 0, result.stdout + result.stderr


@SETUP_TIMEOUT
def test_the_generated_prometheusrule_carries_the_same_rules(tmp_path: Path) -> None:
    rule = load_yaml("k8s/overlays/prod/prometheusrule.yaml")
    groups = tmp_path / "groups.yaml"
    groups.write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    result = run("check", "rules", str(groups), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert rule["spec"]["groups"] == load_yaml("deploy/prometheus/alerts.yaml")["groups"]


def test_every_worker_is_watched_for_disappearing() -> None:
    rules = [r for g in load_yaml("deploy/prometheus/alerts.yaml")["groups"] for r in g["rules"]]
    absent = next(r for r in rules if r["alert"] == "CortexWorkerAbsent")
    watched = re.findall(r'"worker", "([a-z]+)"', absent["expr"])
    assert sorted(watched) == sorted(all_specs())
    assert all(f'worker=~"{w}(-.+)?"' in absent["expr"] for w in watched)


def test_every_alert_names_a_runbook_url_not_a_runbook() -> None:
    rules = [r for g in load_yaml("deploy/prometheus/alerts.yaml")["groups"] for r in g["rules"]]
    assert all("runbook_url" in r["annotations"] and "runbook" not in r["annotations"] for r in rules)


def _metrics(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
            return str(resp.read().decode())
    except OSError:
        return ""


def test_a_fresh_worker_exports_its_dead_letter_series_at_zero(nats_url: str, tmp_path: Path,
                                                                workers_procs: Any) -> None:
    """Before any dead letter (issue 15, item 13): without these series a lone first dead
    letter appears already at 1, which increase() — and CortexDeadLetters — never see."""
    assert subprocess.run([sys.executable, "-m", "workers", "init", "--nats-url", nats_url],
                          capture_output=True).returncode == 0
    port = free_port()
    workers_procs.start("threads", nats_url, CORTEX_METRICS_PORT=str(port))
    wanted = [f'cortex_dead_letters_total{{reason="{r}",worker="threads"}} 0.0' for r in DEAD_LETTER_REASONS]

    def exported() -> str:
        text = _metrics(port)
        return text if 'cortex_checkpoint_seq{worker="threads"}' in text else ""  # the loop has started

    text = wait_until(exported, within=30)
    assert all(w in text for w in wanted), [w for w in wanted if w not in text]


def test_runbook_urls_are_absolute_and_their_base_is_a_setting() -> None:
    """Issue 44 item 7: runbook_url was relative (docs/operations.md#…) unless the generator was
    given a base: a notification linked nowhere. Absolute by default (pyproject.toml's
    Documentation URL), in alerts.yaml and the PrometheusRule alike; --runbook-base moves them."""
    import tomllib

    import gen_manifests

    base = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Documentation"]
    for path in (ALERTS, ROOT / "k8s" / "overlays" / "prod" / "prometheusrule.yaml"):
        urls = re.findall(r"runbook_url: (\S+)", path.read_text())
        assert urls and all(u.startswith(f"{base}/operations.md#") for u in urls), (path, urls)
    moved = gen_manifests.with_runbook_base(ALERTS.read_text(), "https://git.example.com/cortex/blob/main/docs/")
    urls = re.findall(r"runbook_url: (\S+)", gen_manifests.render_prometheus_rule(moved))
    assert urls and all(u.startswith("https://git.example.com/cortex/blob/main/docs/operations.md#") for u in urls)
