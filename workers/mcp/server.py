"""``cortex mcp --agent A``: the agent's tools on the official MCP SDK's low-level server,
over stdio (the default) or streamable HTTP. The SDK speaks the protocol; this module
lists ``TOOLS`` and turns each call into a result: text plus structured content, or a
one-sentence tool error — the server keeps running whatever a call does.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Sequence
from typing import Any

import msgspec
from mcp import types
from mcp.server import Server, ServerRequestContext

from workers import __version__
from workers.mcp.gateway import Gateway, ToolError
from workers.mcp.tools import TOOLS, Tool

log = logging.getLogger(__name__)


def _object_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The Struct's JSON Schema as a self-contained object schema (definitions inlined under
    ``$defs``, as MCP wants ``type: object`` at the root)."""
    (root,), components = msgspec.json.schema_components([struct], ref_template="#/$defs/{name}")
    name = root["$ref"].rsplit("/", 1)[-1]
    schema = {k: v for k, v in components.pop(name).items() if k != "title"}
    if components:
        schema["$defs"] = components
    return schema


def listing(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name, description=tool.description, input_schema=_object_schema(tool.args),
        output_schema=_object_schema(tool.output),
        annotations=types.ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=tool.name == "cortex_forget",
                                          open_world_hint=False))


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


async def call(tool: Tool, gateway: Gateway, arguments: dict[str, Any] | None) -> types.CallToolResult:
    try:
        args = msgspec.convert(arguments or {}, tool.args)
    except msgspec.ValidationError as exc:
        return error_result(f"Invalid arguments for {tool.name}: {exc}.")
    try:
        result = await tool.run(gateway, args)
    except ToolError as exc:
        return error_result(str(exc))
    except Exception as exc:  # whatever happens, the model gets a sentence and the server goes on
        log.exception("mcp_tool_failed", extra={"tool": tool.name})
        return error_result(f"{tool.name} failed inside Cortex ({type(exc).__name__}); the server logged the "
                            "details. Try again, or use another tool.")
    return types.CallToolResult(content=[types.TextContent(text=result.text)], structured_content=result.data)


INSTRUCTIONS = (
    "Cortex follows this agent's conversations and remembers them: threads (topics) with their status, decisions, "
    "commitments, facts and long-term memories. Call cortex_boot at the start of a session for a briefing, "
    "cortex_recall before answering anything that depends on earlier sessions, cortex_remember to keep something "
    "for later. Every tool sees this agent ({agent}) only.")


def build_server(gateway: Gateway, tools: Sequence[Tool] = TOOLS) -> Server[Any]:
    by_name = {tool.name: tool for tool in tools}
    listed = types.ListToolsResult(tools=[listing(tool) for tool in tools])

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                        ) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            return error_result(f"There is no tool {params.name!r}; Cortex's tools are {', '.join(by_name)}.")
        return await call(tool, gateway, params.arguments)

    return Server("cortex", version=__version__, title=f"Cortex ({gateway.agent})",
                  instructions=INSTRUCTIONS.format(agent=gateway.agent), on_list_tools=list_tools,
                  on_call_tool=call_tool)


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(server: Server[Any], sock: socket.socket) -> None:
    """Streamable HTTP at ``http://HOST:PORT/mcp`` on a bound socket, until the process is
    told to stop (SIGINT or SIGTERM: uvicorn's own graceful shutdown)."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    app = server.streamable_http_app(host=host)  # a loopback host gets the SDK's DNS-rebinding protection
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
