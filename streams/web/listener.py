"""One listener for every HTTP server: limits, a connection gate, request heads that cannot be parsed.

aiohttp has a keepalive timeout (which also ends a later request head that never completes) but no
header-read timeout for a new connection, no cap on connections and no cap per peer. :func:`listening`
puts each accepted connection behind a :class:`_Connection` that counts it, answers 503 past
``max_connections`` (or ``max_connections_per_peer`` from one peer: all of loopback is one, since any
local process may pick its source address in 127/8, and an IPv6 client is its /64,
:func:`streams.web.peers.peer_of`) and closes it when its first
request head is late. Its request handler answers a head aiohttp cannot parse (a header with a NUL or
a folded line, a bad ``Content-Length``, ...) in the server's own error
shape (:class:`ErrorShape`) and logs one line without the head's bytes: a malformed ``Authorization``
never puts a token in a log. aiohttp's own body decoder is off: a body is decoded where it is read
(:func:`streams.web.body.read_bounded`, whose 400 for a body that does not decode is logged in one line
too, never with a traceback).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from aiohttp.web_protocol import RequestHandler, RequestPayloadError
from aiohttp.web_request import BaseRequest

from streams import codec
from streams.errors import ConfigurationError
from streams.web.peers import LOOPBACK, UNKNOWN, peer_of

log = logging.getLogger(__name__)

HEADER_TIMEOUT_SECONDS = 10.0
"""How long a new connection may take to send its first request head before it is closed."""
BODY_TIMEOUT_SECONDS = 30.0
"""How long a request body may take to arrive whole (:func:`streams.web.body.read_bounded`)."""
KEEPALIVE_TIMEOUT_SECONDS = 15.0
"""How long a connection may sit idle (waiting for a request, or for the rest of its head)."""
MAX_CONNECTIONS = 100
"""Connections served at once; one more is answered 503 and closed."""
MAX_CONNECTIONS_PER_PEER = 50
"""Connections served at once from one peer, so one client cannot take them all: all of loopback is one
peer, an IPv6 client its /64 (:func:`streams.web.peers.peer_of`)."""
REFUSED_LINGER_SECONDS = 1.0
"""How long a refused connection stays open to read the request it sent (closing a socket with
unread data resets it, and the client could lose the 503 before reading it)."""


@dataclass(frozen=True)
class Limits:
    """How long a connection may wait and how many may be open (each server's options of those names)."""

    header_timeout_seconds: float = HEADER_TIMEOUT_SECONDS
    keepalive_timeout_seconds: float = KEEPALIVE_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS
    max_connections_per_peer: int = MAX_CONNECTIONS_PER_PEER
    body_timeout_seconds: float = BODY_TIMEOUT_SECONDS

    def __post_init__(self) -> None:
        timeouts = (self.header_timeout_seconds, self.keepalive_timeout_seconds, self.body_timeout_seconds)
        if not all(seconds > 0 for seconds in timeouts):
            raise ConfigurationError("the header, body and keepalive timeouts must be above 0 seconds")
        if self.max_connections < 1 or self.max_connections_per_peer < 1:
            raise ConfigurationError(
                "the connection caps must be at least 1, not "
                f"{self.max_connections} and {self.max_connections_per_peer} per peer"
            )


@dataclass(frozen=True)
class ErrorShape:
    """How a server says no before any route sees the request: ``render(status, message)`` gives the
    body and its content type (the gateway: its JSON error object; ``serve``: plain text)."""

    render: Callable[[int, str], tuple[bytes, str]]

    @staticmethod
    def text() -> ErrorShape:
        return ErrorShape(lambda status, message: ((message + "\n").encode("utf-8"), "text/plain"))

    @staticmethod
    def json() -> ErrorShape:
        """The project's JSON error object, ``{"error": {"reason", "message", "retriable"}}``: 503 is
        ``UNAVAILABLE`` (retriable), anything else ``BAD_REQUEST``."""

        def render(status: int, message: str) -> tuple[bytes, str]:
            reason = "UNAVAILABLE" if status == 503 else "BAD_REQUEST"
            error = {"reason": reason, "message": message, "retriable": status == 503}
            return codec.dumps({"error": error}), "application/json"

        return ErrorShape(render)

    def raw(self, status: int, phrase: str, message: str, extra: str = "") -> bytes:
        """A whole HTTP/1.1 answer that closes the connection (written before aiohttp has the socket)."""
        body, content_type = self.render(status, message)
        head = (
            f"HTTP/1.1 {status} {phrase}\r\nContent-Type: {content_type}; charset=utf-8\r\n"
            f"X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n{extra}Connection: close\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode("ascii") + body


_UNREADABLE = "the request head cannot be parsed ({}); nothing of it was read"


class _Handler(RequestHandler):
    """aiohttp's request handler, saying no in the server's shape and logging no request bytes."""

    shape: ErrorShape = ErrorShape.text()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if request.writer.output_size > 0:
            raise ConnectionError("the answer was partly sent; the connection is closed")
        kind = type(exc).__name__ if exc is not None else "error"
        if status == 500 and exc is not None:  # a bug the app's own middleware did not answer
            log.error("%s %s failed", request.method, request.path, exc_info=exc)
            text = "the server failed unexpectedly; its log says why"
        elif status >= 500:
            text = "the server could not answer in time"
        else:  # a head aiohttp cannot parse: its message may hold the raw header bytes (a token)
            log.warning("%d from %s: %s in the request head (not logged)", status, request.remote, kind)
            text = _UNREADABLE.format(kind)
        body, content_type = self.shape.render(status, text)
        response = web.Response(status=status, body=body, content_type=content_type)
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.force_close()
        return response

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """aiohttp's log of what failed outside the app; a body that does not decode (a gzip that is
        not gzip, found while aiohttp reads what the route left unread) is the client's fault, answered
        by the route already: one line, no traceback, none of its bytes."""
        if isinstance(kw.get("exc_info"), RequestPayloadError):
            log.info("a request body did not decode as its Content-Encoding says; the connection is closed")
            return
        super().log_exception(*args, **kw)


class _Gate:
    """The listening socket's protocol factory: each connection is an aiohttp handler behind a
    :class:`_Connection` that counts it, refuses it past a cap, and closes it when its first request
    head is late (aiohttp's ``keepalive_timeout`` covers the connection after that)."""

    def __init__(self, limits: Limits, shape: ErrorShape, what: str) -> None:
        self.handlers: Callable[[], asyncio.Protocol] = _no_handlers  # aiohttp's, once it is set up
        self.limits = limits
        self.shape = shape
        self.what = what
        self.connections = 0
        self.per_peer: dict[str, int] = {}
        self.refusing = False
        self.refused = shape.raw(
            503, "Service Unavailable", "too many open connections; try again shortly", "Retry-After: 1\r\n"
        )
        self._heads_due: dict[asyncio.BaseTransport, asyncio.TimerHandle] = {}

    def __call__(self) -> asyncio.Protocol:
        return _Connection(self)

    def admit(self, peer: str) -> str | None:
        """Count a new connection from ``peer``, or say which cap refuses it."""
        if self.connections >= self.limits.max_connections:
            return f"{self.connections} connections open (the cap)"
        if self.per_peer.get(peer, 0) >= self.limits.max_connections_per_peer:
            where = "this machine (all of loopback is one peer)" if peer == LOOPBACK else "one peer"
            return f"{self.per_peer[peer]} connections open from {where} (the cap per peer)"
        self.connections += 1
        self.per_peer[peer] = self.per_peer.get(peer, 0) + 1
        return None

    def release(self, peer: str) -> None:
        self.connections -= 1
        left = self.per_peer.pop(peer, 1) - 1
        if left > 0:
            self.per_peer[peer] = left
        self.refusing = self.refusing and self.connections >= self.limits.max_connections

    def await_head(self, transport: asyncio.Transport) -> None:
        due = asyncio.get_running_loop().call_later(self.limits.header_timeout_seconds, transport.close)
        self._heads_due[transport] = due

    def head_arrived(self, transport: asyncio.BaseTransport | None) -> None:
        if transport is not None and (due := self._heads_due.pop(transport, None)) is not None:
            due.cancel()

    def middleware(self) -> Middleware:
        """The app's first step: aiohttp calls the app only once a request head is parsed, in time."""

        @web.middleware
        async def head_arrived(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.head_arrived(request.transport)
            return await handler(request)

        return head_arrived


def _no_handlers() -> asyncio.Protocol:
    raise ConfigurationError("a connection came before the web server was set up")


def _peer(transport: asyncio.BaseTransport) -> str:
    """The client a connection is counted against (:func:`streams.web.peers.peer_of`: all of loopback
    is one, an IPv6 client its /64)."""
    name = transport.get_extra_info("peername")
    return peer_of(str(name[0]) if isinstance(name, tuple) and name else None)


class _Connection(asyncio.Protocol):
    """One accepted connection: handed to aiohttp when under the caps, else answered 503 and closed."""

    def __init__(self, gate: _Gate) -> None:
        self._gate = gate
        self._handler: asyncio.Protocol | None = None
        self._transport: asyncio.Transport | None = None
        self._linger: asyncio.TimerHandle | None = None
        self._peer = UNKNOWN

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        gate, self._transport = self._gate, cast(asyncio.Transport, transport)
        self._peer = _peer(transport)
        refused = gate.admit(self._peer)
        if refused is not None:
            if not gate.refusing:
                log.warning("%s: %s; refusing new connections with 503 until one closes", gate.what, refused)
            gate.refusing = True
            self._transport.write(gate.refused)
            loop = asyncio.get_running_loop()
            self._linger = loop.call_later(REFUSED_LINGER_SECONDS, self._transport.close)
            return
        self._handler = gate.handlers()
        self._handler.connection_made(transport)
        gate.await_head(self._transport)

    def data_received(self, data: bytes) -> None:
        if self._handler is not None:
            self._handler.data_received(data)
        elif self._transport is not None:
            self._transport.close()  # its request is read: closing now sends no reset

    def eof_received(self) -> bool | None:
        return None if self._handler is None else self._handler.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._handler is None:
            if self._linger is not None:
                self._linger.cancel()
            return
        gate = self._gate
        gate.release(self._peer)
        gate.head_arrived(self._transport)  # forget its deadline
        self._handler.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._handler is not None:
            self._handler.pause_writing()

    def resume_writing(self) -> None:
        if self._handler is not None:
            self._handler.resume_writing()


@contextlib.asynccontextmanager
async def listening(
    app: web.Application,
    host: str,
    port: int,
    limits: Limits | None = None,
    *,
    shape: ErrorShape | None = None,
    what: str = "server",
    shutdown_timeout: float = 60.0,
    **runner_options: Any,
) -> AsyncIterator[int]:
    """Serve ``app`` on ``host:port`` within ``limits`` while the block runs; yields the bound port.

    Raises:
        ConfigurationError: the port cannot be bound.
    """
    limits = limits or Limits()
    gate = _Gate(limits, shape or ErrorShape.text(), what)
    app.middlewares.insert(0, gate.middleware())
    runner = web.AppRunner(
        app,
        keepalive_timeout=limits.keepalive_timeout_seconds,
        shutdown_timeout=shutdown_timeout,
        auto_decompress=False,  # a body is decoded where it is read, strictly (streams.web.body)
        **runner_options,
    )
    await runner.setup()
    listener: asyncio.Server | None = None
    try:
        server = runner.server
        if server is not None:  # setup() sets it
            handler = type("Handler", (_Handler,), {"shape": gate.shape})

            def handlers() -> asyncio.Protocol:
                made: asyncio.Protocol = handler(server, loop=asyncio.get_running_loop(), **server._kwargs)
                return made

            gate.handlers = handlers
        try:
            listener = await asyncio.get_running_loop().create_server(gate, host, port, reuse_address=True)
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {host}:{port} ({exc.strerror}); choose another port"
            ) from exc
        bound = next(
            (s.getsockname()[1] for s in listener.sockets if isinstance(s.getsockname(), tuple)), port
        )
        yield int(bound)
    finally:
        if listener is not None:
            listener.close()
        await runner.cleanup()
        if listener is not None:
            await listener.wait_closed()


async def serve_until_signal(run: Callable[[asyncio.Event], Awaitable[Any]]) -> None:
    """``await run(stop)``, with SIGINT and SIGTERM setting ``stop``."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    await run(stop)
