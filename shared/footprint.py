"""What a worker declares about its inputs: the documents of other workers it composes from.

A composed worker (snapshot, narrative, channels' summaries, boot, recall's facts) reads
other workers' documents *as of* the event that triggers it (``shared.asof``), after
waiting until their workers have applied everything before that event
(``shared.watermarks``). Each such input is one ``Source`` on the worker's ``WorkerSpec``:
the NATS permissions (``deploy/gen_manifests.py``: history reads of the bucket, the owner's
consumer info and checkpoints) and the shared reader (``shared.inputs.Inputs``) both
come from it.

A worker whose documents belong in the agent's briefing declares its sections
(``shared.briefing.BriefingSection``, ``WorkerSpec.briefing``): the boot worker reads each
one's document as a source — waited for, as of the trigger, its lag reported. Their
permissions follow as for any source (the registry adds each section's ``Source`` to the
specs that read briefings, ``shared.runtime.with_briefings``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

# Which revision of the source document a trigger at stream sequence S reads:
# * "before": the state just before S (every event before S applied) — the default;
# * "made_for_trigger": the document its worker makes *for* S itself (read as of S + 1),
#   e.g. the channel summaries every trigger makes;
# * "made_for_compaction": the same, at a compaction only (the snapshot and narrative made
#   for it); at other triggers the state before S.
AsOf = Literal["before", "made_for_trigger", "made_for_compaction"]


@dataclass(frozen=True)
class Source:
    """One input of a composed worker: ``worker``'s document ``doc_type`` in ``bucket``,
    known to the composing code as ``field``, read as of the trigger by ``as_of``."""

    field: str
    worker: str
    bucket: str
    doc_type: type[Any]
    as_of: AsOf = "before"

    def before(self, seq: int, family: str) -> int:
        """The sequence the read is *before* for a trigger at ``seq`` of ``family``."""
        if self.as_of == "made_for_trigger" or (self.as_of == "made_for_compaction" and family == "compaction"):
            return seq + 1
        return seq


def buckets_of(sources: Iterable[Source]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.bucket for s in sources))


def workers_of(sources: Iterable[Source]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.worker for s in sources))
