"""``serve``: the audit database as web pages for people, read-only (aiohttp).

``GET /`` and ``/runs`` list the runs, newest first, with their counts; ``/runs/<run_id>`` shows one
run's trail (:mod:`streams.cli.pages`). Add ``?format=json`` to either for the same data as JSON.
``/runs?run_id=X`` redirects to X's page. Every request opens the database read-only, reads, and
closes it (in a thread, so a slow database never blocks the loop), so the page keeps working while
the sink writes and comes back by itself after a database outage. It binds 127.0.0.1 unless
``--host`` says otherwise: the pages have no login, so put a proxy with authentication in front
before exposing them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import logging.config
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web

from streams import codec
from streams.audit_store import AuditStore, AuditStoreBusy, describe
from streams.cli import pages
from streams.cli.audit import settings_with_db
from streams.errors import ConfigurationError
from streams.logs import logging_config
from streams.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RUNS = 5000
HEADERS = {
    # No script may run on these pages, whatever a record holds; only the page's own style applies.
    "Content-Security-Policy": (
        f"default-src 'none'; style-src '{pages.STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``serve``."""
    serve = sub.add_parser(
        "serve",
        help="the audit trail as web pages for people (read-only)",
        description="Serve the audit database read-only: / lists the runs (tool calls, dead letters, "
        "verdicts by outcome), /runs/RUN_ID shows a run's trail: tool calls with their ledger status and "
        "projection figures, drafts with verdicts and violations, cited tool calls linked to their rows. "
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
    serve.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    serve.set_defaults(handler=run_serve)


def _reader(settings: Settings) -> Callable[[Callable[[AuditStore], T]], Awaitable[T]]:
    """``await read(fn)``: open the database read-only in a thread, ``fn(store)``, close it."""

    def blocking(fn: Callable[[AuditStore], T]) -> T:
        store = AuditStore.from_settings(settings, readonly=True)
        try:
            return fn(store)
        finally:
            store.close()

    async def read(fn: Callable[[AuditStore], T]) -> T:
        return await asyncio.to_thread(blocking, fn)

    return read


def _wants_json(request: web.Request) -> bool:
    return request.query.get("format") == "json"


def _answer(request: web.Request, document: Any, html: Callable[[], str], status: int = 200) -> web.Response:
    if _wants_json(request):
        return web.Response(
            body=codec.dumps(document), status=status, content_type="application/json", headers=HEADERS
        )
    return web.Response(
        text=html(), status=status, content_type="text/html", charset="utf-8", headers=HEADERS
    )


def _problem(request: web.Request, status: int, title: str, message: str) -> web.Response:
    return _answer(request, {"error": message}, lambda: pages.error_page(title, message), status)


def build_app(settings: Settings) -> web.Application:
    """The web application over the audit database the settings name (nothing is opened yet)."""
    read = _reader(settings)
    where = describe(settings)

    async def guarded(request: web.Request, page: Callable[[], Awaitable[web.Response]]) -> web.Response:
        try:
            return await page()
        except AuditStoreBusy as exc:
            return _problem(request, 503, "Audit database unavailable", f"{exc}; try again shortly")
        except ConfigurationError as exc:
            return _problem(request, 503, "Audit database unusable", str(exc))

    async def runs(request: web.Request) -> web.Response:
        wanted = request.query.get("run_id", "").strip()
        if wanted:
            raise web.HTTPFound(pages.run_href(wanted))
        raw = request.query.get("limit", "500")
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_RUNS:
            return _problem(request, 400, "Bad request", f"limit must be a whole number from 1 to {MAX_RUNS}")

        async def page() -> web.Response:
            overview = await read(lambda store: store.run_overview(int(raw)))
            return _answer(request, pages.runs_document(overview), lambda: pages.runs_page(overview, where))

        return await guarded(request, page)

    async def run(request: web.Request) -> web.Response:
        run_id = request.match_info["run_id"]

        async def page() -> web.Response:
            tool_calls, verdicts, details = await read(
                lambda store: (*store.run_trail(run_id), store.violation_details(run_id))
            )
            if not tool_calls and not verdicts:
                return _problem(
                    request,
                    404,
                    "Unknown run",
                    f"no audit records for run {run_id}; is the audit sink running "
                    "(evidence-chain audit-sink)?",
                )
            document = pages.run_document(run_id, tool_calls, verdicts, details)
            return _answer(request, document, lambda: pages.run_page(document))

        return await guarded(request, page)

    app = web.Application()
    app.add_routes([web.get("/", runs), web.get("/runs", runs), web.get("/runs/{run_id:.+}", run)])
    return app


async def serve(settings: Settings, host: str, port: int, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set.

    Raises:
        ConfigurationError: the port cannot be bound.
    """
    runner = web.AppRunner(build_app(settings))
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, host, port).start()
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {host}:{port} ({exc.strerror}); choose another with --port"
            ) from exc
        print(f"serving http://{host}:{port}/ from {describe(settings)} (Ctrl-C stops)", flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()


async def _serve_until_signal(settings: Settings, host: str, port: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    await serve(settings, host, port, stop)


def run_serve(args: argparse.Namespace) -> int:
    """The ``serve`` command: checks the database opens, then serves until SIGINT/SIGTERM."""
    if not 0 <= args.port <= 65535:
        raise ConfigurationError(f"--port must be from 0 to 65535, not {args.port}")
    settings = settings_with_db(args.db)
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    # Fail at once, with the store's explanation, when the database cannot be read at all.
    AuditStore.from_settings(settings, readonly=True).close()
    asyncio.run(_serve_until_signal(settings, args.host, args.port))
    print("serve: stopped", file=sys.stderr)
    return 0
