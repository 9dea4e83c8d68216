"""Commitments as pure functions over the contract's ``CommitmentsDoc``.

A promise in a message ("I'll fix the build tomorrow", "ich werde das morgen fixen") is
an ``open`` commitment of its sender (``workers.conversation.promises``). It becomes
``overdue`` once it has been open for ``overdue_days``, measured against the agent's
latest event time and re-checked on every event, and ``done`` when a later message with
a closure word shares its words (two, or its only one) or a ``commitment_done`` feedback
names it. The reference (openclaw-cortex ``src/commitment-tracker.ts``) had only the
overdue rule, against the wall clock; here every time comes from events.

The functions return a new document and never mutate their input; unchanged commitments
are shared between the two. ``integrity`` is copied unchanged: the caller owns it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec

from schemas.docs import Commitment, CommitmentsDoc, Integrity
from schemas.events import FeedbackEvent, MessageEvent
from shared.config import CommitmentsSettings
from workers.conversation.feedback import feedback_target
from workers.conversation.ids import unique_id
from workers.conversation.patterns import MatchText, PatternSet, prepare_text
from workers.conversation.promises import find_promises
from workers.conversation.signals import Words, matches_title, title_terms, words_of

_replace = msgspec.structs.replace


def empty_commitments_doc(ts: datetime) -> CommitmentsDoc:
    return CommitmentsDoc(updated=ts, commitments=[], integrity=Integrity())


def _latest(base: CommitmentsDoc, ts: datetime) -> datetime:
    # ``updated`` holds the latest event time seen, so an event with an older timestamp
    # (a late producer) does not move "now" backwards.
    return max(base.updated, ts)


def _overdue(commitments: list[Commitment], now: datetime, overdue_days: int) -> list[Commitment]:
    """A new list with open commitments created before the cutoff overdue (the same items
    otherwise: a scan, no copies, when none is due)."""
    cutoff = now - timedelta(days=overdue_days)
    if not any(c.status == "open" and c.created < cutoff for c in commitments):
        return list(commitments)
    return [
        _replace(c, status="overdue") if c.status == "open" and c.created < cutoff else c for c in commitments
    ]


def mark_overdue(doc: CommitmentsDoc, now: datetime, settings: CommitmentsSettings) -> CommitmentsDoc:
    """The document with open commitments older than ``overdue_days`` at ``now`` overdue.

    For events that carry no message (a session start, a request): "now" is the agent's
    latest event time.
    """
    latest = _latest(doc, now)
    return _rebuilt(doc, latest, _overdue(list(doc.commitments), latest, settings.overdue_days))


def _fulfilled(commitment: Commitment, words: Words) -> bool:
    # Two shared words, or the only one when the promise has a single word (a promise
    # without words of three letters, or a CJK one without spaces, is matched whole).
    needed = max(1, min(2, len(title_terms(commitment.what))))
    return matches_title(commitment.what, words, needed)


def _close_fulfilled(commitments: list[Commitment], text: MatchText) -> list[Commitment]:
    words = words_of(text)
    return [
        _replace(c, status="done") if c.status != "done" and _fulfilled(c, words) else c for c in commitments
    ]


def _cap(commitments: list[Commitment], limit: int) -> list[Commitment]:
    excess = len(commitments) - limit
    if excess <= 0:
        return commitments

    def age(i: int) -> tuple[bool, datetime, int]:
        return (commitments[i].status != "done", commitments[i].created, i)  # done sorts first

    dropped = set(sorted(range(len(commitments)), key=age)[:excess])
    return [c for i, c in enumerate(commitments) if i not in dropped]


def _rebuilt(base: CommitmentsDoc, updated: datetime, commitments: list[Commitment]) -> CommitmentsDoc:
    return CommitmentsDoc(
        version=base.version,
        updated=updated,
        commitments=commitments,
        integrity=_replace(base.integrity),
    )


def apply_message(
    doc: CommitmentsDoc | None, event: MessageEvent, settings: CommitmentsSettings, patterns: PatternSet
) -> CommitmentsDoc:
    """The commitments document after one message: overdue, fulfilled, then new promises."""
    base = doc if doc is not None else empty_commitments_doc(event.ts)
    now = _latest(base, event.ts)
    commitments = _overdue(list(base.commitments), now, settings.overdue_days)
    text = prepare_text(event.content)
    if patterns.close.may_match(text) and any(p.search(text) is not None for p in patterns.close):
        commitments = _close_fulfilled(commitments, text)
    who = event.sender or event.role
    promises = find_promises(text, patterns)
    taken = {c.id for c in commitments} if promises else set()
    for index, promise in enumerate(promises):
        commitment_id = unique_id(event.id, "commitment", index, taken)
        taken.add(commitment_id)
        commitments.append(Commitment(id=commitment_id, who=who, what=promise.what, status="open",
                                      created=event.ts, source_event=event.id, due=promise.due))
    return _rebuilt(base, now, _cap(commitments, settings.max_commitments))


def apply_feedback(
    doc: CommitmentsDoc | None, event: FeedbackEvent, settings: CommitmentsSettings | None = None
) -> CommitmentsDoc:
    """Apply ``commitment_done`` (target = commitment id); other kinds change nothing.

    With ``settings``, overdue commitments are re-checked against this event's time too.
    An unknown id is a no-op; a missing target raises ``FeedbackError``.
    """
    base = doc if doc is not None else empty_commitments_doc(event.ts)
    now = _latest(base, event.ts)
    commitments = list(base.commitments)
    if settings is not None:
        commitments = _overdue(commitments, now, settings.overdue_days)
    if event.kind == "commitment_done":
        target = feedback_target(event)
        commitments = [_replace(c, status="done") if c.id == target else c for c in commitments]
    return _rebuilt(base, now, commitments)
