"""What the recall worker composes from (``WorkerSpec.sources``): the knowledge facts as of
each session start, mirrored as memories (``workers.recall.facts``); and the FeedbackEvent
kinds it applies (``WorkerSpec.feedback_kinds``: the only ones its consumer is delivered).
Importable without the recall stack, as ``workers.recall.spec`` is."""

from __future__ import annotations

from schemas.docs import KnowledgeDoc
from shared.footprint import Source
from shared.names import BUCKET_KNOWLEDGE

KNOWLEDGE = Source("knowledge", "knowledge", BUCKET_KNOWLEDGE, KnowledgeDoc)
SOURCES = (KNOWLEDGE,)
APPLIED_FEEDBACK = frozenset({"recall_access", "memory_pin", "memory_forget", "remember", "memory_update",
                              "llm_answer"})  # the late answers to its capture calls (shared.llm)
