"""``cortex diff shadow [--agent A]``: what shadow-mode workers would change, per agent."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec
import nats.js.errors

from shared.config import Settings
from shared.kv import kv_keys, kv_read
from shared.names import shadow_bucket
from shared.parts import SPLIT_DOCS, decode_parts, is_part_key, read_latest
from workers.cli.base import CliError
from workers.cli.common import NATS_URL_HELP, connected
from workers.cli.query import _agent

MAX_LINES_PER_DOC = 40
_IGNORED = {("integrity", "producer")}  # a shadow worker is by definition another producer


def register(sub: Any) -> None:
    p = sub.add_parser("diff", help="compare shadow and live documents")
    p.add_argument("what", choices=["shadow"], help="what to compare: shadow (the shadow workers' documents "
                                                    "against the live ones)")
    p.add_argument("--agent", help="only this agent's documents (default: every agent)")
    p.add_argument("--nats-url", help=NATS_URL_HELP)
    p.set_defaults(handler=cmd_diff)


def _short(value: Any) -> str:
    text = msgspec.json.encode(value).decode()
    return text if len(text) <= 80 else text[:77] + "…"


def json_diff(live: Any, shadow: Any, path: tuple[str, ...] = ()) -> list[str]:
    """Readable differences between two JSON values: ``path: live → shadow`` lines."""
    if path[-2:] in _IGNORED or live == shadow:
        return []
    where = "".join(p if p.startswith("[") else f".{p}" for p in path).lstrip(".") or "(document)"
    if isinstance(live, dict) and isinstance(shadow, dict):
        out = []
        for key in sorted(set(live) | set(shadow)):
            if key not in shadow:
                out.append(f"{where}.{key}: removed (was {_short(live[key])})")
            elif key not in live:
                out.append(f"{where}.{key}: added {_short(shadow[key])}")
            else:
                out += json_diff(live[key], shadow[key], (*path, key))
        return out
    if isinstance(live, list) and isinstance(shadow, list):
        out = []
        for i in range(max(len(live), len(shadow))):
            if i >= len(shadow):
                out.append(f"{where}[{i}]: removed {_short(live[i])}")
            elif i >= len(live):
                out.append(f"{where}[{i}]: added {_short(shadow[i])}")
            else:
                out += json_diff(live[i], shadow[i], (*path, f"[{i}]"))
        return out
    return [f"{where}: {_short(live)} → {_short(shadow)}"]


async def _document(kv: Any, key: str, doc_type: type[Any] | None) -> Any:
    """The document as JSON values; a split one joined from its parts."""
    if doc_type is None:
        raw, _ = await kv_read(kv, key)
        return msgspec.json.decode(raw) if raw else None
    values, _ = await read_latest(kv, key)
    return msgspec.to_builtins(decode_parts(values, msgspec.json.Decoder(doc_type))) if values else None


async def diff_bucket(js: Any, bucket: str, agent: str | None) -> list[str]:
    try:
        live_kv, shadow_kv = await js.key_value(bucket), await js.key_value(shadow_bucket(bucket))
    except nats.js.errors.BucketNotFoundError:
        return []
    doc_type = SPLIT_DOCS.get(bucket)
    keys = {agent} if agent else {*await kv_keys(js, bucket), *await kv_keys(js, shadow_bucket(bucket))}
    if doc_type is not None:
        keys = {k for k in keys if not is_part_key(k)}  # documents, not their parts
    lines = []
    for key in sorted(keys):
        live = await _document(live_kv, key, doc_type)
        shadow = await _document(shadow_kv, key, doc_type)
        if live is None and shadow is None:
            continue
        changes = json_diff(live, shadow)
        if changes:
            shown = changes[:MAX_LINES_PER_DOC]
            more = f"\n    … {len(changes) - len(shown)} more" if len(changes) > len(shown) else ""
            lines.append(f"{bucket}/{key}:\n    " + "\n    ".join(shown) + more)
    return lines


async def cmd_diff(args: argparse.Namespace, settings: Settings) -> int:
    from workers.registry import doc_buckets

    agent = _agent(args.agent) if args.agent else None
    async with connected(settings, args.nats_url) as nc:
        js = nc.jetstream()
        try:
            await js.key_value(shadow_bucket(doc_buckets()[0]))
        except nats.js.errors.BucketNotFoundError as exc:
            raise CliError("no shadow documents yet: run a worker with CORTEX_MODE=shadow first") from exc
        blocks = [line for bucket in doc_buckets() for line in await diff_bucket(js, bucket, agent)]
    print("\n".join(blocks) if blocks else "no differences between shadow and live documents")
    return 0
