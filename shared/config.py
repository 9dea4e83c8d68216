"""Settings: one frozen Struct read from the environment once, at the entry point.

Every knob of the plugin design's config schema is an environment variable
``CORTEX_<SECTION>_<KNOB>`` with the design's default and range. A bad value stops the
process with a message naming the variable and the accepted range (``SettingsError``).
Nothing below the entry point reads ``os.environ``.
"""

from __future__ import annotations

import functools
import os
import re
import socket
import typing
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta

Language = Literal["en", "de", "es", "fr", "it", "pt", "ru", "ja", "ko", "zh"]
ALL_LANGUAGES: tuple[str, ...] = ("en", "de", "es", "fr", "it", "pt", "ru", "ja", "ko", "zh")
S = TypeVar("S", bound=msgspec.Struct)


class SettingsError(ValueError):
    """A setting is missing or out of range; the message names the variable."""


class ThreadsSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    prune_days: Annotated[int, Meta(ge=1, le=90)] = 7
    max_threads: Annotated[int, Meta(ge=5, le=200)] = 50


class DecisionsSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    max_decisions: Annotated[int, Meta(ge=10, le=500)] = 100
    dedupe_window_hours: Annotated[int, Meta(ge=1, le=168)] = 24


class CommitmentsSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    max_commitments: Annotated[int, Meta(ge=10, le=500)] = 100


class BootSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    max_chars: Annotated[int, Meta(ge=2000, le=64000)] = 16000
    on_session_start: bool = True
    wait_ms: Annotated[int, Meta(ge=0, le=60000)] = 2000
    # at most one "change" BootDoc per agent per this much *event* time (0: one per fetched
    # batch); session start, compaction and session end always make one
    change_interval_ms: Annotated[int, Meta(ge=0, le=86_400_000)] = 60_000
    # Age, as the plugin design's briefing judges it (in event time): thread data older than
    # the warn / alert minutes gets a "Data staleness" / "STALE DATA" line (0: never). A
    # section's own knobs (how many threads, how old a snapshot) are its worker's
    # (``BriefingSection.knobs``, ``Settings.briefing_knobs``), under the same CORTEX_BOOT_ names.
    stale_warn_minutes: Annotated[int, Meta(ge=0, le=43_200)] = 120
    stale_alert_minutes: Annotated[int, Meta(ge=0, le=43_200)] = 480


class PrecompactionSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    max_snapshot_messages: Annotated[int, Meta(ge=5, le=50)] = 15


class NarrativeSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True


class KnowledgeSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    max_entities: Annotated[int, Meta(ge=10, le=50000)] = 5000
    max_facts: Annotated[int, Meta(ge=10, le=100000)] = 10000
    decay_rate: Annotated[float, Meta(ge=0.0, le=1.0)] = 0.02
    decay_interval_hours: Annotated[int, Meta(ge=1, le=8760)] = 24
    llm_batch_size: Annotated[int, Meta(ge=1, le=100)] = 10


class RecallSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    budget_tokens: Annotated[int, Meta(ge=50, le=100000)] = 2000
    limit: Annotated[int, Meta(ge=1, le=200)] = 10
    candidates: Annotated[int, Meta(ge=1, le=1000)] = 50
    dedup_threshold: Annotated[float, Meta(ge=0.5, le=1.0)] = 0.92
    ttl_hours: Annotated[int, Meta(ge=1, le=87600)] = 720
    session_decay_hours: Annotated[int, Meta(ge=1, le=8760)] = 24
    llm_batch_size: Annotated[int, Meta(ge=1, le=100)] = 10
    lifecycle_dry_run: bool = False
    hot_size: Annotated[int, Meta(ge=0, le=1000)] = 50
    cold_idle_days: Annotated[int, Meta(ge=1, le=365)] = 14
    cold_min_hits: Annotated[int, Meta(ge=0, le=1000)] = 3
    # Upkeep (consolidation, expiry, tiering, fact mirroring) also when a session's messages
    # cross into the next this-many-hours period of event time, not only at session starts
    # (workers.recall.lifecycle.upkeep_due); 0: only at session starts
    upkeep_hours: Annotated[int, Meta(ge=0, le=8760)] = 24
    # ... and when they cross into the next this-many-events run of the stream (stream
    # sequences, every agent's events counted; 0: never), so a session busier than a period
    # is maintained more often (lifecycle.upkeep_counted). Off by default: on a stream many
    # agents share, every active session would be maintained once per run
    upkeep_events: Annotated[int, Meta(ge=0, le=100_000_000)] = 0
    # With ANTHROPIC_API_KEY: Claude orders the formula's top candidates of each query
    # (workers.recall.rerank); off by default (a model call per query)
    rerank: bool = False
    rerank_candidates: Annotated[int, Meta(ge=2, le=50)] = 20


class TracesSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The trace analyzer (reference plugin v0.5 ``traceAnalyzer``) and pending operations."""

    enabled: bool = True
    # which signals make findings: "default" (all but unverified_claim, as the reference),
    # "all", or a comma list of doom_loop, repeat_fail, tool_fail, correction, dissatisfied,
    # hallucination, unverified_claim
    signals: str = "default"
    gap_minutes: Annotated[int, Meta(ge=1, le=1440)] = 30  # inactivity that ends a chain
    max_findings: Annotated[int, Meta(ge=10, le=1000)] = 200
    # extra redaction: a JSON list of regular expressions, each match becomes [REDACTED]
    redact_patterns: str = ""
    # a tool call without a result this long (event time) is failed as orphaned
    orphan_hours: Annotated[int, Meta(ge=1, le=720)] = 24
    max_operations: Annotated[int, Meta(ge=10, le=1000)] = 100
    llm_triage: bool = True  # with ANTHROPIC_API_KEY: Claude's second opinion on each finding


class RuntimeSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Consume-loop knobs (not in the plugin design; Cortex's own)."""

    batch_size: Annotated[int, Meta(ge=1, le=5000)] = 1000
    # how many messages (and MiB) the consume loop reads past those it applies, so one agent's
    # backlog takes turns with the others' events (shared.lanes); never less than a batch
    read_ahead: Annotated[int, Meta(ge=1, le=50000)] = 20000
    read_ahead_mib: Annotated[int, Meta(ge=1, le=1024)] = 32
    fetch_timeout_ms: Annotated[int, Meta(ge=10, le=60000)] = 1000
    ack_wait_s: Annotated[int, Meta(ge=1, le=3600)] = 30
    max_attempts: Annotated[int, Meta(ge=1, le=100)] = 5
    retry_base_ms: Annotated[int, Meta(ge=1, le=60000)] = 200
    retry_max_ms: Annotated[int, Meta(ge=1, le=600000)] = 30000
    drain_timeout_s: Annotated[float, Meta(ge=0.1, le=600)] = 20.0
    lease_ttl_s: Annotated[int, Meta(ge=1, le=3600)] = 10
    max_content_bytes: Annotated[int, Meta(ge=1024, le=1048576)] = 65536
    max_compaction_messages: Annotated[int, Meta(ge=1, le=10000)] = 500
    # event string fields that end up in documents as names (sender, channel, actor, …) and
    # path-like ones (a note's path and headings, a session's workspace): longer is bad input
    max_label_chars: Annotated[int, Meta(ge=64, le=4096)] = 256
    max_path_chars: Annotated[int, Meta(ge=256, le=4096)] = 1024
    # the stream is cut every this many sequences: event-derived workers write their pending
    # documents at each multiple, the boot worker's change documents read the state there.
    # Must be the same for every worker (it shapes what a replay reproduces).
    cut_every: Annotated[int, Meta(ge=1, le=1_000_000)] = 1000
    # the niceness a process running only throughput workers takes (``shared.priority``): the
    # latency-critical ones (threads, decisions, boot, api) get the cores first; 0: every process alike
    throughput_niceness: Annotated[int, Meta(ge=0, le=19)] = 10
    # how long a throughput worker, once an event arrives while it is idle, waits for more before
    # it takes the batch (``shared.pull``: its per-batch work shared by the events of the wait);
    # 0: off. A published trigger ends it at once (``shared.pull``: a session start's sources do not
    # sleep on the events before it); at most a quarter of a session start's wait for a source
    # (``workers.boot.early``), for a trigger the fetcher does not hear (a store on another server)
    throughput_linger_ms: Annotated[int, Meta(ge=0, le=125)] = 20
    # the durable consumers' state (what was delivered, what acked) kept in the server's memory
    # instead of a file: the server rewrites that file up to every 10 ms a consumer, a tenth of the
    # embedded server's CPU at 400 msg/s (docs/BENCHMARKS.md, issue 39, twenty-second round). The
    # checkpoint is what a worker resumes from (it rewinds its consumer there at every start), so
    # nothing is lost with it; a server restart forgets such a consumer, and its worker creates it
    # again and rewinds (``shared.errors.ConsumerLost``). Takes effect when a consumer is created
    # (`cortex init` does not change an existing one); for a single server, not a cluster's
    consumer_state_in_memory: bool = False


class OpenClawSettings(msgspec.Struct, frozen=True, kw_only=True):
    """The OpenClaw NATS event store as a source (contract: Sources). ``stream`` set:
    ``cortex init`` makes CORTEX_EVENTS source it; the workers need no setting of it."""

    stream: str | None = None
    prefix: str = "openclaw.events"
    # a copy of a store event at most this many stream sequences after another is the same
    # event (shared.duplicates); must be the same for every worker (it shapes what a replay makes)
    dedup_window: Annotated[int, Meta(ge=0, le=1_000_000)] = 10_000


DEFAULT_MODEL = "claude-haiku-4-5"


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    # connection (unset: NATS_URL, else the nats CLI's selected context — see nats_origin)
    nats_url: str | None = None
    nats_creds: str | None = None
    nats_user: str | None = None
    nats_password: str | None = None
    nats_token: str | None = None
    nats_tls_ca: str | None = None
    nats_tls_cert: str | None = None
    nats_tls_key: str | None = None
    # the embedded nats-server's port (`cortex up` without a URL): unset, 4222 or a free one when
    # 4222 is taken; a number, that port or an error; 0, a free one
    nats_port: Annotated[int, Meta(ge=0, le=65535)] | None = None
    # which convention named nats_url when CORTEX_NATS_URL did not (NATS_URL, a nats CLI context): said
    # where a command reports the server
    nats_origin: str = ""
    # layout
    prefix: str = "cortex"
    data_dir: str = "~/.cortex"
    partitions: Annotated[int, Meta(ge=1, le=64)] = 1
    partition: str = "all"  # which of them this process runs: all | k | ordinal (see load_settings)
    # copies of every stream, bucket and durable consumer `cortex init` makes: 1, or 3 on a
    # three-node NATS cluster (at most the number of servers; init raises, never lowers)
    replicas: Annotated[int, Meta(ge=1, le=5)] = 1
    retention: str | None = None
    dlq_retention: str = "30d"
    mode: Literal["live", "shadow"] = "live"
    channel_modes: str = ""
    # behaviour
    language: str = "both"
    timezone: str = "UTC"
    # stores and output
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None  # sent to the Qdrant server at CORTEX_QDRANT_URL (its service.api_key)
    # the server's gRPC port, which the store speaks (CORTEX_QDRANT_URL names the REST port: Qdrant's
    # 6333 and 6334 by default; a server whose ports are mapped elsewhere needs both)
    qdrant_grpc_port: Annotated[int, Meta(ge=1, le=65535)] = 6334
    embedder: str = "default"
    workspace: str | None = None
    # llm: a provider is configured when CORTEX_LLM_PROVIDER names one, or ANTHROPIC_API_KEY is
    # set (anthropic); otherwise no LLM is called on any path (``model_provider``)
    anthropic_api_key: str | None = None
    openai_api_key: str | None = None  # OPENAI_API_KEY: the key of CORTEX_LLM_PROVIDER=openai
    llm_provider: Literal["anthropic", "openai"] | None = None
    # another endpoint than the provider's own: any OpenAI-compatible server (Ollama, vLLM,
    # LM Studio: http://localhost:11434/v1), an Anthropic-compatible gateway
    llm_base_url: str | None = None
    llm_api_key: str | None = None  # the key for the provider, over ANTHROPIC_API_KEY / OPENAI_API_KEY
    llm_model: str = DEFAULT_MODEL
    # a model per role, each defaulting to CORTEX_LLM_MODEL (shared.llm.client.ROLES: which
    # calls each role makes)
    llm_model_capture: str | None = None
    llm_model_extraction: str | None = None
    llm_model_narrative: str | None = None
    llm_model_triage: str | None = None
    llm_model_rerank: str | None = None
    llm_max_concurrency: Annotated[int, Meta(ge=1, le=64)] = 4
    llm_daily_tokens: Annotated[int, Meta(ge=0)] = 200000
    llm_hourly_tokens: Annotated[int, Meta(ge=0)] = 0  # per agent and hour of event time (0: no hourly cap)
    # the bound of one LLM call (shared.llm): each request at most ``llm_timeout_s``, at most
    # ``llm_attempts`` of them with a backoff from ``llm_retry_base_ms`` (a Retry-After the API
    # gives is honoured when it fits), all within ``llm_deadline_s``; past it the caller takes
    # its structured path and the call is asked again in the background, at most every
    # ``llm_probe_max_ms`` while the model is unreachable
    llm_timeout_s: Annotated[float, Meta(ge=0.01, le=600)] = 20.0
    llm_attempts: Annotated[int, Meta(ge=1, le=10)] = 3
    llm_deadline_s: Annotated[float, Meta(ge=0.01, le=3600)] = 30.0
    llm_retry_base_ms: Annotated[int, Meta(ge=1, le=60000)] = 1000
    llm_probe_max_ms: Annotated[int, Meta(ge=10, le=3_600_000)] = 60000
    # operations
    metrics_port: Annotated[int, Meta(ge=0, le=65535)] | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # text: one readable line per record; json: one JSON object per line (log collectors)
    log_format: Literal["text", "json"] = "text"
    # sections
    threads: ThreadsSettings = ThreadsSettings()
    decisions: DecisionsSettings = DecisionsSettings()
    commitments: CommitmentsSettings = CommitmentsSettings()
    boot: BootSettings = BootSettings()
    precompaction: PrecompactionSettings = PrecompactionSettings()
    narrative: NarrativeSettings = NarrativeSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    recall: RecallSettings = RecallSettings()
    traces: TracesSettings = TracesSettings()
    runtime: RuntimeSettings = RuntimeSettings()
    openclaw: OpenClawSettings = OpenClawSettings()
    # the CORTEX_* variables no setting above reads: a worker's own section (``section``)
    others: dict[str, str] = msgspec.field(default_factory=dict)

    def section(self, name: str, cls: type[S]) -> S:
        """A worker's own settings (``WorkerSpec.config``): ``cls`` read from
        ``CORTEX_<NAME>_<KNOB>`` like the sections above, its defaults for the rest; a bad
        value is a ``SettingsError`` naming the variable (the host checks at start-up)."""
        if name in _SECTIONS:
            raise SettingsError(f"worker {name}: its own settings would share the names of built-in ones "
                                f"(the section {name})")
        return self._own(name, cls)

    def briefing_knobs(self, cls: type[S]) -> S:
        """A briefing section's own knobs (``BriefingSection.knobs``): ``cls`` read from
        ``CORTEX_BOOT_<KNOB>``, the plugin design's names for the briefing's knobs, whichever
        worker's section they belong to; checked like a worker's own settings."""
        return self._own(BRIEFING_SECTION, cls)

    def _own(self, name: str, cls: type[S]) -> S:
        taken = [n for n in (env_name(f, name) for f in cls.__struct_fields__) if n in _known_names()]
        if taken:
            raise SettingsError(f"{cls.__name__}: its settings would share the names of built-in ones "
                                f"({', '.join(taken)})")
        return cls(**_read_struct(cls, self.others, name))

    @property
    def model_provider(self) -> Literal["anthropic", "openai"] | None:
        """The LLM provider the calls go to; None: no LLM is called on any path."""
        if self.llm_provider is not None:
            return self.llm_provider
        return "anthropic" if self.anthropic_api_key else None

    @property
    def model_key(self) -> str | None:
        """The provider's key (a local OpenAI-compatible server may need none)."""
        own = self.anthropic_api_key if self.model_provider == "anthropic" else self.openai_api_key
        return self.llm_api_key or own

    @property
    def languages(self) -> tuple[str, ...]:
        return parse_languages(self.language)

    def channel_mode(self, channel: str | None) -> str:
        return parse_channel_modes(self.channel_modes).get(channel or "", "live")

    @property
    def data_path(self) -> str:
        return os.path.expanduser(self.data_dir)

    @property
    def own_partitions(self) -> list[int | None]:
        """The partitions this process runs: every one, or the one ``CORTEX_PARTITION`` names
        (None stands for the single, unsuffixed consumer when CORTEX_PARTITIONS is 1)."""
        if self.partitions <= 1:
            return [None]
        if self.partition == "all":
            return list(range(self.partitions))
        return [int(self.partition)]


# Env names that differ from the mechanical CORTEX_<FIELD> rule.
_ALIASES = {"anthropic_api_key": "ANTHROPIC_API_KEY", "openai_api_key": "OPENAI_API_KEY",
            "nats_tls_ca": "CORTEX_NATS_TLS_CA"}
_NOT_VARIABLES = frozenset({"others", "nats_origin"})  # what no variable of its own sets
_SECRET_FIELDS = frozenset({"nats_password", "nats_token", "anthropic_api_key", "openai_api_key", "llm_api_key",
                            "qdrant_api_key"})


# The section of the briefing's knobs in the environment (``CORTEX_BOOT_<KNOB>``): the
# boot worker's own and those of each worker's briefing section (``Settings.briefing_knobs``).
BRIEFING_SECTION = "boot"


def env_name(field: str, section: str | None = None) -> str:
    if section is None:
        return _ALIASES.get(field, f"CORTEX_{field.upper()}")
    return f"CORTEX_{section.upper()}_{field.upper()}"


def parse_languages(value: str) -> tuple[str, ...]:
    raw = value.strip().lower()
    if raw == "both":
        return ("en", "de")
    if raw == "all":
        return ALL_LANGUAGES
    codes = tuple(dict.fromkeys(c.strip() for c in raw.split(",") if c.strip()))
    bad = [c for c in codes if c not in ALL_LANGUAGES]
    if not codes or bad:
        raise SettingsError(
            f"CORTEX_LANGUAGE={value!r}: expected 'both', 'all', or a comma list of {', '.join(ALL_LANGUAGES)}"
        )
    return codes


def parse_channel_modes(value: str) -> dict[str, str]:
    modes: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in value.split(","))):
        name, sep, mode = part.partition("=")
        if not sep or mode.strip() not in ("live", "shadow", "off") or not name.strip():
            raise SettingsError(
                f"CORTEX_CHANNEL_MODES={value!r}: expected name=live|shadow|off, comma separated"
            )
        modes[name.strip()] = mode.strip()
    return modes


_DURATION_RE = re.compile(r"^(\d+)\s*(s|m|h|d)$")


def parse_duration_s(value: str) -> int:
    """``30d`` / ``12h`` / ``90m`` / ``45s`` / plain seconds → seconds."""
    value = value.strip()
    if value.isdigit():
        return int(value)
    m = _DURATION_RE.match(value)
    if not m:
        raise SettingsError(f"bad duration {value!r}: expected e.g. 30d, 12h, 90m, 45s")
    return int(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def _describe(ftype: msgspec.inspect.Type) -> str:
    if isinstance(ftype, msgspec.inspect.IntType | msgspec.inspect.FloatType):
        kind = "an integer" if isinstance(ftype, msgspec.inspect.IntType) else "a number"
        lo, hi = ftype.ge, ftype.le
        if lo is not None and hi is not None:
            return f"{kind} between {lo} and {hi}"
        if lo is not None:
            return f"{kind} >= {lo}"
        return kind
    if isinstance(ftype, msgspec.inspect.BoolType):
        return "true or false"
    if isinstance(ftype, msgspec.inspect.LiteralType):
        return "one of " + ", ".join(str(v) for v in ftype.values)
    if isinstance(ftype, msgspec.inspect.UnionType):
        return " or ".join(_describe(t) for t in ftype.types if not isinstance(t, msgspec.inspect.NoneType))
    return "a string"


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _coerce(raw: str, ftype: msgspec.inspect.Type) -> Any:
    inner = ftype
    if isinstance(ftype, msgspec.inspect.UnionType):
        inner = next(t for t in ftype.types if not isinstance(t, msgspec.inspect.NoneType))
    if isinstance(inner, msgspec.inspect.BoolType):
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(raw)
    if isinstance(inner, msgspec.inspect.IntType):
        return int(raw.strip())
    if isinstance(inner, msgspec.inspect.FloatType):
        return float(raw.strip())
    return raw


def _read_struct(cls: type[msgspec.Struct], env: Mapping[str, str], section: str | None) -> dict[str, Any]:
    info = msgspec.inspect.type_info(cls)
    assert isinstance(info, msgspec.inspect.StructType)
    hints = typing.get_type_hints(cls, include_extras=True)
    values: dict[str, Any] = {}
    for f in info.fields:
        if isinstance(f.type, msgspec.inspect.StructType) or f.name in _NOT_VARIABLES:
            continue
        name = env_name(f.name, section)
        raw = env.get(name)
        if raw is None or raw == "":
            continue
        try:
            values[f.name] = msgspec.convert(_coerce(raw, f.type), hints[f.name])
        except (ValueError, msgspec.ValidationError) as exc:
            shown = "<redacted>" if f.name in _SECRET_FIELDS else repr(raw)
            raise SettingsError(f"{name}={shown}: expected {_describe(f.type)}") from exc
    return values


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    "threads": ThreadsSettings,
    "decisions": DecisionsSettings,
    "commitments": CommitmentsSettings,
    "boot": BootSettings,
    "precompaction": PrecompactionSettings,
    "narrative": NarrativeSettings,
    "knowledge": KnowledgeSettings,
    "recall": RecallSettings,
    "traces": TracesSettings,
    "runtime": RuntimeSettings,
    "openclaw": OpenClawSettings,
}


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    """Build and validate Settings from ``env`` (default: the process environment)."""
    env = os.environ if env is None else env
    top = _read_struct(Settings, env, None)
    # The plugin design's `patterns.language` knob is an alias of CORTEX_LANGUAGE.
    if "language" not in top and env.get("CORTEX_PATTERNS_LANGUAGE"):
        top["language"] = env["CORTEX_PATTERNS_LANGUAGE"]
    for section, cls in _SECTIONS.items():
        top[section] = cls(**_read_struct(cls, env, section))
    if "nats_url" not in top:
        top.update(_conventional_server(env, top))
    known = _known_names()
    top["others"] = {k: v for k, v in env.items() if k.startswith("CORTEX_") and k not in known}
    settings = Settings(**top)
    parse_languages(settings.language)
    parse_channel_modes(settings.channel_modes)
    parse_duration_s(settings.dlq_retention)
    if settings.retention:
        parse_duration_s(settings.retention)
    _check_timezone(settings.timezone)
    partition = resolve_partition(settings.partition, settings.partitions,
                                  env.get("HOSTNAME") or socket.gethostname())
    if partition != settings.partition:
        settings = msgspec.structs.replace(settings, partition=partition)
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", settings.prefix):
        raise SettingsError(f"CORTEX_PREFIX={settings.prefix!r}: expected 1-32 letters, digits, _ or -")
    _check_openclaw(settings.openclaw)
    parse_signals(settings.traces.signals)
    parse_redact_patterns(settings.traces.redact_patterns)
    _check_llm(settings)
    return settings


def without_llm(settings: Settings) -> Settings:
    """``settings`` with no LLM provider: no call on any path (the evals' structured runs)."""
    return msgspec.structs.replace(settings, llm_provider=None, anthropic_api_key=None, openai_api_key=None,
                                   llm_api_key=None)


def _check_llm(settings: Settings) -> None:
    """A provider named without what it needs stops the process with the variable to set."""
    if settings.llm_provider == "anthropic" and not settings.model_key:
        raise SettingsError("CORTEX_LLM_PROVIDER=anthropic: set ANTHROPIC_API_KEY (or CORTEX_LLM_API_KEY)")
    if settings.llm_provider != "openai":
        return
    if not (settings.model_key or settings.llm_base_url):
        raise SettingsError("CORTEX_LLM_PROVIDER=openai: set OPENAI_API_KEY for OpenAI, or CORTEX_LLM_BASE_URL for "
                            "an OpenAI-compatible server (e.g. http://localhost:11434/v1 for Ollama)")
    if settings.llm_model == DEFAULT_MODEL:
        raise SettingsError(f"CORTEX_LLM_PROVIDER=openai: set CORTEX_LLM_MODEL to a model the endpoint serves "
                            f"(e.g. gpt-4.1-mini, llama3.1:8b); {DEFAULT_MODEL} is Anthropic's")


_CREDENTIALS = ("nats_creds", "nats_user", "nats_password", "nats_token")
_TLS_FILES = ("nats_tls_ca", "nats_tls_cert", "nats_tls_key")


def _conventional_server(env: Mapping[str, str], top: Mapping[str, Any]) -> dict[str, Any]:
    """What a NATS user's tools would connect to, for a process given no CORTEX_NATS_URL:
    ``NATS_URL``, else the nats CLI's selected context with its credentials and TLS files —
    each set only where no CORTEX_NATS_* one is (they belong to that context's server)."""
    from shared.natscontext import conventional_server

    choice = conventional_server(env)
    if choice is None:
        return {}
    found: dict[str, Any] = {"nats_url": choice.url, "nats_origin": choice.origin}
    ctx = choice.context
    if ctx is None:
        return found
    if not any(top.get(f) for f in _CREDENTIALS):
        found.update({f: v for f, v in (("nats_creds", ctx.creds), ("nats_user", ctx.user),
                                        ("nats_password", ctx.password), ("nats_token", ctx.token)) if v})
    if not any(top.get(f) for f in _TLS_FILES):
        found.update({f: v for f, v in (("nats_tls_ca", ctx.ca), ("nats_tls_cert", ctx.cert),
                                        ("nats_tls_key", ctx.key)) if v})
    return found


# Signals a plain "default" enables: the reference's defaults (unverified_claim is off there,
# it fires on every unchecked statement about the system).
DEFAULT_SIGNALS: tuple[str, ...] = ("doom_loop", "repeat_fail", "tool_fail", "correction", "dissatisfied",
                                    "hallucination")
ALL_SIGNALS: tuple[str, ...] = (*DEFAULT_SIGNALS, "unverified_claim")


def parse_signals(value: str) -> frozenset[str]:
    raw = value.strip().lower()
    if raw in ("", "default"):
        return frozenset(DEFAULT_SIGNALS)
    if raw == "all":
        return frozenset(ALL_SIGNALS)
    names = {n.strip() for n in raw.split(",") if n.strip()}
    bad = sorted(names - set(ALL_SIGNALS))
    if bad:
        raise SettingsError(f"CORTEX_TRACES_SIGNALS={value!r}: expected 'default', 'all' or a comma list of "
                            f"{', '.join(ALL_SIGNALS)}")
    return frozenset(names)


def parse_redact_patterns(value: str) -> tuple[re.Pattern[str], ...]:
    if not value.strip():
        return ()
    try:
        sources = msgspec.json.decode(value, type=list[str])
    except msgspec.DecodeError as exc:
        raise SettingsError(f"CORTEX_TRACES_REDACT_PATTERNS: expected a JSON list of regular expressions "
                            f"({exc})") from exc
    patterns = []
    for source in sources:
        try:
            patterns.append(re.compile(source))
        except re.error as exc:
            raise SettingsError(f"CORTEX_TRACES_REDACT_PATTERNS: {source!r} is no regular expression ({exc})") from exc
    return tuple(patterns)


_STREAM_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,255}")
_SUBJECT_PREFIX_RE = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*")


def _check_openclaw(openclaw: OpenClawSettings) -> None:
    if openclaw.stream is not None and not _STREAM_NAME_RE.fullmatch(openclaw.stream):
        raise SettingsError(f"CORTEX_OPENCLAW_STREAM={openclaw.stream!r}: expected a stream name "
                            "(letters, digits, _ or -), e.g. openclaw-events")
    if not _SUBJECT_PREFIX_RE.fullmatch(openclaw.prefix) or len(openclaw.prefix) > 200:
        raise SettingsError(f"CORTEX_OPENCLAW_PREFIX={openclaw.prefix!r}: expected subject tokens without "
                            "wildcards, e.g. openclaw.events")


_ORDINAL_RE = re.compile(r"-(\d+)$")


def resolve_partition(value: str, partitions: int, hostname: str) -> str:
    """``CORTEX_PARTITION`` → ``all`` or the number of the partition this process runs.

    ``all`` (the default): every partition in one process (``cortex up``, the demo).
    ``k``: partition k, 0 ≤ k < CORTEX_PARTITIONS. ``ordinal``: the number a StatefulSet
    pod's host name ends with (``cortex-threads-3``) modulo CORTEX_PARTITIONS, so 2N
    replicas give each partition an active instance and a standby.
    """
    raw = value.strip().lower()
    if raw in ("", "all"):
        return "all"
    if raw == "ordinal":
        if partitions <= 1:
            return "0"
        found = _ORDINAL_RE.search(hostname)
        if not found:
            raise SettingsError(f"CORTEX_PARTITION=ordinal: the host name {hostname!r} does not end in -<number> "
                                "(a StatefulSet pod's does)")
        return str(int(found.group(1)) % partitions)
    if not raw.isdigit() or int(raw) >= partitions:
        raise SettingsError(f"CORTEX_PARTITION={value!r}: expected all, ordinal or a number between 0 and "
                            f"{partitions - 1} (CORTEX_PARTITIONS={partitions})")
    return str(int(raw))


def _check_timezone(name: str) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise SettingsError(f"CORTEX_TIMEZONE={name!r}: expected an IANA time zone such as Europe/Berlin") from exc


@functools.cache
def _known_names() -> frozenset[str]:
    return frozenset(name for name, _, _ in settings_reference())


def settings_reference(own: Iterable[tuple[str, type[msgspec.Struct]]] = ()) -> list[tuple[str, str, str]]:
    """(variable, default, accepted) rows for docs/operations.md: the built-in settings,
    then the workers' own sections ``own`` (section name, Struct)."""
    rows: list[tuple[str, str, str]] = []
    for section, cls in [(None, Settings), *_SECTIONS.items(), *own]:
        info = msgspec.inspect.type_info(cls)
        assert isinstance(info, msgspec.inspect.StructType)
        for f in info.fields:
            if isinstance(f.type, msgspec.inspect.StructType) or f.name in _NOT_VARIABLES:
                continue
            default = "" if f.default is msgspec.NODEFAULT else str(f.default)
            rows.append((env_name(f.name, section), default, _describe(f.type)))
    return rows
