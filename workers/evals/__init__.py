"""Evaluation harnesses: measure what a worker derives against a labelled dataset.

``cortex eval recall FILE`` (:mod:`workers.evals.harness`) ingests conversations in the
LoCoMo JSON format (:mod:`workers.evals.locomo`) through a real nats-server and the real
recall worker, asks every question through ``cortex.api.recall.<agent>`` and reports
evidence recall@1/5/10, MRR and latency by question category. A small self-written
sample in that format ships as ``workers/evals/data/sample_locomo.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

SAMPLE_LOCOMO = Path(__file__).parent / "data" / "sample_locomo.json"
# How long an eval's publish waits for the server's ack. The workers run in the eval's own event
# loop: their start (compiling patterns, model clients, imports) holds it for seconds at a time on
# a loaded machine, and an ack that arrived meanwhile is only read afterwards — nats-py's 5 s
# default then fails a publish the server stored. Generous: the limit is for a server that never
# answers (every event carries Nats-Msg-Id, so a retried publish stores nothing twice).
PUBLISH_ACK_S: Final = 120.0

__all__ = ["PUBLISH_ACK_S", "SAMPLE_LOCOMO"]
