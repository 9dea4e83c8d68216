"""``producer`` covers the worker's pattern tables (issue 20): a shadow worker with other
patterns is another producer; the same patterns give the same id in every process."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from shared.config import load_settings
from shared.fingerprint import canonical, patterns_digest
from shared.runtime import WorkerSpec, producer_id
from workers.conversation import languages
from workers.registry import all_specs
from workers.threads import topics

VERSION = "0.1.0"
PRODUCER = re.compile(r"[a-z]+@[^+@]+\+[0-9a-f]{8}")  # CONTRACT.md: <worker>@<version>+<config-hash>


@pytest.fixture
def fresh_digests() -> Iterator[None]:
    patterns_digest.cache_clear()
    yield
    patterns_digest.cache_clear()


def ids() -> dict[str, str]:
    settings = load_settings({})
    return {name: producer_id(spec, settings, VERSION) for name, spec in sorted(all_specs().items())}


def test_ids_keep_the_contract_format_and_the_pattern_workers_name_their_tables() -> None:
    for name, producer in ids().items():
        assert PRODUCER.fullmatch(producer), producer
        assert producer.startswith(f"{name}@{VERSION}+")
    specs = all_specs()
    for name in ("threads", "decisions", "knowledge", "traces", "recall", "narrative"):
        assert specs[name].patterns, f"{name} matches patterns: WorkerSpec.patterns names their modules"


def test_changing_a_pattern_changes_the_id_of_the_workers_that_use_it(
    monkeypatch: pytest.MonkeyPatch, fresh_digests: None
) -> None:
    before = ids()
    en = languages.PACKS["en"]
    changed = dataclasses.replace(en, decision=(*en.decision, r"\bwe settled on\b"))
    monkeypatch.setitem(languages.PACKS, "en", changed)
    patterns_digest.cache_clear()
    after = ids()
    moved = {name for name in before if before[name] != after[name]}
    # every worker whose tables include the conversation packs, and no other
    assert moved == {name for name, spec in all_specs().items() if "workers.conversation" in spec.patterns}
    assert {"threads", "decisions"} <= moved


def test_a_keyword_table_counts_and_a_limit_alone_does_not(monkeypatch: pytest.MonkeyPatch,
                                                           fresh_digests: None) -> None:
    spec = WorkerSpec(name="example", families=(), patterns=("workers.threads.topics",))
    settings = load_settings({})
    first = producer_id(spec, settings, VERSION)
    monkeypatch.setattr(topics, "MAX_SETTLED", topics.MAX_SETTLED + 1)  # a cap: the version's business
    patterns_digest.cache_clear()
    assert producer_id(spec, settings, VERSION) == first
    monkeypatch.setattr(topics, "LINKERS", frozenset({*topics.LINKERS, "betreffs"}))
    patterns_digest.cache_clear()
    assert producer_id(spec, settings, VERSION) != first


def test_a_worker_without_patterns_keeps_the_settings_hash_alone() -> None:
    settings = load_settings({})
    bare = WorkerSpec(name="example", families=())
    assert producer_id(bare, settings, VERSION) == producer_id(
        dataclasses.replace(bare, patterns=()), settings, VERSION)


def test_a_model_changes_the_ids_of_the_workers_that_may_ask_one_and_no_other() -> None:
    """Whether a model read the events is a fact of the process that made a document, which a
    briefing's process (with no key of its own) must be able to tell: a derivation from the
    events alone stands in for such a document only without one (``shared.runtime.derivation``).
    Without a model the ids are what they always were."""
    plain = ids()
    with_model = {name: producer_id(spec, load_settings({"ANTHROPIC_API_KEY": "sk-test"}), VERSION)
                  for name, spec in sorted(all_specs().items())}
    moved = {name for name in plain if plain[name] != with_model[name]}
    assert moved == {name for name, spec in all_specs().items() if spec.llm}
    assert {"knowledge", "traces"} <= moved


def test_sets_and_dicts_are_canonical() -> None:
    assert canonical(frozenset({"b", "a", "c"})) == ["a", "b", "c"]
    assert canonical({"b": 1, "a": re.compile("x", re.I)}) == [["a", {"re": "x", "flags": int(re.I | re.U)}],
                                                               ["b", 1]]


@pytest.mark.timeout(300)
def test_the_same_patterns_give_the_same_ids_in_every_process() -> None:
    """Sets of strings iterate in another order under another PYTHONHASHSEED."""
    script = ("import json\n"
              "from shared.config import load_settings\n"
              "from shared.runtime import producer_id\n"
              "from workers.registry import all_specs\n"
              f"print(json.dumps({{n: producer_id(s, load_settings({{}}), {VERSION!r})\n"
              "                   for n, s in all_specs().items()}))")
    seen = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True,
                             timeout=240)
        seen.append(json.loads(out.stdout))
    assert seen[0] == seen[1] == seen[2] == ids()
