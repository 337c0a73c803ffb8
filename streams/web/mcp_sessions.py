"""Who may open an MCP session over streamable HTTP, and how long one nobody uses stays open.

:class:`SessionGate` is ASGI middleware between the doors (:class:`streams.web.asgi.Doors`) and the
SDK's streamable-HTTP app. It decides three things the SDK leaves open:

- **No session, no tool call.** Each MCP session is a run, with its own tool call ids and attempts
  (:class:`~streams.mcp.run.McpRuns`). A request in the stateless protocol (an ``MCP-Protocol-Version``
  header the handshake protocols do not name, 2026-07-28 on) carries nothing that ties it to the
  requests before it, so it could only share a run with every other such client (issue 38 M5: one
  client read another's evidence, and its first draft became the other's attempt 2) or start a new
  run at every request (no draft could cite a lookup, and attempts would restart at 1 for ever, so a
  rejected draft would never fall back). It is refused with JSON-RPC ``-32022`` (unsupported
  protocol version) naming the handshake versions; the SDK's ``Client`` in its default ``auto`` mode
  then falls back to the handshake and gets a session of its own.
- **Sessions per client address** (``EC_MCP_MAX_SESSIONS_PER_PEER``) besides the SDK's cap on all
  (``EC_MCP_MAX_SESSIONS``): one more is answered 503 (``Retry-After``), so one local process opening
  sessions in a loop cannot lock everyone else out (issue 38 M6).
- **Unused sessions end quickly.** A session whose client has sent no request but ``initialize``
  (notifications do not count) is closed ``EC_MCP_UNUSED_SESSION_SECONDS`` after it opened; a used
  one lives until the SDK's idle timeout (``EC_MCP_SESSION_IDLE_SECONDS``) or its client's DELETE.

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
from typing import Any, NotRequired

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import INTERNAL_ERROR, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from typing_extensions import TypedDict

from streams import codec
from streams.settings import Settings
from streams.web.asgi import Message, Receive, Scope, Send

log = logging.getLogger(__name__)

App = Callable[[Scope, Receive, Send], Any]

SESSIONS_ONLY = (
    "this server answers MCP only in a session (initialize, then Mcp-Session-Id, protocol versions "
    "{versions}): each session is a run of its own, with its own tool calls and attempts, and a request "
    "in no session has no run to be in"
)
RETRY_AFTER_SECONDS = 5
"""``Retry-After`` of a refusal at a session cap."""


@dataclass(frozen=True, slots=True)
class SessionLimits:
    """The caps and lifetimes of sessions (the ``EC_MCP_*`` settings)."""

    max_sessions: int = 1000
    max_sessions_per_peer: int = 100
    unused_seconds: float = 30.0
    idle_seconds: float = 1800.0

    @classmethod
    def of(cls, settings: Settings) -> SessionLimits:
        return cls(
            max_sessions=settings.mcp_max_sessions,
            max_sessions_per_peer=settings.mcp_max_sessions_per_peer,
            unused_seconds=settings.mcp_unused_session_seconds,
            idle_seconds=settings.mcp_session_idle_seconds,
        )


@dataclass(slots=True)
class _Opened:
    """A session the gate let open: who opened it, when, and whether its client has asked anything."""

    peer: str
    opened_at: float
    used: bool = False


class _Sessions:
    """The SDK's table of open sessions (``StreamableHTTPSessionManager`` keeps it private and offers no
    other way to ask which are open, or to end one that is not the caller's own)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self._manager = manager

    def is_open(self, session_id: str) -> bool:
        return session_id in self._manager._server_instances  # noqa: SLF001 - see the class docstring

    async def close(self, session_id: str) -> None:
        """End a session as its client's DELETE would: its transport refuses everything from now on
        and the SDK forgets it when its server task ends."""
        transport = self._manager._server_instances.get(session_id)  # noqa: SLF001 - as above
        if transport is not None and not transport.is_terminated:
            await transport.terminate()


def _header(scope: Scope, name: str) -> str | None:
    wanted = name.lower().encode("latin-1")
    for key, value in scope.get("headers", []):
        if key == wanted:
            return bytes(value).decode("latin-1")
    return None


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"


class JsonRpcError(TypedDict):
    """A JSON-RPC 2.0 error object."""

    code: int
    message: str
    data: NotRequired[object]


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
    error: JsonRpcError = {"code": code, "message": message}
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
        """Per peer, the opening requests being served (their sessions are not in the table yet)."""

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
        stale = [s for s, o in self._opened.items() if not o.used and o.opened_at <= due]
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
            except Exception:  # one session that would not close must not end the sweeping
                log.exception("mcp: closing unused sessions failed; trying again in %.1fs", every)

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
        session_id = _header(scope, MCP_SESSION_ID_HEADER)
        if session_id is None and scope["method"] == "POST":
            await self._open(scope, receive, send)
            return
        if session_id is not None:
            receive = await self._in_session(session_id, scope, receive)
        await self.app(scope, receive, send)

    async def _refuse_stateless(self, version: str, receive: Receive, send: Send) -> None:
        body = await _body(receive)
        request_id = _request_id(body)
        versions = list(HANDSHAKE_PROTOCOL_VERSIONS)
        await _json_rpc_error(
            send,
            400,
            UNSUPPORTED_PROTOCOL_VERSION,
            SESSIONS_ONLY.format(versions=", ".join(versions)),
            request_id=request_id,
            data={"supported": versions, "requested": version},
        )

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request in no session (an ``initialize``, or the SDK refuses it): admitted under the caps."""
        await self.close_unused()
        peer = _peer(scope)
        total = self.open_sessions() + sum(self._opening.values())
        mine = self.open_sessions(peer) + self._opening[peer]
        refused = None
        if mine >= self.limits.max_sessions_per_peer:
            refused = f"{mine} MCP sessions are open from this address (EC_MCP_MAX_SESSIONS_PER_PEER)"
        elif total >= self.limits.max_sessions:
            refused = f"{total} MCP sessions are open (EC_MCP_MAX_SESSIONS)"
        if refused is not None:
            await _body(receive)
            await _json_rpc_error(
                send,
                503,
                INTERNAL_ERROR,
                f"{refused}; close one (DELETE) or try again shortly",
                headers=((b"retry-after", str(RETRY_AFTER_SECONDS).encode("ascii")),),
            )
            return
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers", []):
                    if key.lower() == MCP_SESSION_ID_HEADER.lower().encode("latin-1"):
                        opened.append(bytes(value).decode("latin-1"))
            await send(message)

        self._opening[peer] += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening[peer] -= 1
            if self._opening[peer] <= 0:
                del self._opening[peer]
        for session_id in opened:
            if self._sessions.is_open(session_id):
                self._opened[session_id] = _Opened(peer, self.clock())

    async def _in_session(self, session_id: str, scope: Scope, receive: Receive) -> Receive:
        """Before a request in a session: an unused one past its time is closed (the SDK then answers
        404 as for any ended session); a request that asks something marks it used."""
        opened = self._opened.get(session_id)
        if opened is None or opened.used:
            return receive
        if opened.opened_at <= self.clock() - self.limits.unused_seconds:
            self._opened.pop(session_id, None)
            await self._sessions.close(session_id)
            return receive
        if scope["method"] != "POST":
            return receive
        body = await _body(receive)
        if _asks_something(body):
            opened.used = True
        return _replay(body, receive)


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


def _parsed(body: bytes) -> Any:
    try:
        return codec.loads(body)
    except codec.JSONDecodeError:
        return None


def _asks_something(body: bytes) -> bool:
    """Whether the body is a JSON-RPC request (a method and an id) other than ``initialize``."""
    message = _parsed(body)
    return (
        isinstance(message, dict)
        and "id" in message
        and isinstance(message.get("method"), str)
        and message["method"] != "initialize"
    )


def _request_id(body: bytes) -> object:
    message = _parsed(body)
    found = message.get("id") if isinstance(message, dict) else None
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    return None
