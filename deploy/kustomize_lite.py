"""A minimal kustomize, for CI machines without kubectl: exactly the features k8s/ uses.

Supported kustomization fields: ``resources`` (files and directories), ``namespace``,
``labels`` (``pairs``, ``includeTemplates``; not ``includeSelectors``), ``images``
(``newName`` / ``newTag``), ``replicas`` and ``patches`` (strategic-merge patches from
``path``, optionally with a ``target`` of kind and name). Anything else is an error, so a
manifest can never use a feature this renderer would silently ignore. Where kubectl is
installed, tests/ops compare this renderer's output with ``kubectl kustomize``.

    python deploy/kustomize_lite.py k8s/overlays/prod > prod.yaml
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

Resource = dict[str, Any]

SUPPORTED = frozenset({"apiVersion", "kind", "resources", "namespace", "labels", "images", "replicas", "patches"})
# Strategic merge: lists merged item by item on a key (Kubernetes' patchMergeKey); others replace.
MERGE_KEYS = {"containers": "name", "initContainers": "name", "volumes": "name", "env": "name",
              "volumeMounts": "mountPath", "ports": "containerPort", "imagePullSecrets": "name"}
# Kinds whose pod template is at spec.template (labels includeTemplates, images).
_TEMPLATED = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"})
_SCALABLE = frozenset({"Deployment", "StatefulSet", "ReplicaSet"})


class KustomizeError(ValueError):
    """The kustomization uses something this renderer does not support, or is wrong."""


def _load_docs(path: Path) -> list[Resource]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _kustomization(directory: Path) -> dict[str, Any]:
    for name in ("kustomization.yaml", "kustomization.yml", "Kustomization"):
        if (directory / name).is_file():
            data = yaml.safe_load((directory / name).read_text()) or {}
            unknown = set(data) - SUPPORTED
            if unknown:
                raise KustomizeError(f"{directory}: unsupported kustomization fields {sorted(unknown)}")
            return dict(data)
    raise KustomizeError(f"{directory}: no kustomization.yaml")


def _inside(directory: Path, path: Path) -> None:
    """kustomize's default load restrictor: files must live under the kustomization root."""
    if not path.resolve().is_relative_to(directory.resolve()):
        raise KustomizeError(f"{path}: outside the kustomization root {directory}")


def strategic_merge(base: Any, patch: Any, field: str | None = None) -> Any:
    """Kubernetes strategic merge for the cases the manifests use: maps merge recursively,
    ``null`` deletes, keyed lists merge per item, other lists are replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        if "$patch" in patch:
            raise KustomizeError("$patch directives are not supported")
        merged = dict(base)
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            elif key in merged:
                merged[key] = strategic_merge(merged[key], value, key)
            else:
                merged[key] = copy.deepcopy(value)
        return merged
    if isinstance(base, list) and isinstance(patch, list) and field in MERGE_KEYS:
        key = MERGE_KEYS[field]
        merged_list = [copy.deepcopy(item) for item in base]
        for item in patch:
            index = next((i for i, old in enumerate(merged_list) if old.get(key) == item.get(key)), None)
            if index is None:
                merged_list.append(copy.deepcopy(item))
            else:
                merged_list[index] = strategic_merge(merged_list[index], item)
        return merged_list
    return copy.deepcopy(patch)


def _matches(resource: Resource, kind: str | None, name: str | None) -> bool:
    return (kind is None or resource.get("kind") == kind) and (name is None or resource["metadata"]["name"] == name)


def _apply_patches(directory: Path, resources: list[Resource], patches: list[dict[str, Any]]) -> list[Resource]:
    for entry in patches:
        if set(entry) - {"path", "target"}:
            raise KustomizeError(f"{directory}: only path/target patches are supported, got {sorted(entry)}")
        path = directory / entry["path"]
        _inside(directory, path)
        target = entry.get("target") or {}
        if set(target) - {"kind", "name"}:
            raise KustomizeError(f"{directory}: patch targets by kind and name only, got {sorted(target)}")
        for patch in _load_docs(path):
            kind = target.get("kind", patch.get("kind"))
            name = target.get("name", patch.get("metadata", {}).get("name"))
            hits = [i for i, r in enumerate(resources) if _matches(r, kind, name)]
            if not hits:
                raise KustomizeError(f"{path}: no resource {kind}/{name} to patch")
            body = {k: v for k, v in patch.items() if k not in ("apiVersion", "kind")}
            body["metadata"] = {k: v for k, v in body.get("metadata", {}).items() if k != "name"}
            for i in hits:
                resources[i] = strategic_merge(resources[i], body)
    return resources


def _pod_specs(resource: Resource) -> list[dict[str, Any]]:
    if resource.get("kind") in _TEMPLATED:
        return [resource["spec"]["template"]["spec"]]
    if resource.get("kind") == "CronJob":
        return [resource["spec"]["jobTemplate"]["spec"]["template"]["spec"]]
    return []


def _apply_labels(resources: list[Resource], entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        if entry.get("includeSelectors"):
            raise KustomizeError("labels.includeSelectors is not supported (selectors are immutable)")
        pairs = entry.get("pairs") or {}
        for resource in resources:
            resource["metadata"].setdefault("labels", {}).update(pairs)
            if entry.get("includeTemplates") and resource.get("kind") in _TEMPLATED:
                template = resource["spec"]["template"].setdefault("metadata", {})
                template.setdefault("labels", {}).update(pairs)


def _image_name(image: str) -> str:
    if "@" in image:
        return image.split("@", 1)[0]
    head, _, tail = image.rpartition(":")
    return head if head and "/" not in tail else image


def _apply_images(resources: list[Resource], images: list[dict[str, Any]]) -> None:
    for rule in images:
        if set(rule) - {"name", "newName", "newTag"}:
            raise KustomizeError(f"images: only name/newName/newTag are supported, got {sorted(rule)}")
        for spec in (s for r in resources for s in _pod_specs(r)):
            for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
                current = container.get("image", "")
                if _image_name(current) != rule["name"]:
                    continue
                name = rule.get("newName", rule["name"])
                tag = rule.get("newTag")
                if tag is None and current != _image_name(current):
                    tag = current[len(_image_name(current)) + 1:]
                container["image"] = f"{name}:{tag}" if tag else name


def _apply_replicas(resources: list[Resource], replicas: list[dict[str, Any]]) -> None:
    for rule in replicas:
        hits = [r for r in resources if r.get("kind") in _SCALABLE and r["metadata"]["name"] == rule["name"]]
        if not hits:
            raise KustomizeError(f"replicas: no workload named {rule['name']}")
        for resource in hits:
            resource["spec"]["replicas"] = int(rule["count"])


def build(directory: str | Path) -> list[Resource]:
    """The resources of the kustomization in ``directory``, transformed like kustomize does."""
    directory = Path(directory)
    spec = _kustomization(directory)
    resources: list[Resource] = []
    for entry in spec.get("resources", []):
        path = directory / entry
        if path.is_dir():
            resources += build(path)
        else:
            _inside(directory, path)
            resources += _load_docs(path)
    seen = set()
    for resource in resources:
        ident = (resource.get("kind"), resource["metadata"].get("namespace"), resource["metadata"]["name"])
        if ident in seen:
            raise KustomizeError(f"{directory}: duplicate resource {ident}")
        seen.add(ident)
    resources = _apply_patches(directory, resources, spec.get("patches", []))
    if "namespace" in spec:
        for resource in resources:
            resource["metadata"]["namespace"] = spec["namespace"]
    _apply_labels(resources, spec.get("labels", []))
    _apply_images(resources, spec.get("images", []))
    _apply_replicas(resources, spec.get("replicas", []))
    return resources


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: kustomize_lite.py DIR", file=sys.stderr)
        return 2
    print(yaml.safe_dump_all(build(argv[0]), sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
