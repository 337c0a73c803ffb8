"""``gateway``: the agent's client over HTTP/JSON (:mod:`streams.web.gateway`, ``docs/openapi.yaml``)."""

from __future__ import annotations

import argparse
import asyncio
import logging.config
import sys

from streams.cli.runtime import freeze_start_up
from streams.errors import ConfigurationError
from streams.observe.logs import logging_config
from streams.settings import Settings, get_settings, load_settings
from streams.web.gateway import bearer_token, serve
from streams.web.listener import serve_until_signal


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``gateway``."""
    gateway = sub.add_parser(
        "gateway",
        help="lookups, checks and ledger reads over HTTP/JSON, for agents in any language",
        description="Serve POST /v1/lookups (a raw-hits record -> its ledger entry), POST /v1/search "
        "(a query -> py-rag asked at EC_PYRAG_URL, its answer's ledger entry), POST /v1/drafts "
        "(a draft -> its verdict) and GET /v1/ledger/RUN_ID/TOOL_CALL_ID, with /livez, /readyz, "
        "/metrics and /openapi.yaml. Every /v1 request needs Authorization: Bearer <EC_GATEWAY_TOKEN> "
        "when the token is set; without one it listens on loopback only.",
    )
    gateway.add_argument(
        "--host", default=None, help="address to listen on (default EC_GATEWAY_HOST, else 127.0.0.1)"
    )
    gateway.add_argument(
        "--port", type=int, default=None, help="TCP port (default EC_GATEWAY_PORT, else 8080; 0: any free)"
    )
    gateway.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    gateway.set_defaults(handler=run_gateway)


def gateway_settings(host: str | None, port: int | None) -> Settings:
    """The settings with ``--host`` / ``--port`` in place of ``EC_GATEWAY_HOST`` / ``_PORT``.

    Raises:
        ConfigurationError: a setting, or the port, cannot work.
    """
    if port is not None and not 0 <= port <= 65535:
        raise ConfigurationError(f"--port must be from 0 to 65535, not {port}")
    given = (("gateway_host", host), ("gateway_port", port))
    overrides = {name: value for name, value in given if value is not None}
    return load_settings(**overrides) if overrides else get_settings()


def run_gateway(args: argparse.Namespace) -> int:
    """The ``gateway`` command: refuse an exposed address without a token, then serve until SIGINT/SIGTERM."""
    settings = gateway_settings(args.host, args.port)
    bearer_token(settings, settings.gateway_host)  # before any connection or log line
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    freeze_start_up()
    if settings.event_loop == "uvloop":
        import uvloop

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(serve_until_signal(lambda stop: serve(settings, stop)))
    else:
        asyncio.run(serve_until_signal(lambda stop: serve(settings, stop)))
    print("gateway: stopped", file=sys.stderr)
    return 0
