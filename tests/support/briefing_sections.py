"""Every registered worker's briefing sections, in the document's order (what the boot
worker reads from ``WorkerContext.catalog``), for tests that assemble a briefing directly."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from schemas.docs import Integrity, RecallDoc
from shared.briefing import BriefingSection, placed
from shared.config import load_settings
from shared.names import (
    BUCKET_CHANNELS,
    BUCKET_COMMITMENTS,
    BUCKET_DECISIONS,
    BUCKET_EXTRACTION,
    BUCKET_KNOWLEDGE,
    BUCKET_NARRATIVES,
    BUCKET_OPERATIONS,
    BUCKET_RECALL,
    BUCKET_SNAPSHOTS,
    BUCKET_THREADS,
    BUCKET_TRACES,
)
from shared.runtime import briefing_knobs, briefings
from workers.boot.inputs import BootInputs
from workers.registry import all_specs

SECTIONS: list[BriefingSection[Any]] = placed(briefings(all_specs().values()))


def knobs(**env: str) -> list[Any]:
    """The sections' own knobs as the environment ``env`` sets them (``CORTEX_BOOT_<KNOB>``)."""
    return briefing_knobs(briefings(all_specs().values()), load_settings(env))

NOW = datetime(2026, 2, 17, 11, 30, 2, tzinfo=UTC)  # the boot tests' "now" (tests/workers/boot/conftest.py)

# The briefing documents a test names, by their bucket.
DOC_BUCKETS = {"threads": BUCKET_THREADS, "decisions": BUCKET_DECISIONS, "commitments": BUCKET_COMMITMENTS,
               "snapshot": BUCKET_SNAPSHOTS, "narrative": BUCKET_NARRATIVES, "knowledge": BUCKET_KNOWLEDGE,
               "channels": BUCKET_CHANNELS, "traces": BUCKET_TRACES, "operations": BUCKET_OPERATIONS,
               "extraction": BUCKET_EXTRACTION}


def boot_inputs(**kw: Any) -> BootInputs:
    """Inputs of the documents named as the sections' (``threads=``, ``knowledge=``, …;
    ``key_memories=`` and ``key_owners=`` make recall's document), the rest as given."""
    docs = dict(kw.pop("docs", {}))
    docs.update({DOC_BUCKETS[name]: kw.pop(name) for name in list(kw) if name in DOC_BUCKETS})
    memories, owners = kw.pop("key_memories", None), kw.pop("key_owners", {})
    if memories is not None:
        docs[BUCKET_RECALL] = RecallDoc(agent="main", updated=kw.get("now", NOW), key_memories=list(memories),
                                        memories=0, hot=0, cold=0, integrity=Integrity(), key_owners=owners)
    return BootInputs(**{"agent": "main", "now": NOW, "docs": docs, **kw})


def replaced(inputs: BootInputs, **docs: Any) -> BootInputs:
    """``inputs`` with the documents named as the sections' replaced."""
    return inputs.with_docs({**inputs.docs, **{DOC_BUCKETS[name]: doc for name, doc in docs.items()}})
