"""The order pytest-xdist hands the test files to its workers (``--dist loadfile``; the collection's
order, as with ``--no-loadscope-reorder``, set by tests/conftest.py): longest first, so the run does
not end on one worker still in a long file while the other is idle.

xdist's own order (most tests first) put the files of few, long tests last — the fleets of
tests/e2e and tests/faults, the mypyc build of tests/workers/test_compiled.py (1-2 min of CPU
where its cache is cold, as on the CI machine) — and the run's tail was one of them. Here:
the compile first, then the files that start a fleet or many processes per test, then every
other file by its number of tests, most first (xdist's order), the many short ones filling the
gaps at the end. Only the order changes: each file still runs whole on one worker, its tests in
their own order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

# started first: the wheel build of the compiled regex cores (its first test)
FIRST = ("tests/workers/test_compiled.py",)
# a fleet of `cortex worker` processes, a cluster or a gateway per test
LONG_FOLDERS = ("tests/e2e/", "tests/faults/", "tests/gateway/")
# other files of a few long tests (≥ 90 s of test time each in a full run at load ~18, ci25)
LONG_FILES = (
    "tests/workers/conversation/test_conversation_leading.py",
    "tests/workers/recall/test_recall_index.py",
    "tests/security/test_nats_auth.py",
    "tests/cli/test_cli.py",
    "tests/test_packaging.py",
    "tests/shared/test_consume_loop.py",
)


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0].replace("\\", "/")


def rank(path: str) -> int:
    if path in FIRST:
        return 0
    if path.startswith(LONG_FOLDERS) or path in LONG_FILES:
        return 1
    return 2


def order(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    files = [_file(item) for item in items]
    count = Counter(files)
    first = {path: i for i, path in reversed(list(enumerate(files)))}
    keyed = sorted(range(len(items)), key=lambda i: (rank(files[i]), -count[files[i]], first[files[i]], i))
    return [items[i] for i in keyed]
