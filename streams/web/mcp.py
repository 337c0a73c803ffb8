"""The MCP server over streamable HTTP (``evidence-chain mcp --http``), behind the gateway's doors.

Over stdio (what an agent host spawns) it runs in :mod:`streams.mcp.stdio`. Over HTTP the doors are the
gateway's (:class:`streams.web.asgi.Doors`): with ``EC_GATEWAY_TOKEN``
every request needs ``Authorization: Bearer <token>`` (compared in constant time); without one the
server listens on loopback only, refuses to start on any other address, and answers no web page: 403
for a ``Host`` that is not loopback (DNS rebinding) or a request carrying ``Origin`` or a cross-site
``Sec-Fetch-Site``, 415 for a POST not labelled ``application/json`` (the one check of every server,
:func:`streams.web.guard.check`, with :func:`door_policy`). The SDK's own DNS-rebinding check
(``TransportSecuritySettings``) is set to the same rule behind ours (it cannot read ``Sec-Fetch-Site``
nor see all of 127/8, and lets loopback origins through by default). The connection limits are the
gateway's ``EC_GATEWAY_*`` ones, through uvicorn (:func:`streams.web.asgi.uvicorn_config`).

Runs (:class:`~streams.mcp.run.McpRuns`): over stdio one host session is one process and one run. Over
HTTP each MCP session (``Mcp-Session-Id``, the handshake protocols up to 2025-11-25) is a run of its
own, with its own tool call ids and attempts; a request in no session (the stateless 2026-07-28
protocol) is refused, so no two clients ever share a run, and the SDK's ``Client`` falls back to a
session by itself (:mod:`streams.web.mcp_sessions`, which also caps sessions per client, makes room
for a newcomer from the sessions not in use, and closes unused ones). With ``EC_MCP_RUN_ID`` every
session runs under that id, each with tool call ids, draft ids and attempts of its own.
"""

from __future__ import annotations

import logging
import socket
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings

from streams.client.repair import Language
from streams.errors import ConfigurationError
from streams.mcp.run import McpRuns
from streams.mcp.server import build_server, started_client
from streams.settings import Settings
from streams.web.gateway import bearer_token, limits_of
from streams.web.guard import Policy

if TYPE_CHECKING:
    from streams.web.asgi import Doors

log = logging.getLogger(__name__)

MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The largest request body (the SDK's default, 4 MiB), read whole within EC_GATEWAY_BODY_TIMEOUT_SECONDS."""


async def serve_http(settings: Settings, host: str, port: int, *, language: Language = "en") -> None:
    """Answer MCP over streamable HTTP at ``http://host:port/mcp`` until interrupted.

    Raises:
        ConfigurationError: no token on an address that is not loopback, or a bad ``EC_MCP_RUN_ID``.
        HoldExpired: Kafka did not answer within ``EC_STARTUP_WAIT_SECONDS``.
    """
    import uvicorn  # the SDK's own HTTP server; only this transport needs it

    from streams.web.asgi import uvicorn_config

    token = bearer_token(settings, host)  # refuse before connecting to anything
    runs = McpRuns(settings.mcp_run_id, per_session=True)
    listening = _listen(host, port)
    client = await started_client(settings)
    try:
        app = http_app(build_server(client, runs, language=language), host, token, settings)
        auth = "bearer token required" if token is not None else "no token: loopback only"
        shown = f"[{host}]" if ":" in host else host
        bound = listening.getsockname()[1]
        if runs.given:
            each = f"every MCP session in run {runs.given}, with its own tool call ids and attempts"
        else:
            each = "each MCP session a run of its own"
        print(f"mcp: at http://{shown}:{bound}/mcp ({auth}; {each}; Ctrl-C stops)", flush=True)
        config = uvicorn_config(app, limits_of(settings), log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve(sockets=[listening])
    finally:
        listening.close()
        await client.close()


def http_app(server: MCPServer[Any], host: str, token: bytes | None, settings: Settings) -> Doors:
    """The SDK's streamable-HTTP app of ``server`` at ``/mcp``, behind the gateway's doors (the SDK's
    own check set to the same rule behind them, :func:`sdk_security`) and the session gate (sessions
    only, capped per client with room made from those not in use, unused ones closed:
    :class:`~streams.web.mcp_sessions.SessionGate`)."""
    from streams.web.asgi import Doors  # uvicorn loads only for this transport
    from streams.web.mcp_sessions import SessionGate, SessionLimits

    limits = SessionLimits.of(settings)
    mcp = server.streamable_http_app(
        host=host,
        transport_security=sdk_security(host, token),
        max_request_body_size=MAX_BODY_BYTES,
        max_sessions=limits.max_sessions,
        session_idle_timeout=limits.idle_seconds,
    )
    gate = SessionGate(mcp, server.session_manager, limits)
    return Doors(gate, door_policy(token), limits_of(settings), MAX_BODY_BYTES)


def door_policy(token: bytes | None) -> Policy:
    """The MCP server's :class:`~streams.web.guard.Policy` on every path: the gateway's rule (the bearer
    token, or without one this machine only, no web page, JSON POSTs)."""
    return Policy.token_door("the MCP server", "the MCP server without EC_GATEWAY_TOKEN", token)


def sdk_security(host: str, token: bytes | None) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding check, set to the gateway's rule: with a token, off (the token is the
    door, as on the gateway); without one, a loopback ``Host`` (the SDK matches spellings: the usual
    three and the listening address, each with or without a port) and no ``Origin`` at all."""
    if token is not None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = sorted({"127.0.0.1", "localhost", "[::1]", f"[{host}]" if ":" in host else host})
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*names, *(f"{name}:*" for name in names)],
        allowed_origins=[],
    )


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: one the system picks, printed once bound).

    Raises:
        ConfigurationError: the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind((host, port))
        listening.listen(128)
    except OSError as exc:
        listening.close()
        raise ConfigurationError(
            f"cannot listen on {host}:{port} ({exc.strerror}); choose another with --port or EC_MCP_PORT"
        ) from exc
    return listening
