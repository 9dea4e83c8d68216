"""Public conversations nobody on the project wrote, as Cortex conversations, behind a split guard.

Two sources, read from the paths the user gives (the corpora are never shipped):

* **LoCoMo** (``snap-research/LoCoMo``, ``data/locomo10.json``): ten two-person chats over
  months. A conversation is one sample, chosen by its index in the file; each LoCoMo session
  is a Cortex session at its own date (``locomo.parse_locomo`` reads the dates; turns 30 s
  apart). An image a turn shares is appended as LoCoMo's own prompts show it: "[shares a
  photo of …]" (the machine caption).
* **QMSum** (``Yale-LILY/QMSum``, ``data/ALL/{train,val,test}/<meeting>.json``): the AMI
  and ICSI meeting transcripts only. A conversation is one or more meetings of a series
  (AMI's ``ES2005a``–``d``: the same team's four meetings); each meeting is a Cortex session,
  on consecutive days at 10:00 (the transcripts carry no date), turns 3 s apart. The
  transcripts' markup is cleaned: ``{vocalsound}``, ``{disfmarker}``, ``{gap}`` … go,
  spelt letters join (``T_V_`` → ``TV``), tokenised punctuation closes up (``so , yeah .``
  → ``so, yeah.``); a turn left with no word is dropped (its index stays its reference).

Every message is a user message whose sender is the speaker. A turn is referenced as its
source does: LoCoMo's dialogue id (``D3:12``), QMSum's meeting and turn index
(``ES2005b:123``, the index in ``meeting_transcripts``).

**Splits** (docs/briefing-eval.md): development = LoCoMo 0–4 and QMSum's train split;
held-out = LoCoMo 5–6 and QMSum's val split; acceptance = LoCoMo 7–9 and QMSum's test split,
which no loader returns without ``allow_acceptance`` (``--acceptance``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Literal

from workers.evals.locomo import DatasetError, parse_locomo, read_json

Split = Literal["dev", "heldout", "acceptance"]
Source = Literal["locomo", "qmsum"]
SPLITS: Final[tuple[Split, ...]] = ("dev", "heldout", "acceptance")

LOCOMO_SPLITS: Final[dict[int, Split]] = {
    0: "dev", 1: "dev", 2: "dev", 3: "dev", 4: "dev", 5: "heldout", 6: "heldout",
    7: "acceptance", 8: "acceptance", 9: "acceptance",
}
# QMSum's own split directories, by our split
QMSUM_DIRS: Final[dict[Split, str]] = {"dev": "train", "heldout": "val", "acceptance": "test"}

# AMI scenario meetings (ES2005a) and ICSI meetings (Bed004, Bmr013, Bro007 …); QMSum's
# committee meetings (covid_2, education_0 …) are not meetings of one team
_MEETING_ID: Final = re.compile(r"(?:(?:ES|IS|TS|EN)\d{4}[a-d]|B[a-z]{2}\d{3})")
MEETING_DAY_ONE: Final = datetime(2005, 3, 7, 10, 0, tzinfo=UTC)  # a Monday; AMI was recorded in 2005
MEETING_TURN_SPACING: Final = timedelta(seconds=3)
MORNING_HOUR: Final = 9  # the new session starts at 09:00 the day after the last session

_MARKUP: Final = re.compile(r"\{[a-z]+\}")
_SPELT: Final = re.compile(r"\b((?:[A-Za-z]_){2,})")
_SPACE_BEFORE_MARK: Final = re.compile(r"\s+([,.?!;:])")
_LEADING_MARKS: Final = re.compile(r"^[\s,.;:]+")


class SplitError(DatasetError):
    """A conversation of another split, or of the acceptance set, was asked for."""


@dataclass(frozen=True)
class RealTurn:
    ref: str  # "D3:12" (LoCoMo) or "ES2005b:123" (QMSum)
    speaker: str
    text: str
    ts: datetime
    session: int  # 1-based, in the conversation


@dataclass(frozen=True)
class RealConversation:
    name: str  # "locomo-0", "qmsum-ES2005"
    source: Source
    split: Split
    speakers: tuple[str, ...]
    turns: tuple[RealTurn, ...]

    @property
    def morning(self) -> datetime:
        """When the next session starts: 09:00 the day after the last turn."""
        last = self.turns[-1].ts
        return datetime(last.year, last.month, last.day, MORNING_HOUR, tzinfo=last.tzinfo) + timedelta(days=1)

    def turn(self, ref: str) -> RealTurn | None:
        return next((t for t in self.turns if t.ref == ref), None)


def _guard(split: Split, wanted: Split, what: str, allow_acceptance: bool) -> None:
    if split == "acceptance" and not allow_acceptance:
        raise SplitError(f"{what} belongs to the acceptance set: refused without --acceptance")
    if split != wanted:
        raise SplitError(f"{what} belongs to the {split} split, not {wanted}")


# --- LoCoMo --------------------------------------------------------------------------------


def locomo_split(index: int) -> Split:
    split = LOCOMO_SPLITS.get(index)
    if split is None:
        raise DatasetError(f"LoCoMo conversation {index}: no such conversation in locomo10.json (0-9)")
    return split


def read_locomo(path: str | Path) -> list[Any]:
    """The parsed file; one clear line when it is missing or not a LoCoMo file."""
    p = Path(path)
    data = read_json(p, f"--locomo {p}", "LoCoMo's data/locomo10.json")
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s for s in data):
        raise DatasetError(f"--locomo {p}: not a LoCoMo file (expected a list of samples with a conversation)")
    return data


def _locomo_text(text: str, caption: str | None) -> str:
    return f"{text} [shares {caption}]" if caption else text


def locomo_conversation(data: Sequence[Any], index: int, wanted: Split,
                        allow_acceptance: bool = False) -> RealConversation:
    """Conversation ``index`` of a parsed LoCoMo file, when it belongs to ``wanted``: the
    others are never parsed."""
    split = locomo_split(index)
    _guard(split, wanted, f"LoCoMo conversation {index}", allow_acceptance)
    if index >= len(data):
        raise DatasetError(f"LoCoMo conversation {index}: the file has {len(data)} conversations")
    (conv,) = parse_locomo([data[index]], f"locomo[{index}]")
    turns = tuple(RealTurn(ref=t.dia_id, speaker=t.speaker, text=_locomo_text(t.text, t.caption), ts=t.ts,
                           session=t.session) for t in conv.turns if t.text.strip() or t.caption)
    if not turns:
        raise DatasetError(f"LoCoMo conversation {index}: no turns")
    return RealConversation(name=f"locomo-{index}", source="locomo", split=split,
                            speakers=(conv.speaker_a, conv.speaker_b), turns=turns)


# --- QMSum ---------------------------------------------------------------------------------


def qmsum_root(path: str | Path) -> Path:
    """QMSum's ``data/ALL`` (the directory holding train/, val/ and test/), given it or the
    repository around it."""
    p = Path(path)
    for candidate in (p, p / "data" / "ALL"):
        if (candidate / "train").is_dir() and (candidate / "val").is_dir():
            return candidate
    if not p.exists():
        raise DatasetError(f"--qmsum {p}: no such directory")
    raise DatasetError(f"--qmsum {p}: expected QMSum's data/ALL (with train/ and val/) or the repository holding it")


def clean_transcript(text: str) -> str:
    """A transcript turn as text: markup out, spelt letters joined, punctuation closed up."""
    text = _MARKUP.sub(" ", text)
    text = _SPELT.sub(lambda m: m.group(1).replace("_", ""), text)
    text = " ".join(text.split())
    text = _SPACE_BEFORE_MARK.sub(r"\1", text)
    return _LEADING_MARKS.sub("", text)


def _meeting_turns(path: Path, meeting: str) -> list[tuple[int, str, str]]:
    data = read_json(path, f"QMSum meeting {meeting} ({path})")
    raw = data.get("meeting_transcripts") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise DatasetError(f"QMSum meeting {meeting}: {path} has no meeting_transcripts list")
    out = []
    for i, turn in enumerate(raw):
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
            raise DatasetError(f"QMSum meeting {meeting}: turn {i} needs a speaker and a content")
        text = clean_transcript(turn["content"])
        if any(ch.isalnum() for ch in text):
            out.append((i, str(turn.get("speaker") or "unknown").strip() or "unknown", text))
    return out


def qmsum_conversation(root: Path, name: str, meetings: Sequence[str], wanted: Split,
                       allow_acceptance: bool = False) -> RealConversation:
    """The meetings (in order, one session each) of QMSum's directory for ``wanted``: the
    acceptance set's directory is never read without ``allow_acceptance``."""
    _guard(wanted, wanted, f"QMSum conversation {name}", allow_acceptance)
    if not meetings:
        raise DatasetError(f"QMSum conversation {name}: no meetings")
    turns: list[RealTurn] = []
    speakers: dict[str, None] = {}
    for n, meeting in enumerate(meetings):
        if not _MEETING_ID.fullmatch(meeting):
            raise DatasetError(f"QMSum meeting {meeting}: not an AMI or ICSI meeting id")
        path = root / QMSUM_DIRS[wanted] / f"{meeting}.json"
        if not path.is_file():
            raise SplitError(f"QMSum meeting {meeting}: not in {QMSUM_DIRS[wanted]}/ (the {wanted} split)")
        start = MEETING_DAY_ONE + timedelta(days=n)
        for k, (i, speaker, text) in enumerate(_meeting_turns(path, meeting)):
            speakers.setdefault(speaker)
            turns.append(RealTurn(ref=f"{meeting}:{i}", speaker=speaker, text=text,
                                  ts=start + MEETING_TURN_SPACING * k, session=n + 1))
    if not turns:
        raise DatasetError(f"QMSum conversation {name}: no turns")
    return RealConversation(name=f"qmsum-{name}", source="qmsum", split=wanted, speakers=tuple(speakers),
                            turns=tuple(turns))
