"""docs/integration.md's "Locally, step by step", run as written (issue 44): its commands are
read from the document and run by bash from the checkout, with the install's scripts on PATH
(as after `source .venv/bin/activate`) — `cortex up`, the example producer on the documented
nats://127.0.0.1:4222, `tail -f … | cortex publish -` fed by a slow producer, and the MCP
host entry `--print-config` writes, started by the MCP SDK's own client exactly as a host
would (its command, arguments and environment, nothing of the shell's).

Only one thing is adapted: when another server holds 4222 on this machine, `cortex up` says
so and listens elsewhere, and the documented URL is replaced by the one it printed — what the
document tells a reader to do."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import nats
import pytest
from cortex_testkit import subject_count
from mcp_testkit import McpSession

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integration.md"
DOC_URL = "nats://127.0.0.1:4222"
AGENT = "example-agent"


def documented_commands() -> list[str]:
    text = DOC.read_text()
    section = text[text.index("## Locally, step by step"):text.index("## Events to publish")]
    return [line for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()]


def shell_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORTEX_")}
    scripts = sysconfig.get_path("scripts")
    return {**env, "PATH": f"{scripts}{os.pathsep}{env.get('PATH', '')}", "CORTEX_DATA_DIR": str(tmp / "cortex-home"),
            # the workers' defaults but for speed: the hashing embedder, no model to load
            "CORTEX_EMBEDDER": "hashing", "CORTEX_LOG_LEVEL": "WARNING"}


def bash(command: str, cwd: Path, env: dict[str, str], stderr: int = subprocess.PIPE) -> subprocess.Popen[str]:
    """The documented command as a shell runs it (a process group of its own: a pipeline's parts)."""
    return subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=stderr, start_new_session=True)


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def event(i: int) -> str:
    return json.dumps({"type": "msg.received", "id": f"doc-live-{i}", "agent": AGENT, "session": "doc-s",
                       "ts": f"2026-03-02T09:0{i}:00Z", "role": "user", "content": f"line {i} of a slow producer"})


@pytest.mark.timeout(600)
async def test_the_local_walkthrough_runs_as_written(tmp_path: Path, wait_for: Any) -> None:
    commands = documented_commands()
    assert commands[0] == "cortex up", commands
    producer, tail_publish, print_config = commands[1], commands[2], commands[3]
    assert DOC_URL in producer and "| cortex publish -" in tail_publish and "--print-config" in print_config
    env = shell_env(tmp_path)
    up = bash(commands[0], ROOT, env, stderr=subprocess.STDOUT)
    assert up.stdout is not None
    try:
        said = [up.stdout.readline()]
        while said[-1] and not said[-1].startswith("cortex: NATS at "):
            said.append(up.stdout.readline())
        url = said[-1].split()[3].rstrip(":")
        assert url == DOC_URL or said[0].startswith("cortex: port 4222 is taken"), said

        # the example gateway: a conversation published, its BOOTSTRAP printed
        ran = subprocess.run(["bash", "-c", producer.replace(DOC_URL, url)], cwd=ROOT, env=env, text=True,
                             capture_output=True, timeout=180)
        assert ran.returncode == 0, ran.stderr
        assert "token rotation" in ran.stdout.lower() and "rollout plan" in ran.stdout.lower(), ran.stdout

        nc = await nats.connect(url)
        try:
            await publish_from_a_slow_producer(tail_publish, env, tmp_path, nc, wait_for)
        finally:
            await nc.close()

        await the_host_entry_starts_a_working_server(print_config, env)
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(timeout=60)
    assert up.returncode == 0


async def publish_from_a_slow_producer(command: str, env: dict[str, str], tmp: Path, nc: Any, wait_for: Any) -> None:
    """The producer writes a line, and nothing more until it is stored: each line must go in
    on its own. The producer stops (tail ends): the command reports and returns."""
    work = tmp / "gateway"
    work.mkdir()
    events = work / "gateway-events.jsonl"
    events.write_text("")
    pipeline = bash(command, work, env)
    js = nc.jetstream()
    received = f"cortex.msg.*.{AGENT}.received"
    before = await subject_count(js, received)  # the example gateway's
    try:
        for i in (1, 2):
            with events.open("a") as out:
                out.write(event(i) + "\n")

            async def stored(n: int = i) -> bool:
                return await subject_count(js, received) == before + n

            await wait_for(stored, within=30, interval=0.1)
        [tail] = [pid for pid in children(pipeline.pid) if comm(pid) == "tail"]
        os.kill(tail, signal.SIGTERM)  # the producer is done
        out_text, err_text = pipeline.communicate(timeout=30)
    finally:
        if pipeline.poll() is None:
            os.killpg(pipeline.pid, signal.SIGKILL)
    assert pipeline.returncode in (0, 128 + signal.SIGTERM), err_text  # bash reports the pipeline's last command
    assert out_text.strip() == "published 2, duplicates 0, rejected 0", (out_text, err_text)


async def the_host_entry_starts_a_working_server(command: str, env: dict[str, str]) -> None:
    from mcp import StdioServerParameters

    printed = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, text=True, capture_output=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["cortex"]
    assert Path(entry["command"]).is_absolute() and os.access(entry["command"], os.X_OK), entry
    assert "CORTEX_NATS_URL" not in entry["env"], entry  # the local case: found through the data dir
    session = McpSession(StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"]))
    client = await session.start()
    try:
        result = await client.call_tool("cortex_boot", {})
        assert not result.is_error, result.content
        assert "token rotation" in result.content[0].text.lower()
    finally:
        await session.stop()


def test_the_documented_walkthrough_is_where_the_test_reads_it() -> None:
    """The test above follows the document: if the section moves or loses a step, say so."""
    assert len(documented_commands()) == 4, documented_commands()
