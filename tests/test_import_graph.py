"""No import cycles among the project's modules (shared/, workers/, schemas/).

Read statically from the source (``ast``: fast, and the same on every run): an edge for
every import of a project module — at module level, and inside functions too, because a
lazy import defers its cost (``cortex --help`` stays fast, grpc and numpy load only where
used) but must never hide a cycle. Imports under ``if TYPE_CHECKING:`` never run and are
left out. ``from package import name`` is an edge to the submodule ``package.name`` when
there is one, else to the package.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("shared", "workers", "schemas")


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, mods: set[str]) -> Iterator[str]:
    """The project modules an import statement loads."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name in mods)
        return
    base = node.module or ""
    if node.level:  # relative: from the module's package, one level up per extra dot
        package = module.split(".") if is_package else module.split(".")[:-1]
        base = ".".join([*package[: len(package) - node.level + 1], *([node.module] if node.module else [])])
    for alias in node.names:
        if f"{base}.{alias.name}" in mods:
            yield f"{base}.{alias.name}"
        elif base in mods:
            yield base


def _runs(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node of the module but the bodies of ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack += node.orelse
            continue
        yield node
        stack += ast.iter_child_nodes(node)


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """``{module: the project modules it imports}``."""
    mods = modules()
    graph = {}
    for module, path in mods.items():
        edges = {name for node in _runs(ast.parse(path.read_text())) if isinstance(node, ast.Import | ast.ImportFrom)
                 for name in _imported(node, module, path.name == "__init__.py", set(mods))}
        graph[module] = frozenset(edges - {module})
    return graph


def cycles(graph: Mapping[str, Collection[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_no_module_imports_itself_back() -> None:
    found = cycles(import_graph())
    assert not found, sorted(sorted(c) for c in found)


def test_the_check_sees_a_cycle_through_a_lazy_import_and_not_through_type_checking() -> None:
    """The reader itself: a function-level import closes a cycle; TYPE_CHECKING does not."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}
    graph = import_graph()
    assert "workers.cli.query" in graph["workers.cli"]  # imported inside build_parser
    assert "workers.cli.base" in graph["workers.cli.query"]  # `from workers.cli.base import CliError`
    assert "workers.recall.store_edge" in graph["workers.recall.store"]  # inside open_store
    assert "shared.config" not in graph["shared.codec"]  # only under `if TYPE_CHECKING:`
