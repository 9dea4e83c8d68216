"""Hand labels of the real-conversation set: what a reader needs in the next morning's briefing.

One file per conversation under ``workers/evals/data/real/<split>/`` (``dev``, ``heldout``),
labelled by reading the conversation (docs/briefing-eval.md has the guide). Every item names
the turns it comes from (``refs``: LoCoMo dialogue ids ``D3:12``, QMSum ``ES2005b:123``), so a
label can be checked against its source; a ref the conversation does not have is an error.

Items are required (counted for recall) or ``optional`` (a true item a briefing may show or
leave out: it absorbs a match and is never missed). ``briefing`` says whether the item is
expected in the BOOTSTRAP too (``None``: the section's rule — ``expected_in_briefing``);
where it is not, the item is judged in the stored documents only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final, Literal

import msgspec

from workers.evals.locomo import DatasetError
from workers.evals.real_corpora import RealConversation, Source, Split

REAL_LABELS: Final = Path(__file__).parent / "data" / "real"
# An undated open promise older than this is no longer expected in the briefing: it has aged
# out (a briefing may still show it; it is judged in the stored document)
COMMITMENT_FRESH_DAYS: Final = 30


class Item(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    refs: list[str]
    aka: list[str] = []  # other wordings a reader would accept
    optional: bool = False
    briefing: bool | None = None
    note: str = ""


class ThreadLabel(Item, frozen=True, kw_only=True, forbid_unknown_fields=True):
    title: str
    state: Literal["open", "closed"] = "open"


class DecisionLabel(Item, frozen=True, kw_only=True, forbid_unknown_fields=True):
    what: str  # what was chosen (a ratification records the proposal it answers)


class CommitmentLabel(Item, frozen=True, kw_only=True, forbid_unknown_fields=True):
    owner: str
    what: str
    status: Literal["open", "done"]
    due: str | None = None  # YYYY-MM-DD, only when the conversation states a due


class FactLabel(Item, frozen=True, kw_only=True, forbid_unknown_fields=True):
    text: str
    about: str | None = None  # the person (or thing) the fact is about: a match must name it


class RuleLabel(Item, frozen=True, kw_only=True, forbid_unknown_fields=True):
    text: str


Label = ThreadLabel | DecisionLabel | CommitmentLabel | FactLabel | RuleLabel


class ConversationLabels(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    source: Source
    conversation: str  # LoCoMo: the index in locomo10.json; QMSum: the series ("ES2005")
    split: Split
    meetings: list[str] = []  # QMSum: the meetings, in order, one session each
    names: list[str] = []  # people's names beside the speakers (QMSum's speakers are roles)
    # words every turn of this conversation says ("remote", "control" in a meeting about a
    # remote control): they tell no item from another and are left out of matching, as names are
    common: list[str] = []
    note: str = ""
    threads: list[ThreadLabel] = []
    decisions: list[DecisionLabel] = []
    commitments: list[CommitmentLabel] = []
    facts: list[FactLabel] = []
    rules: list[RuleLabel] = []

    @property
    def name(self) -> str:
        return f"{self.source}-{self.conversation}"

    def items(self) -> list[Label]:
        return [*self.threads, *self.decisions, *self.commitments, *self.facts, *self.rules]


def load_labels(split: Split, root: Path = REAL_LABELS) -> list[ConversationLabels]:
    """Every labelled conversation of ``split``, in file-name order."""
    folder = root / split
    if not folder.is_dir():
        raise DatasetError(f"no labels for the {split} split ({folder})")
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            labels = msgspec.json.decode(path.read_bytes(), type=ConversationLabels)
        except (OSError, msgspec.DecodeError) as exc:
            raise DatasetError(f"{path}: {exc}") from exc
        if labels.split != split:
            raise DatasetError(f"{path}: labelled {labels.split}, stored under {split}")
        if path.stem != labels.name:
            raise DatasetError(f"{path}: the file of {labels.name} must be named {labels.name}.json")
        out.append(labels)
    return out


def check_refs(labels: ConversationLabels, conv: RealConversation) -> None:
    """Every ref names a turn of the conversation (a label points at its source)."""
    known = {t.ref for t in conv.turns}
    missing = sorted({ref for item in labels.items() for ref in item.refs if ref not in known})
    if missing:
        raise DatasetError(f"{labels.name}: refs not in the conversation: {', '.join(missing[:10])}")
    empty = [i for i, item in enumerate(labels.items()) if not item.refs]
    if empty:
        raise DatasetError(f"{labels.name}: {len(empty)} labelled items name no turn")


def said_at(item: Label, conv: RealConversation) -> datetime:
    """When the item was settled: the time of its latest ref."""
    times = [t.ts for ref in item.refs if (t := conv.turn(ref)) is not None]
    return max(times)


def expected_in_briefing(item: Label, conv: RealConversation, decision_days: int) -> bool:
    """Whether the next morning's BOOTSTRAP should show the item. ``briefing`` decides when
    the label sets it; else: an open thread; a decision within the briefing's recent days
    (``CORTEX_BOOT_DECISION_RECENCY_DAYS``); an open promise with a stated due, or made within
    ``COMMITMENT_FRESH_DAYS``; every fact and rule."""
    if item.briefing is not None:
        return item.briefing
    morning = conv.morning
    if isinstance(item, ThreadLabel):
        return item.state == "open"
    if isinstance(item, DecisionLabel):
        return (morning.date() - said_at(item, conv).date()).days <= decision_days
    if isinstance(item, CommitmentLabel):
        fresh = morning - said_at(item, conv) <= timedelta(days=COMMITMENT_FRESH_DAYS)
        return item.status == "open" and (item.due is not None or fresh)
    return True


def label_texts(item: Label) -> list[str]:
    """The wordings a candidate may match: the label's own and its ``aka``."""
    match item:
        case ThreadLabel():
            own = item.title
        case DecisionLabel() | CommitmentLabel():
            own = item.what
        case FactLabel() | RuleLabel():
            own = item.text
    return [own, *item.aka]


def people(labels: ConversationLabels, conv: RealConversation) -> list[str]:
    """The conversation's people: LoCoMo's speakers and the labels' ``names``."""
    speakers: Sequence[str] = conv.speakers if conv.source == "locomo" else ()
    return list(dict.fromkeys([*speakers, *labels.names]))


def unmatched_words(labels: ConversationLabels, conv: RealConversation) -> list[str]:
    """The words matching leaves out: the people's names and the conversation's ``common`` words."""
    return [*people(labels, conv), *labels.common]
