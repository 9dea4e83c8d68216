"""Evaluation harnesses: measure what a worker derives against a labelled dataset.

``cortex eval recall FILE`` (:mod:`workers.evals.harness`) ingests conversations in the
LoCoMo JSON format (:mod:`workers.evals.locomo`) through a real nats-server and the real
recall worker, asks every question through ``cortex.api.recall.<agent>`` and reports
evidence recall@1/5/10, MRR and latency by question category. A small self-written
sample in that format ships as ``workers/evals/data/sample_locomo.json``.
"""

from __future__ import annotations

from pathlib import Path

SAMPLE_LOCOMO = Path(__file__).parent / "data" / "sample_locomo.json"

__all__ = ["SAMPLE_LOCOMO"]
