"""The doors and limits of an ASGI app served by uvicorn (the MCP server's streamable HTTP).

:class:`Doors` wraps the app: every request's head goes through the one check every server has
(:func:`streams.web.guard.check`, with the server's :class:`~streams.web.guard.Policy`: a readable
``Host``, 400; the bearer token, 401; or without one a loopback ``Host`` and no web page, 403, and POSTs
labelled JSON, 415). A POST body is read whole within a size (413) and a time (408) before the app sees
it. Refusals have the gateway's error shape.

:func:`uvicorn_config` gives uvicorn the listener's :class:`~streams.web.listener.Limits` where uvicorn has a
setting for them (``timeout_keep_alive``, ``limit_concurrency``, ``h11_max_incomplete_event_size``)
and adds the one it lacks, a deadline for a request head, in its h11 protocol. uvicorn has no cap per
peer address: ``max_connections_per_peer`` is not applied here.
"""
from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from multidict import CIMultiDict
from uvicorn import Config
from uvicorn.protocols.http.h11_impl import H11Protocol

from streams.errors import RequestRefused
from streams.web.guard import Guard, Policy, TokenRefused
from streams.web.listener import Limits

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_HEAD_BYTES = 16 * 1024
"""The largest request head (line and headers) uvicorn's h11 buffers; a larger one is answered 400."""


def error_body(reason: str, message: str, *, retriable: bool = False) -> bytes:
    """The gateway's error object: ``{"error": {"reason", "message", "retriable"}}``."""
    error = {"reason": reason, "message": message, "retriable": retriable}
    return json.dumps({"error": error}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Doors:
    """ASGI middleware: the one check of the head with the server's ``policy`` (its :attr:`guard`), and a
    POST body read within ``max_body`` bytes and ``limits.body_timeout_seconds``."""

    def __init__(self, app: App, policy: Policy, limits: Limits, max_body: int) -> None:
        self.app = app
        self.guard = Guard(policy)
        self.limits = limits
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = CIMultiDict(
            (name.decode("latin-1"), value.decode("latin-1")) for name, value in scope.get("headers", [])
        )
        try:
            self.guard.admit(scope["method"], scope["path"], headers)
        except TokenRefused as exc:
            challenge = [(b"www-authenticate", exc.challenge.encode("ascii"))]
            await _refuse(send, exc.status, exc.reason, str(exc), challenge)
            return
        except RequestRefused as exc:
            await _refuse(send, exc.status, exc.reason, str(exc))
            return
        if scope["method"] == "POST":
            replay = await self._whole_body(headers, receive, send)
            if replay is None:
                return
            receive = replay
        await self.app(scope, receive, send)

    async def _whole_body(self, headers: CIMultiDict[str], receive: Receive, send: Send) -> Receive | None:
        """A ``receive`` that hands the app the whole body at once, or None when the request is answered
        here (413, 408) or its client left."""
        too_large = f"a request body may be at most {self.max_body} bytes"
        declared = headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            await _refuse(send, 413, "OVERSIZED", f"{too_large}; this one is {declared}")
            return None
        chunks: list[bytes] = []
        size = 0
        seconds = self.limits.body_timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                while True:
                    message = await receive()
                    if message["type"] != "http.request":
                        return None  # the client left mid-body: no one to answer
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_body:
                        await _refuse(send, 413, "OVERSIZED", f"{too_large}; this one is longer")
                        return None
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            await _refuse(
                send, 408, "BAD_REQUEST", f"the body did not arrive within {seconds:g}s; send it whole"
            )
            return None
        whole: list[Message] = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

        async def replay() -> Message:
            return whole.pop() if whole else await receive()

        return replay


async def _refuse(
    send: Send, status: int, reason: str, message: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = error_body(reason, message)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
        *(extra or []),
    ]
    if status in (408, 413):  # the rest of the body is not waited for
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def head_timed(header_timeout_seconds: float, keepalive_timeout_seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose first request head is not whole within
    ``header_timeout_seconds``, or whose next one not within ``keepalive_timeout_seconds`` of the last
    answer (uvicorn's own keepalive stops counting at the first byte of a head)."""

    class HeadTimed(H11Protocol):
        head_due: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._await_head(header_timeout_seconds)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._await_head(keepalive_timeout_seconds)

        def connection_lost(self, exc: Exception | None) -> None:
            if self.head_due is not None:
                self.head_due.cancel()
            super().connection_lost(exc)

        def _await_head(self, seconds: float) -> None:
            """Close the connection in ``seconds`` unless a request has begun by then (or is running)."""
            waiting = self.cycle

            def late() -> None:
                idle = self.cycle is waiting and (waiting is None or waiting.response_complete)
                if idle and not self.transport.is_closing():
                    self.transport.close()

            if self.head_due is not None:
                self.head_due.cancel()
            self.head_due = self.loop.call_later(seconds, late)

    return HeadTimed


def uvicorn_config(app: App, limits: Limits, **options: Any) -> Config:
    """A uvicorn configuration serving ``app`` within ``limits``: keepalive timeout, connection cap
    (``limit_concurrency``, which counts running requests too and answers 503 past it), the largest
    request head, and a head deadline (:func:`head_timed`)."""
    return Config(
        app,
        http=head_timed(limits.header_timeout_seconds, limits.keepalive_timeout_seconds),
        timeout_keep_alive=max(1, math.ceil(limits.keepalive_timeout_seconds)),
        limit_concurrency=limits.max_connections,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,
        **options,
    )
