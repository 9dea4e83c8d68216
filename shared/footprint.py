"""What a worker declares about its inputs: the documents of other workers it composes from.

A composed worker (snapshot, narrative, channels' summaries, boot, recall's facts) reads
other workers' documents *as of* the event that triggers it (``shared.asof``), after
waiting until their workers have applied everything before that event
(``shared.watermarks``). Each such input is one ``Source`` on the worker's ``WorkerSpec``:
the NATS permissions (``deploy/gen_manifests.py``: history reads of the bucket, the owner's
consumer info and checkpoints) and the shared reader (``shared.inputs.Inputs``) both
come from it.

A worker whose document belongs in the agent's briefing declares it as a ``BriefingSection``
(``WorkerSpec.briefing``): the boot worker reads it like its own sources — waited for, as of
the trigger, its lag reported — and renders it as a section of its own, within the briefing's
budget. Its permissions follow as for any source (the registry adds the section's ``Source``
to the specs that read briefings, ``shared.runtime.with_briefings``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args

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


# The briefing's sections a declared section can follow (``workers.boot.assemble``), in their order.
Placement = Literal["state", "snapshot", "narrative", "threads", "operations", "lessons", "decisions",
                    "commitments", "facts", "channels", "memories"]
PLACEMENTS: tuple[Placement, ...] = get_args(Placement)

T = TypeVar("T")


@dataclass(frozen=True)
class BriefingSection(Generic[T]):
    """A section of the agent's briefing (BOOTSTRAP) made from one of the worker's documents.

    ``render`` is pure — the document in, the section's lines out (each kept whole or not at
    all within the budget; none: no section, no heading) — so a replay makes the same bytes.
    ``chars`` is the section's budget at the design size (16000 characters), scaled with the
    briefing's limit like every other section's. The section follows the one ``after`` names
    (sections after the same one: by worker name). The document is read as of the trigger
    by ``as_of`` (``Source``); an agent without one gets no section and no "no data" warning.
    """

    title: str  # the heading, without its "## "
    bucket: str  # one of the worker's buckets
    doc_type: type[T]
    render: Callable[[T], Sequence[str]]
    chars: int = 600
    after: Placement = "memories"
    as_of: AsOf = "before"

    def source(self, worker: str) -> Source:
        """The composed input a briefing reads it as (its field: ``briefing:<worker>``)."""
        return Source(f"briefing:{worker}", worker, self.bucket, self.doc_type, self.as_of)


def buckets_of(sources: Iterable[Source]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.bucket for s in sources))


def workers_of(sources: Iterable[Source]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.worker for s in sources))
