"""``serve``: the audit database as web pages for people, read-only (:mod:`streams.web.pages.site`).

The command reads its options (the address, ``--db``, the listener's limits, the ``--allow-host`` names),
checks that the database opens, and serves until SIGINT/SIGTERM. It binds 127.0.0.1 unless ``--host``
says otherwise, and answers only a loopback ``Host`` (or the ``--host`` name, or an ``--allow-host``
one). The pages have no login, so put a proxy with authentication in front before exposing them.
"""

from __future__ import annotations

import argparse
import asyncio
import logging.config
import sys

from streams.audit.factory import store_from_settings
from streams.cli.audit import settings_with_db
from streams.cli.runtime import check_port
from streams.observe.logs import logging_config
from streams.web.listener import (
    HEADER_TIMEOUT_SECONDS,
    KEEPALIVE_TIMEOUT_SECONDS,
    MAX_CONNECTIONS,
    MAX_CONNECTIONS_PER_PEER,
    Limits,
    serve_until_signal,
)
from streams.web.pages.site import allowed_host_names, serve


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``serve``."""
    serve = sub.add_parser(
        "serve",
        help="the audit trail as web pages for people (read-only)",
        description="Serve the audit database read-only: / lists the runs (tool calls, dead letters, "
        "verdicts by outcome), /runs/RUN_ID shows a run's trail and evidence: the chain at a glance, the "
        "items each tool call showed the agent with their signature state (EC_TRUSTED_KEYS_FILE), drafts "
        "with each claim beside what it cites, violations and a receipt download. "
        "?format=json on either gives JSON. No JavaScript needed; binds 127.0.0.1 by default.",
    )
    serve.add_argument("--port", type=int, default=8088, help="TCP port (default 8088)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument(
        "--db",
        metavar="PATH|DSN",
        help="SQLite file, or a postgresql:// DSN (default: EC_AUDIT_DSN when set, else EC_AUDIT_DB); "
        "prefer EC_AUDIT_DSN for a DSN with a password",
    )
    serve.add_argument(
        "--header-timeout-seconds",
        type=float,
        default=HEADER_TIMEOUT_SECONDS,
        help="close a new connection that has not sent a whole request head by then "
        f"(default {HEADER_TIMEOUT_SECONDS:g})",
    )
    serve.add_argument(
        "--keepalive-timeout-seconds",
        type=float,
        default=KEEPALIVE_TIMEOUT_SECONDS,
        help=f"close a connection idle that long between requests (default {KEEPALIVE_TIMEOUT_SECONDS:g})",
    )
    serve.add_argument(
        "--max-connections",
        type=int,
        default=MAX_CONNECTIONS,
        help=f"connections served at once; more are answered 503 (default {MAX_CONNECTIONS})",
    )
    serve.add_argument(
        "--max-connections-per-peer",
        type=int,
        default=MAX_CONNECTIONS_PER_PEER,
        help="connections served at once from one peer (all of loopback is one, an IPv6 client its /64); "
        f"more are answered 503 (default {MAX_CONNECTIONS_PER_PEER})",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host name to answer besides loopback names and --host (the name a proxy in front sends); "
        "repeatable. Any other Host is 403, so a web page cannot read the pages by DNS rebinding",
    )
    serve.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    serve.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    """The ``serve`` command: checks the database opens, then serves until SIGINT/SIGTERM."""
    check_port(args.port)
    limits = Limits(
        header_timeout_seconds=args.header_timeout_seconds,
        keepalive_timeout_seconds=args.keepalive_timeout_seconds,
        max_connections=args.max_connections,
        max_connections_per_peer=args.max_connections_per_peer,
    )
    settings = settings_with_db(args.db)
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    # Fail at once, with the store's explanation, when the database cannot be read at all.
    store_from_settings(settings, readonly=True).close()
    allowed = (*allowed_host_names(args.host), *args.allow_host)

    async def run(stop: asyncio.Event) -> None:
        await serve(settings, args.host, args.port, stop, limits, allowed)

    asyncio.run(serve_until_signal(run))
    print("serve: stopped", file=sys.stderr)
    return 0
