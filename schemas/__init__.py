"""Cortex wire and document types: the contract (``CONTRACT.md``) as msgspec Structs.

Everything that crosses a process boundary is declared here once; the JSON Schemas in
``schemas/json/`` are exported from these Structs (``python -m schemas.export``).
"""

from schemas.docs import (
    BootDoc,
    ChannelsDoc,
    ChannelState,
    Commitment,
    CommitmentsDoc,
    Decision,
    DecisionsDoc,
    Entity,
    Fact,
    Integrity,
    KnowledgeDoc,
    NarrativeDoc,
    SnapshotDoc,
    Thread,
    ThreadsDoc,
)
from schemas.events import (
    CompactionEvent,
    CompactionMessage,
    Event,
    FeedbackEvent,
    MessageEvent,
    NoteEvent,
    RunEvent,
    SessionEvent,
    ToolEvent,
)

CORTEX_SCHEMAS_PACKAGE = True  # marker: proves `import schemas` resolved to Cortex's package

__all__ = [
    "CORTEX_SCHEMAS_PACKAGE",
    "BootDoc",
    "ChannelState",
    "ChannelsDoc",
    "Commitment",
    "CommitmentsDoc",
    "CompactionEvent",
    "CompactionMessage",
    "Decision",
    "DecisionsDoc",
    "Entity",
    "Event",
    "Fact",
    "FeedbackEvent",
    "Integrity",
    "KnowledgeDoc",
    "MessageEvent",
    "NarrativeDoc",
    "NoteEvent",
    "RunEvent",
    "SessionEvent",
    "SnapshotDoc",
    "Thread",
    "ThreadsDoc",
    "ToolEvent",
]
