"""``mcp``: the knowledge tool and the draft check for any MCP host (:mod:`streams.mcp`, over HTTP
:mod:`streams.web.mcp`).

An agent host spawns ``evidence-chain mcp`` and talks MCP on its stdin/stdout; ``--http`` serves
streamable HTTP instead, at ``http://EC_MCP_HOST:EC_MCP_PORT/mcp``. Nothing but MCP goes to stdout
over stdio: logs go to stderr.
"""

from __future__ import annotations

import argparse
import logging.config
import sys

from streams.cli.runtime import check_port, freeze_start_up, run_on_loop, settings_with
from streams.observe.logs import logging_config


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mcp``."""
    mcp = sub.add_parser(
        "mcp",
        help="lookup_knowledge, check_diagnosis and get_evidence as MCP tools (stdio; --http)",
        description="An MCP server for agent hosts: lookup_knowledge asks py-rag (EC_PYRAG_URL) and "
        "returns the ledger's projection; check_diagnosis stamps and checks a draft and returns its "
        "verdict with the repair prompt, the fixed report or the report's id; get_evidence reads an "
        "entry of the run. One MCP session is one run (EC_MCP_RUN_ID, else generated): over stdio the "
        "process's; over --http each session's own (a request in no session is refused, and with "
        "EC_MCP_RUN_ID every session runs under it with its own ids and attempts). Over stdio "
        "by default; --http serves streamable HTTP, with Authorization: Bearer <EC_GATEWAY_TOKEN> "
        "when the token is set, and on loopback only when it is not.",
    )
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    mcp.add_argument("--host", default=None, help="with --http: address (default EC_MCP_HOST, 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=None, help="with --http: port (default EC_MCP_PORT, 8081)")
    mcp.add_argument(
        "--language", default="en", choices=("en", "zh"), help="of the repair prompts (default en)"
    )
    mcp.add_argument("--loglevel", default="warning", choices=("debug", "info", "warning", "error"))
    mcp.set_defaults(handler=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    """The ``mcp`` command.

    Raises:
        ConfigurationError: a setting or argument cannot work (a non-loopback address without a token).
    """
    from streams.mcp.stdio import serve_stdio  # the SDK loads only for this command
    from streams.web.mcp import serve_http

    check_port(args.port)
    settings = settings_with(mcp_host=args.host, mcp_port=args.port)
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    freeze_start_up()
    if args.http:
        serving = serve_http(settings, settings.mcp_host, settings.mcp_port, language=args.language)
    else:
        serving = serve_stdio(settings, language=args.language)
    try:
        run_on_loop(settings, serving)  # as the gateway's
    except KeyboardInterrupt:
        pass
    print("mcp: stopped", file=sys.stderr)
    return 0
