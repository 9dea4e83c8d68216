"""What the OpenClaw plugin (deploy/openclaw-plugin) adds to an agent's turn: its prompt hook
called as the gateway calls it, in Node, against the running pipeline — a session's first
turn (the briefing: ``cortex.api.boot``), a later turn (the memories: ``cortex.api.recall``
with the prompt) and a first turn with both — each beside the bare NATS request the hook
makes, sent from the same process (``deploy/openclaw-plugin/bench/turns.mjs``). The agent is
the api phase's full-size state, with a few hundred messages indexed for recall.

The plugin's source is a checkout's (``plugin_source``): ``--plugin-dir``, else the one beside
this installation (an editable install), else the ``deploy/openclaw-plugin`` of the current
directory or of a directory above it (an installed copy run from a checkout: CI's). The phase
is skipped, saying why, without it, without node and npm, or when its dependency cannot be
installed.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
from datetime import timedelta
from pathlib import Path
from typing import Final

import msgspec

from shared.names import api_subject, published_subject
from workers.bench.apilatency import AGENT
from workers.bench.events import BASE_TS, message_text
from workers.bench.fullstate import write_full_state
from workers.bench.mcplatency import _npm_ci
from workers.bench.procs import worker_env
from workers.bench.results import Latency, PluginCall, PluginResult
from workers.bench.session import BenchError, Session
from workers.bench.stats import summarize

PLUGIN_PATH: Final = Path("deploy") / "openclaw-plugin"  # in a checkout
INSTALLED_BESIDE: Final = Path(__file__).resolve().parents[2] / PLUGIN_PATH
WARM_UP: Final = 5
MESSAGES: Final = 300  # indexed for the agent before the turns: something to recall (quick: a tenth)
INDEX_LIMIT_S: Final = 120.0
RUN_LIMIT_S: Final = 900.0
MAX_CHARS: Final = 8000  # the plugin's default boot budget
BUDGET_TOKENS: Final = 500  # its default recall budget
LIMIT: Final = 5
PROMPTS: Final = (
    "Where are we with the auth migration and the token rotation?",
    "What did we decide about the Redis cache for the dashboard?",
    "Wann ist das Kubernetes-Upgrade geplant?",
    "Who promised to fix the build, and by when?",
    "Can you summarise the open threads for me?",
)


class _Turns(msgspec.Struct, kw_only=True, rename="camel"):
    """The driver's one line: milliseconds per call."""

    node: str
    boot: list[float]
    boot_direct: list[float]
    recall: list[float]
    recall_direct: list[float]
    first_turn: list[float]
    stats: dict[str, dict[str, int] | int]


def _ms(samples: list[float]) -> Latency:
    return summarize([s / 1000.0 for s in samples])


def _call(plugin_ms: list[float], direct_ms: list[float], timeout_ms: int) -> PluginCall:
    plugin, direct = _ms(plugin_ms), _ms(direct_ms)
    added = (None if plugin.p50_ms is None or direct.p50_ms is None else round(plugin.p50_ms - direct.p50_ms, 3),
             None if plugin.p99_ms is None or direct.p99_ms is None else round(plugin.p99_ms - direct.p99_ms, 3))
    return PluginCall(plugin=plugin, direct=direct, added_p50_ms=added[0], added_p99_ms=added[1],
                      over_default_timeout=sum(1 for ms in plugin_ms if ms > timeout_ms))


def plugin_source(given: str | None, cwd: Path) -> Path | str:
    """The plugin's source folder, or why there is none: ``given`` (``--plugin-dir``) itself,
    else the first of this installation's checkout and ``cwd``'s and its parents' that holds it."""
    if given is not None:
        path = Path(given).resolve()
        return path if (path / "index.js").is_file() else f"--plugin-dir {given}: no plugin there (no index.js)"
    for path in (INSTALLED_BESIDE, *(d / PLUGIN_PATH for d in (cwd.resolve(), *cwd.resolve().parents))):
        if (path / "index.js").is_file():
            return path
    return (f"the plugin's source is neither beside this installation ({INSTALLED_BESIDE}) nor under {cwd} or "
            f"above: run cortex bench from a checkout, or give --plugin-dir")


def default_timeout_ms(plugin: Path) -> int:
    manifest = json.loads((plugin / "openclaw.plugin.json").read_text())
    return int(manifest["configSchema"]["properties"]["timeoutMs"]["default"])


async def _index_messages(session: Session) -> int:
    """A few hundred messages of the agent, applied by the pipeline; the memories a recall finds."""
    rng = random.Random(session.config.seed + 3)
    for i in range(MESSAGES // 10 if session.config.quick else MESSAGES):
        role = "user" if i % 3 else "assistant"
        event = {"id": f"plugin-{i}", "agent": AGENT, "session": "s-plugin", "role": role, "channel": "webchat",
                 "ts": (BASE_TS + timedelta(seconds=2 * i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "content": message_text(rng, False, rng.choice((1, 2, 3)))}
        kind = "received" if role == "user" else "sent"
        await session.js.publish(published_subject(session.prefix, "msg", AGENT, kind), msgspec.json.encode(event),
                                 headers={"Nats-Msg-Id": event["id"]})
    _, pending = await session.drain_bounded(session.pipeline_consumers, INDEX_LIMIT_S, session.pipeline)
    if pending:
        session.progress(f"[plugin] still pending after {INDEX_LIMIT_S:g}s: {pending}")
    reply = await session.nc.request(api_subject(session.prefix, "recall", AGENT),
                                     json.dumps({"query": PROMPTS[0], "limit": LIMIT}).encode(), timeout=30.0)
    return len(json.loads(reply.data).get("memories", []))


async def _drive(session: Session, node: str, home: Path) -> _Turns:
    spec = home / "bench-spec.json"
    spec.write_text(json.dumps({"natsUrl": session.url, "agent": AGENT, "prefix": session.prefix,
                                "turns": session.config.plugin_turns, "warmUp": 1 if session.config.quick else WARM_UP,
                                "prompts": list(PROMPTS), "maxChars": MAX_CHARS, "budgetTokens": BUDGET_TOKENS,
                                "limit": LIMIT}))
    env = worker_env(os.environ, session.url, str(session.workdir / "plugin-data"))
    log_path = session.workdir / "plugin-bench.log"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(node, str(home / "bench" / "turns.mjs"), str(spec), cwd=home,
                                                    env=env, stdout=asyncio.subprocess.PIPE, stderr=log)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), RUN_LIMIT_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise BenchError(f"the plugin's bench driver did not finish within {RUN_LIMIT_S:g} s; see {log_path}") from None
    if proc.returncode or not out.strip():
        raise BenchError(f"the plugin's bench driver failed (exit {proc.returncode}); see {log_path}")
    try:
        return msgspec.json.decode(out.strip().splitlines()[-1], type=_Turns)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise BenchError(f"the plugin's bench driver wrote {out[:200]!r}: {exc}") from exc


async def run(session: Session, state_written: bool) -> PluginResult:
    node, npm = shutil.which("node"), shutil.which("npm")
    source = plugin_source(session.config.plugin_dir, Path.cwd())
    if isinstance(source, str):
        return PluginResult(skipped=source)
    if node is None or npm is None:
        return PluginResult(skipped="the plugin runs in Node: node and npm are not on PATH")
    home = session.workdir / "openclaw-plugin"
    shutil.copytree(source, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("node_modules"))
    session.progress("[plugin] installing the plugin's dependency (npm ci)")
    if (why := await _npm_ci(npm, home)) is not None:
        return PluginResult(skipped=f"the plugin's dependency is not installed: {why}")
    if not state_written:
        await write_full_state(session.js, AGENT)
    result = PluginResult(agent=AGENT, default_timeout_ms=default_timeout_ms(source))
    result.memories = await _index_messages(session)
    session.progress(f"[plugin] the prompt hook of {AGENT} ({result.memories} memories for the first prompt): "
                     f"{session.config.plugin_turns} turns of each kind, each beside its bare NATS request")
    turns = await _drive(session, node, home)
    timeout = result.default_timeout_ms or 0
    result.node = turns.node
    result.boot = _call(turns.boot, turns.boot_direct, timeout)
    result.recall = _call(turns.recall, turns.recall_direct, timeout)
    result.first_turn = _ms(turns.first_turn)
    result.outcomes = {k: v for k, v in turns.stats.items() if isinstance(v, dict)}
    for name, call in (("boot at session start", result.boot), ("recall per turn", result.recall)):
        session.progress(f"[plugin] {name}: p50 {call.plugin.p50_ms} ms (+{call.added_p50_ms} ms over NATS), "
                         f"p99 {call.plugin.p99_ms} ms (+{call.added_p99_ms} ms)")
    return result
