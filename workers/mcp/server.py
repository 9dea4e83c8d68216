"""``cortex mcp --agent A``: the agent's tools on the official MCP SDK's low-level server,
over stdio (the default) or streamable HTTP. The SDK speaks the protocol; this module
lists ``TOOLS`` and turns each call into a result: text plus structured content, or a
one-sentence tool error — the server keeps running whatever a call does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Self

import anyio
import msgspec
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.shared.message import SessionMessage

from workers import __version__
from workers.mcp.auth import BearerAgents, request_agent
from workers.mcp.gateway import Gateway, Gateways, ToolError
from workers.mcp.tokens import TokenTable
from workers.mcp.tools import TOOLS, Tool
from workers.mcp.wire import rejection

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


def _json_types(schema: dict[str, Any]) -> list[str]:
    if "$ref" in schema:
        return ["object"]
    if "anyOf" in schema:
        return [t for option in schema["anyOf"] for t in _json_types(option)]
    kind = schema.get("type")
    if kind is None:
        return ["string"] if all(isinstance(v, str) for v in schema.get("enum", [None])) else []
    return list(kind) if isinstance(kind, list) else [kind]


def output_schema(struct: type[msgspec.Struct]) -> dict[str, Any]:
    """The reply's top level — its fields, their JSON types, and (described) the fields of the
    objects its lists hold — not the inside of every object. Hosts learn the shape; the SDK's client
    checks each result against the schema with ``jsonschema``, which for a complete schema
    takes milliseconds per reply (a 37-thread reply: 5–18 ms here), more than the whole MCP
    layer's budget. The text carries the details, the structured content all of it."""
    full = _object_schema(struct)
    defs = full.get("$defs", {})
    properties = {}
    for name, prop in full["properties"].items():
        kinds = sorted(set(_json_types(prop)))
        shallow: dict[str, Any] = {"type": kinds[0] if len(kinds) == 1 else kinds} if kinds else {}
        ref = prop.get("items", {}).get("$ref", "")
        if ref:
            item = ref.rsplit("/", 1)[-1]
            shallow["description"] = f"{item} objects: {', '.join(defs[item]['properties'])}"
        properties[name] = shallow
    return {"type": "object", "properties": properties, "required": full.get("required", [])}


def listing(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name, description=tool.description, input_schema=_object_schema(tool.args),
        output_schema=output_schema(tool.output),
        annotations=types.ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=tool.name == "cortex_forget",
                                          open_world_hint=False))


def tool_result(text: str, data: dict[str, Any] | None = None, *, is_error: bool = False) -> dict[str, Any]:
    """A ``tools/call`` result as the dict ``CallToolResult(content=[TextContent(text)],
    structured_content=data, is_error=...)`` dumps to (``test_mcp_results`` holds them equal):
    the SDK validates a handler's result against the protocol version's surface either way, so
    building the model first would only add one more pass over the structured content."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if data is not None:
        result["structuredContent"] = data
    result["isError"] = is_error
    result["resultType"] = "complete"
    return result


def error_result(message: str) -> dict[str, Any]:
    return tool_result(message, is_error=True)


async def call(tool: Tool, gateway: Gateway, arguments: dict[str, Any] | None) -> dict[str, Any]:
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
    return tool_result(result.text, result.data)


INSTRUCTIONS = (
    "Cortex follows this agent's conversations and remembers them: threads (topics) with their status, decisions, "
    "commitments, facts and long-term memories. Call cortex_boot at the start of a session for a briefing, "
    "cortex_recall before answering anything that depends on earlier sessions, cortex_remember to keep something "
    "for later. Every tool sees {whom} only.")

GatewayFor = Callable[[ServerRequestContext[Any]], Gateway | None]


def build_server(gateway: Gateway, tools: Sequence[Tool] = TOOLS, *, otel: bool = False) -> Server[Any]:
    """One agent's server (stdio, or ``--http`` with ``--agent``)."""
    return build_tenant_server(lambda ctx: gateway, tools, otel=otel, agent=gateway.agent)


def build_tenant_server(gateway_for: GatewayFor, tools: Sequence[Tool] = TOOLS, *, otel: bool = False,
                        agent: str | None = None) -> Server[Any]:
    """A server whose every call goes to the Gateway ``gateway_for`` picks for its request: the
    one agent's, or (``--tokens``) the agent the request's bearer token stands for."""
    by_name = {tool.name: tool for tool in tools}
    listed = types.ListToolsResult(tools=[listing(tool) for tool in tools])

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> dict[str, Any]:
        tool = by_name.get(params.name)
        if tool is None:
            return error_result(f"There is no tool {params.name!r}; Cortex's tools are {', '.join(by_name)}.")
        gateway = gateway_for(ctx)
        if gateway is None:  # behind BearerAgents every request has one; anything else is refused
            return error_result("This request names no agent: send the bearer token of the agent whose tools "
                                "these are.")
        return await call(tool, gateway, params.arguments)

    whom = f"this agent ({agent})" if agent else "the agent your bearer token stands for"
    server: Server[Any] = Server("cortex", version=__version__, title=f"Cortex ({agent})" if agent else "Cortex",
                                 instructions=INSTRUCTIONS.format(whom=whom), on_list_tools=list_tools)
    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    if not otel:
        server.middleware = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
    return server


def token_server(gateways: Gateways, tools: Sequence[Tool] = TOOLS, *, otel: bool = False) -> Server[Any]:
    """Every agent of the token file on one server: each call goes to its request's agent."""

    def gateway_for(ctx: ServerRequestContext[Any]) -> Gateway | None:
        agent = request_agent(ctx.request)
        return gateways.for_agent(agent) if agent is not None else None

    return build_tenant_server(gateway_for, tools, otel=otel)


MAX_LINE = 64 * 1024 * 1024  # one JSON-RPC message a line; a remembered memory alone may be 64 KiB
OVERSIZE_HEAD = 64 * 1024  # of a line over MAX_LINE, what is kept to find its id
EOF_ANSWER_WAIT_S = 60.0  # after the host's EOF, at most this long for the requests it sent


class _Outstanding:
    """The requests read and not answered yet, and whether the host is gone: the end of input
    waits for the first to be answered (at most ``EOF_ANSWER_WAIT_S``); a reply that cannot be
    written ends the server, as the host that would read it is gone."""

    def __init__(self) -> None:
        self.ids: set[str | int] = set()
        self.none = asyncio.Event()
        self.none.set()
        self.host_gone = asyncio.Event()

    def read(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
            self.none.clear()

    def written(self, message: Any) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.ids.discard(message.id)
            if not self.ids:
                self.none.set()

    async def answered(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.none.wait(), EOF_ANSWER_WAIT_S)


class _PipeStream:
    """What the SDK asks of a stream beyond sending or receiving: to be an async context
    manager and closable. The pipes are the process's and close with it: nothing to do."""

    async def aclose(self) -> None:
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


class _PipeReadStream(_PipeStream):
    """The SDK's read stream (``mcp.shared._stream_protocols.ReadStream``) straight off a pipe:
    each line parsed as the SDK's stdio transport parses it — a line that is not a JSON-RPC
    message is handed on as the exception, as there — with no task or memory stream between
    the pipe and the server (each hop costs event-loop turns on every call)."""

    def __init__(self, reader: asyncio.StreamReader, outstanding: _Outstanding, replies: _PipeWriteStream) -> None:
        self._reader = reader
        self._outstanding = outstanding
        self._replies = replies

    async def receive(self) -> SessionMessage | Exception:
        """The next message. A line the SDK cannot take that carries a request's id (invalid
        UTF-8, nested too deeply, not a JSON-RPC request, over ``MAX_LINE``) is answered here
        with a JSON-RPC error (``workers.mcp.wire``) — the host waits for that id — and the
        next line is read; one without an id goes to the SDK, which drops it, as before."""
        while True:
            line, oversize = await self._line()
            if line is None:
                await self._outstanding.answered()
                raise anyio.EndOfStream
            if oversize:
                error = rejection(line, None, oversize_limit=MAX_LINE)
                if error is None:
                    return ValueError(f"a line over {MAX_LINE} bytes, dropped")
            else:
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # the SDK's own contract: the dispatcher reports it
                    error = rejection(line, exc)
                    if error is None:
                        return exc
                else:
                    self._outstanding.read(message)
                    return SessionMessage(message)
            await self._replies.send(SessionMessage(error))

    async def _line(self) -> tuple[bytes | None, bool]:
        """(the next line, or None at the end; whether it was over ``MAX_LINE``: then only its
        first ``OVERSIZE_HEAD`` bytes are kept, where a request's id is, and the rest is dropped)."""
        try:
            return await self._reader.readuntil(b"\n"), False
        except asyncio.IncompleteReadError as exc:  # the end of input, with or without a last line
            return (exc.partial or None), False
        except asyncio.LimitOverrunError:
            head = await self._reader.read(OVERSIZE_HEAD)
            await self._drop_line()
            return head, True

    async def _drop_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(max(exc.consumed, 1))
            except asyncio.IncompleteReadError:
                return

    def __aiter__(self) -> _PipeReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def wire_line(message: types.JSONRPCMessage) -> bytes:
    """One message as the line the SDK's stdio transport writes (``model_dump_json(by_alias=True,
    exclude_unset=True)``). A response's result is already the JSON-ready dict the SDK dumped
    and checked against the protocol version's surface, so it is encoded as it is rather than
    walked by pydantic once more (the largest replies: a quarter of a millisecond)."""
    if isinstance(message, types.JSONRPCResponse):
        with contextlib.suppress(TypeError, ValueError):  # not plain JSON after all: pydantic's way
            return msgspec.json.encode({"jsonrpc": message.jsonrpc, "id": message.id, "result": message.result}) + b"\n"
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


class _PipeWriteStream(_PipeStream):
    """The SDK's write stream, writing each message to the pipe from the task that sends it."""

    def __init__(self, writer: asyncio.StreamWriter, outstanding: _Outstanding) -> None:
        self._writer = writer
        self._outstanding = outstanding

    async def send(self, item: SessionMessage) -> None:
        if self._outstanding.host_gone.is_set():
            raise anyio.BrokenResourceError
        try:
            self._writer.write(wire_line(item.message))
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._outstanding.host_gone.set()
            raise anyio.BrokenResourceError from exc
        if self._writer.transport.is_closing():  # asyncio closes a pipe on EPIPE without raising here
            self._outstanding.host_gone.set()
            raise anyio.BrokenResourceError
        self._outstanding.written(item.message)


def _is_pipe(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def _pipe_streams() -> AsyncIterator[tuple[_PipeReadStream, _PipeWriteStream, _Outstanding]]:
    """stdin/stdout as event-loop pipes, the standard descriptors diverted meanwhile (fd 0
    reads /dev/null, fd 1 writes to stderr) so that stray output never reaches the wire."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    in_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                   os.fdopen(wire_in, "rb", buffering=0))
    out_transport, out_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                                os.fdopen(wire_out, "wb", buffering=0))
    writer = asyncio.StreamWriter(out_transport, out_protocol, None, loop)
    outstanding = _Outstanding()
    replies = _PipeWriteStream(writer, outstanding)
    try:
        yield _PipeReadStream(reader, outstanding, replies), replies, outstanding
    finally:
        in_transport.close()
        out_transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


@contextlib.asynccontextmanager
async def _answered_before_eof(read: Any, write: Any) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's file-based stdio streams (stdin or stdout not a pipe: a scripted session,
    ``cortex mcp < requests``), ending only once every request read before the end of input
    has been answered: the SDK cancels the handlers still running when its read stream ends."""
    outstanding = _Outstanding()
    in_send, in_recv = anyio.create_memory_object_stream[Any](0)
    out_send, out_recv = anyio.create_memory_object_stream[Any](0)

    async def forward_in() -> None:
        async with in_send:
            async for item in read:
                outstanding.read(getattr(item, "message", None))
                await in_send.send(item)
            await outstanding.answered()

    flushed = anyio.Event()

    async def forward_out() -> None:
        async with write, out_recv:  # closing the SDK's side ends its stdout writer
            async for item in out_recv:
                await write.send(item)
                outstanding.written(getattr(item, "message", None))
        flushed.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(forward_in)
        tg.start_soon(forward_out)
        try:
            yield in_recv, out_send
        finally:
            await out_send.aclose()  # the server closed it already when it ended normally
            with anyio.move_on_after(5):
                await flushed.wait()  # the last replies handed to the SDK's writer
            tg.cancel_scope.cancel()  # forward_in may still wait for input nobody will read


async def _serve_pipes(server: Server[Any]) -> None:
    async with _pipe_streams() as (read, write, outstanding), anyio.create_task_group() as tg:

        async def until_host_gone() -> None:
            await outstanding.host_gone.wait()
            log.info("mcp_host_gone")
            tg.cancel_scope.cancel()

        tg.start_soon(until_host_gone)
        await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def serve_stdio(server: Server[Any]) -> None:
    """Until the host closes stdin (and every request it sent is answered) — or stops reading:
    a reply that cannot be written ends the server quietly, as the host that would read it is
    gone. Pipes (what a host hands its server) are read and written on the event loop; files
    take the SDK's own stdio transport."""
    if _is_pipe(0) and _is_pipe(1):
        await _serve_pipes(server)
        return
    from mcp.server.stdio import stdio_server

    try:
        async with stdio_server() as (read, write), _answered_before_eof(read, write) as (wire_in, wire_out):
            await server.run(wire_in, wire_out, server.create_initialization_options())
    except* (BrokenPipeError, ConnectionResetError):
        log.info("mcp_host_gone")


async def serve_http(server: Server[Any], sock: socket.socket, tokens: TokenTable | None = None) -> None:
    """Streamable HTTP at ``http://HOST:PORT/mcp`` on a bound socket, until the process is
    told to stop (SIGINT or SIGTERM: uvicorn's own graceful shutdown); with ``tokens``, every
    request behind its bearer token (``auth.BearerAgents``)."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    app: Any = server.streamable_http_app(host=host)  # a loopback host gets the SDK's DNS-rebinding protection
    if tokens is not None:
        app = BearerAgents(app, tokens)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
