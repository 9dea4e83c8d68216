"""Run the threads, decisions and commitments cores for tests/workers/test_compiled.py in a
process of its own (``PYTHONPATH`` = one built tree, compiled or pure).

One JSON request a line on stdin, one JSON answer a line on stdout:

* ``{"set": "bench"}`` / ``{"set": "briefing"}``: workers.bench.coredigest's digests of the set;
* ``{"streams": [[MessageEvent, ...], ...], "env": {...}}``: the digests of those messages
  (settings from ``env``: e.g. ``CORTEX_LANGUAGE=all``);
* ``{"status": true}``: workers.compiled.status() and where workers.threads.core came from.
"""

from __future__ import annotations

import json
import sys

import msgspec

from schemas.events import MessageEvent
from shared.config import load_settings
from workers.bench import coredigest
from workers.compiled import status


def answer(request: dict[str, object]) -> object:
    if request.get("status"):
        from workers.threads import core

        return {"status": status(), "file": core.__file__}
    if request.get("set") == "bench":
        return coredigest.digest(coredigest.bench_set(int(request.get("events", 4000))))  # type: ignore[call-overload]
    if request.get("set") == "briefing":
        return coredigest.digest(coredigest.briefing_set())
    streams = msgspec.convert(request["streams"], list[list[MessageEvent]])
    env: dict[str, str] = request.get("env", {})  # type: ignore[assignment]
    return coredigest.digest(coredigest.MessageSet("given", load_settings(env), streams))


def main() -> None:
    for line in sys.stdin:
        try:
            reply: object = {"ok": answer(json.loads(line))}
        except Exception as exc:  # the test compares the errors too: both trees must fail alike
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
