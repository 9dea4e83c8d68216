"""The LoCoMo conversation-memory format, read leniently.

A file is a JSON list of samples::

    { "sample_id"?: str,
      "conversation": { "speaker_a": str, "speaker_b": str,
                        "session_<n>": [ {"speaker", "dia_id", "text", "blip_caption"?, ...} ],
                        "session_<n>_date_time": "1:56 pm on 8 May, 2023", ... },
      "qa": [ {"question", "answer"?, "evidence": [dia_id], "category": 1..5}, ... ] }

Categories as the LoCoMo paper's release numbers them: 1 multi-hop, 2 temporal,
3 open-domain, 4 single-hop, 5 adversarial (unanswerable; excluded from retrieval
scoring because it has no evidence to find).

The public file has a few malformed evidence ids (``"D8:6; D9:17"``, ``"D:11:26"``,
``"D30:05"``); :func:`parse_dia_ids` recovers every ``D<session>:<turn>`` it can and the
rest are dropped. A question left with no evidence that exists in its conversation is
reported as skipped, never scored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
SCORED_CATEGORIES = (1, 2, 3, 4)

# Turns of a session are spaced this far apart from the session's date (the format gives
# one time per session); the spacing keeps stream order and event time in step.
TURN_SPACING = timedelta(seconds=30)
# A session without a readable date starts this many days after the previous one.
FALLBACK_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%H:%M on %d %B, %Y", "%d %B, %Y", "%d %B %Y")


class DatasetError(ValueError):
    """A dataset file cannot be used (the message says where and why, in one line)."""


def read_json(path: Path, where: str, expected: str = "") -> Any:
    """The parsed JSON of a dataset file; a ``DatasetError`` starting with ``where`` when it
    cannot be read or is not JSON (``expected``: what file was wanted)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DatasetError(f"{where}: cannot read: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{where}: not JSON ({exc})" + (f"; expected {expected}" if expected else "")) from exc


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    session: int
    ts: datetime
    caption: str | None = None


@dataclass(frozen=True)
class Question:
    index: int
    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speaker_a: str
    speaker_b: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    skipped_questions: int  # scored categories whose evidence is missing or unknown


def parse_dia_ids(raw: object) -> list[str]:
    """Every ``D<session>:<turn>`` in an evidence entry, normalised (``D30:05`` → ``D30:5``)."""
    if not isinstance(raw, str):
        return []
    return [f"D{int(s)}:{int(t)}" for s, t in _DIA_ID.findall(raw)]


def parse_session_date(raw: object) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` → an aware UTC datetime (None when unreadable)."""
    if not isinstance(raw, str):
        return None
    text = " ".join(raw.split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _sessions(conv: dict[str, Any], where: str) -> list[tuple[int, list[Any], datetime]]:
    numbers = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.fullmatch(key)))
    out: list[tuple[int, list[Any], datetime]] = []
    previous = FALLBACK_EPOCH
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not isinstance(turns, list):
            raise DatasetError(f"{where}: session_{n} is not a list of turns")
        date = parse_session_date(conv.get(f"session_{n}_date_time"))
        if date is None or date < previous:
            # Event time must never run backwards within a conversation.
            date = previous + timedelta(days=1)
        out.append((n, turns, date))
        previous = date + TURN_SPACING * (len(turns) + 1)
    return out


def _turns(conv: dict[str, Any], where: str) -> list[Turn]:
    turns: list[Turn] = []
    seen: set[str] = set()
    for n, raw_turns, start in _sessions(conv, where):
        for i, raw in enumerate(raw_turns):
            if not isinstance(raw, dict):
                raise DatasetError(f"{where}: session_{n} turn {i} is not an object")
            ids = parse_dia_ids(raw.get("dia_id"))
            text = raw.get("text")
            speaker = raw.get("speaker")
            if not ids or not isinstance(text, str) or not isinstance(speaker, str):
                raise DatasetError(f"{where}: session_{n} turn {i} needs speaker, dia_id and text")
            if ids[0] in seen:
                continue  # a repeated dia_id: the first one stands
            seen.add(ids[0])
            caption = raw.get("blip_caption")
            turns.append(Turn(dia_id=ids[0], speaker=speaker.strip() or "unknown", text=text, session=n,
                              ts=start + TURN_SPACING * i, caption=caption if isinstance(caption, str) else None))
    return turns


def _questions(items: object, known: set[str], where: str) -> tuple[list[Question], int]:
    if not isinstance(items, list):
        raise DatasetError(f"{where}: qa is not a list")
    questions: list[Question] = []
    skipped = 0
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("question"), str):
            raise DatasetError(f"{where}: qa item {index} has no question")
        category = item.get("category")
        if category not in SCORED_CATEGORIES:
            continue
        raw_evidence = item.get("evidence") or []
        evidence = [e for raw in (raw_evidence if isinstance(raw_evidence, list) else [raw_evidence])
                    for e in parse_dia_ids(raw) if e in known]
        if not evidence:
            skipped += 1
            continue
        questions.append(Question(index=index, question=item["question"], answer=str(item.get("answer", "")),
                                  evidence=tuple(dict.fromkeys(evidence)), category=int(category)))
    return questions, skipped


def parse_locomo(data: object, source: str = "dataset") -> list[Conversation]:
    """Conversations (turns in stream order, scored questions) from parsed JSON."""
    if not isinstance(data, list):
        raise DatasetError(f"{source}: expected a JSON list of samples")
    out: list[Conversation] = []
    for i, sample in enumerate(data):
        where = f"{source}[{i}]"
        conv = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conv, dict):
            raise DatasetError(f"{where}: no conversation object")
        turns = _turns(conv, where)
        questions, skipped = _questions(sample.get("qa", []), {t.dia_id for t in turns}, where)
        out.append(Conversation(sample_id=str(sample.get("sample_id") or f"sample-{i}"),
                                speaker_a=str(conv.get("speaker_a", "")), speaker_b=str(conv.get("speaker_b", "")),
                                turns=tuple(turns), questions=tuple(questions), skipped_questions=skipped))
    return out


def load_locomo(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo-format file; raises :class:`DatasetError` on anything unreadable."""
    p = Path(path)
    return parse_locomo(read_json(p, str(p)), str(p))
