"""Hostile input: a 64 KiB pathological message through the regex workers' cores (threads,
decisions, commitments, knowledge), relative to a normal 1 KiB message (pure functions,
no server).

Each message is applied to the same realistic document state (built from the benchmark's
own chat events) by ``threads.core.apply_message``, ``decisions.core.apply_message``,
``decisions.commitments.apply_message`` and ``knowledge.core.apply_message``; the cost is
the median over repetitions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo

import msgspec

from schemas.docs import CommitmentsDoc, DecisionsDoc, KnowledgeDoc, ThreadsDoc
from schemas.events import MessageEvent
from shared.config import CommitmentsSettings, DecisionsSettings, KnowledgeSettings, ThreadsSettings
from workers.bench.events import EventSource, message_text
from workers.bench.results import HostileResult, HostileVariant
from workers.bench.stats import median
from workers.conversation.patterns import PatternSet, get_patterns
from workers.decisions import commitments
from workers.decisions import core as decisions_core
from workers.knowledge import core as knowledge_core
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
        # a dot after a day's number ends no sentence: each such dot is looked at again
        "day dots": _fill("wir haben beschlossen, am 20. März oder 3. April zu releasen, 1. weil "),
    }


class Cores:
    """The four cores, each with a realistic document state to apply messages to."""

    NAMES: Final = ("threads", "decisions", "commitments", "knowledge")

    def __init__(self, patterns: PatternSet, source: EventSource) -> None:
        self.patterns = patterns
        self.threads_settings = ThreadsSettings()
        self.decisions_settings = DecisionsSettings()
        self.commitments_settings = CommitmentsSettings()
        self.knowledge_settings = KnowledgeSettings()
        self.tz = ZoneInfo("UTC")
        self.threads: ThreadsDoc | None = None
        self.decisions: DecisionsDoc | None = None
        self.commitments: CommitmentsDoc | None = None
        self.knowledge: KnowledgeDoc | None = None
        decoder = msgspec.json.Decoder(MessageEvent)
        agents = source.agents
        for i in range(STATE_MESSAGES):
            event = decoder.decode(source.message(agents[i % len(agents)]).data)
            self.threads = self.apply_threads(event)
            self.decisions = self.apply_decisions(event)
            self.commitments = self.apply_commitments(event)
            self.knowledge = self.apply_knowledge(event)

    def apply_threads(self, event: MessageEvent) -> ThreadsDoc:
        return threads_core.apply_message(self.threads, event, self.threads_settings, self.patterns)

    def apply_decisions(self, event: MessageEvent) -> DecisionsDoc:
        return decisions_core.apply_message(self.decisions, event, self.decisions_settings, self.patterns, self.tz)

    def apply_commitments(self, event: MessageEvent) -> CommitmentsDoc:
        return commitments.apply_message(self.commitments, event, self.commitments_settings, self.patterns)

    def apply_knowledge(self, event: MessageEvent) -> KnowledgeDoc:
        return knowledge_core.apply_message(self.knowledge, event, self.knowledge_settings)

    def appliers(self) -> dict[str, Callable[[MessageEvent], object]]:
        return {name: getattr(self, f"apply_{name}") for name in self.NAMES}


def _event(content: str, index: int) -> MessageEvent:
    ts = datetime(2026, 3, 1, 12, 0, tzinfo=UTC) + timedelta(seconds=index)
    return MessageEvent(id=f"hostile-{index}", agent="bench-hostile", session="s-hostile", ts=ts, role="user",
                        content=content, sender="mallory", channel="webchat")


def _time(apply: Callable[[MessageEvent], object], event: MessageEvent, reps: int) -> float:
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
    """Each pathological message against the normal ones, core by core: a variant's ratio
    is its worst core's (a cheap core's blow-up is not hidden by a costly core's fixed cost)."""
    rng = random.Random(seed)
    cores = Cores(get_patterns(("en", "de")), EventSource(4, seed, id_prefix="hostile-state"))
    normals = [_event(text, i) for i, text in enumerate(normal_messages(rng, 20))]
    appliers = cores.appliers()
    normal_by_core = {
        name: median([_time(apply, event, max(5, reps)) for event in normals]) for name, apply in appliers.items()
    }
    normal_us = sum(normal_by_core.values()) * 1e6
    normal_bytes = round(sum(len(e.content.encode()) for e in normals) / len(normals))
    progress(f"[hostile] normal ~{normal_bytes} B message: {normal_us:.0f} µs through the four cores")
    variants = []
    for i, (name, text) in enumerate(pathological(rng).items()):
        event = _event(text, 1000 + i)
        by_core = {core: _time(apply, event, reps) for core, apply in appliers.items()}
        core, ratio = max(((c, by_core[c] / normal_by_core[c]) for c in by_core), key=lambda cr: cr[1])
        variants.append(HostileVariant(name=name, bytes=len(text.encode()), us=round(sum(by_core.values()) * 1e6, 1),
                                       ratio=round(ratio, 2), core=core))
    worst = max(variants, key=lambda v: v.ratio)
    progress(f"[hostile] worst: {worst.name!r} in {worst.core} = {worst.ratio:.1f}× a normal message there")
    return HostileResult(normal_bytes=normal_bytes, normal_us=round(normal_us, 1), variants=variants,
                         worst=f"{worst.name} ({worst.core})", worst_ratio=worst.ratio)
