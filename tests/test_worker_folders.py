"""No worker imports another worker's folder (issue 42).

A worker's folder is its own: what two workers share lives in ``shared/`` (infrastructure),
``workers/conversation/`` (the language machinery every extractor uses) or a module such as
``workers/render.py``. The workers are the registry's (``workers.registry``); the other
folders under ``workers/`` are tools that put workers together (``cli``, ``bench``,
``evals``, ``demo``, ``mcp``) and may import any of them. Read from the import graph of
``tests/test_import_graph.py`` (module level and lazy imports; ``TYPE_CHECKING`` left out).

No edge is allowed: the boot worker's went with the sections (each made in its worker's
folder, ``shared.briefing``), a thread's summary as its readers take it apart is
``workers/summaries.py``, an operation's markers are ``workers/render.py``'s, and the trace
signal packs live with the other language packs in ``workers/conversation``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path

from workers.registry import all_specs

_spec = importlib.util.spec_from_file_location("import_graph_check", Path(__file__).with_name("test_import_graph.py"))
assert _spec is not None and _spec.loader is not None
_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_graph)
import_graph = _graph.import_graph

# (importing module, imported module) → why it is still there
ALLOWED: Mapping[tuple[str, str], str] = {}
LIBRARIES = frozenset({"conversation"})  # shared language machinery, not a worker


def folder_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "workers" and len(parts) > 2 else None


def cross_worker_edges(graph: Mapping[str, frozenset[str]], workers: set[str]) -> set[tuple[str, str]]:
    """Imports from a worker's folder into another worker's folder."""
    return {(module, imported) for module, deps in graph.items() for imported in deps
            if (a := folder_of(module)) in workers and (b := folder_of(imported)) in workers and a != b}


def test_no_worker_imports_another_workers_folder() -> None:
    workers = set(all_specs()) - LIBRARIES
    edges = cross_worker_edges(import_graph(), workers)
    assert edges - set(ALLOWED) == set(), "move what two workers share to shared/ or a workers/ module"
    assert set(ALLOWED) - edges == set(), "an allowed edge is gone: take it off the list"


def test_the_check_sees_an_edge_between_two_workers_and_not_into_a_library_or_from_a_tool() -> None:
    graph = {"workers.threads.core": frozenset({"workers.decisions.core", "workers.conversation.patterns"}),
             "workers.cli.query": frozenset({"workers.threads.core"}), "workers.decisions.core": frozenset()}
    assert cross_worker_edges(graph, {"threads", "decisions"}) == {("workers.threads.core", "workers.decisions.core")}
