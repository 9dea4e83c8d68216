"""Knowledge worker: entities and facts from conversation (issue 6; reference: the
knowledge-engine plugin). This package is the pure core; the worker shell around it
fetches events, calls ``apply_message`` / ``merge_llm_result``, writes the KV values
(split over ``agent.<part>`` keys by ``shared.parts`` when large) and owns ``integrity``."""

from workers.knowledge.core import (
    apply_access,
    apply_message,
    empty_doc,
    merge_llm_result,
    normalize_type,
)
from workers.knowledge.extract import extract_entities, merge_entities
from workers.knowledge.facts import derive_statements, query_facts
from workers.knowledge.llm import LlmEntity, LlmFact, LlmKnowledge, build_llm_prompt, parse_llm_output

__all__ = [
    "LlmEntity",
    "LlmFact",
    "LlmKnowledge",
    "apply_access",
    "apply_message",
    "build_llm_prompt",
    "derive_statements",
    "empty_doc",
    "extract_entities",
    "merge_entities",
    "merge_llm_result",
    "normalize_type",
    "parse_llm_output",
    "query_facts",
]
