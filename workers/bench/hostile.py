"""Hostile input: a 64 KiB pathological message through the threads and decisions cores,
relative to a normal 1 KiB message (pure functions, no server).

Each message is applied to the same realistic document state (built from the benchmark's
own chat events) by ``threads.core.apply_message``, ``decisions.core.apply_message`` and
``decisions.commitments.apply_message``; the cost is the median over repetitions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import CommitmentsDoc, DecisionsDoc, ThreadsDoc
from schemas.events import MessageEvent
from shared.config import CommitmentsSettings, DecisionsSettings, ThreadsSettings
from workers.bench.events import EventSource, message_text
from workers.bench.results import HostileResult, HostileVariant
from workers.bench.stats import median
from workers.conversation.patterns import PatternSet, get_patterns
from workers.decisions import commitments
from workers.decisions import core as decisions_core
from workers.threads import core as threads_core

MAX_BYTES: Final = 65536
NORMAL_BYTES: Final = 1024
STATE_MESSAGES: Final = 400  # messages applied to build the document state first


def _fill(unit: str, size: int = MAX_BYTES) -> str:
    """``unit`` repeated to at most ``size`` UTF-8 bytes."""
    count = size // len(unit.encode())
    return unit * count


def _random_words(rng: random.Random, size: int = MAX_BYTES) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: list[str] = []
    total = 0
    while True:
        word = "".join(rng.choice(letters) for _ in range(rng.randrange(3, 12)))
        if total + len(word) + 1 > size:
            return " ".join(words)
        words.append(word)
        total += len(word) + 1


def pathological(rng: random.Random) -> dict[str, str]:
    """Messages of at most 64 KiB built to hit each pattern family's worst case."""
    return {
        "decision words": _fill("we decided to agreed the plan is "),
        "topic openers": "".join(f"let's get back to the topic number {i} now " for i in range(1500))[:MAX_BYTES],
        "promises en": _fill("I'll fix the build tomorrow. "),
        "promises de": _fill("ich werde das morgen fixen. "),
        "unclosed waits": _fill("need "),
        "closure words": _fill("done fixed solved closed works "),
        "one long word": "a" * MAX_BYTES,
        "no sentence end": _fill("i'll " + "x" * 90 + " "),
        "umlauts": _fill("ä"),
        "emoji moods": _fill("🚀✅🤔⚠️"),
        "random words": _random_words(rng),
        "german triggers": _fill("wir haben beschlossen warte auf brauche zurück zu der migration "),
        "long line mood": _fill("what if maybe idea careful risky urgent "),
    }


class Cores:
    """The three cores with a realistic document state to apply messages to."""

    def __init__(self, patterns: PatternSet, source: EventSource) -> None:
        self.patterns = patterns
        self.threads_settings = ThreadsSettings()
        self.decisions_settings = DecisionsSettings()
        self.commitments_settings = CommitmentsSettings()
        self.tz = ZoneInfo("UTC")
        self.threads: ThreadsDoc | None = None
        self.decisions: DecisionsDoc | None = None
        self.commitments: CommitmentsDoc | None = None
        decoder = msgspec.json.Decoder(MessageEvent)
        agents = source.agents
        for i in range(STATE_MESSAGES):
            self.apply(decoder.decode(source.message(agents[i % len(agents)]).data), keep=True)

    def apply(self, event: MessageEvent, keep: bool = False) -> None:
        threads = threads_core.apply_message(self.threads, event, self.threads_settings, self.patterns)
        decisions = decisions_core.apply_message(self.decisions, event, self.decisions_settings, self.patterns,
                                                 self.tz)
        promises = commitments.apply_message(self.commitments, event, self.commitments_settings, self.patterns)
        if keep:
            self.threads, self.decisions, self.commitments = threads, decisions, promises


def _event(content: str, index: int) -> MessageEvent:
    ts = datetime(2026, 3, 1, 12, 0, tzinfo=UTC) + timedelta(seconds=index)
    return MessageEvent(id=f"hostile-{index}", agent="bench-hostile", session="s-hostile", ts=ts, role="user",
                        content=content, sender="mallory", channel="webchat")


def _time(apply: Callable[[MessageEvent], None], event: MessageEvent, reps: int) -> float:
    samples = []
    for _ in range(reps):
        started = time.perf_counter()
        apply(event)
        samples.append(time.perf_counter() - started)
    return median(samples)


def normal_messages(rng: random.Random, count: int) -> list[str]:
    """Realistic messages of about 1 KiB (whole sentences, mixed English and German)."""
    out = []
    for i in range(count):
        text = ""
        while len((text + " x").encode()) < NORMAL_BYTES - 120:
            text = (text + " " + message_text(rng, i % 2 == 1, 1)).strip()
        out.append(text)
    return out


def run(reps: int, seed: int = 7, progress: Callable[[str], None] = lambda _: None) -> HostileResult:
    rng = random.Random(seed)
    cores = Cores(get_patterns(("en", "de")), EventSource(4, seed, id_prefix="hostile-state"))
    normals = normal_messages(rng, 20)
    normal_us = median([_time(cores.apply, _event(text, i), max(5, reps)) for i, text in enumerate(normals)]) * 1e6
    normal_bytes = round(sum(len(t.encode()) for t in normals) / len(normals))
    progress(f"[hostile] normal ~{normal_bytes} B message: {normal_us:.0f} µs through the three cores")
    variants = []
    for i, (name, text) in enumerate(pathological(rng).items()):
        us = _time(cores.apply, _event(text, 1000 + i), reps) * 1e6
        variants.append(HostileVariant(name=name, bytes=len(text.encode()), us=round(us, 1),
                                       ratio=round(us / normal_us, 2)))
    worst = max(variants, key=lambda v: v.ratio)
    progress(f"[hostile] worst: {worst.name!r} {worst.us / 1000:.1f} ms = {worst.ratio:.1f}× a normal message")
    return HostileResult(normal_bytes=normal_bytes, normal_us=round(normal_us, 1), variants=variants,
                         worst=worst.name, worst_ratio=worst.ratio)
