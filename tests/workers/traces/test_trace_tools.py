"""Tool results and call similarity: the reference's normalisation cases
(``test/trace-analyzer/events.test.ts``, ``nats-trace-source.test.ts``) for what a failed
result is, and its similarity helpers (``doom-loop.test.ts``'s ``paramSimilarity``).

Not applicable: schema detection and the session-key and type mapping of the store's
envelopes (``shared.openclaw`` maps them into contract events, tested there), and events
without a timestamp or type (bad input, rejected at decode).
"""

from __future__ import annotations

import random

from workers.traces.tools import (
    command_of,
    failure_key,
    jaccard,
    levenshtein,
    levenshtein_ratio,
    loop_similarity,
    normalise_error,
    param_keys,
    tool_error,
)


def test_a_top_level_error_is_the_failure() -> None:
    """events.test.ts: tool.result — Schema A extracts result and error."""
    assert tool_error("Permission denied", None) == "Permission denied"


def test_a_successful_result_has_no_error() -> None:
    """events.test.ts: tool.result — Schema A handles successful result."""
    assert tool_error(None, {"content": [{"text": "ok"}]}) is None
    assert tool_error(None, "plain text") is None
    assert tool_error(None, {"details": {"exitCode": 0}}) is None


def test_nested_failures_are_found_where_runtimes_put_them() -> None:
    """events.ts extractErrorFromResult: details.error, details.status, exit codes, isError."""
    assert tool_error(None, {"details": {"error": "disk full"}}) == "disk full"
    assert tool_error(None, {"details": {"status": "error"}}) == "status: error"
    assert tool_error(None, {"details": {"exitCode": 2}}) == "exit code 2"
    assert tool_error(None, {"isError": True, "content": [{"text": "ENOENT"}]}) == "ENOENT"
    assert tool_error(None, {"isError": True, "result": "bad"}) == "bad"
    assert tool_error(None, {"isError": True}) == "unknown error"
    assert tool_error(None, {"details": {"exitCode": True}}) is None  # a bool is no exit code


def test_identical_commands_are_fully_alike_and_different_ones_barely() -> None:
    """doom-loop.test.ts: paramSimilarity: identical exec commands → 1.0; completely
    different commands → low similarity."""
    a, b = command_of({"command": "ls -la /tmp"}), command_of({"command": "docker compose up -d --build"})
    assert loop_similarity(a, [], a, []) == 1.0
    assert loop_similarity(a, [], b, []) < 0.5


def test_parameters_compare_by_their_pairs_without_volatile_ones() -> None:
    """doom-loop.ts jaccardSimilarity: ``timeout``, ``timestamp`` and ``ts`` never count."""
    one = param_keys({"path": "/a", "timeout": 5})
    two = param_keys({"path": "/a", "timeout": 30, "ts": 1})
    assert one == two and jaccard(one, two) == 1.0
    assert jaccard(param_keys({"path": "/a"}), param_keys({"path": "/b"})) == 0.0
    assert param_keys("just a string") == param_keys("just a string") != []


def test_parameter_digests_never_hold_a_secret() -> None:
    """Cortex: the digests are of the redacted value, so two calls differing only in a
    password are alike and nothing derived from the password is stored."""
    assert param_keys({"user": "bob", "password": "hunter2"}) == param_keys({"user": "bob", "password": "swordfish"})
    assert "sk-" not in command_of({"command": "curl -H 'x: sk-abcdefghijklmnopqrstuvwxyz' api"})


def test_levenshtein_matches_the_textbook_table() -> None:
    """Myers' bit-parallel distance equals the dynamic-programming one."""
    def table(a: str, b: str) -> int:
        row = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            new = [i]
            for j, cb in enumerate(b, 1):
                new.append(min(row[j] + 1, new[j - 1] + 1, row[j - 1] + (ca != cb)))
            row = new
        return row[-1]

    rng = random.Random(5)
    for _ in range(150):
        a = "".join(rng.choice("abcé") for _ in range(rng.randint(0, 40)))
        b = "".join(rng.choice("abcd") for _ in range(rng.randint(0, 40)))
        assert levenshtein(a, b) == table(a, b), (a, b)
    assert levenshtein_ratio("", "") == 1.0


def test_errors_are_normalised_for_fingerprints() -> None:
    """repeat-fail.ts normalizeError: timestamps, pids, sequence numbers, temp paths."""
    assert normalise_error("2026-03-01T10:00:00.123Z pid=42 seq 7 at /tmp/x1/y") == \
        "<TIMESTAMP> pid=<PID> seq=<SEQ> at /tmp/<PATH>"
    keys = param_keys({"command": "x"})
    assert failure_key("exec", keys, "x", "crash pid=1") == failure_key("exec", keys, "x", "crash pid=2")
    assert failure_key("exec", keys, "x", "crash") != failure_key("read", keys, "x", "crash")
