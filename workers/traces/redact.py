"""Secrets and personal data out of every text the trace analyzer keeps or reports.

The reference (openclaw-cortex ``src/trace-analyzer/redactor.ts``) redacted API keys
(``sk-``, ``pk_live_``), Bearer tokens, passwords in URLs, ``PASSWORD=``-style variables,
PEM blocks, GitHub tokens and JWTs before a chain reached the LLM or the report file.
Here every excerpt the trace and operations documents store goes through ``excerpt``, so
findings, summaries, previews, the API, the CLI, the briefing, logs and the LLM prompt
only ever see redacted text. Cortex goes further:

* more credential shapes: Anthropic, Stripe restricted, GitHub fine-grained and OAuth,
  GitLab, Slack, AWS access keys, Google API keys, npm tokens, NATS nkey seeds, secrets
  named in JSON, YAML, CLI flags and prose ("the password is …"), Basic auth, and any
  long token mixing upper case, lower case and digits;
* personal data: e-mail addresses, phone numbers, payment card numbers (Luhn-checked)
  and IBANs;
* a private key block cut off before its END line is redacted to the end of the text
  (the reference's pattern needed the END line, so a clipped block leaked);
* the text is redacted before it is clipped, and clipped far past the excerpt first so
  a secret that straddles a cut is still whole when the patterns look at it;
* settings' extra patterns must compile at start-up (the reference skipped bad ones).

Every replacement is a fixed marker the patterns do not match again: redacting twice
changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

import msgspec

from workers.render import clip_words, one_line

REDACTED: Final = "[REDACTED]"
_MARGIN: Final = 512  # characters read past an excerpt's end before it is cut (see ``excerpt``)


_SECRET_NAME: Final = (
    r"(?:pass(?:word|wd|phrase)?|passwort|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|client[_-]?secret|credentials?|auth(?:orization)?|cookie|session[_-]?(?:id|key)|signature)"
)
_A_DIGIT: Final = re.compile(r"\d")
_MARKER: Final = re.compile(r"\[[A-Z_]+\]")  # what a rule leaves behind
_PASS_NAME: Final = r"(?:password|passwort|passwd|pwd|passphrase|passcode|pin)"


def _named_value(match: re.Match[str]) -> str:
    """``name: value`` with the value replaced, its quotes kept; a short number (a count,
    a port) stays unless the name is a password's."""
    head, value = match.group(1), match.group(2)
    trail = value[len(value.rstrip(".!?")):] if value[:1] not in "\"'" else ""
    value = value[: len(value) - len(trail)]
    bare = value.strip("\"'")
    if bare.isdigit() and len(bare) < 8 and re.search(_PASS_NAME, head, re.IGNORECASE) is None:
        return match.group(0)
    if not bare or _MARKER.fullmatch(bare):
        return match.group(0)
    quote = value[0] if value[:1] in "\"'" else ""
    return f"{head}{quote}{REDACTED}{quote}{trail}"


def _token(match: re.Match[str]) -> str:
    """A long unbroken token is a credential when it mixes upper case, lower case and
    digits (hashes and ids are one case; words have no digits) and is no path."""
    text = match.group(0)
    if text.startswith("/") or "//" in text or text.count("/") > 3:
        return text  # a path or a URL
    mixed = text != text.lower() and text != text.upper() and _A_DIGIT.search(text) is not None
    return "[REDACTED_TOKEN]" if mixed else text


def _luhn(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return "[CARD]" if 13 <= len(digits) <= 19 and _luhn(digits) else match.group(0)


def _phone(match: re.Match[str]) -> str:
    digits = sum(c.isdigit() for c in match.group(0))
    return "[PHONE]" if 8 <= digits <= 15 else match.group(0)


class _Rule(NamedTuple):
    """A pattern, its replacement, and strings one of which every match contains (``None``:
    always run). The pre-check is a C substring search: most texts hold no secret at all,
    and a rule whose literals are absent costs nothing."""

    pattern: re.Pattern[str]
    replacement: str | Callable[[re.Match[str]], str]
    needs: tuple[str, ...] | None = None
    lowered: bool = False  # look for ``needs`` in the lower-cased text


_NAME_STEMS: Final = ("pass", "pwd", "secret", "token", "key", "credential", "auth", "cookie", "session",
                      "signature", "pin")
_DIGITS: Final = tuple("0123456789")

_RULES: Final[tuple[_Rule, ...]] = (
    # private keys, whole or cut off before their END line
    _Rule(re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
                     r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL),
          "[REDACTED_PRIVATE_KEY]", ("-----BEGIN",)),
    # credentials in a URL: scheme://user:password@host (also redis://:password@host)
    _Rule(re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@'\"]*):[^\s'\"]*@"), rf"\1:{REDACTED}@", ("://",)),
    # vendors' key shapes
    _Rule(re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"), "[REDACTED_API_KEY]", ("sk-",)),
    _Rule(re.compile(r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), "[REDACTED_API_KEY]", ("_live_", "_test_")),
    _Rule(re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}"), "[REDACTED_GH_TOKEN]",
          ("gh", "github_pat_")),
    _Rule(re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), "[REDACTED_TOKEN]", ("glpat-",)),
    _Rule(re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "[REDACTED_TOKEN]", ("xox",)),
    _Rule(re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "[REDACTED_AWS_KEY]", ("AKIA", "ASIA")),
    _Rule(re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), "[REDACTED_API_KEY]", ("AIza",)),
    _Rule(re.compile(r"\bnpm_[A-Za-z0-9]{36}"), "[REDACTED_TOKEN]", ("npm_",)),
    _Rule(re.compile(r"\bS[UAOCNPX][A-Z2-7]{50,}"), "[REDACTED_NKEY_SEED]", ("SU", "SA", "SO", "SC", "SN", "SP", "SX")),
    _Rule(re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), "[REDACTED_JWT]", ("eyJ",)),
    # authorization headers
    _Rule(re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}", ("bearer", "basic"), True),
    # secrets by name: KEY=value, "key": "value", key: value, --password value, "the password is …"
    _Rule(re.compile(rf"(?i)(\b[a-z0-9_.-]*?{_SECRET_NAME}s?(?:[_.-][a-z0-9_.-]*)?[\"']?\s*[:=]\s*)"
                     rf"(\[[A-Z_]+\]|\"[^\"]*\"|'[^']*'|[^\s,;&'\"}}\]]+)"), _named_value, _NAME_STEMS, True),
    _Rule(re.compile(rf"(?i)(--{_SECRET_NAME}[a-z0-9-]*[= ])(\"[^\"]*\"|'[^']*'|\S+)"), _named_value, ("--",)),
    _Rule(re.compile(rf"(?i)(\b{_PASS_NAME}\s+(?:is|ist|was|war|es|est|è|é)\s+)(\"[^\"]*\"|'[^']*'|\S+)"),
          _named_value, ("pass", "pwd", "pin"), True),
    # personal data
    _Rule(re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"), "[EMAIL]", ("@",)),
    _Rule(re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b"), "[IBAN]", _DIGITS),
    _Rule(re.compile(r"(?<![\w.])\d(?:[ -]?\d){12,18}(?![\w.])"), _card, _DIGITS),
    _Rule(re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w])"), _phone, ("+",)),
    _Rule(re.compile(r"(?<!\w)\(\d{3}\) ?\d{3}[ .-]\d{4}\b|\b\d{3}[.-]\d{3}[.-]\d{4}\b"), "[PHONE]", _DIGITS),
    _Rule(re.compile(r"(?<![\w.])0\d{2,4}[ /-]\d{3,8}(?:[ -]\d{2,4})?(?![\w.])"), _phone, ("0",)),
    # anything else that looks like a generated credential
    _Rule(re.compile(r"[A-Za-z0-9+/_-]{32,}={0,2}"), _token),
)


def redact(text: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """``text`` with every secret and piece of personal data replaced by a marker; the
    ``extra`` patterns (``CORTEX_TRACES_REDACT_PATTERNS``) become ``[REDACTED]``."""
    lowered = text.lower()
    for rule in _RULES:
        if rule.needs is None or any(map((lowered if rule.lowered else text).__contains__, rule.needs)):
            text = rule.pattern.sub(rule.replacement, text)
    for pattern in extra:
        text = pattern.sub(REDACTED, text)
    return text


def excerpt(text: str, limit: int, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """At most ``limit`` characters of ``text`` on one line, redacted, cut between words.

    The text is read ``_MARGIN`` characters past the limit and redacted before the cut, so
    a secret straddling the limit is recognised whole and then cut away (every shape is
    shorter than the margin, or still matches when cut: a JWT's signature may be empty);
    a bounded read keeps a 64 KiB paste cheap. A private key longer than the margin is
    caught too: its pattern runs to the end of the text when the END line is missing."""
    return clip_words(one_line(redact(text[: limit + _MARGIN], extra)), limit)


_JSON: Final = msgspec.json.Encoder(order="sorted")


def as_text(value: object) -> str:
    """A tool's params or result as text: strings as they are, anything else as sorted,
    compact JSON (so equal values read the same whatever their key order)."""
    if isinstance(value, str):
        return value
    try:
        return _JSON.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return repr(value)
