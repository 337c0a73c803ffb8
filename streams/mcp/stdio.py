"""MCP over stdin/stdout where a line that is no JSON-RPC message gets a JSON-RPC error, not silence.

The SDK's stdio transport reads a line it cannot parse as a JSON-RPC message into an exception on the
server's read stream, which the server drops: the host then waits for its own timeout on a request
nobody will answer. :func:`run_stdio` serves the same transport, with every such line answered as
JSON-RPC 2.0 says: ``-32700`` (parse error) for a line that is not JSON, ``-32600`` (invalid request)
for JSON that is no request, notification or response, with the line's ``id`` when one can be read
(else ``null``), and ``-32600`` with ``id: null`` for a request whose id MCP does not allow (NaN, 1.5,
``true``, ``null``, ``{}``: the SDK reads it as a notification, :mod:`streams.mcp.messages`). The answer
goes out through the transport's own writer, so it never interleaves with another reply. Over
streamable HTTP the SDK answers a body that is no message itself (400 with the same codes), and the
session gate the request with an id MCP does not allow.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

from streams.client.repair import Language
from streams.mcp.messages import RequestId, invalid_request_reply, is_invalid_request, request_id
from streams.mcp.run import McpRuns
from streams.mcp.server import build_server, started_client
from streams.settings import Settings

log = logging.getLogger(__name__)


def malformed_reply(error: Exception) -> JSONRPCError:
    """The JSON-RPC error for a line the transport could not read as a message (``error``: why)."""
    if isinstance(error, ValidationError) and any(e["type"] == "json_invalid" for e in error.errors()):
        return JSONRPCError(
            jsonrpc="2.0",
            id=None,
            error=ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON"),
        )
    return JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(error),
        error=ErrorData(
            code=INVALID_REQUEST,
            message="Invalid Request: one JSON-RPC 2.0 request, notification or response per line "
            '({"jsonrpc": "2.0", "id", "method", "params"})',
        ),
    )


def _request_id(error: Exception) -> RequestId | None:
    """The ``id`` of the object the transport refused, when it has one MCP allows (else None)."""
    if not isinstance(error, ValidationError):
        return None
    for problem in error.errors():
        value = problem.get("input")
        if isinstance(value, Mapping):
            found = request_id(value.get("id"))
            if found is not None:
                return found
    return None


class AnsweringReads:
    """The transport's read stream, less the lines it could not read and the requests whose id MCP does
    not allow: each of those is answered on the transport's write stream (:func:`malformed_reply`,
    :func:`~streams.mcp.messages.invalid_request_reply`) and never reaches the server."""

    def __init__(
        self, inner: ReadStream[SessionMessage | Exception], replies: WriteStream[SessionMessage]
    ) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> contextvars.Context | None:
        """The sender's context of the last message (the SDK's context-carrying streams have one)."""
        context: contextvars.Context | None = getattr(self._inner, "last_context", None)
        return context

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if isinstance(item, Exception):
                reply = malformed_reply(item)
            elif is_invalid_request(item.message):
                reply = invalid_request_reply()
            else:
                return item
            log.info("mcp: answered a line that is no JSON-RPC message with %d", reply.error.code)
            await self._replies.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


async def run_stdio(
    server: MCPServer[Any],
    stdin: anyio.AsyncFile[str] | None = None,
    stdout: anyio.AsyncFile[str] | None = None,
) -> None:
    """``server`` over stdin/stdout (or the given text files) until the input ends, as
    ``MCPServer.run_stdio_async`` serves it, each line that is no JSON-RPC message answered with a
    JSON-RPC error."""
    lowlevel = server._lowlevel_server  # noqa: SLF001 - what the SDK's own run_stdio_async runs
    async with stdio_server(stdin, stdout) as (read_stream, write_stream):
        await lowlevel.run(
            AnsweringReads(read_stream, write_stream),
            write_stream,
            lowlevel.create_initialization_options(),
        )


async def serve_stdio(settings: Settings, *, language: Language = "en") -> None:
    """``evidence-chain mcp``: answer one MCP session on stdin/stdout (logs go to stderr) until the host
    closes it; a line that is no JSON-RPC message gets a JSON-RPC error (:func:`run_stdio`).

    Raises:
        ConfigurationError: ``EC_MCP_RUN_ID`` is not a valid id.
        HoldExpired: Kafka did not answer within ``EC_STARTUP_WAIT_SECONDS``.
    """
    runs = McpRuns(settings.mcp_run_id)
    client = await started_client(settings)
    try:
        log.info("mcp: run %s over stdio", runs.shared.run_id)
        await run_stdio(build_server(client, runs, language=language))
    finally:
        await client.close()
