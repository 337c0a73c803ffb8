"""Run the MCP server: over stdio (what an agent host spawns), or over streamable HTTP behind a bearer token.

Over HTTP the access rule is the gateway's: with ``EC_GATEWAY_TOKEN`` every request needs
``Authorization: Bearer <token>`` (compared in constant time); without one the server listens on
loopback only and refuses to start on any other address. Either way one server process is one run.
"""

from __future__ import annotations

import hmac
import logging
import socket
from typing import Any

from streams.client import EvidenceChainClient
from streams.client.gateway import bearer_token
from streams.client.repair import Language
from streams.errors import ConfigurationError
from streams.mcp.run import McpRun
from streams.mcp.server import build_server
from streams.retry import RetryPolicy, hold
from streams.settings import Settings

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Any
Send = Any


class BearerAuth:
    """ASGI middleware: HTTP requests without the right ``Authorization: Bearer`` are answered 401."""

    def __init__(self, app: Any, token: bytes | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self.token is not None and not self._authorized(scope):
            body = b'{"error":{"reason":"UNAUTHORIZED","message":"this server needs Authorization: Bearer <EC_GATEWAY_TOKEN>","retriable":false}}'  # noqa: E501
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="evidence-chain"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        header = next((value for name, value in scope.get("headers", []) if name == b"authorization"), b"")
        scheme, _, given = header.partition(b" ")
        return (
            scheme.lower() == b"bearer"
            and self.token is not None
            and hmac.compare_digest(given.strip(), self.token)
        )


async def _started_client(settings: Settings) -> EvidenceChainClient:
    if not settings.pyrag_url:
        log.warning(
            "EC_PYRAG_URL is not set: lookup_knowledge will fail until it is (check_diagnosis and "
            "get_evidence work without it)"
        )
    client = EvidenceChainClient(settings)
    what = f"connecting to Kafka at {settings.kafka_bootstrap}"
    await hold(client.start, what=what, policy=RetryPolicy.for_startup(settings))
    return client


async def serve_stdio(settings: Settings, *, language: Language = "en") -> None:
    """Answer one MCP session on stdin/stdout (logs go to stderr) until the host closes it.

    Raises:
        ConfigurationError: ``EC_MCP_RUN_ID`` is not a valid id.
        HoldExpired: Kafka did not answer within ``EC_STARTUP_WAIT_SECONDS``.
    """
    run = McpRun.start(settings.mcp_run_id)
    client = await _started_client(settings)
    try:
        log.info("mcp: run %s over stdio", run.run_id)
        await build_server(client, run, language=language).run_stdio_async()
    finally:
        await client.close()


async def serve_http(settings: Settings, host: str, port: int, *, language: Language = "en") -> None:
    """Answer MCP over streamable HTTP at ``http://host:port/mcp`` until interrupted.

    Raises:
        ConfigurationError: no token on an address that is not loopback, or a bad ``EC_MCP_RUN_ID``.
        HoldExpired: Kafka did not answer within ``EC_STARTUP_WAIT_SECONDS``.
    """
    import uvicorn  # the SDK's own HTTP server; only this transport needs it

    token = bearer_token(settings, host)  # refuse before connecting to anything
    run = McpRun.start(settings.mcp_run_id)
    listening = _listen(host, port)
    client = await _started_client(settings)
    try:
        server = build_server(client, run, language=language)
        app = BearerAuth(server.streamable_http_app(host=host), token)
        auth = "bearer token required" if token is not None else "no token: loopback only"
        shown = f"[{host}]" if ":" in host else host
        bound = listening.getsockname()[1]
        print(f"mcp: run {run.run_id} at http://{shown}:{bound}/mcp ({auth}; Ctrl-C stops)", flush=True)
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        await uvicorn.Server(config).serve(sockets=[listening])
    finally:
        listening.close()
        await client.close()


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
