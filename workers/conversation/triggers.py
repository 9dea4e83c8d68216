"""Required literals of a pattern: a cheap ``in`` test that rules a regex out.

Python's ``re`` tries every alternative at almost every position of a message, which
makes a scan of a few hundred characters cost microseconds per pattern. Most messages
match no pattern at all, and every match of ``(?:decided|decision|agreed)`` contains one
of three words: checking those with ``str.__contains__`` (fast C substring search) first
skips the regex for the common case, without changing any result.

``required_literals(source)`` returns strings of which every match contains at least one,
or ``None`` when it cannot tell (then the regex always runs). It understands the subset of
regex syntax the language packs use and gives up, safely, on anything else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, NamedTuple

_CLASS_ESCAPES: Final = frozenset("sSwWdDbBAZ")
_LITERAL_ESCAPES: Final = frozenset(".()[]{}|?*+^$\\/-'\"!:")
_ANCHORS: Final = frozenset("^$")
_CLASS_SYNTAX: Final = frozenset("^-\\[]")  # a class holding none of these lists its characters
# At most this many strings a run of literals may stand for: "let's", "let’s" or "lets" and then
# " use", " stick with", … (``_spellings``) is one run of 3 × 7.
MAX_SPELLINGS: Final = 64


class _Atom(NamedTuple):
    literal: str | None  # one literal character, or None for anything else
    group: str | None  # the inside of a (?:...) or (...) group
    min_count: int  # how often the atom must occur (from its quantifier)
    once: bool  # no quantifier: exactly one occurrence, so a literal run continues
    optional: bool = False  # the quantifier is ``?``: once or not at all
    chars: str | None = None  # a class of literal characters (``['’]``, ``[sz]``): its members


def _closing(source: str, start: int, opening: str, closing: str) -> int:
    """Index of the bracket closing the one at ``start`` (escapes and classes respected)."""
    depth, i = 0, start
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[" and opening == "(":
            i = _closing(source, i, "[", "]") + 1
            continue
        if ch == opening and (opening == "(" or depth == 0):
            depth += 1
        elif ch == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(f"unbalanced {opening} in {source!r}")


def _quantifier(source: str, i: int) -> tuple[int, int]:
    """(minimum count, index after the quantifier) for the quantifier at ``i``, if any."""
    if i >= len(source) or source[i] not in "?*+{":
        return -1, i
    if source[i] == "{":
        end = source.index("}", i)
        minimum = int(source[i + 1 : end].split(",", maxsplit=1)[0] or 0)
        i = end + 1
    else:
        minimum = 1 if source[i] == "+" else 0
        i += 1
    if i < len(source) and source[i] == "?":  # lazy
        i += 1
    return minimum, i


def _atom(source: str, i: int) -> tuple[_Atom, int]:
    ch = source[i]
    if ch == "(":
        end = _closing(source, i, "(", ")")
        inner = source[i + 1 : end]
        group = inner[2:] if inner.startswith("?:") else None if inner.startswith("?") else inner
        atom, i = _Atom(None, group, 1, True), end + 1
    elif ch == "[":
        end = _closing(source, i, "[", "]")
        inner = source[i + 1 : end]
        chars = inner if inner and not any(c in _CLASS_SYNTAX for c in inner) else None
        atom, i = _Atom(None, None, 1, True, chars=chars), end + 1
    elif ch == "\\":
        escaped = source[i + 1]
        literal = escaped if escaped in _LITERAL_ESCAPES else None
        if escaped not in _CLASS_ESCAPES and escaped not in _LITERAL_ESCAPES:
            raise ValueError(f"unsupported escape \\{escaped}")
        atom, i = _Atom(literal, None, 1, True), i + 2
    else:
        atom, i = _Atom(None if ch in _ANCHORS or ch == "." else ch, None, 1, True), i + 1
    optional = source.startswith("?", i) and not source.startswith("??", i)
    minimum, i = _quantifier(source, i)
    if minimum < 0:  # no quantifier
        return atom, i
    return atom._replace(min_count=minimum, once=False, optional=optional), i


def _split_alternatives(source: str) -> list[str]:
    parts, start, i = [], 0, 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "([":
            i = _closing(source, i, ch, ")" if ch == "(" else "]") + 1
            continue
        if ch == "|":
            parts.append(source[start:i])
            start = i + 1
        i += 1
    parts.append(source[start:])
    return parts


def _better(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The more selective candidate: the longer shortest literal, then fewer literals."""
    if a is None:
        return b
    if b is None:
        return a
    key_a, key_b = (min(map(len, a)), -len(a)), (min(map(len, b)), -len(b))
    return a if key_a >= key_b else b


def _product(runs: tuple[str, ...], spelled: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(run + more for run in runs for more in spelled))


def _atom_spellings(atom: _Atom, spelled_out: bool) -> tuple[str, ...] | None:
    """The strings one atom (with its quantifier, when it is ``?``) matches, when they are few
    and fixed: a literal character, a class of literal characters, a group of such sequences
    (not ``spelled_out``: a literal character alone, as the first rule had it)."""
    if not spelled_out:
        return (atom.literal,) if atom.literal is not None and atom.once else None
    if atom.literal is not None:
        spelled: tuple[str, ...] | None = (atom.literal,)
    elif atom.chars is not None:
        spelled = tuple(dict.fromkeys(atom.chars))
    elif atom.group is not None:
        spelled = _spellings(atom.group)
    else:
        return None
    if spelled is None or atom.once:
        return spelled
    return ("", *spelled) if atom.optional else None


def _spellings(source: str) -> tuple[str, ...] | None:
    """Every string ``source`` matches when it matches at most ``MAX_SPELLINGS`` fixed strings
    ("(?:let['’]?s|we will) use" → "lets use", "let's use", "let’s use", "we will use"), else None."""
    found: dict[str, None] = {}
    for alternative in _split_alternatives(source):
        runs: tuple[str, ...] = ("",)
        i = 0
        while i < len(alternative):
            atom, i = _atom(alternative, i)
            spelled = _atom_spellings(atom, spelled_out=True)
            if spelled is None or len(runs) * len(spelled) > MAX_SPELLINGS:
                return None
            runs = _product(runs, spelled)
        found.update(dict.fromkeys(runs))
        if len(found) > MAX_SPELLINGS:
            return None
    return tuple(found)


def _whole(runs: tuple[str, ...]) -> tuple[str, ...] | None:
    """A run's strings as a candidate, without those that hold another ("is done" holds "done":
    a text holding it holds "done"); none when one of them is empty (every text holds it)."""
    if not all(runs):
        return None
    return tuple(run for run in runs if not any(other != run and other in run for other in runs))


def _sequence(source: str, spelled_out: bool) -> tuple[str, ...] | None:
    """Literals one of which every match of ``source`` (no top-level ``|``) holds: the most
    selective of its runs — consecutive atoms that match few fixed strings, each run standing
    for all the strings it can be ("let['’]?s do": "lets do", "let's do", "let’s do"; a trigger
    of "s do" passed 7 % of the bench's messages, ~1 µs of regex each) — and of its groups'."""
    best: tuple[str, ...] | None = None
    runs: tuple[str, ...] = ("",)
    i = 0
    while i < len(source):
        atom, i = _atom(source, i)
        spelled = _atom_spellings(atom, spelled_out)
        if spelled is not None and len(runs) * len(spelled) <= MAX_SPELLINGS:
            runs = _product(runs, spelled)
            continue
        if atom.literal is not None and atom.min_count >= 1:  # "a+": one "a" ends the run
            runs = _product(runs, (atom.literal,))
        best = _better(best, _whole(runs))
        runs = spelled if spelled is not None else ("",)  # (a run too long to join starts anew)
        if atom.group is not None and atom.min_count >= 1:
            best = _better(best, required_literals(atom.group, spelled_out))
    return _better(best, _whole(runs))


def required_literals(source: str, spelled_out: bool = False) -> tuple[str, ...] | None:
    """Literals of which every match of ``source`` contains one; ``None`` if unknown.

    ``spelled_out``: a run stands for every string its atoms can spell ("let['’]?s do" → "lets
    do", "let's do", "let’s do"; ``_spellings``), as an automaton finds them all in one pass
    (``patterns.LiteralScan``); else only runs of literal characters ("s do"), few literals for
    ``in`` tests — and the answer of a check that says more than whether to run the regex
    (``decisions.core._proposal`` keeps a message that holds one) stays what it was."""
    try:
        alternatives = _split_alternatives(source)
        found = [_sequence(alt, spelled_out) for alt in alternatives]
    except (ValueError, IndexError):
        return None
    if any(f is None for f in found):
        return None
    return _whole(tuple(dict.fromkeys(lit for f in found if f is not None for lit in f)))


def any_literal(literals: Iterable[str]) -> re.Pattern[str] | None:
    """One regex that finds a match exactly when the text contains one of ``literals``
    (None for none). Written as a trie ("pass|passed|passes|…" → ``pass``, "done|do" →
    ``do``): ``re`` then looks at each position of a message once, where ~40 ``in`` scans
    (the mood words) read the message ~40 times. A literal that extends another is left
    out: a text containing it contains the shorter one."""
    root: _Trie = {}
    listed = False
    for literal in sorted(set(literals), key=len):
        listed = True
        node = root
        for ch in literal:
            if "" in node:
                break
            node = node.setdefault(ch, {})
        else:
            node.clear()
            node[""] = {}
    return re.compile(_trie_source(root)) if listed else None


_Trie = dict[str, "_Trie"]  # a literal's next character → the rest; "" ends a literal


def _trie_source(node: _Trie) -> str:
    if "" in node:
        return ""
    alternatives = [re.escape(ch) + _trie_source(child) for ch, child in sorted(node.items())]
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"


def unwrapped(source: str) -> str:
    """``source`` without non-capturing groups around all of it: ``(?:a|b)`` → ``a|b``, the
    same regex. ``re`` skips ahead by the first characters of a top-level alternation of
    literals, but not through a group, so the bare alternation scans a message ~2.5× faster
    (the mood words); a source that is not one whole group is returned as it is."""
    while source.startswith("(?:"):
        try:
            if _closing(source, 0, "(", ")") != len(source) - 1:
                break
        except (ValueError, IndexError):
            break
        source = source[3:-1]
    return source


def split_lead(source: str) -> tuple[str | None, str]:
    """``source`` as (its leading zero-width assertions, the rest): ``(?<![a-z])(?:decided|…)``
    → (``(?<![a-z])``, ``(?:decided|…)``); (None, source) when it has none, when they are not
    all of the pattern's start (a top-level ``|``), or when they capture. ``re`` skips ahead by
    the first characters of a pattern that opens on literals, but tries a leading look-behind
    at every position of the text: a message is scanned ~5× faster by the rest, whose matches
    are then kept where the assertions hold (``patterns.Pattern``) — the same matches."""
    try:
        if len(_split_alternatives(source)) != 1:
            return None, source
        end = 0
        while end < len(source):
            if source.startswith("\\b", end):
                end += 2
                continue
            if not source.startswith(("(?<!", "(?<=", "(?!", "(?="), end):
                break
            end = _closing(source, end, "(", ")") + 1
    except (ValueError, IndexError):
        return None, source
    lead, rest = source[:end], source[end:]
    if not lead or not rest or re.compile(lead).groups or not _opens_on_literal(rest):
        return None, source
    return lead, rest


def _opens_on_literal(source: str) -> bool:
    """Every match of ``source`` starts with a literal character (of one of its alternatives).
    Only then is a split lead safe: a rest that opens on a class (``[\\w.+#-]+ it is``) would
    match again one character later in a long word each time the lead fails there, a quadratic
    scan of a hostile message."""
    try:
        alternatives = _split_alternatives(source)
        for alternative in alternatives:
            atom, _ = _atom(alternative, 0)
            if atom.min_count < 1:
                return False
            if atom.group is not None:
                if not _opens_on_literal(atom.group):
                    return False
            elif atom.literal is None:
                return False
    except (ValueError, IndexError):
        return False
    return True

