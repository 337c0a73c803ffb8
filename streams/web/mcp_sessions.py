"""Who may open an MCP session over streamable HTTP, which one gives way when they are many, and how long
one nobody uses stays open.

:class:`SessionGate` is ASGI middleware between the doors (:class:`streams.web.asgi.Doors`) and the
SDK's streamable-HTTP app. It decides what the SDK leaves open:

- **No session, no tool call.** Each MCP session is a run, with its own tool call ids and attempts
  (:class:`~streams.mcp.run.McpRuns`). A request in the stateless protocol (an ``MCP-Protocol-Version``
  header the handshake protocols do not name, 2026-07-28 on) carries nothing that ties it to the
  requests before it, so it could only share a run with every other such client (issue 38 M5: one
  client read another's evidence, and its first draft became the other's attempt 2) or start a new
  run at every request (no draft could cite a lookup, and attempts would restart at 1 for ever, so a
  rejected draft would never fall back). It is refused with JSON-RPC ``-32022`` (unsupported
  protocol version) naming the handshake versions; the SDK's ``Client`` in its default ``auto`` mode
  then falls back to the handshake and gets a session of its own.
- **Sessions per client** (``EC_MCP_MAX_SESSIONS_PER_PEER``) besides all of them
  (``EC_MCP_MAX_SESSIONS``). A client is its address, except that all of loopback is one client (any
  local process picks its source address in 127/8: eleven addresses once held every session, the
  red team's M1 after issue 38) and an IPv6 client is its /64 (a host is given a whole /64):
  :func:`streams.web.peers.peer_of`, by which the listeners count connections per peer too.
- **Room is made, not refused** (the same M1). A new session at a cap closes a session that is not
  in use: first one that asked nothing but ``initialize``, oldest first; then the one asked least
  recently. At the cap per client it is one of that client's; at the cap in all, one of the client
  holding the most sessions (and more than the newcomer's). A session is in use while a request of
  it is in flight and for ``EC_MCP_SESSION_IN_USE_SECONDS`` after its client last asked something;
  only when every candidate is in use is the newcomer answered 503 (``Retry-After``). So one process
  opening sessions in a loop, or pinging each once, locks no one out for longer than that; a client
  that keeps working is not closed for a newcomer.
- **Unused sessions end quickly.** A session whose client has sent no request but ``initialize``
  (notifications do not count) is closed ``EC_MCP_UNUSED_SESSION_SECONDS`` after it opened; a used
  one lives until the SDK's idle timeout (``EC_MCP_SESSION_IDLE_SECONDS``), its client's DELETE, or
  a newcomer's need for room once it is no longer in use.
- **A request is counted when it arrives** (the M2 of that review): a session is known from the moment
  its id is sent (the opening request's answer head), and a request in it marks it used before the
  SDK sees it, so a session that asked something is never closed as unused.
- **A body in a content coding** is a JSON-RPC parse error (400): uvicorn decodes none, and a body
  read as it is would be taken for another (``Content-Encoding: compress`` over plain JSON was read as
  JSON, the red team's L3 after issue 38, as on the gateway).
- **A request whose id MCP does not allow** (NaN, 1.5, ``true``, ``null``, ``{}``), which the SDK would
  take for a notification and answer 202 with nothing, is answered 400 with JSON-RPC ``-32600`` and
  ``id: null`` (:mod:`streams.mcp.messages`, the rule stdio follows too).

Which sessions are still open is the SDK's to know: the gate reads it from the session manager's
table, the one place it touches the SDK's internals (:class:`_Sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCMessage,
    JSONRPCRequest,
    jsonrpc_message_adapter,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError

from streams import codec
from streams.mcp.messages import BAD_ID, is_invalid_request, request_id
from streams.settings import Settings
from streams.web.asgi import Message, Receive, Scope, Send
from streams.web.body import content_codings
from streams.web.peers import LOOPBACK, peer_of

log = logging.getLogger(__name__)

App = Callable[[Scope, Receive, Send], Any]

SESSIONS_ONLY = (
    "this server answers MCP only in a session (initialize, then Mcp-Session-Id, protocol versions "
    "{versions}): each session is a run of its own, with its own tool calls and attempts, and a request "
    "in no session has no run to be in"
)
RETRY_AFTER_SECONDS = 5
"""``Retry-After`` of a refusal at a session cap."""
CONTENT_ENCODING = "Content-Encoding"
ENCODED = (
    "Parse error: the body is sent in a content coding ({!r}), and this server reads bodies unencoded; "
    "send it without Content-Encoding"
)


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """The caps and lifetimes of sessions (the ``EC_MCP_*`` settings)."""

    max_sessions: int = 1000
    max_sessions_per_peer: int = 100
    unused_seconds: float = 30.0
    in_use_seconds: float = 30.0
    idle_seconds: float = 1800.0

    @classmethod
    def of(cls, settings: Settings) -> SessionLimits:
        return cls(
            max_sessions=settings.mcp_max_sessions,
            max_sessions_per_peer=settings.mcp_max_sessions_per_peer,
            unused_seconds=settings.mcp_unused_session_seconds,
            in_use_seconds=settings.mcp_session_in_use_seconds,
            idle_seconds=settings.mcp_session_idle_seconds,
        )


@dataclass(slots=True)
class _Opened:
    """A session the gate let open: whose it is, when it opened, when its client last asked something,
    whether it ever did, and how many of its requests are being served."""

    peer: str
    opened_at: float
    asked_at: float
    used: bool = False
    in_flight: int = 0

    def in_use(self, since: float) -> bool:
        """Whether it may not be closed for a newcomer (``since``: the start of the in-use window)."""
        return self.in_flight > 0 or (self.used and self.asked_at > since)


class _Sessions:
    """The SDK's table of open sessions (``StreamableHTTPSessionManager`` keeps it private and offers no
    other way to ask which are open, or to end one that is not the caller's own)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self._manager = manager

    def is_open(self, session_id: str) -> bool:
        return session_id in self._manager._server_instances  # noqa: SLF001 - see the class docstring

    async def close(self, session_id: str) -> None:
        """End a session as its client's DELETE would, and have the SDK forget it at once (so its place
        under the SDK's own cap is free for the newcomer it was closed for)."""
        transport = self._manager._server_instances.get(session_id)  # noqa: SLF001 - as above
        if transport is not None:
            await self._manager._discard_session(session_id, transport)  # noqa: SLF001 - as above


def _headers(scope: Scope, name: str) -> list[str]:
    wanted = name.lower().encode("latin-1")
    return [bytes(value).decode("latin-1") for key, value in scope.get("headers", []) if key == wanted]


def _header(scope: Scope, name: str) -> str | None:
    found = _headers(scope, name)
    return found[0] if found else None


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return peer_of(str(client[0]) if client else None)


async def _json_rpc_error(
    send: Send,
    status: int,
    code: int,
    message: str,
    *,
    request_id: object = None,
    data: Any = None,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = codec.dumps({"jsonrpc": "2.0", "id": request_id, "error": error})
    head = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        (b"cache-control", b"no-store"),
        *headers,
    ]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


class SessionGate:
    """ASGI middleware in front of the SDK's streamable-HTTP app (see the module docstring).

    ``clock`` (monotonic seconds) is the gate's notion of now, for the tests.
    """

    def __init__(
        self,
        app: App,
        manager: StreamableHTTPSessionManager,
        limits: SessionLimits,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.limits = limits
        self.clock = clock
        self._sessions = _Sessions(manager)
        self._opened: dict[str, _Opened] = {}
        self._opening: Counter[str] = Counter()
        """Per peer, the opening requests being served whose session id has not been sent yet."""
        self._made_room: Counter[str] = Counter()
        """Per peer, the sessions closed for newcomers since the last log line."""

    # --- what is open -------------------------------------------------------------------------------

    def open_sessions(self, peer: str | None = None) -> int:
        """Sessions the gate let open that the SDK still holds (of ``peer``, or of everyone)."""
        self._forget_ended()
        return sum(1 for o in self._opened.values() if peer is None or o.peer == peer)

    def _forget_ended(self) -> None:
        for session_id in [s for s in self._opened if not self._sessions.is_open(s)]:
            del self._opened[session_id]

    async def close_unused(self) -> int:
        """Close every session unused for ``unused_seconds`` since it opened; how many were closed."""
        due = self.clock() - self.limits.unused_seconds
        stale = [s for s, o in self._opened.items() if not o.used and not o.in_flight and o.opened_at <= due]
        for session_id in stale:
            self._opened.pop(session_id, None)
            await self._sessions.close(session_id)
        if stale:
            log.info("mcp: closed %d sessions unused since initialize", len(stale))
        return len(stale)

    async def _sweep(self) -> None:
        """Close unused sessions as they fall due, for as long as the server runs."""
        every = min(max(self.limits.unused_seconds / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(every)
            try:
                await self.close_unused()
                self._forget_ended()
                self._log_made_room()
            except Exception:  # one session that would not close must not end the sweeping
                log.exception("mcp: closing unused sessions failed; trying again in %.1fs", every)

    def _log_made_room(self) -> None:
        """One line per sweep for the sessions closed to make room (a flood would write one per request)."""
        if self._made_room:
            closed = ", ".join(f"{n} of {peer}" for peer, n in self._made_room.most_common())
            log.info("mcp: closed sessions not in use to make room for new ones: %s", closed)
            self._made_room.clear()

    # --- making room --------------------------------------------------------------------------------

    def _giving_way(self, peer: str, since: float) -> str | None:
        """The session of ``peer`` a newcomer may close: one that asked nothing but ``initialize``
        (oldest first), else the one asked least recently; never one in use. None: every one is."""
        unused: tuple[float, str] | None = None
        used: tuple[float, str] | None = None
        for session_id, opened in self._opened.items():
            if opened.peer != peer or opened.in_use(since):
                continue
            if not opened.used:
                if unused is None or opened.opened_at < unused[0]:
                    unused = (opened.opened_at, session_id)
            elif used is None or opened.asked_at < used[0]:
                used = (opened.asked_at, session_id)
        found = unused or used
        return found[1] if found is not None else None

    def _make_room(self, peer: str) -> tuple[list[str], str | None]:
        """The sessions to close so that one more of ``peer`` fits under both caps, or why it does not.

        Decided without awaiting anything, so two newcomers never pick the same session or both take
        the last place; the sessions picked leave the gate's count at once."""
        self._forget_ended()
        since = self.clock() - self.limits.in_use_seconds
        held = Counter(o.peer for o in self._opened.values())
        held.update(self._opening)
        closing: list[str] = []

        def close(session_id: str) -> None:
            owner = self._opened.pop(session_id).peer
            held[owner] -= 1
            self._made_room[owner] += 1
            closing.append(session_id)

        in_use = f"each in use (a request in flight, or one in the last {self.limits.in_use_seconds:g}s)"
        while held[peer] >= self.limits.max_sessions_per_peer:
            victim = self._giving_way(peer, since)
            if victim is None:
                where = (
                    "from this machine (all of loopback is one client)"
                    if peer == LOOPBACK
                    else ("from this client's address")
                )
                return closing, (
                    f"{held[peer]} MCP sessions are open {where}, {in_use} (EC_MCP_MAX_SESSIONS_PER_PEER)"
                )
            close(victim)
        while sum(held.values()) >= self.limits.max_sessions:
            richer = [other for other, n in held.most_common() if n > held[peer]]
            victim = next(
                (found for other in [*richer, peer] if (found := self._giving_way(other, since))), None
            )
            if victim is None:
                return closing, f"{sum(held.values())} MCP sessions are open, {in_use} (EC_MCP_MAX_SESSIONS)"
            close(victim)
        return closing, None

    # --- requests ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            sweeping = asyncio.create_task(self._sweep())
            try:
                await self.app(scope, receive, send)
            finally:
                sweeping.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sweeping
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        version = _header(scope, MCP_PROTOCOL_VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._refuse_stateless(version, receive, send)
            return
        message: JSONRPCMessage | None = None
        if scope["method"] == "POST":
            codings = content_codings(_headers(scope, CONTENT_ENCODING))
            if codings:  # uvicorn decodes no body: read as it is, it would be taken for another
                await _body(receive)
                await _json_rpc_error(send, 400, PARSE_ERROR, ENCODED.format(codings[0][:20]))
                return
            body = await _body(receive)
            message = _message(body)
            if message is not None and is_invalid_request(message):
                await _json_rpc_error(send, 400, INVALID_REQUEST, BAD_ID)
                return
            receive = _replay(body, receive)
        session_id = _header(scope, MCP_SESSION_ID_HEADER)
        if session_id is None and scope["method"] == "POST":
            await self._open(scope, receive, send)
        elif session_id is not None:
            await self._in_session(session_id, message, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _refuse_stateless(self, version: str, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        versions = list(HANDSHAKE_PROTOCOL_VERSIONS)
        await _json_rpc_error(
            send,
            400,
            UNSUPPORTED_PROTOCOL_VERSION,
            SESSIONS_ONLY.format(versions=", ".join(versions)),
            request_id=_request_id(body),
            data={"supported": versions, "requested": version},
        )

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request in no session (an ``initialize``, or the SDK refuses it): admitted under the caps,
        room made for it when there is none; its session is known from the head of its answer on."""
        await self.close_unused()
        peer = _peer(scope)
        closing, refused = self._make_room(peer)
        if refused is not None:
            await _json_rpc_error(
                send,
                503,
                INTERNAL_ERROR,
                f"{refused}; close one (DELETE) or try again shortly",
                headers=((b"retry-after", str(RETRY_AFTER_SECONDS).encode("ascii")),),
            )
            return
        self._opening[peer] += 1  # counted before anything is awaited: a place taken
        opened: list[_Opened] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and not opened:
                session_id = _session_id(message)
                if session_id is not None and message["status"] < 400 and self._sessions.is_open(session_id):
                    now = self.clock()
                    opened.append(_Opened(peer, now, now, in_flight=1))
                    self._opened[session_id] = opened[0]
                    self._opening[peer] -= 1
            await send(message)

        try:
            for session_id in closing:
                await self._sessions.close(session_id)
            await self.app(scope, receive, watch)
        finally:
            if opened:
                opened[0].in_flight -= 1
            else:
                self._opening[peer] -= 1
            if self._opening[peer] <= 0:
                self._opening.pop(peer, None)

    async def _in_session(
        self, session_id: str, message: JSONRPCMessage | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A request in a session: an unused one past its time is closed (the SDK then answers 404 as
        for any ended session); a request that asks something marks it used, and every request keeps it
        in use while it is served."""
        opened = self._opened.get(session_id)
        if opened is None:
            await self.app(scope, receive, send)
            return
        now = self.clock()
        if not opened.used and not opened.in_flight and opened.opened_at <= now - self.limits.unused_seconds:
            self._opened.pop(session_id, None)
            await self._sessions.close(session_id)
            await self.app(scope, receive, send)
            return
        if _asks_something(message):
            opened.used = True
            opened.asked_at = now
        opened.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            opened.in_flight -= 1
            if opened.used:
                opened.asked_at = max(opened.asked_at, self.clock())


async def _body(receive: Receive) -> bytes:
    """The whole request body (the doors have read it within its cap and time already)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    whole: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return whole.pop() if whole else await receive()

    return replay


def _session_id(message: Message) -> str | None:
    """The ``Mcp-Session-Id`` of an answer's head."""
    wanted = MCP_SESSION_ID_HEADER.lower().encode("latin-1")
    for key, value in message.get("headers", []):
        if bytes(key).lower() == wanted:
            return bytes(value).decode("latin-1")
    return None


def _message(body: bytes) -> JSONRPCMessage | None:
    """The body as the SDK reads it (its parser, its models), or None when the SDK will refuse it itself."""
    try:
        return jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
    except (ValueError, ValidationError):
        return None


def _asks_something(message: JSONRPCMessage | None) -> bool:
    """Whether the message is a JSON-RPC request (a method and an id) other than ``initialize``."""
    return isinstance(message, JSONRPCRequest) and message.method != "initialize"


def _request_id(body: bytes) -> object:
    try:
        message = codec.loads(body)
    except codec.JSONDecodeError:
        return None
    return request_id(message.get("id")) if isinstance(message, dict) else None
