"""The LLM client's collectors (label sets small and fixed: purposes, outcomes, causes, workers)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

LLM_CALLS = Counter("cortex_llm_calls_total", "LLM requests by purpose and outcome", ["purpose", "outcome"])
LLM_TOKENS = Counter("cortex_llm_tokens_total", "LLM tokens by purpose and direction", ["purpose", "direction"])
LLM_SECONDS = Histogram("cortex_llm_request_seconds", "One request to the model, answered or not, by purpose",
                        ["purpose"], buckets=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0))
LLM_FAILURES = Counter("cortex_llm_failures_total", "Requests to the model without a usable answer, by cause",
                       ["cause"])
LLM_UNREACHABLE = Gauge("cortex_llm_unreachable", "1 while a worker's model is unreachable and it writes the "
                        "structured result (the calls are asked again once it answers)", ["worker"])
LLM_DEFERRED = Gauge("cortex_llm_deferred", "Calls that fell back to the structured path, waiting for the model "
                     "to answer them", ["worker"])
LLM_ENRICHMENTS = Counter("cortex_llm_enrichments_total", "Calls asked again once the model answered: published "
                          "as llm_answer events, or given up", ["worker", "outcome"])
