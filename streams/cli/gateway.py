"""``gateway``: the agent's client over HTTP/JSON (:mod:`streams.web.gateway`, ``docs/openapi.yaml``)."""

from __future__ import annotations

import argparse
import logging.config
import sys

from streams.cli.runtime import check_port, freeze_start_up, run_on_loop, settings_with
from streams.observe.logs import logging_config
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


def run_gateway(args: argparse.Namespace) -> int:
    """The ``gateway`` command: refuse an exposed address without a token, then serve until SIGINT/SIGTERM."""
    check_port(args.port)
    settings = settings_with(gateway_host=args.host, gateway_port=args.port)
    bearer_token(settings, settings.gateway_host)  # before any connection or log line
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    freeze_start_up()
    run_on_loop(settings, serve_until_signal(lambda stop: serve(settings, stop)))
    print("gateway: stopped", file=sys.stderr)
    return 0
