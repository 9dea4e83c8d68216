"""A stable digest of a worker's pattern set: the regex and keyword tables its cores match with.

``producer_id`` hashes it beside the settings, so documents made with other patterns (a
shadow worker trying new ones) carry another ``producer``. A worker names the packages or
modules that hold its tables (``WorkerSpec.patterns``); the digest covers the module-level
values of each of their modules that are tables or their parts:

* compiled regexes (source and flags) and strings — a value holding neither (a limit, a
  flag) is no table, though numbers, booleans and None inside a table count;
* tuples, frozensets, dicts of those, and dataclass or named-tuple instances holding them
  (a language pack) — sets are sorted and dicts keyed, so the digest does not depend on
  ``PYTHONHASHSEED``;
* not functions, classes, modules, lists or sets (mutable module state: caches), nor any
  other object (an encoder, a logger): a value with such a part is left out whole.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import pkgutil
import re
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import msgspec

_SCALARS = (str, int, float, bool, type(None))


class _Opaque(Exception):
    """A value that is no table (see the module docstring)."""


def canonical(value: Any) -> Any:
    """``value`` as plain JSON-able data, the same in every process; raises ``_Opaque``."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, re.Pattern):
        return {"re": value.pattern, "flags": int(value.flags)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"dataclass": type(value).__qualname__,
                "fields": {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, tuple):  # named tuples too (their fields in order)
        return [canonical(item) for item in value]
    if isinstance(value, frozenset):
        return sorted((canonical(item) for item in value), key=msgspec.json.encode)
    if isinstance(value, dict):
        return sorted(([canonical(k), canonical(v)] for k, v in value.items()), key=msgspec.json.encode)
    raise _Opaque(type(value).__name__)


def _modules(names: Iterable[str]) -> list[ModuleType]:
    modules: dict[str, ModuleType] = {}
    for name in names:
        module = importlib.import_module(name)
        modules[module.__name__] = module
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), prefix=f"{module.__name__}."):
            if not info.name.rsplit(".", 1)[-1].startswith("test"):
                modules[info.name] = importlib.import_module(info.name)
    return [modules[name] for name in sorted(modules)]


def tables(module: ModuleType) -> dict[str, Any]:
    """The module's tables by name, as ``canonical`` data (imported ones too: a table a
    module uses is part of its patterns wherever it is defined)."""
    found: dict[str, Any] = {}
    for name, value in vars(module).items():
        if name.startswith("__") or callable(value) or isinstance(value, ModuleType):
            continue
        try:
            table = canonical(value)
        except _Opaque:
            continue
        if _has_text(table):  # a limit or a flag alone is no table
            found[name] = table
    return found


def _has_text(data: Any) -> bool:
    if isinstance(data, str):
        return True
    if isinstance(data, list):
        return any(_has_text(item) for item in data)
    if isinstance(data, dict):
        return any(_has_text(item) for item in data.values())
    return False


@functools.lru_cache(maxsize=64)
def patterns_digest(names: tuple[str, ...]) -> str:
    """The sha256 of the tables of every module in the named packages or modules (imported
    once per process; each worker's host and a replay ask again)."""
    data = {m.__name__: tables(m) for m in _modules(names)}
    return hashlib.sha256(msgspec.json.encode(data, order="sorted")).hexdigest()
