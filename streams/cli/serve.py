"""``serve``: the audit database as web pages for people, read-only (aiohttp).

``GET /`` and ``/runs`` list the runs, newest first, with their counts; ``/runs/<run_id>`` shows one
run's trail (:mod:`streams.cli.pages`) and its evidence (:mod:`streams.cli.evidence`): what each tool call
showed the agent, signatures checked with ``EC_TRUSTED_KEYS_FILE``, each claim beside what it cites;
``/runs/<run>/drafts/<draft>/receipt.json`` (``?attempt=N``) is a draft's receipt (SPEC 4.1).
Add ``?format=json`` to either page for the same data as JSON.
``/runs?run_id=X`` redirects to X's page (and shows it, for the runs ``.`` and ``..`` that no path
can name). A query value out of its range (``limit``, ``format``) or given twice is a 400. Every
request opens the database read-only, reads, and closes it (in a thread, so a slow database never
blocks the loop), so the page keeps working while the sink writes and comes back by itself after a
database outage.

Connections are bounded (:class:`Limits`): a new one must send its first request head within
``--header-timeout-seconds`` (aiohttp has no header-read timeout of its own), an idle one is closed
after ``--keepalive-timeout-seconds`` (aiohttp's ``keepalive_timeout``, which also ends a later
request head that never completes), and past ``--max-connections`` open at once a new one is answered
503 and closed, so idle or half-open connections can neither pile up nor lock people out for long.
It binds 127.0.0.1 unless ``--host`` says otherwise: the pages have no login, so put a proxy with
authentication in front before exposing them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import logging.config
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from streams import codec
from streams.audit.factory import store_from_settings
from streams.audit.store import AuditStore, describe
from streams.cli import pages
from streams.cli.audit import settings_with_db
from streams.cli.evidence import evidence_document
from streams.cli.receipt import receipt_keys, receipt_parts
from streams.errors import AuditStoreBusy, ConfigurationError, UnknownVerdict
from streams.observe.logs import logging_config
from streams.settings import Settings
from streams.trust import build_receipt, trusted_for

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RUNS = 5000
_LIMIT = re.compile(r"[0-9]{1,4}")  # ASCII digits only (str.isdigit takes "²"); MAX_RUNS has 4 digits
_ATTEMPT = re.compile(r"[0-9]{1,7}")
_FORMATS = ("html", "json")
HEADER_TIMEOUT_SECONDS = 10.0
"""How long a new connection may take to send its first request head before it is closed."""
KEEPALIVE_TIMEOUT_SECONDS = 15.0
"""How long a connection may sit idle (waiting for a request, or for the rest of its head)."""
MAX_CONNECTIONS = 100
"""Connections served at once; one more is answered 503 and closed."""
REFUSED_LINGER_SECONDS = 1.0
"""How long a refused connection stays open to read the request it sent (closing a socket with
unread data resets it, and the client could lose the 503 before reading it)."""
_REFUSED_BODY = b"too many open connections; try again shortly\n"
_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"X-Content-Type-Options: nosniff\r\nRetry-After: 1\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(_REFUSED_BODY), _REFUSED_BODY)
)
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
    serve.add_argument("--loglevel", default="info", choices=("debug", "info", "warning", "error"))
    serve.set_defaults(handler=run_serve)


@dataclass(frozen=True)
class Limits:
    """How long a connection may wait and how many may be open (the ``serve`` options of those names)."""

    header_timeout_seconds: float = HEADER_TIMEOUT_SECONDS
    keepalive_timeout_seconds: float = KEEPALIVE_TIMEOUT_SECONDS
    max_connections: int = MAX_CONNECTIONS

    def __post_init__(self) -> None:
        if not self.header_timeout_seconds > 0 or not self.keepalive_timeout_seconds > 0:
            raise ConfigurationError(
                "--header-timeout-seconds and --keepalive-timeout-seconds must be above 0"
            )
        if self.max_connections < 1:
            raise ConfigurationError(f"--max-connections must be at least 1, not {self.max_connections}")


def _reader(settings: Settings) -> Callable[[Callable[[AuditStore], T]], Awaitable[T]]:
    """``await read(fn)``: open the database read-only in a thread, ``fn(store)``, close it."""

    def blocking(fn: Callable[[AuditStore], T]) -> T:
        store = store_from_settings(settings, readonly=True)
        try:
            return fn(store)
        finally:
            store.close()

    async def read(fn: Callable[[AuditStore], T]) -> T:
        return await asyncio.to_thread(blocking, fn)

    return read


def _wants_json(request: web.Request) -> bool:
    return request.query.get("format") == "json"


def _query_problem(request: web.Request, accepted: tuple[str, ...]) -> str | None:
    """What is wrong with the query values the page takes (``accepted``), or None; others are ignored."""
    for name in accepted:
        if len(request.query.getall(name, [])) > 1:
            return f"{name} may be given once"
    if request.query.get("format", "html") not in _FORMATS:
        return "format must be json or html"
    limit = request.query.get("limit") if "limit" in accepted else None
    if limit is not None and not (_LIMIT.fullmatch(limit) and 1 <= int(limit) <= MAX_RUNS):
        return f"limit must be a whole number from 1 to {MAX_RUNS}"
    return None


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
    trusted = trusted_for(settings.trusted_keys_file)  # a bad file fails here, at start
    keys = receipt_keys(settings)

    async def guarded(request: web.Request, page: Callable[[], Awaitable[web.Response]]) -> web.Response:
        try:
            return await page()
        except AuditStoreBusy as exc:
            return _problem(request, 503, "Audit database unavailable", f"{exc}; try again shortly")
        except ConfigurationError as exc:
            return _problem(request, 503, "Audit database unusable", str(exc))

    async def runs(request: web.Request) -> web.Response:
        problem = _query_problem(request, ("run_id", "limit", "format"))
        if problem is not None:
            return _problem(request, 400, "Bad request", problem)
        wanted = request.query.get("run_id", "").strip()
        if wanted in pages.DOT_SEGMENTS:  # its only address: no path can name it
            return await show_run(request, wanted)
        if wanted:
            raise web.HTTPFound(pages.run_href(wanted, as_json=_wants_json(request)))
        limit = int(request.query.get("limit", "500"))

        async def page() -> web.Response:
            overview = await read(lambda store: store.run_overview(limit))
            return _answer(request, pages.runs_document(overview), lambda: pages.runs_page(overview, where))

        return await guarded(request, page)

    async def run(request: web.Request) -> web.Response:
        problem = _query_problem(request, ("format",))
        if problem is not None:
            return _problem(request, 400, "Bad request", problem)
        return await show_run(request, request.match_info["run_id"])

    async def show_run(request: web.Request, run_id: str) -> web.Response:
        async def page() -> web.Response:
            def everything(store: AuditStore) -> tuple[Any, ...]:
                tool_calls, guard_rows = store.run_trail(run_id)
                evidence = evidence_document(
                    tool_calls,
                    guard_rows,
                    store.ledger_entries(run_id),
                    store.station_records(run_id),
                    store.stored_verdicts(run_id),
                    store.stored_drafts(run_id),
                    trusted,
                    settings.projection.max_excerpt_chars,
                )
                return tool_calls, guard_rows, store.violation_details(run_id), evidence

            tool_calls, verdicts, details, evidence = await read(everything)
            if not tool_calls and not verdicts:
                return _problem(
                    request,
                    404,
                    "Unknown run",
                    f"no audit records for run {run_id}; is the audit sink running "
                    "(evidence-chain audit-sink)?",
                )
            document = pages.run_document(run_id, tool_calls, verdicts, details, evidence)
            return _answer(request, document, lambda: pages.run_page(document))

        return await guarded(request, page)

    async def receipt(request: web.Request) -> web.Response:
        """The receipt of a draft's verdict (the latest attempt, or ``?attempt=N``) as a JSON download."""
        wanted = request.query.get("attempt")
        if len(request.query.getall("attempt", [])) > 1:
            return web.json_response({"error": "attempt may be given once"}, status=400, headers=HEADERS)
        if wanted is not None and not (_ATTEMPT.fullmatch(wanted) and int(wanted) >= 1):
            message = "attempt must be a whole number from 1 to 1000000"
            return web.json_response({"error": message}, status=400, headers=HEADERS)
        attempt = int(wanted) if wanted is not None else None
        run_id, draft_id = request.match_info["run_id"], request.match_info["draft_id"]

        async def page() -> web.Response:
            def parts(store: AuditStore) -> tuple[Any, ...]:
                return receipt_parts(store, run_id, draft_id, attempt)

            try:
                verdict, entries, missing = await read(parts)
            except UnknownVerdict as exc:
                return web.json_response({"error": str(exc)}, status=404, headers=HEADERS)
            if missing:
                message = (
                    f"the audit store lacks the ledger entries of {', '.join(missing)}; "
                    "`evidence-chain receipt` can read them from Redis"
                )
                return web.json_response({"error": message}, status=409, headers=HEADERS)
            doc = build_receipt(verdict, entries, keys)
            name = f"receipt-{run_id}-{draft_id}-{verdict.get('attempt')}.json"
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
            return web.Response(
                body=codec.dumps(doc),
                content_type="application/json",
                headers={**HEADERS, "Content-Disposition": f'attachment; filename="{safe}"'},
            )

        return await guarded(request, page)

    app = web.Application()
    app.add_routes(
        [
            web.get("/", runs),
            web.get("/runs", runs),
            web.get("/runs/{run_id}/drafts/{draft_id}/receipt.json", receipt),
            web.get("/runs/{run_id:.+}", run),
        ]
    )
    return app


class _Gate:
    """The listening socket's protocol factory: each connection is an aiohttp handler behind a
    :class:`_Connection` that counts it, refuses it past the cap, and closes it when its first
    request head is late (aiohttp's ``keepalive_timeout`` covers the connection after that)."""

    def __init__(self, limits: Limits) -> None:
        self.handlers: Callable[[], asyncio.Protocol] = _no_handlers  # aiohttp's, once it is set up
        self.limits = limits
        self.connections = 0
        self.refusing = False
        self._heads_due: dict[asyncio.BaseTransport, asyncio.TimerHandle] = {}

    def __call__(self) -> asyncio.Protocol:
        return _Connection(self)

    def await_head(self, transport: asyncio.Transport) -> None:
        due = asyncio.get_running_loop().call_later(self.limits.header_timeout_seconds, transport.close)
        self._heads_due[transport] = due

    def head_arrived(self, transport: asyncio.BaseTransport | None) -> None:
        if transport is not None and (due := self._heads_due.pop(transport, None)) is not None:
            due.cancel()

    def middleware(self) -> Middleware:
        """The app's first step: aiohttp calls the app only once a request head is parsed, in time."""

        @web.middleware
        async def head_arrived(request: web.Request, handler: Handler) -> web.StreamResponse:
            self.head_arrived(request.transport)
            return await handler(request)

        return head_arrived


def _no_handlers() -> asyncio.Protocol:
    raise ConfigurationError("serve: a connection came before the web server was set up")


class _Connection(asyncio.Protocol):
    """One accepted connection: handed to aiohttp when under the cap, else answered 503 and closed."""

    def __init__(self, gate: _Gate) -> None:
        self._gate = gate
        self._handler: asyncio.Protocol | None = None
        self._transport: asyncio.Transport | None = None
        self._linger: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        gate, self._transport = self._gate, cast(asyncio.Transport, transport)
        if gate.connections >= gate.limits.max_connections:
            if not gate.refusing:
                log.warning(
                    "%d connections open (--max-connections): refusing new ones with 503 until one closes",
                    gate.connections,
                )
            gate.refusing = True
            self._transport.write(_REFUSED)
            loop = asyncio.get_running_loop()
            self._linger = loop.call_later(REFUSED_LINGER_SECONDS, self._transport.close)
            return
        gate.connections += 1
        self._handler = gate.handlers()
        self._handler.connection_made(transport)
        gate.await_head(self._transport)

    def data_received(self, data: bytes) -> None:
        if self._handler is not None:
            self._handler.data_received(data)
        elif self._transport is not None:
            self._transport.close()  # its request is read: closing now sends no reset

    def eof_received(self) -> bool | None:
        return None if self._handler is None else self._handler.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._handler is None:
            if self._linger is not None:
                self._linger.cancel()
            return
        gate = self._gate
        gate.connections -= 1
        gate.refusing = gate.refusing and gate.connections >= gate.limits.max_connections
        gate.head_arrived(self._transport)  # forget its deadline
        self._handler.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._handler is not None:
            self._handler.pause_writing()

    def resume_writing(self) -> None:
        if self._handler is not None:
            self._handler.resume_writing()


async def serve(
    settings: Settings, host: str, port: int, stop: asyncio.Event, limits: Limits | None = None
) -> None:
    """Serve until ``stop`` is set, within ``limits`` (the defaults when None).

    Raises:
        ConfigurationError: the port cannot be bound.
    """
    gate = _Gate(limits or Limits())
    app = build_app(settings)
    app.middlewares.append(gate.middleware())
    runner = web.AppRunner(app, keepalive_timeout=gate.limits.keepalive_timeout_seconds)
    await runner.setup()
    listener: asyncio.Server | None = None
    try:
        if runner.server is not None:  # setup() sets it
            gate.handlers = runner.server
        try:
            listener = await asyncio.get_running_loop().create_server(gate, host, port, reuse_address=True)
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {host}:{port} ({exc.strerror}); choose another with --port"
            ) from exc
        print(f"serving http://{host}:{port}/ from {describe(settings)} (Ctrl-C stops)", flush=True)
        await stop.wait()
    finally:
        if listener is not None:
            listener.close()
        await runner.cleanup()
        if listener is not None:
            await listener.wait_closed()


async def _serve_until_signal(settings: Settings, host: str, port: int, limits: Limits) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    await serve(settings, host, port, stop, limits)


def run_serve(args: argparse.Namespace) -> int:
    """The ``serve`` command: checks the database opens, then serves until SIGINT/SIGTERM."""
    if not 0 <= args.port <= 65535:
        raise ConfigurationError(f"--port must be from 0 to 65535, not {args.port}")
    limits = Limits(args.header_timeout_seconds, args.keepalive_timeout_seconds, args.max_connections)
    settings = settings_with_db(args.db)
    logging.config.dictConfig(logging_config(settings.log_format, args.loglevel))
    # Fail at once, with the store's explanation, when the database cannot be read at all.
    store_from_settings(settings, readonly=True).close()
    asyncio.run(_serve_until_signal(settings, args.host, args.port, limits))
    print("serve: stopped", file=sys.stderr)
    return 0
