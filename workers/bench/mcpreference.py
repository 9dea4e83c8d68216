"""The MCP SDK's own server as its documentation shows it — ``MCPServer``, one tool, the
SDK's stdio transport, nothing of Cortex — for ``cortex bench``'s reference row: the
``tools/call`` the bench makes of it is refused at the SDK's argument check (the tool's one
argument left out), as ``cortex mcp``'s floor call is refused at Cortex's, so the two rows
differ only in the server. What the SDK costs on this machine with no work at all is the
yardstick for what ``cortex mcp`` adds.

Run as ``python -m workers.bench.mcpreference``.
"""

from __future__ import annotations

from typing import Final

TOOL: Final = "echo"


def main() -> None:
    from mcp.server.mcpserver import MCPServer

    # WARNING: the SDK logs each refused call at INFO, a line on stderr per call
    server: MCPServer[object] = MCPServer("sdk-reference", log_level="WARNING")

    @server.tool(name=TOOL)
    def echo(text: str) -> str:
        """Returns its text."""
        return text

    server.run("stdio")


if __name__ == "__main__":
    main()
