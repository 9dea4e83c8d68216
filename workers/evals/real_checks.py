"""Reader defects of the briefing on real conversations (pure checks, ``cortex eval briefing --real``).

What a reader of the next morning's briefing meets, judged on the text alone:

* ``overdue_without_due``: a commitment shouting OVERDUE that never had a due date (the
  briefing says "promised <date>, N days ago" where a due would be);
* ``greeting_title`` / ``name_only_title`` / ``fragment_title``: a thread titled "Hey Joanna",
  "Caroline", or a fragment that ends on a function word or starts inside a clause ("simpler
  times but it", "you on the pricing question tomorrow");
* ``pleasantry_commitment``: a courtesy taken for a promise ("keep ya posted", "let you know",
  "be ok", "do that");
* ``always_never_rule``: a sentence under Rules that holds "always"/"never" and is no
  instruction ("That's a memory I'll never forget.");
* ``when_only_narrative``: a narrative that says only when ("Session: session_19"), nothing
  of what happened;
* ``caption_as_text``: a machine image caption shown as what was said ("[shares a photo of …]");
* ``done_shown_open``: a commitment the conversation saw done, shown as open (needs labels:
  counted by the scorer).

The earlier checks of ``briefing_checks`` (cut mid-word, cut without "…", repeated why, one
fact said twice, …) run beside these.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from workers.evals.real_match import STOPWORDS, name_words, words

REAL_DEFECTS: Final = (
    "overdue_without_due", "greeting_title", "name_only_title", "fragment_title", "pleasantry_commitment",
    "always_never_rule", "when_only_narrative", "caption_as_text", "done_shown_open",
)

_GREETING: Final = re.compile(
    r"^(?:hey|hi|hiya|hello|yo|howdy|good (?:morning|afternoon|evening|night)|morning|evening|thanks|thank you"
    r"|bye|goodbye|see (?:ya|you)|congrats|congratulations|wow|woohoo|aww?)\b", re.IGNORECASE)
# words a noun phrase does not end on ("simpler times but it", "tough times finishing my
# screenplay made" ends on a verb: not caught — precision catches it) and does not start
# with ("you on the pricing question")
_FUNCTION_END_WORDS: Final = """
a an the and or but so if as at by for from in into of on onto to with without about than that this these those
it its he she they them we us you i me my your his her our their is are was were be been am do does did has have
had will would can could should must may might not no just very really too also then when while which who whom
what where why how
"""
_FUNCTION_END: Final = frozenset(_FUNCTION_END_WORDS.split())
_FUNCTION_START_WORDS: Final = """
and or but so if as at by for from in into of on onto to with without than that then when while which who whom
you i me we us he she they them it is are was were am do does did has have had will would can could should must
"""
_FUNCTION_START: Final = frozenset(_FUNCTION_START_WORDS.split())
_PLEASANTRY: Final = re.compile(
    r"\b(?:keep (?:you|ya|u|y'all|everyone|me) (?:posted|updated|in the loop)|let (?:you|ya|u) know"
    r"|keep in touch|talk (?:to you )?(?:soon|later)|catch (?:you|ya) (?:later|soon)|see (?:you|ya)"
    r"|take care|give (?:you|ya) a (?:shout|call|ring)|do (?:my|our) best|try (?:my|our) best|give it a (?:go|try|shot)"
    r"|check it out|think about it|be (?:ok|okay|fine|alright)|have fun|stay safe|reach out)\b",
    re.IGNORECASE)
_INSTRUCTION: Final = re.compile(
    r"^(?:always|never|don'?t|do not|please|from now on|make sure|remember to|avoid|only|use|keep)\b", re.IGNORECASE)
_ALWAYS_NEVER: Final = re.compile(r"\b(?:always|never)\b", re.IGNORECASE)
_CAPTION: Final = re.compile(r"\[shares? (?:a |an )?(?:photo|photography|picture|image)\b", re.IGNORECASE)
_NARRATIVE_DATE: Final = re.compile(r"^\*[^*]+ — Narrative\*$")
_BLOCK_LABEL: Final = re.compile(r"^\*\*[^*]+:\*\*$")
_SESSION_ONLY: Final = re.compile(
    r"^- (?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}(?:[–-]\d{2}:\d{2})? (?:Session(?: started| ended)?|Compaction)\b.*$"
    r"|^Session: \S+$")
_MIN_TASK_WORDS: Final = 2


def thread_title_defect(title: str, names: Sequence[str]) -> str | None:
    """``greeting_title``, ``name_only_title`` or ``fragment_title`` for a thread title, or None."""
    text = title.strip()
    if _GREETING.match(text):
        return "greeting_title"
    tokens = [t.lower() for t in re.findall(r"[^\W_]+(?:['’][^\W_]+)*", text)]
    if not tokens:
        return "fragment_title"
    if tokens and not words(text, name_words(names)) and words(text):
        return "name_only_title"
    if tokens[-1] in _FUNCTION_END or tokens[0] in _FUNCTION_START:
        return "fragment_title"
    return None


def pleasantry_commitment(task: str) -> bool:
    """A courtesy or a task too thin to act on ("do that": fewer than two content words)."""
    content = [w for w in re.findall(r"[^\W_]+", task.lower()) if w not in STOPWORDS]
    return bool(_PLEASANTRY.search(task)) or len(content) < _MIN_TASK_WORDS


def always_never_rule(line: str) -> bool:
    """A rule line saying always/never that is no instruction ("That's a memory I'll never forget.")."""
    text = line.strip().removeprefix("- ").strip()
    return bool(_ALWAYS_NEVER.search(text)) and not _INSTRUCTION.match(text)


def when_only_narrative(lines: Sequence[str]) -> bool:
    """A narrative section whose lines say only when: its date, block labels, session entries."""
    said = [line for line in (x.strip() for x in lines)
            if line and not _NARRATIVE_DATE.match(line) and not _BLOCK_LABEL.match(line)
            and not _SESSION_ONLY.match(line)]
    return not said


def caption_as_text(line: str) -> bool:
    return bool(_CAPTION.search(line))


def overdue_without_due(line: str) -> bool:
    """A Commitments line shouting OVERDUE for a promise that had no due: the briefing says
    since when it was promised ("promised 2022-01-21, 294 days ago") where a due would be."""
    return "**OVERDUE**" in line and bool(re.search(r"\((?:[^()]*; )?promised [^()]*\)\s*$", line))
