"""apply_message: one event in, a new KnowledgeDoc out, deterministic in event time."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.docs import Integrity, KnowledgeDoc
from schemas.events import MessageEvent
from shared.config import KnowledgeSettings
from workers.knowledge.core import apply_access, apply_message, empty_doc, project_figures, share_findings
from workers.knowledge.facts import decayed, fact_id, promote

T0 = datetime(2026, 2, 17, 10, 0, tzinfo=UTC)
SETTINGS = KnowledgeSettings()
REPO = Path(__file__).resolve().parents[3]

CONVERSATION = [
    "Hello, my name is Claude Keller. I work for Acme GmbH.",
    "Atlas is a sub-agent. Forge works at Globex Corp. since 2026-01-15.",
    "Mail claude@acme.com or see https://acme.example.com/docs before 17. Februar 2026.",
    "We moved to Windows 11 and GPT-4 on March 3rd, 2026. Atlas is a sub-agent.",
    "Jean-Luc Picard of the USS Enterprise asked about ProductX.",
]


def message(content: str, ts: datetime = T0, n: int = 1, role: str = "user") -> MessageEvent:
    return msgspec.convert(
        {"id": f"e{n}", "agent": "agent1", "session": "s1", "ts": ts, "role": role, "content": content},
        MessageEvent,
    )


def replay(contents: list[str], start: datetime = T0, step: timedelta = timedelta(hours=7)) -> KnowledgeDoc:
    doc: KnowledgeDoc | None = None
    for n, content in enumerate(contents):
        doc = apply_message(doc, message(content, start + n * step, n), SETTINGS)
    assert doc is not None
    return doc


def test_first_message_creates_the_document() -> None:
    doc = apply_message(None, message("Atlas is a sub-agent. mail atlas@acme.com"), SETTINGS)
    assert doc.updated == T0
    assert doc.version == 1
    assert doc.integrity == Integrity()
    assert [e.id for e in doc.entities] == ["email:atlas@acme.com", "unknown:atlas"]
    assert [(f.subject, f.predicate, f.object, f.relevance, f.source) for f in doc.facts] == [
        ("unknown:atlas", "is-a", "sub-agent", 1.0, "extracted-regex")
    ]


def test_integrity_is_carried_over_untouched() -> None:
    integrity = Integrity(last_seq=41, last_event_ts=T0, events=41, producer="knowledge@0.1.0+cfg")
    doc = msgspec.structs.replace(empty_doc(T0), integrity=integrity)
    assert apply_message(doc, message("Atlas", T0 + timedelta(hours=1)), SETTINGS).integrity == integrity


def test_the_input_document_is_never_modified() -> None:
    doc = replay(CONVERSATION)
    before = msgspec.json.encode(doc)
    later = T0 + timedelta(days=9)
    apply_message(doc, message(" ".join(CONVERSATION), later), SETTINGS)
    apply_access(doc, [f.id for f in doc.facts], later, SETTINGS)
    assert msgspec.json.encode(doc) == before


def test_entities_merge_across_messages() -> None:
    doc = replay(["Atlas met Forge.", "Atlas again, ATLAS too.", "Atlas."])
    atlas = next(e for e in doc.entities if e.id == "unknown:atlas")
    assert atlas.count == 4
    assert atlas.mentions == ["Atlas", "ATLAS"]
    assert atlas.last_seen == T0 + timedelta(hours=14)
    assert next(e for e in doc.entities if e.id == "unknown:forge").count == 1


def test_decay_follows_event_time_intervals() -> None:
    doc = apply_message(None, message("Atlas is a sub-agent."), SETTINGS)
    same_day = apply_message(doc, message("ok", T0 + timedelta(hours=13), 2), SETTINGS)
    assert same_day.facts[0].relevance == 1.0  # 10:00 → 23:00, no midnight crossed
    next_day = apply_message(doc, message("ok", T0 + timedelta(hours=15), 2), SETTINGS)
    assert next_day.facts[0].relevance == 0.98
    week = apply_message(doc, message("ok", T0 + timedelta(days=7), 2), SETTINGS)
    assert week.facts[0].relevance == round(0.98**7, 6)
    assert week.updated == T0 + timedelta(days=7)


def test_decay_does_not_depend_on_how_events_are_spaced() -> None:
    """Many small steps cross the same boundaries as one big one."""
    first = message("Atlas is a sub-agent.")
    end = T0 + timedelta(days=3)
    direct = apply_message(apply_message(None, first, SETTINGS), message("ok", end, 2), SETTINGS)
    stepped = apply_message(None, first, SETTINGS)
    for n in range(1, 13):
        stepped = apply_message(stepped, message("ok", T0 + n * timedelta(hours=6), n + 1), SETTINGS)
    assert stepped.updated == direct.updated == end
    assert stepped.facts[0].relevance == direct.facts[0].relevance == 0.941192


def test_an_event_stamped_in_the_past_does_not_move_time_back() -> None:
    doc = apply_message(None, message("Atlas is a sub-agent."), SETTINGS)
    doc = apply_message(doc, message("ok", T0 + timedelta(days=2), 2), SETTINGS)
    skewed = apply_message(doc, message("Forge", T0 + timedelta(days=1), 3), SETTINGS)
    assert skewed.updated == doc.updated
    again = apply_message(skewed, message("ok", T0 + timedelta(days=2, hours=1), 4), SETTINGS)
    assert again.facts[0].relevance == doc.facts[0].relevance == 0.9604


def test_restating_a_fact_promotes_it() -> None:
    doc = apply_message(None, message("Atlas is a sub-agent."), SETTINGS)
    doc = apply_message(doc, message("Atlas is a sub-agent.", T0 + timedelta(days=10), 2), SETTINGS)
    fact = doc.facts[0]
    assert fact.relevance == promote(decayed(1.0, 0.02, 10)) == 0.908537
    assert fact.created_at == T0
    assert fact.last_accessed == T0 + timedelta(days=10)


def test_access_promotes_facts_in_event_time() -> None:
    doc = apply_message(None, message("Atlas is a sub-agent. Forge is a reviewer."), SETTINGS)
    later = T0 + timedelta(days=5)
    doc = apply_access(doc, [fact_id("unknown:atlas", "is-a", "sub-agent")], later, SETTINGS)
    assert [f.relevance for f in doc.facts] == [promote(decayed(1.0, 0.02, 5)), decayed(1.0, 0.02, 5)]
    assert doc.facts[0].last_accessed == later
    assert doc.updated == later


def test_caps_bound_entities_and_facts() -> None:
    capped = KnowledgeSettings(max_entities=10, max_facts=10)
    doc: KnowledgeDoc | None = None
    for n in range(30):
        agent = "Agent" + "".join(chr(ord("a") + int(d)) for d in f"{n:02d}")  # Agentaa, Agentab, ...
        text = f"Acme{n} GmbH hired someone. {agent} is a helper{n}."
        doc = apply_message(doc, message(text, T0 + timedelta(minutes=n), n), capped)
    assert doc is not None
    assert len(doc.entities) == 10
    assert len(doc.facts) == 10
    # Organisations rank highest; among equals the most recent stay.
    assert [e.id for e in doc.entities] == [f"organization:acme{n}" for n in range(20, 30)]
    assert [f.object for f in doc.facts] == [f"helper{n}" for n in range(20, 30)]


def test_same_events_in_order_give_identical_bytes() -> None:
    assert msgspec.json.encode(replay(CONVERSATION)) == msgspec.json.encode(replay(CONVERSATION))


def test_identical_bytes_across_processes_and_hash_seeds() -> None:
    script = (
        "import sys, msgspec\n"
        "sys.path.insert(0, 'tests/workers/knowledge')\n"
        "from test_knowledge_core import CONVERSATION, replay\n"
        "sys.stdout.buffer.write(msgspec.json.encode(replay(CONVERSATION * 3)))\n"
    )
    outputs = set()
    for seed in ("1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        run = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, check=True)
        outputs.add(run.stdout)
    assert len(outputs) == 1
    assert outputs.pop() == msgspec.json.encode(replay(CONVERSATION * 3))


def test_scores_are_rounded() -> None:
    doc = replay(CONVERSATION * 4, step=timedelta(hours=31))
    for value in [*(e.importance for e in doc.entities), *(f.relevance for f in doc.facts)]:
        assert value == round(value, 6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=300), min_size=1, max_size=4))
def test_any_text_applies_deterministically(contents: list[str]) -> None:
    first, second = replay(contents), replay(contents)
    assert msgspec.json.encode(first) == msgspec.json.encode(second)
    assert all(0.1 <= f.relevance <= 1.0 for f in first.facts)


def test_a_fact_access_event_promotes_the_facts_it_names_and_nothing_else_is_accepted() -> None:
    """Issue 23: the knowledge worker applies `fact_access` feedback (the contract's kind),
    which it ignored; other feedback kinds stay not its concern."""
    from schemas.events import FeedbackEvent
    from shared.codec import Envelope
    from shared.config import load_settings
    from shared.llm import LlmClient
    from workers.knowledge.worker import KnowledgeProjection

    projection = KnowledgeProjection(SETTINGS, LlmClient(load_settings({}), js=None))  # type: ignore[arg-type]
    doc = apply_message(None, message("Atlas is a sub-agent. Forge is a reviewer."), SETTINGS)
    atlas = fact_id("unknown:atlas", "is-a", "sub-agent")

    def feedback(kind: str) -> Envelope:
        event = FeedbackEvent(id="fb-1", agent="agent1", ts=T0 + timedelta(days=5), kind=kind,  # type: ignore[arg-type]
                              value=[atlas])
        return Envelope(seq=9, subject=f"cortex.feedback.agent1.{kind}", family="feedback", kind=kind,
                        agent="agent1", event=event)

    assert not projection.accepts(feedback("recall_access"))
    assert projection.accepts(feedback("fact_access"))
    promoted = projection.compose(doc, feedback("fact_access"), None)
    assert promoted is not None
    assert [f.relevance for f in promoted.facts] == [promote(decayed(1.0, 0.02, 5)), decayed(1.0, 0.02, 5)]
    assert projection.compose(None, feedback("fact_access"), None) is None  # nothing known: nothing made


def test_the_document_ceiling_is_checked_at_every_fit_every_th_event_of_the_agent() -> None:
    """The whole document is measured (encoded) only when the agent's event count before
    the event is a multiple of FIT_EVERY: a pure function of the events, so a replay prunes
    at the same events whatever the batching; in between a document may pass the ceiling."""
    from shared.codec import Envelope
    from shared.config import load_settings
    from shared.llm import LlmClient
    from workers.knowledge.worker import FIT_EVERY, KnowledgeProjection

    ceiling = 3000
    projection = KnowledgeProjection(SETTINGS, LlmClient(load_settings({}), js=None),  # type: ignore[arg-type]
                                     max_doc_bytes=ceiling)
    doc: KnowledgeDoc | None = None
    sizes = []
    for i in range(2 * FIT_EVERY + 1):
        event = message(f"Talked with Person{i} Surname{i} about Project{i} at Company{i} GmbH.",
                        T0 + timedelta(minutes=i), n=i)
        env = Envelope(seq=i + 1, subject="cortex.msg.agent1.received", family="msg", kind="received",
                       agent="agent1", event=event)
        new = projection.compose(doc, env, None)
        assert new is not None
        doc = msgspec.structs.replace(new, integrity=Integrity(last_seq=i + 1, events=i + 1))  # as the shell stamps
        sizes.append(len(msgspec.json.encode(doc)))
    checked = [i for i in range(len(sizes)) if i % FIT_EVERY == 0]
    assert all(sizes[i] <= ceiling for i in checked)
    assert max(sizes) > ceiling  # not measured in between


def test_a_projects_figures_are_facts_about_the_figure() -> None:
    """Issue 37 (AMI): a kick-off states the selling price, the cost ceiling and the profit aim,
    and no fact kept them."""
    assert project_figures("Right, so our selling price is uh forty two Euros, and our profit aim is "
                           "ten million Euros.") == [("selling price", "forty two euros"),
                                                     ("profit aim", "ten million euros")]
    assert project_figures("The unit cost can be at most 8.75 dollars.") == [("unit cost", "8.75 dollars")]
    assert project_figures("The new lamp sells for thirty-nine pounds.") == [("selling price", "thirty nine pounds")]
    doc = apply_message(None, message("Our production cost can be maximal seven and a half Euros."),
                        KnowledgeSettings())
    names = {e.id: e.value for e in doc.entities}
    assert [(names[f.subject], f.predicate, f.object) for f in doc.facts] == [
        ("production cost", "is", "seven and a half euros")]


def test_a_projects_figures_said_as_a_team_says_them() -> None:
    """Tenth round of issue 37: the figure without a verb, with a future or a filler, a verb in
    place of the noun, and cents after the currency (every AMI series of the dev split says
    its figures one of these ways)."""
    assert project_figures("Okay, budget review: unit price thirty dollars, revenue target two million dollars.") == [
        ("unit price", "thirty dollars"), ("revenue target", "two million dollars")]
    assert project_figures("We're going to be selling this lamp for forty Euro, and we're aiming to make "
                           "a million Euro.") == [("selling price", "forty euro"), ("profit aim", "a million euro")]
    assert project_figures("Our retail price for the kit is gonna be about ninety pounds.") == [
        ("retail price", "ninety pounds")]
    assert project_figures("It has to cost eight Euros fifty per unit.") == [("production cost", "eight euros fifty")]
    assert project_figures("We must produce each one at a maximum of six Euro.") == [("production cost", "six euro")]


def test_a_figure_asked_proposed_or_paid_is_no_project_figure() -> None:
    assert project_figures("Can we sell it for fifty Euros?") == []
    assert project_figures("Maybe we sell it for fifty Euros, I don't know.") == []
    assert project_figures("Let's sell this for sixty Euros.") == []
    assert project_figures("That phone cost me 500 dollars.") == []  # what a thing cost, not a unit's
    assert project_figures("I sold my bike for 200 dollars.") == []
    assert project_figures("They pay twenty five percent of the selling price.") == []


def test_a_share_of_people_and_what_they_said_is_a_finding() -> None:
    """Tenth round of issue 37: a team's market research ("seventy five percent of users find
    their remote controls ugly") is a fact about the share, said as the speaker said it."""
    assert share_findings("So, sixty percent of customers said they'd pay for faster delivery. Nice.") == [
        ("sixty percent of customers", "said they'd pay for faster delivery")]
    assert share_findings("Forty two percent of the uh people questioned indicated that they read the manual.") == [
        ("forty two percent of the people questioned", "indicated that they read the manual")]
    assert share_findings("And 30% of users they do prefer dark mode, which surprised us.") == [
        ("30 percent of users", "do prefer dark mode")]
    doc = apply_message(None, message("Seventy percent of buyers want a longer battery."), KnowledgeSettings())
    names = {e.id: e.value for e in doc.entities}
    assert [(names[f.subject], f.predicate, f.object) for f in doc.facts] == [
        ("seventy percent of buyers", "want", "a longer battery")]


def test_a_share_of_a_thing_asked_or_supposed_is_no_finding() -> None:
    assert share_findings("It costs fifty percent of the selling price.") == []
    assert share_findings("Would ninety percent of users pay for it?") == []
    assert share_findings("If eighty percent of people want it, we build it.") == []
    assert share_findings("I'm like 90% sure I left it at home.") == []
    assert share_findings("About 80% of my students passed the exam.") == []


def test_a_price_without_an_amount_or_said_of_oneself_is_no_project_figure() -> None:
    assert project_figures("The price of coffee is crazy these days.") == []
    assert project_figures("My budget is about 300 dollars for the trip.") == []
    assert project_figures("The production cost is too high.") == []


def test_a_name_given_again_in_full_is_one_known_fact() -> None:
    """Tenth round of issue 37: "my name's Bob Mor" … "my name's Bob Morris" — the briefing
    shows the name given last (``is-named`` is single-valued), the store keeps both."""
    from workers.knowledge.briefing import fact_sentences
    from workers.render import entity_names

    doc = apply_message(None, message("Uh my name's Bob Mor."), KnowledgeSettings())
    doc = apply_message(doc, message("So my name's Bob Morris.", T0 + timedelta(minutes=1), n=2), KnowledgeSettings())
    assert sorted(f.object for f in doc.facts if f.predicate == "is-named") == ["Bob Mor", "Bob Morris"]
    assert fact_sentences(doc.facts, entity_names(doc.entities)) == ["User is named Bob Morris"]
