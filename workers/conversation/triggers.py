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
from typing import ClassVar, Final, NamedTuple

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



class _NotLed(Exception):
    """A source ``led_by_class`` leaves as it is (syntax it does not read, or no gain)."""


class _Lead:
    """What ``led_by_class`` reads: kept in a class, not as module-level tables, so the pattern
    fingerprint (``shared.fingerprint``, which reads a module's tables) stays what it was."""

    CLASSES = frozenset("sdwSDW")  # escapes of a class of characters: not spelled out
    ASSERTIONS = ("(?<!", "(?<=", "(?!", "(?=")
    CONTROL: ClassVar[dict[str, str]] = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
    MAX_CHARS = 16  # a first character spelled out from a class of at most this many
    MAX_GROWTH = 8  # a rewritten source at most this many times the original's length


class _Leaf(NamedTuple):
    """An alternative opening on one character: its leading assertions, the characters it may
    open on, and what it matches after that character."""

    lead: str
    chars: tuple[str, ...]
    after: str


class _Fork(NamedTuple):
    """An alternative opening on a choice: its leading assertions, the choices (each a ``_Leaf``
    or ``_Fork``, tried in order), and what follows the choice."""

    lead: str
    choices: tuple[_Leaf | _Fork, ...]
    rest: str


def led_by_class(source: str, flags: int = 0) -> str:
    """``source`` rewritten to open on an alternation of single characters (which ``re`` skips
    ahead by), matching the same spans and groups, or ``source`` itself when it already opens
    so (or on syntax this does not read).

    ``re`` skips ahead to a candidate position only when a pattern opens on a literal, a class,
    or an alternation whose every alternative opens on a literal character; a pattern led by a
    look-behind, ``\\b``, ``^``, a class or a nested group inside an alternation (``(?:^|[.!?]\\s)
    (?:for|as for)…``, ``\\b(?:not|never)…|n['’]t\\b``) is tried at every position of the text.
    The rewrite groups the alternatives by their first character, spelled out (a nested group's
    alternatives and an optional first atom's two cases too): ``\\bnot\\b|n['’]t\\b|\\bnever\\b`` →
    ``n(?:(?<=\\bn)ot\\b|['’]t\\b|(?<=\\bn)ever\\b)``. At a position only the alternatives that
    open on its character can match, and they are tried in their order, with the same
    backtracking; an alternative's leading assertions are checked by a look-behind over its
    first character, at the position before it. So every match, span and group is the
    original's (``tests/workers/conversation/test_conversation_leading.py`` compares them over
    the corpora). A rewrite that would copy a capturing group, open on a class of many
    characters (``\\s``, ``\\w``, ``[^…]``, ``.``) or match the empty string is not made.
    """
    if flags & (re.IGNORECASE | re.VERBOSE) or "(?" in (
            source.replace("(?:", "").replace("(?<", "").replace("(?=", "").replace("(?!", "")):
        return source  # (inline flags, named groups, comments, atomic groups: not read)
    try:
        alternatives = _split_alternatives(source)
        if _opens_plainly(alternatives):
            return source
        nodes = tuple(_peel(alternative) for alternative in alternatives)
        if len(nodes) == 1 and isinstance(nodes[0], _Fork):
            # one alternative opening on a choice: the choice led by its characters, what follows
            # it written once (a capturing group in it stays where it is)
            node = nodes[0]
            firsts = dict.fromkeys(_chars(node))
            check = {c: f"(?<={node.lead}{re.escape(c)})" if node.lead else "" for c in firsts}
            rewritten = f"(?:{'|'.join(re.escape(c) + check[c] + _body(node.choices, c) for c in firsts)}){node.rest}"
        else:
            firsts = dict.fromkeys(c for node in nodes for c in _chars(node))
            rewritten = "|".join(re.escape(c) + _body(nodes, c) for c in firsts)
        if len(rewritten) > _Lead.MAX_GROWTH * len(source) + 64:
            return source
        old, new = re.compile(source, flags), re.compile(rewritten, flags)
    except (_NotLed, ValueError, IndexError, re.error):
        return source
    if old.groups != new.groups or old.groupindex != new.groupindex:
        return source  # (a capturing group copied)
    return rewritten


def _opens_plainly(alternatives: list[str]) -> bool:
    """``re`` already skips ahead: one alternative opening on a character or a class (no
    assertion before it, not optional), or alternatives each opening on a literal character."""
    if len(alternatives) == 1:
        lead, atom, kind, quantifier, _ = _first_atom(alternatives[0])
        if not lead and kind == "group" and not quantifier:
            return _opens_plainly(_split_alternatives(atom[3:-1]))
        return not lead and kind in ("char", "class") and _least(quantifier) >= 1
    for alternative in alternatives:
        lead, atom, kind, quantifier, _ = _first_atom(alternative)
        if lead or kind != "char" or quantifier:
            return False
    return True


def _least(quantifier: str) -> int:
    """The least count a quantifier allows (1 without one)."""
    if not quantifier:
        return 1
    if quantifier[0] in "*?":
        return 0
    if quantifier[0] == "+":
        return 1
    return int(quantifier[1:].split(",", maxsplit=1)[0].rstrip("}?") or 0)


def _lead_end(sequence: str) -> int:
    """Where the leading zero-width assertions of a sequence end (``\\b``, ``^``, look-arounds, a
    group of assertions alone)."""
    i = 0
    while i < len(sequence):
        if sequence.startswith(("\\b", "\\B", "\\A"), i):
            i += 2
        elif sequence[i] == "^":
            i += 1
        elif sequence.startswith(_Lead.ASSERTIONS, i):
            i = _closing(sequence, i, "(", ")") + 1
        elif sequence.startswith("(?:", i) and _asserts_only(sequence[i:_closing(sequence, i, "(", ")") + 1]) and (
                _quantifier(sequence, _closing(sequence, i, "(", ")") + 1)[0] < 0):
            i = _closing(sequence, i, "(", ")") + 1  # a group of assertions alone: ``(?:^|(?<=\\n))``
        else:
            break
    return i


def _first_atom(sequence: str) -> tuple[str, str, str, str, str]:
    """(leading assertions, first atom, its kind, its quantifier, the rest) of a sequence with
    no top-level ``|``. Kinds: "char" (one literal character), "class" (``[…]``, ``\\s``, …),
    "group" (``(?:…)``), "end" (nothing after the assertions)."""
    i = _lead_end(sequence)
    lead = sequence[:i]
    if i >= len(sequence):
        return lead, "", "end", "", ""
    ch = sequence[i]
    if ch == "(":
        end = _closing(sequence, i, "(", ")") + 1
        if not sequence.startswith("(?:", i):
            raise _NotLed(sequence)  # a capturing group: its span would start after the first character
        kind = "group"
    elif ch == "[":
        end, kind = _closing(sequence, i, "[", "]") + 1, "class"
    elif ch == "\\":
        escaped = sequence[i + 1]
        if escaped.isalnum() and escaped not in _Lead.CLASSES and escaped not in _Lead.CONTROL:
            raise _NotLed(sequence)  # (\Z, \1, \u…: not read)
        end, kind = i + 2, "class" if escaped in _Lead.CLASSES else "char"
    elif ch in ".$)|*+?{":
        raise _NotLed(sequence)
    else:
        end, kind = i + 1, "char"
    _, after = _quantifier(sequence, end)
    if sequence.startswith("+", after) and after > end:
        raise _NotLed(sequence)  # a possessive quantifier
    return lead, sequence[i:end], kind, sequence[end:after], sequence[after:]


def _asserts_only(group: str) -> bool:
    """A ``(?:…)`` group each alternative of which is zero-width assertions alone."""
    return all(_first_atom(alternative)[2] == "end" for alternative in _split_alternatives(group[3:-1]))


def _spelled(atom: str, kind: str) -> tuple[str, ...]:
    """The characters a one-character atom matches, when few and known; raises ``_NotLed``."""
    if kind == "char":
        if atom.startswith("\\"):
            return (_Lead.CONTROL.get(atom[1], atom[1]),)
        return (atom,)
    if not atom.startswith("[") or atom.startswith("[^"):
        raise _NotLed(atom)  # (\s, \w, a negated class: many characters)
    inside, i = atom[1:-1], 0
    chars: list[str] = []
    while i < len(inside):
        ch = inside[i]
        if ch == "\\":
            escaped = inside[i + 1]
            if (escaped.isalnum() and escaped not in _Lead.CONTROL) or escaped in _Lead.CLASSES:
                raise _NotLed(atom)
            ch, i = _Lead.CONTROL.get(escaped, escaped), i + 2
        elif ch == "[":
            raise _NotLed(atom)
        else:
            i += 1
        if inside.startswith("-", i) and i + 1 < len(inside):  # a range
            high = inside[i + 1]
            if high == "\\" or ord(high) - ord(ch) > _Lead.MAX_CHARS:
                raise _NotLed(atom)
            chars.extend(chr(c) for c in range(ord(ch), ord(high) + 1))
            i += 2
        else:
            chars.append(ch)
    if not chars or len(chars) > _Lead.MAX_CHARS:
        raise _NotLed(atom)
    return tuple(dict.fromkeys(chars))


def _captures(source: str) -> bool:
    return re.compile(source).groups > 0


def _peel(sequence: str) -> _Leaf | _Fork:
    """``sequence`` (no top-level ``|``) read as a ``_Leaf`` or ``_Fork``; raises ``_NotLed``."""
    lead, atom, kind, quantifier, rest = _first_atom(sequence)
    if kind == "end":
        raise _NotLed(sequence)  # it may match the empty string
    if _least(quantifier) == 0:  # optional: its two cases, in the order the quantifier tries them
        if _captures(rest) or _captures(atom):
            raise _NotLed(sequence)
        taken = atom + _more(atom, quantifier) + rest
        lazy = len(quantifier) > 1 and quantifier.endswith("?")
        return _Fork(lead, (_peel(rest), _peel(taken)) if lazy else (_peel(taken), _peel(rest)), "")
    if kind == "group":
        alternatives = _split_alternatives(atom[3:-1])
        if not quantifier and any(_first_atom(a)[2] == "end" for a in alternatives):
            # an alternative of assertions alone (``(?:^|\\s)…``): each alternative with what
            # follows the group, so that one opens on what follows
            if _captures(rest):
                raise _NotLed(sequence)
            return _Fork(lead, tuple(_peel(a + rest) for a in alternatives), "")
        if quantifier and _captures(atom):
            raise _NotLed(sequence)
        return _Fork(lead, tuple(_peel(a) for a in alternatives), _more(atom, quantifier) + rest)
    return _Leaf(lead, _spelled(atom, kind), _more(atom, quantifier) + rest)


def _more(atom: str, quantifier: str) -> str:
    """What is left of ``atom`` + ``quantifier`` once one ``atom`` is matched ("a+" → "a*",
    "a{2,5}" → "a{1,4}", "a?" and "a" → "")."""
    if not quantifier:
        return ""
    lazy = "?" if len(quantifier) > 1 and quantifier.endswith("?") else ""
    bare = quantifier[:-1] if lazy else quantifier
    if bare == "?":
        return ""
    if bare in ("+", "*"):
        return f"{atom}*{lazy}"
    if bare.startswith("{"):
        low, comma, high = bare[1:-1].partition(",")
        if (high or low) == "0":
            raise _NotLed(atom + quantifier)  # (never once)
        least = max(int(low or 0) - 1, 0)
        if not comma:
            return f"{atom}{{{least}}}{lazy}" if least else ""
        return f"{atom}{{{least},{int(high) - 1 if high else ''}}}{lazy}"
    raise _NotLed(atom + quantifier)


def _chars(node: _Leaf | _Fork) -> tuple[str, ...]:
    if isinstance(node, _Leaf):
        return node.chars
    return tuple(dict.fromkeys(c for choice in node.choices for c in _chars(choice)))


def _body(nodes: tuple[_Leaf | _Fork, ...], char: str) -> str:
    """What ``nodes`` (alternatives, in order) match after their first character when it is ``char``."""
    parts = [_after(node, char) for node in nodes if char in _chars(node)]
    return parts[0] if len(parts) == 1 else f"(?:{'|'.join(parts)})"


def _after(node: _Leaf | _Fork, char: str) -> str:
    """What ``node`` matches after its first character ``char``: its leading assertions checked
    by a look-behind over that character."""
    check = f"(?<={node.lead}{re.escape(char)})" if node.lead else ""
    if isinstance(node, _Leaf):
        return check + node.after
    return check + _body(node.choices, char) + node.rest
