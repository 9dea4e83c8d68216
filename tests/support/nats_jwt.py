"""Decentralised NATS auth for tests (operator mode), built with the ``nkeys`` package alone.

A JWT v2 is ``base64url(header).base64url(claims).base64url(signature)`` without padding:
the header is ``{"typ":"JWT","alg":"ed25519-nkey"}``, the claims carry ``iss`` (the
issuer's public nkey), ``sub`` (the subject's), ``iat``, ``name``, ``jti`` (base32 of the
SHA-512/256 of those base claims) and the type-specific part under ``nats`` (``type``,
``version: 2``, limits, permissions); the signature is the issuer's ed25519 signature of
``header.claims``. The operator signs itself and the accounts; an account signs its users.

:class:`OperatorAuth` makes an operator, a system account and a JetStream-enabled account,
the ``nats-server`` config block that trusts them (``resolver: MEMORY`` with the account
JWTs preloaded), and user creds files for the account.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import nkeys

UNLIMITED = -1
_HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}


def new_keypair(prefix: int) -> Any:
    """A fresh nkey of one role (``nkeys.PREFIX_BYTE_OPERATOR``, ``_ACCOUNT``, ``_USER``)."""
    return nkeys.from_seed(nkeys.encode_seed(os.urandom(32), prefix))


def public(kp: Any) -> str:
    return str(kp.public_key.decode())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _compact(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def encode_jwt(issuer: Any, subject: str, name: str, nats: dict[str, Any]) -> str:
    """A JWT v2 for ``subject`` signed by ``issuer`` (the issuer's nkey pair)."""
    base = {"iat": int(time.time()), "iss": public(issuer), "name": name, "sub": subject}
    jti = base64.b32encode(hashlib.new("sha512_256", _compact(base)).digest()).rstrip(b"=").decode()
    claims = {"jti": jti, **base, "nats": {**nats, "version": 2}}
    signed = f"{_b64(_compact(_HEADER))}.{_b64(_compact(claims))}"
    return f"{signed}.{_b64(issuer.sign(signed.encode()))}"


def account_claims(jetstream: bool) -> dict[str, Any]:
    limits: dict[str, Any] = {"subs": UNLIMITED, "data": UNLIMITED, "payload": UNLIMITED,
                              "imports": UNLIMITED, "exports": UNLIMITED, "wildcards": True,
                              "conn": UNLIMITED, "leaf": UNLIMITED}
    if jetstream:  # non-zero storage limits are what enable JetStream for the account
        limits.update(mem_storage=UNLIMITED, disk_storage=UNLIMITED, streams=UNLIMITED, consumer=UNLIMITED)
    return {"type": "account", "limits": limits, "default_permissions": {"pub": {}, "sub": {}}}


def user_claims() -> dict[str, Any]:
    return {"type": "user", "pub": {}, "sub": {}, "subs": UNLIMITED, "data": UNLIMITED, "payload": UNLIMITED}


def creds_text(user_jwt: str, user_seed: bytes) -> str:
    """The creds file layout ``nsc`` writes (nats-py reads the JWT and the seed blocks)."""
    return (f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
            "************************* IMPORTANT *************************\n"
            "NKEY Seed printed below can be used to sign and prove identity.\n"
            "NKEYs are sensitive and should be treated as secrets.\n\n"
            f"-----BEGIN USER NKEY SEED-----\n{user_seed.decode()}\n------END USER NKEY SEED------\n\n"
            "*************************************************************\n")


class OperatorAuth:
    """An operator with a system account and one JetStream account (``CORTEX``)."""

    def __init__(self) -> None:
        self.operator = new_keypair(nkeys.PREFIX_BYTE_OPERATOR)
        self.system = new_keypair(nkeys.PREFIX_BYTE_ACCOUNT)
        self.account = new_keypair(nkeys.PREFIX_BYTE_ACCOUNT)

    def server_config(self) -> str:
        """The ``nats-server`` config lines that trust this operator and know its accounts."""
        operator_jwt = encode_jwt(self.operator, public(self.operator), "cortex-test-operator",
                                  {"type": "operator", "system_account": public(self.system)})
        system_jwt = encode_jwt(self.operator, public(self.system), "SYS", account_claims(jetstream=False))
        account_jwt = encode_jwt(self.operator, public(self.account), "CORTEX", account_claims(jetstream=True))
        return (f"operator: {operator_jwt}\nsystem_account: {public(self.system)}\nresolver: MEMORY\n"
                f"resolver_preload: {{\n  {public(self.system)}: {system_jwt}\n"
                f"  {public(self.account)}: {account_jwt}\n}}\n")

    def user_creds(self, path: Path, name: str = "cortex", account: Any = None) -> Path:
        """A creds file for a new user of ``account`` (default: the JetStream account)."""
        user = new_keypair(nkeys.PREFIX_BYTE_USER)
        user_jwt = encode_jwt(account or self.account, public(user), name, user_claims())
        path.write_text(creds_text(user_jwt, user.seed))
        return path
