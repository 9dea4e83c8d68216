"""``cortex mcp``'s own command line: where it listens, and failures before it serves."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from workers.cli import CliError
from workers.cli.mcp import parse_listen


@pytest.mark.parametrize(("text", "listen"), [("127.0.0.1:8765", ("127.0.0.1", 8765)),
                                             ("0.0.0.0:80", ("0.0.0.0", 80)), ("[::1]:9000", ("::1", 9000)),
                                             ("localhost:65535", ("localhost", 65535))])
def test_http_takes_host_and_port(text: str, listen: tuple[str, int]) -> None:
    assert parse_listen(text) == listen


@pytest.mark.parametrize("text", ["8765", "127.0.0.1", "127.0.0.1:", ":8765", "host:port", "127.0.0.1:0",
                                  "127.0.0.1:70000"])
def test_http_refuses_anything_but_host_and_port(text: str) -> None:
    with pytest.raises(CliError, match="expected HOST:PORT"):
        parse_listen(text)


def test_a_port_in_use_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "workers", "mcp", "--agent", "alice", "--http",
                                 f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60,
                                env={**os.environ, "CORTEX_DATA_DIR": str(tmp_path)})
    assert result.returncode == 1
    assert result.stderr.strip() == f"cortex: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert not result.stdout
