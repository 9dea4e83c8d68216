"""Decisions worker: decisions and commitments derived from messages (pure cores)."""

from workers.decisions import commitments
from workers.decisions.core import apply_message, empty_decisions_doc, infer_impact

__all__ = ["apply_message", "commitments", "empty_decisions_doc", "infer_impact"]
