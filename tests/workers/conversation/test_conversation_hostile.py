"""Hostile input: a 64 KiB message built to make regexes backtrack costs linear time.

Every pattern family is attacked with its own trigger words, so the cheap required-literal
pre-check passes and the regex really runs: repeated triggers, long runs after a topic
marker, "need" without "first", and so on, in all ten languages at once. Timing is
relative, measured in the same test as CPU time (``time.process_time``, best of three runs:
a busy machine preempting the test does not count), and checked two ways:

* against a normal message of the same size (a realistic 1 KiB message repeated to
  64 KiB): at most 8 times its cost. This is the check that catches catastrophic
  backtracking: with the reference's unbounded ``need.*first`` the "first, then many
  need" cases cost 12 to 160 times the normal message; bounded, the worst is about 2.5.
* against the normal 1 KiB message itself, per character: at most 20 times its cost per
  character. (20 times a whole 1 KiB message is not reachable by any full scan of 64
  times as much text, so the factor is applied per character.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from schemas.events import MessageEvent
from shared.config import CommitmentsSettings, DecisionsSettings, ThreadsSettings, parse_languages
from workers.conversation.patterns import get_patterns
from workers.decisions import apply_message as apply_decisions
from workers.decisions.commitments import apply_message as apply_commitments
from workers.threads import apply_message as apply_threads

ALL = get_patterns(parse_languages("all"))
SIZE = 64 * 1024
SAME_SIZE_FACTOR = 8
PER_CHARACTER_FACTOR = 20

NORMAL = (
    (
        "Let's get back to the deployment pipeline. We decided to use blue-green deploys because the "
        "database migration is risky, and the rollback plan needs a review. I'll update the runbook "
        "tomorrow; we're waiting for the security review before the rollout. Maybe we can also try "
        "canary releases later. The staging cluster works again after the DNS fix. "
    )
    * 4
)[:1024]


def fill(unit: str, tail: str = "") -> Callable[[int], str]:
    """A builder of ``unit`` repeated to ``size`` characters, ending with ``tail``."""

    def build(size: int) -> str:
        return unit * ((size - len(tail)) // len(unit)) + tail

    return build


def after(head: str, run: str) -> Callable[[int], str]:
    """A builder of ``head`` followed by a run of ``run`` up to ``size`` characters."""
    return lambda size: head + run * (size - len(head))


def led_by(head: str, unit: str) -> Callable[[int], str]:
    """``head`` then ``unit`` repeated: the closing word of a wait pattern comes first, so
    the pre-check passes but no "need" is ever followed by its "first" (the worst case
    for an unbounded ``need.*first``: every "need" rescans the rest of the line)."""
    return lambda size: head + unit * ((size - len(head)) // len(unit))


HOSTILE: dict[str, Callable[[int], str]] = {
    "need without first (the design's case)": after("need ", "x"),
    "first, then many need": led_by("first ", "need "),
    "many need, one first at the end": fill("need ", "first"),
    "erst, then many brauche": led_by("erst ", "brauche "),
    "primero, then many necesitamos": led_by("primero ", "necesitamos "),
    "avant, then many besoin de": led_by("avant ", "besoin de "),
    "必要, then many 先に": led_by("必要", "先に"),
    "阻塞, then many 被": led_by("阻塞", "被"),
    "안 돼, then many 아직": led_by("안 돼 ", "아직 "),
    "a run of a after back to": after("back to ", "a"),
    "repeated back to": fill("back to "),
    "repeated zurück zu der": fill("zurück zu der "),
    "a run of CJK after 关于": after("关于", "数"),
    "repeated について": fill("について"),
    "repeated decided": fill("decided "),
    "repeated done": fill("done "),
    "repeated mood words": fill("damn nice careful idea ✅ "),
    "repeated I'll": fill("I'll "),
    "a run of b after I'll": after("I'll ", "b"),
    "repeated ich werde": fill("ich werde "),
    "repeated promises with due dates": fill("I'll do it tomorrow "),
    "only spaces": fill(" "),
    "only newlines": fill("\n"),
}


def pipeline_seconds(content: str) -> float:
    """Best of three runs of the three cores over one message (best-of damps scheduler noise)."""
    event = MessageEvent(
        id="hostile", agent="a", session="s", ts=datetime(2026, 2, 17, tzinfo=UTC), role="user", content=content
    )
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        apply_threads(None, event, ThreadsSettings(), ALL)
        apply_decisions(None, event, DecisionsSettings(), ALL, ZoneInfo("UTC"))
        apply_commitments(None, event, CommitmentsSettings(), ALL)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("build", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_message_costs_no_more_than_normal_text(build: Callable[[int], str]) -> None:
    content = build(SIZE)
    assert len(content) >= SIZE - 64
    normal_small = pipeline_seconds(NORMAL)
    normal_large = pipeline_seconds(NORMAL * (SIZE // len(NORMAL)))
    hostile = pipeline_seconds(content)
    context = (
        f"hostile {hostile * 1e3:.1f} ms; normal 64 KiB {normal_large * 1e3:.1f} ms, "
        f"normal 1 KiB {normal_small * 1e3:.2f} ms"
    )
    assert hostile <= SAME_SIZE_FACTOR * normal_large, context
    assert hostile <= PER_CHARACTER_FACTOR * normal_small * len(content) / len(NORMAL), context
