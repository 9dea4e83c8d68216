"""What the recall worker composes from (``WorkerSpec.sources``): the knowledge facts as of
each session start, mirrored as memories (``workers.recall.facts``)."""

from __future__ import annotations

from schemas.docs import KnowledgeDoc
from shared.footprint import Source
from shared.names import BUCKET_KNOWLEDGE

KNOWLEDGE = Source("knowledge", "knowledge", BUCKET_KNOWLEDGE, KnowledgeDoc)
SOURCES = (KNOWLEDGE,)
