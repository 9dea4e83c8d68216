"""Redaction: the reference's redactor cases (``test/trace-analyzer/redactor.test.ts``)
ported, and fuzzed secrets through both cores — no secret or piece of personal data may
reach a finding, a summary, a step, a preview or anything else in the stored documents.

Not applicable: ``redactChain`` not mutating the chain (the cores never mutate; their
tests check it), and "skips invalid custom regex without crashing" — a bad pattern in
``CORTEX_TRACES_REDACT_PATTERNS`` stops the process at start-up with a clear line
(tested in test_trace_core).
"""

from __future__ import annotations

import base64
import random
import re
import string
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import msgspec
import pytest
from trace_testkit import Agent, End, Start, User, fail, trace_doc

from schemas.docs import OperationsDoc
from schemas.events import SessionEvent, ToolEvent
from shared.config import TracesSettings
from workers.traces.operations import apply_operation_event, operations_config
from workers.traces.redact import excerpt, redact

# -- the reference's cases ------------------------------------------------------------------------


def test_api_keys_are_redacted() -> None:
    """redactor.test.ts: redacts OpenAI-style API keys (sk-...); Stripe-style (pk_live_...)."""
    assert redact("key sk-abcdefghijklmnopqrstuvwxyz123456 end") == "key [REDACTED_API_KEY] end"
    assert "pk_live_" not in redact("pk_live_abcdefghijklmnopqrstuvwx")


def test_bearer_tokens_are_redacted() -> None:
    """redactor.test.ts: redacts Bearer tokens."""
    assert redact("Bearer abcdefghijklmnopqrstuvwxyz.123") == "Bearer [REDACTED]"


def test_passwords_in_urls_are_redacted() -> None:
    """redactor.test.ts: redacts passwords in URLs."""
    assert redact("postgres://admin:s3cret@db:5432/app") == "postgres://admin:[REDACTED]@db:5432/app"


def test_pem_blocks_are_redacted_even_when_cut_off() -> None:
    """redactor.test.ts: redacts PEM key blocks. Cortex: also a block without its END line."""
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    assert redact(f"a {block} b") == "a [REDACTED_PRIVATE_KEY] b"
    assert redact("x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA") == "x [REDACTED_PRIVATE_KEY]"


def test_secret_variables_are_redacted() -> None:
    """redactor.test.ts: redacts environment variable values (PASSWORD=...)."""
    assert redact("PASSWORD=hunter2 API_KEY=abc123def") == "PASSWORD=[REDACTED] API_KEY=[REDACTED]"


def test_github_tokens_and_jwts_are_redacted() -> None:
    """redactor.test.ts: redacts GitHub tokens (ghp_...); redacts JWT tokens."""
    assert redact("ghp_" + "a1" * 18) == "[REDACTED_GH_TOKEN]"
    jwt = "eyJhbGciOiJIUzI1NiJ9abc.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    assert redact(f"token {jwt}") == "token [REDACTED_JWT]"


def test_normal_text_is_left_alone() -> None:
    """redactor.test.ts: does NOT redact normal text; handles empty string."""
    text = "Deploy failed at 2026-03-02T10:00:00Z: exit code 127, port 5432, pid=4242, max_tokens=4096."
    assert redact(text) == text
    assert redact("") == ""


def test_extra_patterns_apply() -> None:
    """redactor.test.ts: applies custom patterns from config."""
    assert redact("ticket ACME-12345 open", [re.compile(r"ACME-\d+")]) == "ticket [REDACTED] open"


def test_several_credential_types_in_one_text() -> None:
    """redactor.test.ts: handles text with multiple credential types."""
    out = redact("sk-abcdefghijklmnopqrstuvwx and ghp_" + "b2" * 18 + " and https://u:p4ss@h")
    assert out == "[REDACTED_API_KEY] and [REDACTED_GH_TOKEN] and https://u:[REDACTED]@h"


def test_personal_data_is_redacted() -> None:
    """Cortex: e-mail addresses, phone numbers, card numbers and IBANs."""
    out = redact("mail jane.doe@example.org, call +49 171 1234567 or (555) 123-4567, "
                 "card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00")
    assert out == "mail [EMAIL], call [PHONE] or [PHONE], card [CARD], IBAN [IBAN]"


def test_redacting_twice_changes_nothing() -> None:
    text = "password: hunter2 sk-abcdefghijklmnopqrstuvwxyz bob@example.com"
    assert redact(redact(text)) == redact(text)


def test_an_excerpt_is_redacted_before_it_is_cut() -> None:
    """A secret straddling the cut is recognised whole and cut away, never half shown."""
    secret = "sk-" + "Zq9" * 12
    for pad in range(140, 175):
        out = excerpt("x" * pad + " " + secret + " tail", 160)
        assert "Zq9Zq9" not in out, pad


# -- fuzzed secrets through both cores ------------------------------------------------------------

_ALNUM = string.ascii_letters + string.digits
_B32 = string.ascii_uppercase + "234567"


def _rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, n: int) -> str:
    core = _rand(rng, _ALNUM, n - 3)
    return core + rng.choice(string.ascii_uppercase) + rng.choice(string.ascii_lowercase) + rng.choice(string.digits)


def _b64url(rng: random.Random, n: int) -> str:
    return base64.urlsafe_b64encode(rng.randbytes(n)).decode().rstrip("=")


def _luhn_card(rng: random.Random) -> tuple[str, str]:
    digits = [4] + [rng.randint(0, 9) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        v = d * 2 if i % 2 == 0 else d
        total += v - 9 if v > 9 else v
    digits.append((10 - total % 10) % 10)
    raw = "".join(map(str, digits))
    return " ".join(raw[i:i + 4] for i in range(0, 16, 4)), raw


# Each generator returns (the text to embed, the parts that must never appear).
Gen = Callable[[random.Random], tuple[str, list[str]]]


def _kv(rng: random.Random) -> tuple[str, list[str]]:
    name = rng.choice(["password", "db_password", "API_KEY", "client_secret", "token", "passwd", "Passwort",
                       "aws_secret_access_key", "x-api-key"])
    value = _rand(rng, _ALNUM + "!$%^*#", rng.randint(8, 24))
    sep = rng.choice(["=", ": ", '": "', " = "])
    return f"{name}{sep}{value}", [value]


def _url(rng: random.Random) -> tuple[str, list[str]]:
    secret = _rand(rng, _ALNUM + "!$%^*", rng.randint(8, 20))
    scheme = rng.choice(["postgres", "mongodb+srv", "redis", "amqp", "https"])
    user = rng.choice(["admin", "", "svc_user"])
    return f"{scheme}://{user}:{secret}@db.internal:5432/app", [secret]


def _pem(rng: random.Random) -> tuple[str, list[str]]:
    body = base64.b64encode(rng.randbytes(rng.randint(300, 1600))).decode()
    lines = "\n".join(body[i:i + 64] for i in range(0, len(body), 64))
    end = "\n-----END PRIVATE KEY-----" if rng.random() < 0.6 else ""
    return f"-----BEGIN PRIVATE KEY-----\n{lines}{end}", [body[i:i + 24] for i in range(0, len(body) - 24, 200)]


GENERATORS: dict[str, Gen] = {
    "openai": lambda r: ((s := "sk-" + _rand(r, _ALNUM, 40)), [s[3:]]),
    "anthropic": lambda r: ((s := "sk-ant-api03-" + _rand(r, _ALNUM + "_-", 60)), [s[13:]]),
    "stripe": lambda r: ((s := "sk_live_" + _rand(r, _ALNUM, 24)), [s[8:]]),
    "github": lambda r: ((s := r.choice(["ghp_", "gho_", "ghs_"]) + _rand(r, _ALNUM, 36)), [s[4:]]),
    "github_pat": lambda r: ((s := "github_pat_" + _rand(r, _ALNUM + "_", 60)), [s[11:]]),
    "aws": lambda r: ((s := "AKIA" + _rand(r, string.ascii_uppercase + string.digits, 16)), [s]),
    "slack": lambda r: ((s := f"xoxb-{r.randint(10**9, 10**10)}-{_rand(r, _ALNUM, 24)}"), [s[5:]]),
    "google": lambda r: ((s := "AIza" + _rand(r, _ALNUM + "_-", 35)), [s[4:]]),
    "jwt": lambda r: ((s := f"eyJ{_b64url(r, 24)}.eyJ{_b64url(r, 40)}.{_b64url(r, 32)}"), [s[3:30], s[-20:]]),
    "bearer": lambda r: (f"Authorization: Bearer {(t := _rand(r, _ALNUM + '.-_', 32))}", [t]),
    "nkey_seed": lambda r: ((s := "SU" + _rand(r, _B32, 56)), [s[2:]]),
    "generic": lambda r: ((s := _mixed(r, 40)), [s]),
    "named": _kv,
    "url": _url,
    "pem": _pem,
    "email": lambda r: ((s := f"{_rand(r, string.ascii_lowercase, 8)}.{_rand(r, string.ascii_lowercase, 6)}"
                             f"@{_rand(r, string.ascii_lowercase, 7)}.com"), [s]),
    "phone": lambda r: ((s := f"+{r.randint(1, 99)} {r.randint(100, 999)} {r.randint(1000000, 9999999)}"),
                        [s, s.replace(" ", "")]),
    "card": lambda r: ((card := _luhn_card(r))[0], [card[0], card[1]]),
}

_WORDS = ("the", "deploy", "of", "release", "3.2", "to", "prod", "with", "the", "primary", "database",
          "while", "rolling", "out", "the", "new", "api", "pods", "on", "the", "cluster")


def _around(rng: random.Random, secret: str) -> str:
    """The secret amid words, sometimes right where an excerpt is cut."""
    head = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 8)))
    if rng.random() < 0.4:
        head = "x" * rng.randint(120, 210)
    tail = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 8)))
    return f"{head} {secret} {tail}".strip()


def _operations_with(secret_text: str) -> OperationsDoc:
    config = operations_config(TracesSettings())
    t0 = datetime(2026, 3, 2, 9, tzinfo=UTC)
    doc = None
    events = [
        (ToolEvent(id="c1", agent="a", session="s", ts=t0, tool="spawn", call_id="k1", params={"task": secret_text}),
         "call"),
        (SessionEvent(id="e1", agent="a", session="s", ts=t0 + timedelta(seconds=1)), "end"),
        (ToolEvent(id="r1", agent="a", session="s", ts=t0 + timedelta(seconds=2), tool="spawn", call_id="k1",
                   result={"report": secret_text}), "result"),
        (ToolEvent(id="c2", agent="a", session="s", ts=t0 + timedelta(seconds=3), tool="spawn", call_id="k2"), "call"),
        (SessionEvent(id="e2", agent="a", session="s", ts=t0 + timedelta(seconds=4)), "end"),
        (ToolEvent(id="r2", agent="a", session="s", ts=t0 + timedelta(seconds=5), tool="spawn", call_id="k2",
                   error=secret_text), "result"),
    ]
    for event, kind in events:
        doc = apply_operation_event(doc, event, kind, config) or doc
    assert doc is not None and [op.status for op in doc.operations] == ["completed", "failed"]
    return doc


@pytest.mark.parametrize("kind", sorted(GENERATORS))
def test_fuzzed_secrets_never_reach_a_document(kind: str) -> None:
    """Every place a text enters (user and agent messages, tool parameters, errors and
    results) gets a random secret of one shape; the stored documents hold none of it."""
    rng = random.Random(f"traces-{kind}")
    for _ in range(12):
        secret, forbidden = GENERATORS[kind](rng)
        text = _around(rng, secret)
        params = {"command": f"deploy --note {text}", "config": {"dsn": text}}
        doc = trace_doc(
            Start(session="a"), User(text=f"please deploy, {text}"),
            *[fail("deploy", params, f"refused: {text}")] * 3,
            Agent(text=f"Done ✅ {text}"), User(text=f"That's wrong. Forget it. {text}"), End(),
            Start(session="b"), *fail("deploy", params, f"refused: {text}"),
            Agent(text=f"Still failing: {text}"), End(),
        )
        assert {f.signal for f in doc.findings} >= {"doom_loop", "hallucination", "correction", "dissatisfied",
                                                   "repeat_fail"}
        stored = msgspec.json.encode(doc).decode() + msgspec.json.encode(_operations_with(text)).decode()
        for part in forbidden:
            assert part not in stored, (kind, part)
