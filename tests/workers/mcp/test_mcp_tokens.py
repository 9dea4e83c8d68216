"""The bearer token table of ``cortex mcp --http --tokens``: its two formats, what it refuses,
and revocation by editing the file or the Secret."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workers.mcp import tokens
from workers.mcp.auth import MISSING, REFUSED, bearer
from workers.mcp.tokens import TokenFileError, TokenTable, parse_directory, parse_lines

ALICE = "alice-token-0123456789"
BOB = "bob-token-0123456789ab"


def test_lines_map_each_token_to_its_agent_and_an_agent_may_have_several() -> None:
    table = parse_lines(f"# who\nalice {ALICE}\n\nbob   {BOB}  # rotated monthly\nalice {ALICE}-next\n", "f")
    assert sorted(table.values()) == ["alice", "alice", "bob"]
    assert table[tokens.digest(BOB)] == "bob"
    assert ALICE.encode() not in b"".join(table), "only digests are kept"


@pytest.mark.parametrize(("text", "says"), [
    (f"alice {ALICE} extra", "f:1: expected '<agent> <token>'"),
    (f"al.ice {ALICE}", "'al.ice' is not an agent id"),
    ("alice short", "shorter than 16 characters"),
    (f"alice {ALICE}\nbob {ALICE}", "one token stands for both alice and bob"),
])
def test_a_file_it_cannot_trust_is_refused_with_the_line(text: str, says: str) -> None:
    with pytest.raises(TokenFileError, match=says.replace("(", r"\(")):
        parse_lines(text, "f")


def test_a_secret_mounted_as_a_directory_is_one_file_per_agent(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    data = tmp_path / "secret" / "..2026_11_29"
    data.mkdir(parents=True)
    (data / "alice").write_text(ALICE + "\n")
    (data / "bob").write_text(BOB)
    for name in ("alice", "bob"):  # the kubelet's layout: symlinks into a hidden, swapped folder
        (secret / name).symlink_to(Path("..2026_11_29") / name)
    (secret / "..data").symlink_to("..2026_11_29")
    table = TokenTable(secret)
    assert table.agents == ["alice", "bob"]
    assert table.agent_for(ALICE) == "alice" and table.agent_for(BOB) == "bob"
    assert table.agent_for("nobody-0123456789abc") is None
    assert parse_directory({"carol": f"{BOB}x\n\n{ALICE}x\n"}, "d") == {
        tokens.digest(f"{BOB}x"): "carol", tokens.digest(f"{ALICE}x"): "carol"}


def test_removing_a_line_revokes_the_token_and_a_broken_file_authenticates_nobody(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "RECHECK_S", 0.0)
    path = tmp_path / "tokens"
    path.write_text(f"alice {ALICE}\nbob {BOB}\n")
    table = TokenTable(path)
    assert table.agent_for(ALICE) == "alice"
    path.write_text(f"bob {BOB}\n")
    os.utime(path, ns=(1, 1))  # a new modification time even on a coarse clock
    assert table.agent_for(ALICE) is None
    assert table.agent_for(BOB) == "bob"
    path.write_text("bob short\n")
    assert table.agent_for(BOB) is None, "fail closed"
    path.write_text(f"bob {BOB}\n")
    os.utime(path, ns=(2, 2))
    assert table.agent_for(BOB) == "bob"


def test_a_missing_file_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(TokenFileError, match="cannot be read"):
        TokenTable(tmp_path / "nope")


def test_the_bearer_header_is_read_case_insensitively_and_anything_else_is_no_token() -> None:
    assert bearer({"headers": [(b"Authorization", f"Bearer {ALICE}".encode())]}) == ALICE
    assert bearer({"headers": [(b"authorization", f"bearer  {ALICE} ".encode())]}) == ALICE
    assert bearer({"headers": [(b"authorization", b"Basic YWxpY2U6cHc=")]}) is None
    assert bearer({"headers": [(b"authorization", b"Bearer ")]}) is None
    assert bearer({"headers": []}) is None
    assert "\n" not in MISSING and "\n" not in REFUSED
