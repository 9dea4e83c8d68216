"""Realistic chat events for the benchmark: mixed English and German, many agents.

Ported and extended from the test suite's ``chat_events``: messages are built from
sentences that trigger the real pattern families (topics, decisions, closures, waits,
promises, moods) between plain chatter, and every agent's stream starts with a session
start and changes session every ``session_every`` of its messages. Deterministic for a
seed, so two runs measure the same input.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Final, NamedTuple

import msgspec

from shared.names import published_subject

BASE_TS: Final = datetime(2026, 2, 17, 8, 0, tzinfo=UTC)
CHANNELS: Final = ("webchat", "telegram", "whatsapp")
SENDERS: Final = {"user": ("albert", "maria", "jonas"), "assistant": ("claudia",)}

TOPICS_EN: Final = (
    "auth migration", "token rotation", "dashboard cache", "search index", "kubernetes cluster upgrade",
    "billing export", "release pipeline", "login bug", "onboarding flow", "database schema",
    "payment webhook", "mobile app crash", "api rate limits", "log retention", "backup strategy",
)
TOPICS_DE: Final = (
    "Datenbankmigration", "Performance-Bug im Dashboard", "Rechnungsexport", "Suchindex",
    "Release-Planung", "Sicherheitsupdate", "Kundenportal", "Build-Pipeline", "Backup-Konzept",
)
ACTIONS_EN: Final = (
    "use Redis for the cache", "move token signing to the key service", "ship the fix behind a feature flag",
    "split the export into nightly batches", "drop the legacy endpoint", "pin the client library",
    "rewrite the retry logic", "add an index on the events table",
)
ACTIONS_DE: Final = (
    "die Migration auf nächste Woche zu verschieben", "Redis für den Cache zu nehmen",
    "den alten Endpunkt abzuschalten", "das Deployment erst am Montag zu machen",
    "die Tests parallel laufen zu lassen",
)
CHATTER_EN: Final = (
    "Can you send me the logs from last night?",
    "The numbers look better than yesterday, latency is down by a third.",
    "I read through the PR, a few nits but nothing blocking.",
    "Which version of the client are we running in staging right now?",
    "Thanks, that explains the spike on the graph around midnight.",
    "Let me know when the build is green again.",
    "The customer asked again about the export format, I said CSV for now.",
    "OK, I'm looking at the dashboard now.",
)
CHATTER_DE: Final = (
    "Kannst du mir die Logs von heute Nacht schicken?",
    "Die Zahlen sehen besser aus als gestern, die Latenz ist um ein Drittel runter.",
    "Ich habe den PR gelesen, ein paar Kleinigkeiten, nichts Blockierendes.",
    "Welche Version läuft gerade in Staging?",
    "Danke, das erklärt den Ausschlag in der Grafik um Mitternacht.",
    "Der Kunde hat nochmal nach dem Exportformat gefragt.",
)


def _sentence_en(rng: random.Random) -> str:
    topic, action = rng.choice(TOPICS_EN), rng.choice(ACTIONS_EN)
    return rng.choice((
        f"Let's get back to the {topic}, it is still open.",
        f"Regarding the {topic}: we need the numbers first.",
        f"We decided to {action} because the database is overloaded.",
        f"The plan is to {action} before the release.",
        f"I'll {action} tomorrow.",
        f"Waiting for Maria to review the {topic}.",
        f"The {topic} is fixed ✅",
        "awesome, that works now 🚀",
        f"What if we tried a different approach for the {topic}?",
        f"Careful with the {topic}, the production deploy is risky.",
        *CHATTER_EN, *CHATTER_EN,
    ))


def _sentence_de(rng: random.Random) -> str:
    topic, action = rng.choice(TOPICS_DE), rng.choice(ACTIONS_DE)
    return rng.choice((
        f"Jetzt zu dem {topic}, die Ladezeit ist schon wieder zu hoch.",
        f"Zurück zum {topic}: da fehlt noch einiges.",
        f"Wir haben beschlossen, {action}.",
        f"Ich werde den {topic} morgen früh anschauen.",
        f"Warte auf Jonas wegen dem {topic}.",
        f"Der {topic} ist erledigt.",
        "Mist, der Build ist schon wieder rot.",
        f"Vielleicht könnte man den {topic} einfacher machen?",
        *CHATTER_DE, *CHATTER_DE,
    ))


def message_text(rng: random.Random, german: bool, sentences: int) -> str:
    make = _sentence_de if german else _sentence_en
    return " ".join(make(rng) for _ in range(sentences))


class BenchEvent(NamedTuple):
    subject: str
    data: bytes
    id: str
    agent: str
    kind: str  # "msg" or "session.start" / "session.end"


def agent_name(index: int) -> str:
    return f"agent-{index:02d}"


class EventSource:
    """An endless, deterministic stream of events across ``agents`` agents."""

    def __init__(self, agents: int, seed: int = 7, prefix: str = "cortex", id_prefix: str = "bench",
                 session_every: int = 250) -> None:
        self._rng = random.Random(seed)
        self._agents = [agent_name(i) for i in range(agents)]
        self._prefix = prefix
        self._id_prefix = id_prefix
        self._session_every = session_every
        self._count = 0
        self._clock = BASE_TS
        # event time between consecutive events: 2 s for a backlog; a paced phase sets its
        # publish interval, so event time runs like a live gateway's clock
        self.spacing = timedelta(seconds=2)
        self._per_agent: dict[str, int] = {}
        self._session: dict[str, int] = {}
        self._pending: list[BenchEvent] = []
        self._german = {a: self._rng.random() < 0.4 for a in self._agents}  # 40 % German-speaking agents

    @property
    def agents(self) -> list[str]:
        return list(self._agents)

    def _ts(self) -> str:
        return self._clock.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _next_id(self) -> str:
        self._count += 1
        self._clock += self.spacing
        return f"{self._id_prefix}-{self._count}"

    def session_event(self, agent: str, kind: str) -> BenchEvent:
        """A ``session.start`` or ``session.end`` for ``agent`` (a start opens a new session)."""
        if kind == "start":
            self._session[agent] = self._session.get(agent, 0) + 1
        event_id = self._next_id()
        payload = {"id": event_id, "agent": agent, "session": f"s-{agent}-{self._session.get(agent, 1)}",
                   "ts": self._ts(), "channel": self._rng.choice(CHANNELS)}
        return BenchEvent(published_subject(self._prefix, "session", agent, kind), msgspec.json.encode(payload),
                          event_id, agent, f"session.{kind}")

    def message(self, agent: str) -> BenchEvent:
        rng = self._rng
        role = rng.choice(("user", "user", "assistant"))
        sentences = rng.choice((1, 1, 2, 2, 3, 4))
        event_id = self._next_id()
        payload = {"id": event_id, "agent": agent, "session": f"s-{agent}-{self._session.get(agent, 1)}",
                   "ts": self._ts(), "role": role, "sender": rng.choice(SENDERS[role]),
                   "channel": rng.choice(CHANNELS), "content": message_text(rng, self._german[agent], sentences)}
        kind = "sent" if role == "assistant" else "received"
        return BenchEvent(published_subject(self._prefix, "msg", agent, kind), msgspec.json.encode(payload),
                          event_id, agent, "msg")

    def next(self) -> BenchEvent:
        """The next event: a message of a random agent, with its session events around it."""
        if self._pending:
            return self._pending.pop(0)
        agent = self._rng.choice(self._agents)
        seen = self._per_agent.get(agent, 0)
        self._per_agent[agent] = seen + 1
        if seen == 0:
            self._pending.append(self.message(agent))
            return self.session_event(agent, "start")
        if seen % self._session_every == 0:
            self._pending += [self.session_event(agent, "start"), self.message(agent)]
            return self.session_event(agent, "end")
        return self.message(agent)

    def take(self, n: int) -> list[BenchEvent]:
        return [self.next() for _ in range(n)]


def backlog(n: int, agents: int, seed: int = 7, prefix: str = "cortex") -> list[BenchEvent]:
    """``n`` events (messages with their session starts and ends) across ``agents`` agents."""
    return EventSource(agents, seed, prefix).take(n)
