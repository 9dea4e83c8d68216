"""The one LLM client every LLM path goes through (``shared.llm.client``): bounded calls that
fall back to the structured path instead of stalling, answered later into the stream
(``deferred``), any provider behind one request shape (``providers``)."""

from shared.llm.availability import Availability, LlmHealth
from shared.llm.client import (
    NO_MODEL,
    Answer,
    CachedAnswer,
    Check,
    LlmCap,
    LlmClient,
    make_provider,
    process_cap,
    retry_delay,
    started_llm,
    worker_llm,
)
from shared.llm.deferred import Later, PendingCall, answer_event
from shared.llm.metrics import (
    LLM_CALLS,
    LLM_DEFERRED,
    LLM_ENRICHMENTS,
    LLM_FAILURES,
    LLM_SECONDS,
    LLM_TOKENS,
    LLM_UNREACHABLE,
)
from shared.llm.providers import CAUSES, LlmReply, LlmRequest, Provider, ProviderFailure, failure_for_status

__all__ = [
    "CAUSES",
    "LLM_CALLS",
    "LLM_DEFERRED",
    "LLM_ENRICHMENTS",
    "LLM_FAILURES",
    "LLM_SECONDS",
    "LLM_TOKENS",
    "LLM_UNREACHABLE",
    "NO_MODEL",
    "Answer",
    "Availability",
    "CachedAnswer",
    "Check",
    "Later",
    "LlmCap",
    "LlmClient",
    "LlmHealth",
    "LlmReply",
    "LlmRequest",
    "PendingCall",
    "Provider",
    "ProviderFailure",
    "answer_event",
    "failure_for_status",
    "make_provider",
    "process_cap",
    "retry_delay",
    "started_llm",
    "worker_llm",
]
