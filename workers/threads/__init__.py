"""Threads worker: conversation threads derived from messages (pure core in ``core``)."""

from workers.threads.core import apply_feedback, apply_message, empty_threads_doc, prune_and_cap

__all__ = ["apply_feedback", "apply_message", "empty_threads_doc", "prune_and_cap"]
