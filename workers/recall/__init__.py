"""Recall worker: semantic memory over Qdrant (capture, embeddings, hybrid search, ranking).

The pure core — ``classifier``, ``capture``, ``ranking``, ``tokens``, ``lifecycle`` —
turns events and store candidates into memories, scores and text with no I/O and no
wall clock. ``embedders`` and ``store`` (embedded Qdrant Edge or a Qdrant server) are the
two adapters the worker shell drives.
"""

from workers.recall.classifier import Classification, classify
from workers.recall.models import Memory, RankedMemory, SearchHit, memory_id
from workers.recall.ranking import rank, score_hit
from workers.recall.tokens import estimate_tokens, format_memories_with_budget

__all__ = [
    "Classification",
    "Memory",
    "RankedMemory",
    "SearchHit",
    "classify",
    "estimate_tokens",
    "format_memories_with_budget",
    "memory_id",
    "rank",
    "score_hit",
]
