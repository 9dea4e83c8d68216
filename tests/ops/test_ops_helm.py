"""The helm values for NATS and Qdrant, and the NATS permissions: documented chart keys,
JetStream and clustering as intended, k8s/permissions.yaml derived from the code and
identical to the users in the NATS values, a config nats-server accepts."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import gen_manifests as gen
import pytest
from ops_support import load_yaml, load_yaml_all, nats_conf

from shared.embedded import nats_server_binary
from shared.names import RUNTIME_BUCKETS, consumer_name, early_consumer, scout_consumer
from shared.runtime import briefings
from workers.registry import all_specs, doc_buckets

# Keys the nats chart documents in its values.yaml (nats-io/k8s, chart nats 1.x/2.x). A
# trailing ".*" admits a free-form subtree (merge/patch blocks, env maps, resources).
NATS_CHART_KEYS = frozenset({
    "global.*", "nameOverride", "fullnameOverride", "namespaceOverride", "tlsCA.*",
    "config.cluster.enabled", "config.cluster.port", "config.cluster.replicas", "config.cluster.noAdvertise",
    "config.cluster.routeURLs.*", "config.cluster.tls.*", "config.cluster.merge.*", "config.cluster.patch",
    "config.jetstream.enabled", "config.jetstream.fileStore.enabled", "config.jetstream.fileStore.dir",
    "config.jetstream.fileStore.pvc.enabled", "config.jetstream.fileStore.pvc.size",
    "config.jetstream.fileStore.pvc.storageClassName", "config.jetstream.fileStore.pvc.merge.*",
    "config.jetstream.fileStore.pvc.patch", "config.jetstream.fileStore.pvc.name",
    "config.jetstream.fileStore.maxSize", "config.jetstream.memoryStore.enabled",
    "config.jetstream.memoryStore.maxSize", "config.jetstream.merge.*", "config.jetstream.patch",
    "config.nats.port", "config.nats.tls.*", "config.leafnodes.*", "config.websocket.*", "config.mqtt.*",
    "config.gateway.*", "config.monitor.enabled", "config.monitor.port", "config.monitor.tls.enabled",
    "config.profiling.*", "config.resolver.*", "config.serverNamePrefix", "config.merge.*", "config.patch",
    "container.image.*", "container.ports.*", "container.env.*", "container.merge.*", "container.patch",
    "container.resources.*", "reloader.*",
    "promExporter.enabled", "promExporter.image.*", "promExporter.port", "promExporter.monitorDomain",
    "promExporter.env.*", "promExporter.merge.*", "promExporter.patch", "promExporter.podMonitor.enabled",
    "promExporter.podMonitor.merge.*", "promExporter.podMonitor.patch", "promExporter.podMonitor.name",
    "service.*", "statefulSet.*", "podTemplate.configChecksumAnnotation", "podTemplate.topologySpreadConstraints.*",
    "podTemplate.merge.*", "podTemplate.patch", "headlessService.*", "configMap.*",
    "podDisruptionBudget.enabled", "podDisruptionBudget.merge.*", "podDisruptionBudget.patch",
    "podDisruptionBudget.name", "serviceAccount.*",
    "natsBox.enabled", "natsBox.contexts.*", "natsBox.defaultContextName", "natsBox.container.image.*",
    "natsBox.container.env.*", "natsBox.container.merge.*", "natsBox.container.patch", "natsBox.deployment.*",
    "natsBox.podTemplate.*", "natsBox.contextsSecret.*", "natsBox.contentsSecret.*", "natsBox.serviceAccount.*",
    "extraResources",
})

# Keys the qdrant chart documents (qdrant/qdrant-helm, chart qdrant).
QDRANT_CHART_KEYS = frozenset({
    "replicaCount", "image.repository", "image.pullPolicy", "image.tag", "image.useUnprivilegedImage",
    "imagePullSecrets", "nameOverride", "fullnameOverride", "args", "env", "service.*", "ingress.*",
    "livenessProbe.*", "readinessProbe.*", "startupProbe.*", "additionalLabels.*", "additionalAnnotations.*",
    "podAnnotations.*", "podLabels.*", "resources.*", "containerSecurityContext.*", "podSecurityContext.*",
    "lifecycle.*", "updateVolumeFsOwnership", "nodeSelector.*", "tolerations", "affinity.*",
    "topologySpreadConstraints", "persistence.*", "snapshotPersistence.*", "snapshotRestoration.*", "config.*",
    "sidecarContainers", "metrics.serviceMonitor.*", "serviceAccount.*", "priorityClassName",
    "shareProcessNamespace", "podManagementPolicy", "podDisruptionBudget.*", "apiKey", "readOnlyApiKey",
    "apiKey.valueFrom.secretKeyRef.name", "apiKey.valueFrom.secretKeyRef.key",
    "additionalVolumes", "additionalVolumeMounts",
})


def leaf_paths(tree: Any, prefix: str = "") -> list[str]:
    if isinstance(tree, dict) and tree:
        return [p for key, value in tree.items() for p in leaf_paths(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def documented(path: str, keys: frozenset[str]) -> bool:
    return path in keys or any(k.endswith(".*") and (path + ".").startswith(k[:-1]) for k in keys)


def merged(base: Any, override: Any) -> Any:
    """helm's -f a.yaml -f b.yaml: maps merge, everything else is replaced."""
    if isinstance(base, dict) and isinstance(override, dict):
        return {**base, **{k: merged(base.get(k), v) for k, v in override.items()}}
    return override


NATS = load_yaml("k8s/helm/nats-values.yaml")
NATS_PROD = load_yaml("k8s/helm/nats-values-prod.yaml")
QDRANT = load_yaml("k8s/helm/qdrant-values.yaml")
QDRANT_PROD = load_yaml("k8s/helm/qdrant-values-prod.yaml")
PERMISSIONS = load_yaml("k8s/permissions.yaml")


# --------------------------------------------------------------------------- chart keys


@pytest.mark.parametrize(("name", "values", "keys"), [
    ("nats-values", NATS, NATS_CHART_KEYS), ("nats-values-prod", NATS_PROD, NATS_CHART_KEYS),
    ("qdrant-values", QDRANT, QDRANT_CHART_KEYS), ("qdrant-values-prod", QDRANT_PROD, QDRANT_CHART_KEYS)])
def test_values_use_only_keys_the_chart_documents(name: str, values: Any, keys: frozenset[str]) -> None:
    unknown = [p for p in leaf_paths(values) if not documented(p, keys)]
    assert not unknown, f"{name}: keys the chart does not document: {unknown}"


def test_nats_runs_jetstream_on_file_storage() -> None:
    jetstream = NATS["config"]["jetstream"]
    assert jetstream["enabled"] is True
    assert jetstream["fileStore"]["enabled"] is True and jetstream["fileStore"]["pvc"]["enabled"] is True
    assert jetstream["fileStore"]["pvc"]["size"]
    assert jetstream["memoryStore"]["enabled"] is False
    assert NATS["config"]["cluster"]["enabled"] is False


def test_prod_nats_is_a_three_node_cluster() -> None:
    prod = merged(NATS, NATS_PROD)
    assert prod["config"]["cluster"] == {"enabled": True, "replicas": 3}
    assert prod["config"]["jetstream"]["enabled"] is True and prod["config"]["jetstream"]["fileStore"]["enabled"]
    assert prod["config"]["merge"]["accounts"] == NATS["config"]["merge"]["accounts"]


def test_the_base_values_need_no_prometheus_operator() -> None:
    """Dev installs the base values on clusters that often lack the Operator's CRDs."""
    assert QDRANT["metrics"]["serviceMonitor"]["enabled"] is False
    assert NATS["promExporter"].get("podMonitor", {}).get("enabled", False) is False


def test_prod_monitors_carry_the_release_label_prometheus_selects_by() -> None:
    """The same label as the PodMonitor and PrometheusRule of k8s/overlays/prod."""
    release = load_yaml("k8s/overlays/prod/monitoring-labels.yaml")["metadata"]["labels"]["release"]
    qdrant = merged(QDRANT, QDRANT_PROD)["metrics"]["serviceMonitor"]
    assert qdrant["enabled"] is True and qdrant["additionalLabels"] == {"release": release}
    nats = merged(NATS, NATS_PROD)["promExporter"]["podMonitor"]
    assert nats["enabled"] is True and nats["merge"]["metadata"]["labels"] == {"release": release}


def test_qdrant_requires_the_api_key_the_recall_worker_sends_however_the_chart_is_rendered() -> None:
    """Issue 44 item 7: apiKey.valueFrom made the chart copy the key with `lookup`, which
    returns nothing under `helm template` and GitOps renderers: Qdrant ran without a key and
    nothing failed. The server reads it from its environment, from the Secret the recall
    worker's CORTEX_QDRANT_API_KEY comes from; no value of the chart needs a lookup; the
    ServiceMonitor sends the same key."""
    ref = {"secretKeyRef": {"name": "cortex-secrets", "key": "qdrant-api-key"}}
    assert "apiKey" not in QDRANT and "readOnlyApiKey" not in QDRANT
    assert {"name": "QDRANT__SERVICE__API_KEY", "valueFrom": ref} in QDRANT["env"]
    recall = load_yaml_all("k8s/base/workers/recall.yaml")
    sts = next(r for r in recall if r and r["kind"] == "StatefulSet")
    env = {e["name"]: e for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["CORTEX_QDRANT_API_KEY"]["valueFrom"] == ref
    monitor = merged(QDRANT, QDRANT_PROD)["metrics"]["serviceMonitor"]
    assert monitor["authorization"] == {"type": "Bearer", "credentials": ref["secretKeyRef"]}


def test_prometheus_may_scrape_qdrant_through_its_network_policy() -> None:
    policy = load_yaml("k8s/base/qdrant-networkpolicy.yaml")
    scrapers = [rule for rule in policy["spec"]["ingress"]
                if any("namespaceSelector" in peer for peer in rule["from"])]
    assert scrapers and {"port": 6333} in scrapers[0]["ports"]
    assert scrapers[0]["from"][0]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "prometheus"}


def test_qdrant_keeps_its_collection_and_snapshots_on_volumes() -> None:
    assert QDRANT["persistence"]["size"] and QDRANT["snapshotPersistence"]["enabled"] is True
    assert QDRANT["containerSecurityContext"]["readOnlyRootFilesystem"] is True


# --------------------------------------------------------------------------- permissions


def test_permissions_file_is_generated_from_the_code() -> None:
    assert gen.all_permissions() == PERMISSIONS, "run python deploy/gen_manifests.py"


def test_nats_users_carry_exactly_the_permissions_file() -> None:
    accounts = NATS["config"]["merge"]["accounts"]
    users = {u["user"]: u for u in accounts[gen.ACCOUNT]["users"]}
    entries = [*PERMISSIONS["workers"].values(), *PERMISSIONS["users"].values()]
    assert set(users) == {e["user"] for e in entries}
    for entry in entries:
        perms = users[entry["user"]]["permissions"]
        assert perms["publish"]["allow"] == entry["publish"], entry["user"]
        assert perms["subscribe"]["allow"] == entry["subscribe"], entry["user"]
        assert perms.get("allow_responses", False) == entry["allow_responses"], entry["user"]
    assert accounts[gen.ACCOUNT]["jetstream"] == "enabled"
    assert NATS["config"]["merge"]["system_account"] == "SYS"


def test_every_password_comes_from_the_users_secret() -> None:
    env = NATS["container"]["env"]
    for user in gen.all_users(PERMISSIONS):
        variable = gen.password_env(user)
        assert env[variable]["valueFrom"]["secretKeyRef"] == {"name": gen.USERS_SECRET, "key": gen.secret_key(user)}
    configured = [u for a in NATS["config"]["merge"]["accounts"].values() for u in a["users"]]
    assert all(u["password"] == f"<< ${gen.password_env(u['user'])} >>" for u in configured)
    assert set(env) == {gen.password_env(u) for u in gen.all_users(PERMISSIONS)}


def test_every_source_is_a_document_its_worker_owns() -> None:
    """A composed input names a registered worker and one of that worker's buckets: the
    permissions (history reads, its consumers' info) and the reader follow the owner."""
    specs = all_specs()
    for name, spec in specs.items():
        for source in spec.sources:
            assert source.worker in specs, f"{name} composes from {source.worker}, which is not registered"
            assert source.bucket in specs[source.worker].buckets, f"{name}: {source.bucket} is not {source.worker}'s"
        assert len({s.field for s in spec.sources}) == len(spec.sources), f"{name}: two sources share a field"


def test_boot_may_read_every_source_it_composes() -> None:
    boot = all_specs()["boot"]
    # every declared briefing section's document (the registry adds them): no list of its own
    assert boot.sources == tuple(b.source(w) for w, b in briefings(all_specs().values()))
    assert set(boot.reads_as_of) == {s.bucket for s in boot.sources}
    assert set(boot.waits_on) == {s.worker for s in boot.sources}


def test_every_document_bucket_has_exactly_one_writer() -> None:
    """A worker reads only buckets some worker (or the runtime) writes, and no bucket has two
    writers: the document buckets are the registry's (``WorkerSpec.buckets``), not a list."""
    writers: dict[str, list[str]] = {}
    for name, spec in gen.worker_specs().items():
        for bucket in spec.buckets:
            writers.setdefault(bucket, []).append(name)
    for name, spec in gen.worker_specs().items():
        assert set(spec.reads) | set(spec.reads_as_of) <= {*writers, *RUNTIME_BUCKETS}, name
    assert not set(writers) & set(RUNTIME_BUCKETS)
    assert {b: len(w) for b, w in writers.items()} == dict.fromkeys(doc_buckets(), 1)


def test_a_worker_consumes_only_its_own_consumers() -> None:
    specs = gen.worker_specs()
    consumers = {name: consumer_name(name) for name, spec in specs.items() if spec.consumes}
    for name, entry in PERMISSIONS["workers"].items():
        for subject in entry["publish"]:
            tokens = subject.split(".")
            if ".MSG.NEXT." in subject or subject.startswith("$JS.ACK.") or ".RESET." in subject:
                # its durable consumer, or that consumer's scout (shared.scout: reads past a burst), or
                # boot's early triggers (workers.boot.early)
                own = {consumers[name], scout_consumer(consumers[name]), early_consumer(consumers[name])}
                assert tokens[tokens.index("CORTEX_EVENTS") + 1] in own, subject
            if subject.startswith("$KV."):
                bucket = tokens[1]
                assert bucket in specs[name].buckets or subject.endswith(f".{consumers[name]}") \
                    or (bucket == "cortex_llm_cache" and specs[name].llm), subject
        assert not any(s in (">", "$JS.API.>", "$KV.>") for s in entry["publish"] + entry["subscribe"])


def test_the_example_client_is_confined_to_one_agent() -> None:
    client = PERMISSIONS["users"]["example-client"]
    agent = gen.EXAMPLE_AGENT
    for subject in client["publish"]:
        tokens = subject.split(".")
        assert tokens[0] == "cortex" and ">" not in tokens
        assert agent in tokens and (tokens[-1] == agent or tokens[-2] == agent), subject
    assert "cortex.api.*." + agent in client["publish"]
    assert client["subscribe"] == [f"_INBOX_{agent}.>"]
    assert client["allow_responses"] is False


def test_the_example_mcp_server_is_confined_to_one_agent() -> None:
    mcp = PERMISSIONS["users"]["example-mcp"]
    agent = gen.EXAMPLE_AGENT
    assert mcp["user"] == gen.MCP_USER
    assert mcp["publish"] == [f"cortex.api.*.{agent}", f"cortex.feedback.{agent}.memory_forget",
                              f"cortex.feedback.{agent}.memory_update", f"cortex.feedback.{agent}.remember"]
    assert mcp["subscribe"] == [f"_INBOX_{agent}.>"]
    assert mcp["allow_responses"] is False


def test_partitioned_permissions_name_every_partition_consumer() -> None:
    perms = gen.all_permissions(partitions=3)
    publish = perms["workers"]["threads"]["publish"]
    for k in range(3):
        assert f"$JS.API.CONSUMER.MSG.NEXT.CORTEX_EVENTS.threads-{k}" in publish
    assert "$JS.API.CONSUMER.MSG.NEXT.CORTEX_EVENTS.threads" not in publish
    shadow = gen.all_permissions(shadow=True)["workers"]["threads"]["publish"]
    assert "$KV.cortex_shadow_threads.>" in shadow and "$KV.cortex_threads.>" not in shadow
    recall = gen.all_permissions(shadow=True)["workers"]["recall"]["subscribe"]  # its own API, never the live one
    assert "cortex.api.recall-shadow.*" in recall and "cortex.api.recall.*" not in recall
    assert "$SRV.*.cortex-recall-shadow" in recall


def test_nats_server_accepts_the_generated_config(tmp_path: Path) -> None:
    """`nats-server -t`: the chart's rendering of config.merge (unquoted variables) parses."""
    conf = tmp_path / "nats.conf"
    conf.write_text(nats_conf(NATS["config"]["merge"], {"jetstream": {"store_dir": str(tmp_path / "js")}}))
    env = {gen.password_env(u): "secret" for u in gen.all_users(PERMISSIONS)}
    result = subprocess.run([nats_server_binary(), "-t", "-c", str(conf)], env=env, capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 0, result.stdout + result.stderr
