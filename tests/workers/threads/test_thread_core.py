"""Thread lifecycle. Parity: openclaw-cortex test/thread-tracker.test.ts (ThreadTracker
cases) and the design's section 9 examples; plus Cortex's replay and feedback rules."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.docs import Integrity, Thread, ThreadsDoc
from schemas.events import FeedbackEvent, MessageEvent
from shared.config import ThreadsSettings, parse_languages
from workers.conversation.feedback import FeedbackError
from workers.conversation.ids import derive_id
from workers.conversation.patterns import get_patterns, prepare_text
from workers.threads import apply_feedback, apply_message
from workers.threads.waits import _stem, end_waits

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
BOTH = get_patterns(parse_languages("both"))
ALL = get_patterns(parse_languages("all"))
ALL = get_patterns(parse_languages("all"))
SETTINGS = ThreadsSettings()
_ids = itertools.count()


def message(content: str, minutes: float = 0, **fields: Any) -> MessageEvent:
    fields.setdefault("role", "user")
    fields.setdefault("session", "s")
    fields.setdefault("id", f"m{next(_ids)}")
    return MessageEvent(
        agent="agent", ts=T0 + timedelta(minutes=minutes), content=content, **fields
    )


def feedback(kind: Any, target: str | None, value: Any = None, minutes: float = 0) -> FeedbackEvent:
    return FeedbackEvent(
        id=f"f{next(_ids)}", agent="agent", ts=T0 + timedelta(minutes=minutes), kind=kind, target=target, value=value
    )


def run(*contents: str, settings: ThreadsSettings = SETTINGS, doc: ThreadsDoc | None = None) -> ThreadsDoc:
    for minute, content in enumerate(contents):
        doc = apply_message(doc, message(content, minute), settings, BOTH)
    assert doc is not None
    return doc


def thread(**overrides: Any) -> Thread:
    fields: dict[str, Any] = {
        "id": "test-id", "title": "auth migration OAuth2", "status": "open", "priority": "medium",
        "summary": "test thread", "decisions": [], "waiting_for": None, "mood": "neutral",
        "last_activity": T0, "created": T0,
    }
    fields.update(overrides)
    return Thread(**fields)


def doc_with(*threads: Thread, session_mood: Any = "neutral") -> ThreadsDoc:
    return ThreadsDoc(updated=T0, session_mood=session_mood, threads=list(threads), integrity=Integrity(events=5))


def titled(doc: ThreadsDoc, words: str) -> Thread:
    return next(t for t in doc.threads if words in t.title.lower())


# ── ThreadTracker — basic operations ───────────────────────────────────────────────


def test_a_new_document_starts_without_threads() -> None:
    """thread-tracker.test.ts › ThreadTracker › starts with empty threads."""
    assert run("hello").threads == []


def test_topic_pattern_opens_a_thread() -> None:
    """thread-tracker.test.ts › ThreadTracker › detects a new topic from a topic pattern (design section 9)."""
    doc = run("Let's get back to the auth migration")
    assert any("auth migration" in t.title.lower() for t in doc.threads)


def test_new_thread_has_the_defaults() -> None:
    """thread-tracker.test.ts › ThreadTracker › creates thread with correct defaults."""
    created = titled(run("back to the deployment pipeline"), "deployment pipeline")
    assert created.status == "open"
    assert created.decisions == []
    assert created.waiting_for is None
    assert created.id
    assert created.created == created.last_activity == T0
    # the reference's "Topic detected from user" said nothing (issue 18): the summary is
    # what the conversation said about the topic
    assert created.summary == "Back to the deployment pipeline."


def test_the_same_topic_twice_is_one_thread() -> None:
    """thread-tracker.test.ts › ThreadTracker › does not create duplicate threads for same topic."""
    doc = run("back to the deployment pipeline", "back to the deployment pipeline")
    assert len([t for t in doc.threads if "deployment pipeline" in t.title.lower()]) == 1


def test_closure_closes_matching_open_thread() -> None:
    """thread-tracker.test.ts › ThreadTracker › closes a thread when closure pattern detected."""
    doc = run("back to the login bug fix", "the login bug fix is done ✅")
    closed = titled(doc, "login bug")
    assert closed.status == "closed"
    assert closed.last_activity == T0 + timedelta(minutes=1)


def test_closure_closes_the_designs_login_bug() -> None:
    """Design section 9 › ThreadTracker › closes a thread when closure pattern detected."""
    assert titled(run("back to the login bug", "login bug is fixed ✅"), "login bug").status == "closed"


def test_closure_leaves_unrelated_threads_open() -> None:
    doc = run("back to the login bug fix", "back to the billing export", "the login bug fix is done ✅")
    assert titled(doc, "billing export").status == "open"


def test_decision_is_appended_to_the_thread_it_mentions() -> None:
    """thread-tracker.test.ts › ThreadTracker › appends decisions to matching threads."""
    doc = run("back to the auth migration plan", "For the auth migration plan, we decided to use OAuth2 with PKCE")
    expected = "For the auth migration plan, we decided to use OAuth2 with PKCE"
    assert titled(doc, "auth migration").decisions == [expected]


def test_wait_sets_waiting_for_on_the_thread_it_mentions() -> None:
    """thread-tracker.test.ts › ThreadTracker › updates waiting_for on matching threads."""
    doc = run(
        "back to the deployment pipeline work",
        "The deployment pipeline is waiting for the staging environment fix",
    )
    # what is waited for; the reference kept the cue ("waiting for the staging environment fix")
    assert titled(doc, "deployment pipeline").waiting_for == "the staging environment fix"


def test_mood_is_set_on_the_thread_it_mentions() -> None:
    """thread-tracker.test.ts › ThreadTracker › updates mood on threads when mood detected."""
    doc = run("back to the auth migration work", "this auth migration is awesome! auth migration rocks 🚀")
    assert titled(doc, "auth migration").mood == "excited"


def test_document_is_version_two_and_round_trips() -> None:
    """thread-tracker.test.ts › ThreadTracker › persists threads to disk (here: the contract encoding)."""
    doc = run("back to the config refactor")
    decoded = msgspec.json.decode(msgspec.json.encode(doc), type=ThreadsDoc)
    assert decoded.version == 2
    assert decoded.threads


def test_session_mood_follows_the_latest_non_neutral_message() -> None:
    """thread-tracker.test.ts › ThreadTracker › tracks session mood."""
    doc = run("This is awesome! 🚀")
    assert doc.session_mood == "excited"
    assert run("This is awesome! 🚀", "ok, next item").session_mood == "excited"


def test_empty_message_changes_nothing_but_the_time() -> None:
    """thread-tracker.test.ts › ThreadTracker › skips empty content."""
    before = run("back to the config refactor")
    after = apply_message(before, message("", 5), SETTINGS, BOTH)
    assert after.threads == before.threads
    assert after.updated == T0 + timedelta(minutes=5)


def test_integrity_is_carried_over_and_updated_is_the_event_time() -> None:
    """thread-tracker.test.ts › increments events processed / persists integrity data: here the shell
    owns integrity (it stamps a new one on the document it writes); the core carries it over
    untouched and sets ``updated``."""
    base = doc_with(thread())
    after = apply_message(base, message("hello", 3), SETTINGS, BOTH)
    assert after.integrity is base.integrity
    assert after.updated == T0 + timedelta(minutes=3)


# ── pruning and cap ────────────────────────────────────────────────────────────────


def test_closed_threads_older_than_prune_days_are_removed() -> None:
    """thread-tracker.test.ts › ThreadTracker — pruning › prunes closed threads older than pruneDays."""
    old = T0 - timedelta(days=10)
    base = doc_with(
        thread(id="old-closed", title="old deployment pipeline issue", status="closed", last_activity=old, created=old),
        thread(id="recent-open", title="recent auth migration work"),
    )
    doc = run("back to the recent auth migration work update", doc=base)
    assert [t.id for t in doc.threads] == ["recent-open"]


def test_closed_threads_within_prune_days_are_kept() -> None:
    """thread-tracker.test.ts › ThreadTracker — pruning › keeps closed threads within pruneDays."""
    recent = T0 - timedelta(days=2)
    base = doc_with(
        thread(id="recent-closed", title="recent fix completed done", status="closed", last_activity=recent)
    )
    doc = run("back to the something else here", doc=base)
    assert any(t.id == "recent-closed" for t in doc.threads)


def test_pruning_uses_event_time_not_the_wall_clock() -> None:
    """Replay: a 2020 history prunes by its own time, whatever today's date is."""
    long_ago = datetime(2020, 1, 1, tzinfo=UTC)
    base = doc_with(thread(id="closed", status="closed", last_activity=long_ago))
    event = MessageEvent(id="e", agent="agent", session="s", ts=long_ago + timedelta(days=1), role="user", content="hi")
    kept = apply_message(base, event, SETTINGS, BOTH)
    assert [t.id for t in kept.threads] == ["closed"]


def test_cap_drops_the_oldest_closed_threads_first() -> None:
    """thread-tracker.test.ts › ThreadTracker — maxThreads cap › enforces maxThreads cap by removing oldest
    closed threads (5 open + 3 closed, cap 6)."""
    opened = [
        thread(id=f"open-{i}", title=f"open thread number {i} task", last_activity=T0 - timedelta(minutes=i))
        for i in range(5)
    ]
    closed = [
        thread(id=f"closed-{i}", title=f"closed thread number {i} done", status="closed",
               last_activity=T0 - timedelta(minutes=i))
        for i in range(3)
    ]
    doc = run("back to some topic here now", settings=ThreadsSettings(max_threads=6), doc=doc_with(*opened, *closed))
    assert len(doc.threads) == 6
    assert len([t for t in doc.threads if t.status == "open"]) == 6
    assert not any(t.id.startswith("closed") for t in doc.threads)


def test_cap_drops_the_oldest_open_threads_when_all_are_open() -> None:
    """Cortex: the document stays bounded even when every thread is open (the reference kept them all)."""
    opened = [
        thread(id=f"t{i}", title=f"topic {i} alpha{i}", last_activity=T0 + timedelta(minutes=i)) for i in range(6)
    ]
    doc = run("hello", settings=ThreadsSettings(max_threads=5), doc=doc_with(*opened))
    assert [t.id for t in doc.threads] == ["t1", "t2", "t3", "t4", "t5"]


# ── existing state, priority ───────────────────────────────────────────────────────


def test_existing_threads_are_kept() -> None:
    """thread-tracker.test.ts › ThreadTracker — loading existing state › loads threads from existing threads.json."""
    base = doc_with(thread(id="existing-1", title="existing auth migration thread"), session_mood="excited")
    doc = apply_message(base, message("unrelated"), SETTINGS, BOTH)
    assert [t.id for t in doc.threads] == ["existing-1"]
    assert doc.session_mood == "excited"


def test_high_impact_topics_get_high_priority() -> None:
    """thread-tracker.test.ts › ThreadTracker — priority inference › assigns high priority for topics with
    impact keywords."""
    assert titled(run("back to the security audit review"), "security").priority == "high"


def test_generic_topics_get_medium_priority() -> None:
    """thread-tracker.test.ts › ThreadTracker — priority inference › assigns medium priority for generic topics."""
    assert titled(run("back to the feature flag setup"), "feature flag").priority == "medium"


# ── Cortex: identity, replay, purity ───────────────────────────────────────────────


def test_thread_takes_channel_and_id_from_the_creating_event() -> None:
    event = message("back to the release checklist", id="evt-1", channel="slack", sender="albert")
    created = apply_message(None, event, SETTINGS, BOTH).threads[0]
    assert created.channel == "slack"
    assert created.id == derive_id("evt-1", "thread", 0)
    assert "Topic detected" not in created.summary


def test_same_events_give_byte_identical_documents() -> None:
    events = [
        message(text, minute, id=f"e{minute}")
        for minute, text in enumerate([
            "back to the auth migration", "For the auth migration we decided to use OAuth2",
            "the auth migration is waiting for the security review", "this is awesome 🚀",
            "the auth migration is done ✅",
        ])
    ]
    encoded = []
    for _ in range(2):
        doc: ThreadsDoc | None = None
        for event in events:
            doc = apply_message(doc, event, SETTINGS, BOTH)
        encoded.append(msgspec.json.encode(doc))
    assert encoded[0] == encoded[1]


def test_the_input_document_is_never_mutated() -> None:
    base = run("back to the auth migration", "back to the billing export")
    snapshot = msgspec.json.encode(base)
    apply_message(base, message("the auth migration is done, we decided to ship 🚀", 9), SETTINGS, BOTH)
    apply_feedback(base, feedback("thread_priority", base.threads[1].id, "critical"), SETTINGS)
    assert msgspec.json.encode(base) == snapshot


def test_thread_decisions_keep_the_latest_twenty() -> None:
    contents = ["back to the auth migration"] + [
        f"For the auth migration we decided on option {i}" for i in range(25)
    ]
    decisions = titled(run(*contents), "auth migration").decisions
    assert len(decisions) == 20
    assert decisions[-1].endswith("option 24")


def test_umlaut_topics_become_threads_and_close() -> None:
    doc = run("zurück zu der Datenbankmigration für Äpfel", "Die Datenbankmigration für Äpfel ist erledigt")
    assert [(t.title, t.status) for t in doc.threads] == [("Datenbankmigration für Äpfel", "closed")]


def test_cjk_topics_become_threads_and_close() -> None:
    doc = apply_message(None, message("我们回到数据库迁移"), SETTINGS, ALL)
    assert [t.title for t in doc.threads] == ["数据库迁移"]
    doc = apply_message(doc, message("数据库迁移搞定了", 1), SETTINGS, ALL)
    assert doc.threads[0].status == "closed"


# ── feedback ───────────────────────────────────────────────────────────────────────


def test_thread_close_feedback_closes_the_target() -> None:
    base = run("back to the auth migration", "back to the billing export")
    target = titled(base, "billing").id
    doc = apply_feedback(base, feedback("thread_close", target, minutes=10), SETTINGS)
    assert titled(doc, "billing").status == "closed"
    assert titled(doc, "billing").last_activity == T0 + timedelta(minutes=10)
    assert titled(doc, "auth").status == "open"
    assert doc.updated == T0 + timedelta(minutes=10)


def test_thread_priority_feedback_sets_the_level() -> None:
    base = run("back to the auth migration")
    doc = apply_feedback(base, feedback("thread_priority", base.threads[0].id, "critical"), SETTINGS)
    assert doc.threads[0].priority == "critical"


def test_invalid_priority_feedback_is_bad_input() -> None:
    base = run("back to the auth migration")
    with pytest.raises(FeedbackError):
        apply_feedback(base, feedback("thread_priority", base.threads[0].id, "urgent"), SETTINGS)


def test_thread_feedback_without_a_target_is_bad_input() -> None:
    with pytest.raises(FeedbackError):
        apply_feedback(None, feedback("thread_close", None), SETTINGS)


def test_feedback_for_an_unknown_thread_changes_nothing() -> None:
    base = run("back to the auth migration")
    doc = apply_feedback(base, feedback("thread_close", "gone"), SETTINGS)
    assert doc.threads == base.threads


def test_other_feedback_kinds_leave_threads_alone() -> None:
    base = run("back to the auth migration")
    doc = apply_feedback(base, feedback("memory_pin", base.threads[0].id, minutes=4), SETTINGS)
    assert doc.threads == base.threads
    assert doc.updated == T0 + timedelta(minutes=4)


def test_a_reused_event_id_makes_distinct_thread_ids_and_a_close_names_one() -> None:
    """Issue 15 item 10: the same event id twice made two threads with one id; a thread_close
    of it closed both."""
    doc = apply_message(None, message("Let's get back to the auth migration", id="dup"), SETTINGS, BOTH)
    doc = apply_message(doc, message("Regarding the billing dashboard redesign", 1, id="dup"), SETTINGS, BOTH)
    ids = [t.id for t in doc.threads]
    assert len(ids) == 2 and len(set(ids)) == 2, doc.threads
    closed = apply_feedback(doc, feedback("thread_close", ids[1], minutes=2), SETTINGS)
    assert [t.status for t in closed.threads] == ["open", "closed"]


def test_the_window_keeps_who_said_each_message_and_in_which_session() -> None:
    """The hot snapshot of a compaction without messages (OpenClaw's) is made from it."""
    doc = None
    said = [("user", "s1", "Can you check the staging deploy?"), ("assistant", "s1", "Staging is green."),
            ("user", "s2", "Other channel: lunch at noon?")]
    for minute, (role, session, content) in enumerate(said):
        doc = apply_message(doc, message(content, minute, role=role, session=session), SETTINGS, BOTH)
    assert doc is not None
    assert [(m.role, m.session, m.text) for m in doc.recent] == [(r, s, c) for r, s, c in said]


@pytest.mark.parametrize("closing", [
    "The search indexing pipeline is fixed, the reindex now takes 20 minutes",
    "The search indexing pipeline is done; the reindex takes 20 minutes",
    "Die Suchindex-Pipeline für search indexing ist erledigt, der Reindex dauert 20 Minuten",
])
def test_a_closure_word_before_a_comma_closes_the_thread(closing: str) -> None:
    """A closure word the sentence goes on after ("is fixed, the reindex …") closes the thread
    it names: the reference's patterns wanted a space, "." or "!" after it, so a thread fixed
    in such a sentence stayed open for weeks (a 15-day history: docs/contract-extensions.md)."""
    doc = run("Let's look at the search indexing pipeline: the nightly reindex takes three hours", closing)
    assert titled(doc, "search indexing").status == "closed"


def test_a_closure_word_inside_a_hyphenated_word_closes_nothing() -> None:
    doc = run("Let's look at the search indexing pipeline: the nightly reindex takes three hours",
              "For the search indexing pipeline a fixed-size batch is enough")
    assert titled(doc, "search indexing").status == "open"


def test_a_topic_naming_an_open_thread_resumes_it() -> None:
    """"Back to the payment gateway integration: the sandbox keys arrived" ten days later: the
    thread's last activity is that message's (the reference left a known topic alone, and the
    briefing showed the resumed thread as quiet since its first day, below newer ones)."""
    doc = run("Regarding the payment gateway integration: we need the Stripe sandbox keys first",
              "back to the billing export")
    resumed = apply_message(doc, message("Back to the payment gateway integration: the sandbox keys arrived",
                                         10 * 24 * 60), SETTINGS, BOTH)
    assert len(resumed.threads) == 2
    assert titled(resumed, "payment gateway").last_activity == T0 + timedelta(days=10)
    assert titled(resumed, "billing export").last_activity == T0 + timedelta(minutes=1)


def test_a_message_naming_an_open_thread_is_its_latest_activity() -> None:
    """"Next I'll look at the dashboard performance bug once Maria sends the profile" carries no
    closure, decision or wait — the only things that moved ``last_activity`` in the reference,
    so the demo's briefing showed the bug "Last: 09:24" after the conversation came back to it
    at 09:59. A message naming no thread, and a closed thread named, change nothing."""
    doc = run("Jetzt zum Performance-Bug im Dashboard: die Ladezeit ist über fünf Sekunden.",
              "Regarding the payment gateway integration: we need the Stripe sandbox keys first",
              "back to the login bug fix", "the login bug fix is done ✅")
    named = apply_message(doc, message("Next I'll look at the dashboard performance bug once Maria sends the "
                                       "profile.", 30), SETTINGS, BOTH)
    assert titled(named, "performance-bug").last_activity == T0 + timedelta(minutes=30)
    assert titled(named, "payment gateway").last_activity == titled(doc, "payment gateway").last_activity
    assert titled(named, "performance-bug").summary == titled(doc, "performance-bug").summary
    unrelated = apply_message(named, message("The weather is nice today.", 40), SETTINGS, BOTH)
    assert [t.last_activity for t in unrelated.threads] == [t.last_activity for t in named.threads]
    closed = apply_message(named, message("The login bug fix was a good one.", 50), SETTINGS, BOTH)
    assert titled(closed, "login bug").status == "closed"
    assert titled(closed, "login bug").last_activity == titled(doc, "login bug").last_activity


def test_a_topic_naming_a_closed_thread_leaves_it_closed() -> None:
    doc = run("back to the login bug fix", "the login bug fix is done ✅")
    again = apply_message(doc, message("back to the login bug fix", 60), SETTINGS, BOTH)
    assert titled(again, "login bug").status == "closed"
    assert titled(again, "login bug").last_activity == T0 + timedelta(minutes=1)


def test_a_one_word_title_is_closed_when_the_conversation_says_it_is_fixed() -> None:
    """"Der Onboarding-Flow ist gefixt" closes the thread "Onboarding-Flow": under the
    reference's overlap of two words a one-word thread was never closed (nor given a wait or
    a decision), and stayed in the briefing as open, frustrated, twelve days after its fix."""
    doc = run("Jetzt zu dem Onboarding-Flow: die Registrierung bricht auf Mobilgeräten ab, echt nervig.",
              "Beim Onboarding-Flow warte auf die Crash-Logs von Jonas.")
    assert titled(doc, "onboarding").waiting_for is not None
    doc = apply_message(doc, message("Der Onboarding-Flow ist gefixt.", 60), SETTINGS, BOTH)
    assert titled(doc, "onboarding").status == "closed"


def test_a_one_word_title_does_not_swallow_a_longer_topic() -> None:
    doc = run("back to the Dashboard", "back to the Dashboard performance bug")
    assert sorted(t.title for t in doc.threads) == ["Dashboard", "Dashboard performance bug"]


def test_a_new_session_without_a_mood_word_is_neutral() -> None:
    """The morning session ended "this sucks"; the afternoon one went well with no mood word:
    the day's briefing said "Last session mood: frustrated 😤". A new session's first message
    without a mood word resets it; within one session the last mood word still holds."""
    doc = apply_message(None, message("Stop claiming success, this sucks.", session="morning"), SETTINGS, BOTH)
    doc = apply_message(doc, message("ok, next item", 1, session="morning"), SETTINGS, BOTH)
    assert doc.session_mood == "frustrated"
    doc = apply_message(doc, message("The token expired, I renewed it.", 300, session="afternoon"), SETTINGS, BOTH)
    assert doc.session_mood == "neutral"
    doc = apply_message(doc, message("Awesome, thanks!", 301, session="afternoon"), SETTINGS, BOTH)
    assert doc.session_mood == "excited"


# ── a closure the user corrects ────────────────────────────────────────────────────


def said(*turns: tuple[str, str], doc: ThreadsDoc | None = None, session: str = "s") -> ThreadsDoc:
    """(role, content) turns of one session, a minute apart."""
    start = len(doc.recent) if doc is not None else 0
    for minute, (role, content) in enumerate(turns, start):
        doc = apply_message(doc, message(content, minute, role=role, session=session), SETTINGS, BOTH)
    assert doc is not None
    return doc


def test_a_false_done_the_user_corrects_reopens_its_thread_until_the_real_fix() -> None:
    """The tool-day history's day 2: "Done ✅ the frontend build is fixed." closed the thread for
    good, though the user answered "No, that's wrong, the build is still red on CI!" and the
    agent fixed it only at 09:13; every later briefing told the build as done at 09:06. The
    correction reopens the thread, the real fix ("… the build passes locally and on CI", no
    closure word before) closes it again."""
    from toolday_history import events

    doc: ThreadsDoc | None = None
    states: dict[str, tuple[str, str]] = {}
    for raw in events(2, 2):
        if raw["type"] not in ("msg.received", "msg.sent"):
            continue
        event = msgspec.convert({k: v for k, v in raw.items() if k != "type"}, MessageEvent)
        doc = apply_message(doc, event, SETTINGS, BOTH)
        build = next((t for t in doc.threads if t.title == "frontend build"), None)
        states[event.ts.strftime("%H:%M")] = (build.status, build.about) if build is not None else ("", "")
    assert states["09:06"][0] == "closed"
    assert states["09:08"] == ("open", "No, that's wrong, the build is still red on CI!")
    assert states["09:13"] == ("closed", "The lockfile was stale: after a clean `npm ci` the build passes locally "
                                         "and on CI")
    assert doc is not None and [t.status for t in doc.threads] == ["closed"]  # still so after the day's last message
    assert titled(doc, "frontend build").last_activity.strftime("%H:%M") == "09:13"


def test_a_correction_reopens_only_what_the_turn_before_it_closed() -> None:
    opened = said(("user", "Let's look at the billing export: the CSV misses the tax column"),
                  ("user", "Let's look at the search indexing pipeline: reindexing takes hours"),
                  ("assistant", "The search indexing pipeline is fixed ✅"))
    assert titled(opened, "search indexing").status == "closed"
    # praise is no correction; another session's user does not answer this one's agent
    for reply, session in (("Great, that's wrong only in the docs, thanks!", "s"), ("That's wrong!", "other")):
        assert titled(said(("user", reply), doc=opened, session=session), "search indexing").status == "closed"
    # an earlier turn's closure: the agent spoke again since
    later = said(("assistant", "The billing export has the tax column now."), ("user", "That's wrong."), doc=opened)
    assert titled(later, "search indexing").status == "closed"
    reopened = said(("user", "That's not right, the reindex still takes four hours"), doc=opened)
    assert titled(reopened, "search indexing").status == "open"
    assert titled(reopened, "billing export").status == "open"
    # the answer names no title word of it: not its fix
    elsewhere = said(("assistant", "Sorry! The tax column is done."), doc=reopened)
    assert titled(elsewhere, "search indexing").status == "open"
    fix = "You're right: the pipeline works again, the reindex takes 20 minutes"
    fixed = said(("assistant", f"{fix}."), doc=reopened)
    assert titled(fixed, "search indexing").status == "closed"
    assert titled(fixed, "search indexing").about == fix


@pytest.mark.parametrize(("closing", "closes"), [
    ("The frontend build passes locally and on CI.", True),
    ("The frontend build is green again.", True),
    ("The frontend build works now", True),
    ("Der Frontend-Build für frontend build läuft wieder.", True),
    ("Für frontend build: die Pipeline ist grün.", True),
    ("The frontend build is done and the grass is green.", True),  # "done"
    ("The frontend build sits where the grass is green.", False),
    ("The frontend build is not green yet.", False),
    ("The frontend build still doesn't pass locally.", False),
    ("The frontend build passes the token to the registry.", False),
    ("Der frontend build ist noch nicht wieder grün.", False),
])
def test_a_passing_or_green_outcome_closes_the_thread_it_names(closing: str, closes: bool) -> None:
    """Cortex's own closure family (the reference knows "done", "fixed", "it works", …): "the
    build passes locally and on CI" is how a fix is reported; it closes the thread it names."""
    doc = run("Let's look at the frontend build: it is red since last night", closing)
    assert (titled(doc, "frontend build").status == "closed") is closes


# ── a wait the thread moves past ───────────────────────────────────────────────────

_INDEXING = ("Let's look at the search indexing pipeline: the nightly reindex takes three hours.",
             "For the search indexing pipeline I am waiting for the Elasticsearch credentials from Jonas.")


@pytest.mark.parametrize(("later", "ends"), [
    ("Regarding the search indexing pipeline: Jonas finally sent the credentials.", True),
    ("Jonas sent the Elasticsearch credentials, thanks to him.", True),  # the thread unnamed: all its words
    ("The search indexing pipeline: the credentials from Jonas arrived.", True),
    ("Regarding the search indexing pipeline: did Jonas send the credentials?", False),
    ("Regarding the search indexing pipeline: has Jonas sent the credentials?", False),
    ("Regarding the search indexing pipeline: Jonas hasn't sent the credentials yet.", False),
    ("Regarding the search indexing pipeline: once Jonas sent the credentials, we reindex.", False),
    ("Regarding the search indexing pipeline: Jonas sent the invoice.", False),  # not what it waits for
    ("Back to the billing export: Jonas sent the credentials.", False),  # another thread
    ("Regarding the search indexing pipeline: still waiting for the credentials from Jonas.", False),
])
def test_a_wait_ends_when_what_was_awaited_arrives(later: str, ends: bool) -> None:
    """"Regarding the search indexing pipeline: Jonas finally sent the credentials." — the
    briefing said "Waiting for: the Elasticsearch credentials from Jonas" until the thread
    closed (the reference clears a wait only by a newer one)."""
    doc = run(*_INDEXING)
    assert titled(doc, "search indexing").waiting_for == "the Elasticsearch credentials from Jonas"
    after = titled(apply_message(doc, message(later, 60), SETTINGS, BOTH), "search indexing")
    assert (after.waiting_for is None) is ends
    assert ("Waiting for" in after.summary) is not ends
    if ends:
        assert after.last_activity == T0 + timedelta(minutes=60)
        assert after.status == "open"


@given(st.text(alphabet="abcdeiklnorsty'’-äöüß", max_size=14))
def test_the_wait_pre_check_finds_every_word_a_stem_names(word: str) -> None:
    """``end_waits`` looks for arrivals only in text holding a stem of what a thread waits for
    less its last letter: that part is in every word with the stem ("repl" of "reply" in
    "replied"), so the pre-check skips no message that could end a wait."""
    assert _stem(word)[:-1] in word


@pytest.mark.parametrize(("later", "ends"), [
    ("Zurück zum Onboarding-Flow: Jonas hat die Crash-Logs endlich geschickt.", True),
    ("Die Crash-Logs von Jonas sind jetzt da.", True),
    ("Zurück zum Onboarding-Flow: Jonas hat die Crash-Logs noch nicht geschickt.", False),
    ("Zurück zum Onboarding-Flow: sobald Jonas die Crash-Logs geschickt hat, schaue ich.", False),
    ("Zurück zum Onboarding-Flow: ich warte noch auf die Crash-Logs von Jonas.", False),
    ("Zurück zum Onboarding-Flow: wir bekommen die Crash-Logs von Jonas morgen.", False),  # not yet
])
def test_a_german_wait_ends_when_what_was_awaited_arrives(later: str, ends: bool) -> None:
    doc = run("Jetzt zu dem Onboarding-Flow: die Registrierung bricht auf Mobilgeräten ab.",
              "Beim Onboarding-Flow warte auf die Crash-Logs von Jonas, dann schaue ich mir den Safari-Bug an.")
    assert titled(doc, "onboarding").waiting_for == "die Crash-Logs von Jonas"
    after = titled(apply_message(doc, message(later, 60), SETTINGS, BOTH), "onboarding")
    assert (after.waiting_for is None) is ends


def test_a_wait_for_a_fix_ends_when_the_fix_is_done_and_a_newer_wait_replaces_one() -> None:
    doc = run("back to the deployment pipeline work",
              "The deployment pipeline is waiting for the staging environment fix")
    done = apply_message(doc, message("The staging environment fix is done.", 5), SETTINGS, BOTH)
    assert titled(done, "deployment pipeline").waiting_for is None
    assert titled(done, "deployment pipeline").status == "open"  # the fix it waited for, not the pipeline
    newer = apply_message(doc, message("The deployment pipeline is blocked by the quota request.", 5),
                          SETTINGS, BOTH)
    assert titled(newer, "deployment pipeline").waiting_for == "the quota request"
    # what arrived ends the old wait, the wait said after it is the thread's
    both = apply_message(doc, message("The staging environment fix landed; the deployment pipeline is now "
                                      "waiting for the quota request.", 5), SETTINGS, BOTH)
    assert titled(both, "deployment pipeline").waiting_for == "the quota request"


@pytest.mark.parametrize(("role", "answer", "ends"), [
    ("user", "Regarding the billing export: tax first, then the totals.", True),
    ("user", "Regarding the billing export: what would you suggest?", False),  # asks, answers nothing
    ("user", "Back to the login bug: it is still red.", False),  # another thread
    ("assistant", "For the billing export I can put the tax column anywhere.", False),  # the waiting side
])
def test_a_wait_on_the_other_speaker_ends_when_they_answer_in_the_thread(role: str, answer: str,
                                                                         ends: bool) -> None:
    """The agent waits on the user ("I'm waiting for your decision …"); the user's answer in
    the thread ends the wait, so the briefing no longer tells the agent it is blocked."""
    doc = said(("user", "Let's look at the billing export: the CSV misses the tax column"),
               ("assistant", "For the billing export I'm waiting for your decision on the column order."))
    assert titled(doc, "billing export").waiting_for == "your decision on the column order"
    after = said((role, answer), doc=doc)
    assert (titled(after, "billing export").waiting_for is None) is ends



def test_a_wait_on_the_other_speaker_ends_however_many_messages_later_they_answer() -> None:
    """The answer came after a dozen messages on other things: the window of recent messages
    no longer held the wait's, nobody knew who had said it, and the wait stayed for good. The
    thread keeps who said its wait; the same side's later word does not end it."""
    doc = said(("user", "Let's look at the billing export: the CSV misses the tax column"),
               ("assistant", "For the billing export I'm waiting for your decision on the column order."))
    assert titled(doc, "billing export").waiting_role == "assistant"
    for i in range(12):
        doc = said(("user" if i % 2 else "assistant", f"Unrelated chatter number {i} about lunch plans."), doc=doc)
    assert titled(doc, "billing export").waiting_for == "your decision on the column order"
    same_side = said(("assistant", "Regarding the billing export: tax first, then the totals."), doc=doc)
    assert titled(same_side, "billing export").waiting_for is not None
    after = said(("user", "Regarding the billing export: tax first, then the totals."), doc=doc)
    assert titled(after, "billing export").waiting_for is None
    assert titled(after, "billing export").waiting_role is None

# ── a renewal closes ───────────────────────────────────────────────────────────────


def test_a_thread_whose_token_was_renewed_in_the_message_that_named_it_is_closed() -> None:
    """The multiday history's day 3: "Regarding the staging registry credentials: the token
    expired, I renewed it." opened a thread no closure word ever closed, and the briefing of
    day 15 still listed it as open, quiet for twelve days. It is about the closing without
    the frame that names its title again (`cortex threads` showed the title twice in a row)."""
    doc = run("Regarding the staging registry credentials: the token expired, I renewed it.")
    closed = titled(doc, "staging registry")
    assert closed.status == "closed"
    assert closed.about == "The token expired, I renewed it"
    assert closed.summary == "The token expired, I renewed it."


@pytest.mark.parametrize(("closing", "closes"), [
    ("For the staging registry credentials: the token expired, I renewed it.", True),
    ("We've just rotated the staging registry credentials, all good.", True),
    ("Jonas has re-issued the staging registry token.", True),
    ("The staging registry certificate is renewed until 2026-06-09.", True),
    ("The staging registry credentials were rotated.", True),
    ("The staging registry license was extended by 30 days.", True),
    ("Staging registry token renewed.", True),
    ("Für die staging registry credentials: ich habe das Token erneuert.", True),
    ("Das Zertifikat der staging registry wurde bis Juni verlängert.", True),
    ("Staging registry: Token erneuert, deploye jetzt.", True),
    ("For the staging registry credentials we should renew it.", False),
    ("For the staging registry credentials: renew it tomorrow.", False),
    ("The staging registry token is not renewed yet.", False),
    ("I haven't renewed the staging registry token.", False),
    ("Once the staging registry token is renewed, deploy again.", False),
    ("We should have renewed the staging registry token.", False),
    ("The renewed staging registry certificate fails validation.", False),
    ("The staging registry logs are rotated daily.", False),
    ("We extended the staging registry with a mirror.", False),
    ("Has the staging registry token been renewed?", False),
    ("The staging registry token needs to be renewed.", False),
    ("Das Token der staging registry ist noch nicht erneuert.", False),
    ("Das Zertifikat der staging registry muss bis Freitag verlängert werden.", False),
    ("Wenn das Token der staging registry erneuert ist, deployen wir.", False),
    ("Die Wartezeit der staging registry hat sich verlängert.", False),
])
def test_a_renewal_closes_the_thread_it_names(closing: str, closes: bool) -> None:
    """Cortex's own closure family (the reference knows "done", "fixed", "it works", …): a
    token, key, certificate or license renewed, re-issued, rotated or extended is done."""
    doc = run("Let's look at the staging registry credentials: the deploys fail with auth errors", closing)
    assert (titled(doc, "staging registry").status == "closed") is closes


def test_a_thread_stays_open_on_a_closure_that_is_a_condition() -> None:
    """"Once the login bug is fixed, we deploy." closed the thread, and the briefing lost an
    open bug; the fix said later closes it."""
    planned = run("back to the login bug", "Once the login bug is fixed, we deploy.")
    assert titled(planned, "login bug").status == "open"
    assert titled(run("zurück zum Login-Bug", "Sobald der Login-Bug gefixt ist, deployen wir."),
                  "login-bug").status == "open"
    fixed = apply_message(planned, message("The login bug is fixed.", 5), SETTINGS, BOTH)
    assert titled(fixed, "login bug").status == "closed"


@pytest.mark.parametrize(("title", "waiting_for", "later", "ends"), [
    ("pasarela de pago", "las credenciales de Jonas", "Pasarela de pago: las credenciales de Jonas llegaron.", True),
    ("pasarela de pago", "las credenciales de Jonas", "Pasarela de pago: las credenciales no llegaron.", False),
    ("pasarela de pago", "las credenciales de Jonas",
     "Pasarela de pago: cuando las credenciales estén listas, sigo.", False),
    ("passerelle de paiement", "les identifiants de Jonas",
     "Passerelle de paiement : les identifiants de Jonas sont arrivés.", True),
    ("passerelle de paiement", "les identifiants de Jonas",
     "Passerelle de paiement : dès que les identifiants sont arrivés, je continue.", False),
    ("gateway di pagamento", "le credenziali di Jonas",
     "Gateway di pagamento: le credenziali di Jonas sono arrivate.", True),
    ("gateway de pagamento", "as credenciais do Jonas",
     "Gateway de pagamento: as credenciais do Jonas chegaram.", True),
    ("gateway de pagamento", "as credenciais do Jonas",
     "Gateway de pagamento: as credenciais do Jonas ainda não chegaram.", False),
    ("платёжный шлюз", "ключи от Йонаса", "Платёжный шлюз: ключи от Йонаса пришли.", True),
    ("платёжный шлюз", "ключи от Йонаса", "Платёжный шлюз: ключи от Йонаса не пришли.", False),
])
def test_a_wait_ends_on_an_arrival_in_every_language_with_wait_words(
        title: str, waiting_for: str, later: str, ends: bool) -> None:
    """Arrival words were English and German only: "las credenciales de Jonas llegaron" left
    a Spanish thread waiting for them. Negated and conditional arrivals keep the wait."""
    waiting = thread(title=title, waiting_for=waiting_for)
    text = prepare_text(later)
    after = end_waits([waiting], text, message(later, 5), ALL, [], ALL.closes(text))[0]
    assert (after.waiting_for is None) is ends


# ── a hyphenated title, a mood said of another sentence ─────────────────────────────


def test_a_hyphenated_title_is_named_by_its_words_and_keeps_the_mood_said_of_it() -> None:
    """The demo's "Performance-Bug im Dashboard": "the dashboard performance bug is fixed"
    could not close it ("performance-bug" was one word). Once it is named so, the message's
    mood must not land on it from another sentence: "Thanks! Next I'll look at the dashboard
    performance bug once Maria sends the profile. Nice momentum today!" would have made the
    frustrating bug "excited" (the reference's whole-message mood)."""
    opened = run("Jetzt zu dem Performance-Bug im Dashboard: die Ladezeit ist schon wieder über fünf Sekunden, "
                 "echt nervig.")
    assert titled(opened, "performance-bug").mood == "frustrated"
    later = run("Thanks! Next I'll look at the dashboard performance bug once Maria sends the profile. "
                "Nice momentum today!", doc=opened)
    assert titled(later, "performance-bug").mood == "frustrated"
    said_of_it = run("The dashboard performance bug is driving me crazy, this sucks!", doc=opened)
    assert titled(said_of_it, "performance-bug").mood == "frustrated"
    cheered = run("Awesome, the dashboard performance bug is almost gone 🚀", doc=opened)
    assert titled(cheered, "performance-bug").mood == "excited"
    fixed = run("The dashboard performance bug is fixed.", doc=opened)
    assert titled(fixed, "performance-bug").status == "closed"


def test_a_thread_about_a_fact_follows_the_fact_when_it_changes() -> None:
    """Issue 41: "Let's talk about the deploy schedule: our deploy day is Tuesday." then "Our deploy
    day is Thursday now." — the thread's summary said Tuesday beside a key memory saying Thursday."""
    from workers.threads.summary import follow_claims

    doc = None
    for i, text in enumerate(["Let's talk about the deploy schedule: our deploy day is Tuesday.",
                              "Lunch is at noon today.", "Our deploy day is Thursday now."]):
        doc = apply_message(doc, message(text, i, sender="al"), SETTINGS, BOTH)
    assert doc is not None
    (thread,) = doc.threads
    assert thread.about == "Our deploy day is Thursday now" and "Tuesday" not in thread.summary
    # a message stating another fact, or the same value again, changes nothing
    assert follow_claims(list(doc.threads), "The standup is at 9:30.", "al") == list(doc.threads)
    assert follow_claims(list(doc.threads), "Our deploy day is Thursday.", "al") == list(doc.threads)


@pytest.mark.parametrize(("said", "definite"), [
    ("How's the dance studio going?", True),
    ("I'm still searching for a place to open my dance studio.", True),
    ("Jon's dance studio opens next month.", True),
    ("“The dance studio is on tenuous grounds,” he said.", True),
    ("I dream of a dance studio by the water.", False),
    ("Dance studio life is hard.", False),
    ("The weather and dance studio rents in general.", False),
])
def test_a_mention_counts_as_definite_after_an_article_or_a_possessive(said: str, definite: bool) -> None:
    """Issue 37, twelfth round: each message naming an open thread as its phrase counts a mention
    (``Thread.mentions``), and a definite one (``Thread.definite``) when a definite article, a
    possessive or an English "'s" comes right before it — how a speaker refers to a particular
    thing, which Active Threads reads (``talked_of_in_general``)."""
    base = doc_with(thread(title="dance studio", about="I'm starting a dance studio"))
    doc = apply_message(base, message(said), SETTINGS, BOTH)
    assert (doc.threads[0].mentions, doc.threads[0].definite) == (1, 1 if definite else 0)
    unrelated = apply_message(doc, message("The weather is nice today.", 1), SETTINGS, BOTH)
    assert (unrelated.threads[0].mentions, unrelated.threads[0].definite) == (1, 1 if definite else 0)


def test_definite_mentions_in_other_languages() -> None:
    """The articles and possessives of every pack: French "le déménagement", German "unser Umzug",
    Spanish "la mudanza"; Russian has no articles, its possessives count."""
    cases = [("déménagement", "Le déménagement est prévu vendredi.", 1),
             ("déménagement", "Un déménagement, quelle aventure.", 0),
             ("Umzug", "Unser Umzug ist nächste Woche.", 1),
             ("mudanza", "La mudanza es el viernes.", 1),
             ("mudanza", "Una mudanza siempre cansa.", 0),
             ("переезд", "Наш переезд в пятницу.", 1)]
    for title, said, definite in cases:
        doc = apply_message(doc_with(thread(title=title, about="…")), message(said), SETTINGS, ALL)
        assert (doc.threads[0].mentions, doc.threads[0].definite) == (1, definite), said


def test_nothing_is_counted_where_no_article_can_be_read() -> None:
    """A CJK title is written without spaces or articles, and Russian alone has no articles:
    there a mention could never be definite, so none is counted and Active Threads judges no
    thread by it (``talked_of_in_general`` needs a mention)."""
    doc = apply_message(doc_with(thread(title="認証移行", about="…")), message("認証移行はまだ終わっていません。", 5),
                        SETTINGS, ALL)
    assert (doc.threads[0].mentions, doc.threads[0].definite) == (0, 0)
    assert doc.threads[0].last_activity == T0 + timedelta(minutes=5)  # still named: its activity moves as before
    russian = get_patterns(parse_languages("ru"))
    assert not russian.definite
    doc = apply_message(doc_with(thread(title="переезд", about="…")), message("Переезд в пятницу.", 5),
                        SETTINGS, russian)
    assert (doc.threads[0].mentions, doc.threads[0].definite) == (0, 0)
    assert doc.threads[0].last_activity == T0 + timedelta(minutes=5)


def test_a_phrase_opened_as_the_last_words_of_its_sentence_is_set_aside_as_named_in_passing() -> None:
    """Issue 37, twenty-second round: a phrase the threads core opens a thread for on the last
    words of its sentence ("… I will put them in the release wiki") was named there and nothing was
    said of it; Active Threads counts it with the subjects only talked of in general
    (``named_in_passing``, ``set_aside``). The same phrase opened by a sentence that says what is
    going on with it is shown, and so is the first once it has a state (a wait) or once the agent
    answers in the window (``between_people``: there a sentence ending on its subject is as often what
    the agent is to act on)."""
    from workers.threads.briefing import named_in_passing, set_aside

    passing = run("I'm writing the migration notes and I will put them in the release wiki.",
                  "Great, link me the release wiki when it's there.", "Sure.")
    wiki = titled(passing, "release wiki")
    assert wiki.about.endswith("in the release wiki")
    assert named_in_passing(wiki, passing)
    aside, general = set_aside(passing, T0 + timedelta(minutes=3))
    assert wiki.id in aside and wiki.id in general

    stated = run("I'm rewriting the release wiki this week because the migration notes are wrong.",
                 "Good, the release wiki needs it.", "Sure.")
    assert not named_in_passing(titled(stated, "release wiki"), stated)
    assert titled(stated, "release wiki").id not in set_aside(stated, T0 + timedelta(minutes=3))[0]

    waiting = apply_message(passing, message("We're waiting for the release wiki to be approved by legal.", 5),
                            SETTINGS, BOTH)
    assert titled(waiting, "release wiki").waiting_for
    assert not named_in_passing(titled(waiting, "release wiki"), waiting)

    # the agent answering: the sentence ending on its subject is what it is to act on
    answered = apply_message(passing, message("I'll add the release notes there too.", 5, role="assistant"),
                             SETTINGS, BOTH)
    assert not named_in_passing(titled(answered, "release wiki"), answered)
    assert titled(answered, "release wiki").id not in set_aside(answered, T0 + timedelta(minutes=6))[0]


def test_set_aside_asks_between_people_once_a_document(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37, twenty-third round: ``between_people`` reads the document's window, not a thread:
    ``set_aside`` asks it once a document and hands it to ``named_in_passing`` for every thread (it
    was asked once a thread), with the same ids set aside."""
    from workers.threads import briefing

    passing = run("I'm writing the migration notes and I will put them in the release wiki.",
                  "Great, link me the release wiki when it's there.", "Sure.")
    wiki = titled(passing, "release wiki")
    twins = [msgspec.structs.replace(wiki, id=f"{wiki.id}-{i}") for i in range(4)]
    doc = msgspec.structs.replace(passing, threads=[*passing.threads, *twins])
    now = T0 + timedelta(minutes=3)
    expected = briefing.set_aside(doc, now)
    assert {t.id for t in twins} <= expected[1]

    asked: list[int] = []
    original = briefing.between_people

    def counted(d: ThreadsDoc) -> bool:
        asked.append(1)
        return original(d)

    monkeypatch.setattr(briefing, "between_people", counted)
    assert briefing.set_aside(doc, now) == expected
    assert len(asked) == 1
    # asked by itself, ``named_in_passing`` still reads the window (``people`` not given)
    assert briefing.named_in_passing(wiki, doc) and len(asked) == 2
    assert not briefing.named_in_passing(wiki, doc, people=False) and len(asked) == 2
