"""docs/contract-extensions.md stays true: everything Cortex adds to the contract is listed,
and everything listed is in the code.

The names come from code objects: the settings loader (``settings_reference``), the workers'
registry (``WorkerSpec.serves``), ``shared.names``, the schema Structs and the CLI parser.
The contract is ``CONTRACT.md`` beside the checkout (``../shared/CONTRACT.md``; for a git
worktree one level further up). A clean clone has none: the checks that need it skip, the
no-stale-rows checks run everywhere.
"""

from __future__ import annotations

import argparse
import re
import typing
from collections.abc import Iterator
from functools import cache
from typing import Any

import msgspec
import pytest
from ops_support import ROOT

from schemas import api as api_schemas
from schemas import docs as doc_schemas
from schemas import events as event_schemas
from shared.config import load_settings, settings_reference
from shared.migrate import BACKUP_STREAM, ORIGINS_METADATA, SOURCES_METADATA
from shared.names import (
    BUCKET_FORGETS,
    DLQ_STREAM,
    EVENTS_STREAM,
    KINDS,
    LAYOUT_METADATA,
    NOTES_STREAM,
    OPENCLAW_FAMILY,
    api_subject,
    early_consumer,
    feedback_subject,
    memory_collection,
    scout_consumer,
    service_name,
    shadow_service,
)
from shared.provision import MIGRATING_METADATA
from workers.registry import all_buckets

DOC = ROOT / "docs" / "contract-extensions.md"
SECTIONS = {"env": "## Environment variables", "nats": "## Subjects, APIs, streams and buckets",
            "fields": "## Payload and document fields", "cli": "## Command line"}

# The contract names these by its rule "every knob of the plugin design's config schema as
# CORTEX_<SECTION>_<KNOB>" (seeds/000, section 6: threadTracker, decisionTracker, bootContext,
# preCompaction, narrative, patterns.language) rather than one by one.
DESIGN_KNOBS = frozenset({
    "CORTEX_THREADS_ENABLED", "CORTEX_THREADS_PRUNE_DAYS", "CORTEX_THREADS_MAX_THREADS",
    "CORTEX_DECISIONS_ENABLED", "CORTEX_DECISIONS_MAX_DECISIONS", "CORTEX_DECISIONS_DEDUPE_WINDOW_HOURS",
    "CORTEX_BOOT_ENABLED", "CORTEX_BOOT_MAX_CHARS", "CORTEX_BOOT_ON_SESSION_START", "CORTEX_BOOT_MAX_THREADS_IN_BOOT",
    "CORTEX_BOOT_MAX_DECISIONS_IN_BOOT", "CORTEX_BOOT_DECISION_RECENCY_DAYS",
    "CORTEX_PRECOMPACTION_ENABLED", "CORTEX_PRECOMPACTION_MAX_SNAPSHOT_MESSAGES",
    "CORTEX_NARRATIVE_ENABLED", "CORTEX_PATTERNS_LANGUAGE",
})

def _row(service: str) -> str:
    """The line of the contract's request/reply table for ``service``: request, then reply."""
    return rf"`cortex\.api\.{service}\.<agent>`.*"


# Contract Structs and where the contract spells out their fields: a regular expression that
# ends at the opening brace of the block (the first match's block; ``nth``: the nth brace
# block of the line the expression matches, for the request/reply table).
CONTRACT_BLOCKS: dict[str, tuple[str, int]] = {
    "MessageEvent": (r"\bMessageEvent\s*\{", 0), "SessionEvent": (r"\bSessionEvent\s*\{", 0),
    "CompactionEvent": (r"\bCompactionEvent\s*\{", 0), "CompactionMessage": (r"messages: \[\s*\{", 0),
    "NoteEvent": (r"\bNoteEvent\s*\{", 0), "FeedbackEvent": (r"\bFeedbackEvent\s*\{", 0),
    "RememberValue": (r"value = \{", 0), "ToolEvent": (r"\bToolEvent\s*\{", 0), "RunEvent": (r"\bRunEvent\s*\{", 0),
    "Integrity": (r"integrity: \{", 0), "ThreadsDoc": (r"\bThreadsDoc\s*\{", 0), "Thread": (r"\bThread\s*\{", 0),
    "DecisionsDoc": (r"\bDecisionsDoc\s*\{", 0), "Decision": (r"\bDecision\s*\{", 0),
    "CommitmentsDoc": (r"\bCommitmentsDoc\s*\{", 0), "Commitment": (r"\bCommitment\s*\{", 0),
    "SnapshotDoc": (r"\bSnapshotDoc\s*\{", 0), "NarrativeDoc": (r"\bNarrativeDoc\s*\{", 0),
    "BootDoc": (r"\bBootDoc\s*\{", 0), "KnowledgeDoc": (r"\bKnowledgeDoc\s*\{", 0),
    "ChannelsDoc": (r"\bChannelsDoc\s*\{", 0), "ChannelState": (r"channels: \[\s*\{", 0),
    "Entity": (r"Entity\s*`\{", 0), "Fact": (r"Fact\s*`\{", 0),
    "TraceDoc": (r"TraceDoc `\{", 0), "Finding": (r"findings: \[\s*\{", 0),
    "OperationsDoc": (r"OperationsDoc `\{", 0), "Operation": (r"operations: \[\s*\{", 0),
    "BootRequest": (_row("boot"), 0), "RecallRequest": (_row("recall"), 0), "RecallReply": (_row("recall"), 1),
    "RecalledMemory": (r"memories: \[\s*\{", 0),
    "ThreadsRequest": (_row("threads"), 0), "ThreadsReply": (_row("threads"), 1),
    "DecisionsRequest": (_row("decisions"), 0), "DecisionsReply": (_row("decisions"), 1),
    "CommitmentsRequest": (_row("commitments"), 0), "CommitmentsReply": (_row("commitments"), 1),
    "SearchRequest": (_row("search"), 0), "SearchReply": (_row("search"), 1),
    "SearchHit": (r"hits: \[\s*\{", 0), "ErrorReply": (r"error reply is `\{", 0),
}


# --------------------------------------------------------------------------- the two texts


def find_contract() -> str | None:
    """CONTRACT.md beside this checkout, or beside the folder holding it (a git worktree)."""
    for folder in (ROOT.parent, ROOT.parent.parent):
        path = folder / "shared" / "CONTRACT.md"
        if path.is_file():
            return path.read_text()
    return None


CONTRACT = find_contract()
needs_contract = pytest.mark.skipif(CONTRACT is None, reason="no CONTRACT.md beside this checkout (a clean clone)")


def rows(text: str, section: str) -> list[str]:
    """The first cells (`name`) of the table rows under ``section`` (up to the next ``## ``)."""
    body = text.split(section + "\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", body, flags=re.M)


@cache
def listed() -> dict[str, list[str]]:
    text = DOC.read_text()
    return {kind: rows(text, heading) for kind, heading in SECTIONS.items()}


def contract_names(text: str) -> set[str]:
    """Every backticked name the contract uses, and each word-like token in them."""
    spans = re.findall(r"`([^`\n]+)`", text)
    return set(spans) | {tok for s in spans for tok in re.findall(r"[\w.<>$-]+", s)}


# --------------------------------------------------------------------------- what the code has


def settings_names() -> list[str]:
    from gen_settings_doc import own_sections

    return [name for name, _, _ in settings_reference(own_sections())]


def served_apis() -> set[str]:
    from workers.registry import all_specs

    return {service for spec in all_specs().values() for service in spec.serves}


def nats_names() -> set[str]:
    """Subjects, APIs, streams, buckets and metadata keys as the code builds them."""
    return ({api_subject("cortex", s, "<agent>") for s in served_apis()}
            | {feedback_subject("cortex", "<agent>", kind) for kind in KINDS["feedback"]}
            | {f"cortex.{OPENCLAW_FAMILY}.<slot>.<agent>.<type>", service_name("<worker>")}
            | {scout_consumer("<consumer>"), early_consumer("<consumer>")}
            | {api_subject("cortex", shadow_service("<service>"), "<agent>"), memory_collection(shadow=True)}
            | {*all_buckets(), BUCKET_FORGETS, EVENTS_STREAM, NOTES_STREAM, DLQ_STREAM, BACKUP_STREAM}
            | {LAYOUT_METADATA, MIGRATING_METADATA, SOURCES_METADATA, ORIGINS_METADATA})


def structs() -> dict[str, type[msgspec.Struct]]:
    """The contract's Structs (schemas/) and those stored where the contract names the place
    but not the shape: a memory point's payload, a forget's status."""
    from shared.forget import ForgetRecord
    from workers.recall.models import Memory

    found: dict[str, type[msgspec.Struct]] = {"Memory": Memory, "ForgetRecord": ForgetRecord}
    for module in (event_schemas, doc_schemas, api_schemas):
        found.update({name: obj for name, obj in vars(module).items() if isinstance(obj, type)
                      and issubclass(obj, msgspec.Struct) and obj.__module__ == module.__name__})
    return found


def fields(cls: type[msgspec.Struct]) -> dict[str, msgspec.inspect.Field]:
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    return {f.encode_name: f for f in info.fields}


def literal_values(cls: type[msgspec.Struct], field: str) -> set[str]:
    hint = typing.get_type_hints(cls, include_extras=True)[field]
    values: set[str] = set()

    def walk(t: Any) -> None:
        if typing.get_origin(t) is typing.Literal:
            values.update(typing.get_args(t))
        for arg in typing.get_args(t):
            walk(arg)

    walk(hint)
    return values


def cli_entries() -> set[str]:
    """``cortex <command path>`` of every command and ``cortex <command path> --flag`` of each
    of its options (``cortex --version`` for the program's own)."""
    from workers.cli import build_parser

    out: set[str] = set()

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            out.add(path)  # a command (a group such as `cortex memory` is only its commands)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif not isinstance(action, argparse._HelpAction):
                out.update(f"{path} {opt}" for opt in action.option_strings if opt.startswith("--"))

    walk(build_parser(), "cortex")
    return out


# --------------------------------------------------------------------------- the contract's CLI


def contract_cli(text: str) -> set[str]:
    """The commands of the contract's CLI table and the flags anywhere on their rows
    (``cortex mcp``'s ``--http`` is in its description)."""
    section = text.split("## CLI", 1)[1].split("\n## ", 1)[0]
    out: set[str] = set()
    for line in section.splitlines():
        cell = re.match(r"\| `(cortex [^`]+)`", line)
        if not cell:
            continue
        path = " ".join(cell.group(1).split()[:2])  # the contract's commands are one word
        out.add(path)
        out.update(f"{path} {flag}" for flag in re.findall(r"--[a-z][a-z-]*", line))
    return out


def contract_blocks(text: str) -> Iterator[tuple[str, str]]:
    """(Struct, the text of the braces the contract gives its fields in)."""
    for name, (pattern, nth) in CONTRACT_BLOCKS.items():
        found = re.search(pattern, text)
        assert found, f"the contract no longer spells out {name} where this test looks ({pattern})"
        start = found.end() - 1 if found.group(0).endswith("{") else found.start()
        for _ in range(nth + 1):
            start = text.index("{", start)
            depth, end = 0, start
            for end in range(start, len(text)):
                depth += {"{": 1, "}": -1}.get(text[end], 0)
                if depth == 0:
                    break
            block, start = text[start:end + 1], end + 1
        yield name, block


# --------------------------------------------------------------------------- (a) the environment


@needs_contract
def test_every_variable_the_settings_know_is_in_the_contract_or_the_list() -> None:
    assert CONTRACT is not None
    named = set(re.findall(r"\b(?:CORTEX_[A-Z0-9_]+|ANTHROPIC_API_KEY)\b", CONTRACT)) | DESIGN_KNOBS
    missing = [n for n in settings_names() if n not in named and n not in listed()["env"]]
    assert not missing, f"add them to docs/contract-extensions.md (Environment variables): {missing}"


LOADER_READS = frozenset({"HOSTNAME", "NATS_URL", "NATS_CONTEXT"})  # read by the loader, not as settings


def test_every_listed_variable_is_read() -> None:
    known = set(settings_names())
    stale = [n for n in listed()["env"] if n not in known and n not in LOADER_READS]
    assert not stale, f"listed but no setting reads them: {stale}"
    if "HOSTNAME" in listed()["env"]:  # read by the loader itself, for CORTEX_PARTITION=ordinal
        env = {"CORTEX_PARTITIONS": "4", "CORTEX_PARTITION": "ordinal", "HOSTNAME": "cortex-recall-5"}
        assert load_settings(env).partition == "1"
    if "NATS_URL" in listed()["env"]:
        assert load_settings({"NATS_URL": "nats://n1:4222"}).nats_url == "nats://n1:4222"
    if "NATS_CONTEXT" in listed()["env"]:  # a context that does not exist names no server
        assert load_settings({"NATS_CONTEXT": "none", "XDG_CONFIG_HOME": "/nonexistent"}).nats_url is None


@needs_contract
def test_the_listed_variables_are_not_in_the_contract() -> None:
    assert CONTRACT is not None
    named = set(re.findall(r"\b(?:CORTEX_[A-Z0-9_]+|ANTHROPIC_API_KEY)\b", CONTRACT)) | DESIGN_KNOBS
    assert not named & set(listed()["env"])


# --------------------------------------------------------------------------- (b) subjects, APIs, buckets


@needs_contract
def test_every_api_bucket_and_feedback_kind_is_in_the_contract_or_the_list() -> None:
    assert CONTRACT is not None
    named, extra = contract_names(CONTRACT), set(listed()["nats"])
    apis = [a for a in (api_subject("cortex", s, "<agent>") for s in sorted(served_apis()))
            if a not in named and a not in extra]
    assert not apis, f"add the API to docs/contract-extensions.md: {apis}"
    # the bucket tables' rows (an MCP tool shares a bucket's name: cortex_recall, cortex_boot)
    in_tables = set(re.findall(r"^\| `(cortex_[a-z_]+)` \|", CONTRACT, flags=re.M))
    buckets = [b for b in (*all_buckets(), BUCKET_FORGETS) if b not in in_tables and b not in extra]
    assert not buckets, f"add the bucket to docs/contract-extensions.md: {buckets}"
    kinds_text = CONTRACT.split("FeedbackEvent kinds:", 1)[1].split("\n\n", 1)[0]
    kinds = [k for k in sorted(KINDS["feedback"])
             if f"`{k}`" not in kinds_text and feedback_subject("cortex", "<agent>", k) not in extra]
    assert not kinds, f"add the FeedbackEvent kind to docs/contract-extensions.md: {kinds}"


def test_every_listed_subject_api_stream_and_bucket_exists() -> None:
    stale = [n for n in listed()["nats"] if n not in nats_names()]
    assert not stale, f"listed but not in the code: {stale}"


def test_the_served_apis_come_from_the_registry() -> None:
    assert {"boot", "recall", "consolidate", "threads", "status"} <= served_apis()


# --------------------------------------------------------------------------- payload and document fields


@needs_contract
def test_every_field_of_a_contract_struct_is_in_the_contract_or_the_list() -> None:
    assert CONTRACT is not None
    have, extra = structs(), set(listed()["fields"])
    missing = []
    for name, block in contract_blocks(CONTRACT):
        words = set(re.findall(r"\w+", block))
        missing += [f"{name}.{f}" for f in fields(have[name]) if f not in words and f"{name}.{f}" not in extra]
    assert not missing, f"add them to docs/contract-extensions.md (Payload and document fields): {missing}"


def test_every_listed_field_exists() -> None:
    have = structs()
    for row in listed()["fields"]:
        name, _, rest = row.partition(".")
        field, _, value = rest.partition(" = ")
        assert name in have, f"{row}: no Struct {name}"
        if field:
            assert field in fields(have[name]), f"{row}: {name} has no field {field}"
        if value:
            values = literal_values(have[name], fields(have[name])[field].name)
            assert not values or value in values, f"{row}: {value} is not one of {sorted(values)}"


# --------------------------------------------------------------------------- the command line


def _covered(entry: str, extra: set[str], contract: set[str]) -> bool:
    """Listed, or part of a command the contract does not have and the list does (a whole
    new command's options are its own business), or ``cortex * --flag`` (on every command)."""
    if entry in contract or entry in extra:
        return True
    if entry.rsplit(" ", 1)[-1].startswith("--") and f"cortex * {entry.rsplit(' ', 1)[-1]}" in extra:
        return True
    words = entry.split()
    return any(" ".join(words[:k]) in extra and " ".join(words[:k]) not in contract for k in range(2, len(words)))


@needs_contract
def test_every_command_and_flag_is_in_the_contract_or_the_list() -> None:
    assert CONTRACT is not None
    contract, extra = contract_cli(CONTRACT), set(listed()["cli"])
    assert {"cortex up --workers", "cortex mcp --http", "cortex forget"} <= contract
    missing = sorted(e for e in cli_entries() if not _covered(e, extra, contract))
    assert not missing, f"add them to docs/contract-extensions.md (Command line): {missing}"


def test_every_listed_command_and_flag_exists() -> None:
    entries = cli_entries()
    stale = []
    for row in listed()["cli"]:
        if row.startswith("cortex * --"):
            ok = any(e.endswith(" " + row.rsplit(" ", 1)[-1]) for e in entries)
        else:
            ok = row in entries
        if not ok:
            stale.append(row)
    assert not stale, f"listed but the CLI has no such command or flag: {stale}"


# --------------------------------------------------------------------------- the document


def test_the_readme_links_the_list() -> None:
    assert "docs/contract-extensions.md" in (ROOT / "README.md").read_text()


def test_every_section_has_rows() -> None:
    assert all(listed().values()), {k: len(v) for k, v in listed().items()}
