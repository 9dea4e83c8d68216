"""What the detectors need to know about a tool call: did it fail, and is it the same call.

Ported from the reference's event normalisation and similarity helpers (openclaw-cortex
``src/trace-analyzer/events.ts``, ``signals/doom-loop.ts``, ``signals/tool-fail.ts``,
``signals/repeat-fail.ts``):

* a result failed when it has an ``error``, or its ``result`` says so the way runtimes do
  (``details.error``, ``details.status == "error"``, a non-zero ``details.exitCode``,
  ``isError: true`` with the text of its first content block);
* two calls are compared by their ``command`` parameter when both have one (Levenshtein
  ratio, the first 500 characters) and otherwise by the Jaccard index of their
  ``name=value`` pairs; ``timeout``, ``timestamp`` and ``ts`` never count. Here the pairs
  are kept as short digests of the name and the *redacted* value (nothing of a secret is
  stored, not even its hash);
* an error is normalised for fingerprints by replacing timestamps, process ids, sequence
  numbers and temporary paths.

The Levenshtein distance is computed with Myers' bit-parallel algorithm (one pass of
integer operations per character), so comparing two 500-character commands costs
microseconds, not the quarter million steps of the textbook table.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from workers.traces.redact import as_text, redact

VOLATILE_PARAMS: Final = frozenset({"timeout", "timestamp", "ts"})
COMMAND_CHARS: Final = 500  # the reference compares the first 500 characters of a command
MAX_PARAM_KEYS: Final = 32  # a call's parameters compared (the first, by name)
_VALUE_CHARS: Final = 512  # of each parameter's value, read for its digest


def _text_of_result(result: Mapping[str, Any]) -> str | None:
    content = result.get("content")
    if isinstance(content, list) and content and isinstance(content[0], Mapping):
        text = content[0].get("text")
        if isinstance(text, str):
            return text
    inner = result.get("result")
    return inner if isinstance(inner, str) else None


def result_text(result: Any) -> str:
    """What a tool result says, as text: a runtime's content blocks by their texts (OpenClaw's
    ``{"content": [{"type": "text", "text": …}]}``), a string as it is, anything else as
    JSON."""
    if isinstance(result, Mapping):
        content = result.get("content")
        if isinstance(content, list):
            texts = [b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
            if any(t.strip() for t in texts):
                return "\n".join(t for t in texts if t.strip())
        if isinstance(inner := result.get("result"), str) and inner.strip():
            return inner
    return as_text(result)


def _details_error(details: Mapping[str, Any]) -> str | None:
    error = details.get("error")
    if isinstance(error, str) and error:
        return error
    if details.get("status") == "error":
        return "status: error"
    code = details.get("exitCode")
    if isinstance(code, int) and not isinstance(code, bool) and code > 0:
        return f"exit code {code}"
    return None


def tool_error(error: str | None, result: Any) -> str | None:
    """The failure a tool result reports, or None when it succeeded."""
    if error:
        return error
    if not isinstance(result, Mapping):
        return None
    details = result.get("details")
    if isinstance(details, Mapping) and (found := _details_error(details)) is not None:
        return found
    if result.get("isError") is True:
        return _text_of_result(result) or "unknown error"
    return None


def _params(params: Any) -> Mapping[str, Any]:
    if isinstance(params, Mapping):
        return params
    return {} if params is None else {"": params}


def command_of(params: Any) -> str:
    """A call's ``command`` parameter, redacted, at most ``COMMAND_CHARS`` characters."""
    command = _params(params).get("command")
    return redact(command[: COMMAND_CHARS + 256])[:COMMAND_CHARS] if isinstance(command, str) and command else ""


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=5).hexdigest()


def param_keys(params: Any) -> list[str]:
    """Digests of a call's ``name=value`` pairs (volatile names left out, values redacted),
    sorted, for the Jaccard comparison."""
    names = sorted(str(k) for k in _params(params) if str(k) not in VOLATILE_PARAMS)[:MAX_PARAM_KEYS]
    values = _params(params)
    # one redaction pass over all pairs, a line each (a newline inside a value is a space)
    lines = "\n".join(f"{k}={as_text(values[k])[:_VALUE_CHARS]}".replace("\n", " ") for k in names)
    return sorted({_digest(line) for line in redact(lines).split("\n")}) if names else []


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return 1.0 if union == 0 else len(sa & sb) / union


def levenshtein(a: str, b: str) -> int:
    """The edit distance of ``a`` and ``b`` (Myers 1999, Hyyrö's formulation)."""
    if a == b:
        return 0
    if not a or not b:
        return len(a) or len(b)
    if len(a) > len(b):
        a, b = b, a
    masks: dict[str, int] = {}
    for i, char in enumerate(a):
        masks[char] = masks.get(char, 0) | (1 << i)
    full = (1 << len(a)) - 1
    high = 1 << (len(a) - 1)
    plus, minus, distance = full, 0, len(a)
    for char in b:
        eq = masks.get(char, 0)
        x = eq | minus
        d0 = (((x & plus) + plus) ^ plus) | x
        hp = minus | ~(d0 | plus)
        hm = plus & d0
        if hp & high:
            distance += 1
        elif hm & high:
            distance -= 1
        hp = ((hp << 1) | 1) & full
        hm = (hm << 1) & full
        plus = hm | ~(d0 | hp) & full
        minus = hp & d0
    return distance


def levenshtein_ratio(a: str, b: str) -> float:
    """1.0 for equal strings, 0.0 for nothing in common (first 500 characters)."""
    a, b = a[:COMMAND_CHARS], b[:COMMAND_CHARS]
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1 - levenshtein(a, b) / longest


def loop_similarity(command_a: str, keys_a: Sequence[str], command_b: str, keys_b: Sequence[str]) -> float:
    """How alike two calls of one tool are, for a doom loop (the reference's ``paramSimilarity``)."""
    if command_a and command_b:
        return levenshtein_ratio(command_a, command_b)
    return jaccard(keys_a, keys_b)


_NORMALISE: Final = (
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}[.\dZ]*"), "<TIMESTAMP>"),
    (re.compile(r"(?i)\bpid[= ]\d+"), "pid=<PID>"),
    (re.compile(r"(?i)\bseq[= ]\d+"), "seq=<SEQ>"),
    (re.compile(r"/tmp/\S+"), "/tmp/<PATH>"),
)


def normalise_error(error: str) -> str:
    """An error without what changes between occurrences of the same failure."""
    for pattern, replacement in _NORMALISE:
        error = pattern.sub(replacement, error)
    return error.strip()[:200]


def failure_key(tool: str, keys: Sequence[str], command: str, error: str) -> str:
    """The fingerprint of a failure: same tool, same parameters, same normalised error."""
    basis = "|".join([tool, command, ",".join(keys), normalise_error(error)])
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def call_key(tool: str, command: str, keys: Sequence[str]) -> str:
    """The digest of a call for "the same call again", in any chain: its tool and its
    command (whitespace collapsed) when it has one, else its parameters' digests (volatile
    names left out, values redacted: ``param_keys``)."""
    basis = f"{tool}|c|{' '.join(command.split())}" if command else f"{tool}|k|{','.join(sorted(keys))}"
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:16]
