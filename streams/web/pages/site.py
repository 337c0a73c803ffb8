"""The audit database as web pages for people, read-only (aiohttp): what ``evidence-chain serve`` serves.

``GET /`` and ``/runs`` list the runs, newest first, with their counts, a page at a time (``?limit=``,
``?offset=``); ``/runs/<run_id>`` shows one run's trail (:mod:`streams.web.pages.render`) and its
evidence (:mod:`streams.web.pages.run_evidence`): what each tool call showed the agent, signatures
checked with ``EC_TRUSTED_KEYS_FILE``, each claim beside what it cites;
``/runs/<run>/drafts/<draft>/receipt.json`` (``?attempt=N``) is a draft's receipt (SPEC 4.1).
Add ``?format=json`` to either page for the same data as JSON. A run page and its JSON stay under
5 MB: each of its lists (tool calls, entries, drafts) is shown a window at a time (``?calls=``,
``?entries=``, ``?drafts=``: :mod:`streams.web.pages.window`), and the page says what it left out.
``/runs?run_id=X`` redirects to X's page (and shows it, for the runs ``.`` and ``..`` that no path
can name). A query value out of its range (``limit``, ``format``, the offsets) or given twice is a 400.
Every request opens the database read-only, reads, and closes it (in a thread, so a slow database never
blocks the loop), so the page keeps working while the sink writes and comes back by itself after a
database outage.

Connections are bounded by the one listener of :mod:`streams.web` (:class:`~streams.web.listener.Limits`):
a new one must send its first request head within ``--header-timeout-seconds``, an idle one is closed
after ``--keepalive-timeout-seconds``, and past ``--max-connections`` open at once (or
``--max-connections-per-peer`` from one address) a new one is answered 503 and closed.
It binds 127.0.0.1 unless ``--host`` says otherwise, and answers only a loopback ``Host`` (or the
``--host`` name, or an ``--allow-host`` one): a page elsewhere cannot read the runs by DNS rebinding.
The pages have no login, so put a proxy with authentication in front before exposing them.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Collection
from typing import Any, TypeVar

from aiohttp import web

from streams import codec
from streams.audit.factory import store_from_settings
from streams.audit.receipts import owners_first, receipt_judgement, receipt_parts
from streams.audit.store import AuditStore, describe
from streams.errors import AuditStoreBusy, ConfigurationError, RequestRefused, UnknownVerdict
from streams.settings import Settings
from streams.trust import build_receipt, trusted_for
from streams.trust.receipt import receipt_keys
from streams.web.guard import Guard, Policy
from streams.web.listener import Limits, listening
from streams.web.pages import render
from streams.web.pages.run_evidence import evidence_document
from streams.web.pages.window import Starts

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_RUNS = 5000
_LIMIT = re.compile(r"[0-9]{1,4}")  # ASCII digits only (str.isdigit takes "²"); MAX_RUNS has 4 digits
_ATTEMPT = re.compile(r"[0-9]{1,7}")
_OFFSET = re.compile(r"[0-9]{1,9}")
WINDOWS = ("calls", "entries", "drafts")
"""The run page's window offsets (:mod:`streams.web.pages.window`)."""
RUNS_PER_PAGE = 100
"""Runs on one page of the list (``?limit=`` up to :data:`MAX_RUNS`; ``?offset=`` pages on)."""
_FORMATS = ("html", "json")
HEADERS = {
    # No script may run on these pages, whatever a record holds; only the page's own style applies.
    "Content-Security-Policy": (
        f"default-src 'none'; style-src '{render.STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


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
    for name in ("offset", *WINDOWS):
        value = request.query.get(name) if name in accepted else None
        if value is not None and not _OFFSET.fullmatch(value):
            return f"{name} must be a whole number from 0 to 999999999"
    return None


def _starts(request: web.Request) -> Starts:
    """Where the run page's windows start (``?calls=``, ``?entries=``, ``?drafts=``; checked already)."""
    return Starts(**{name: int(request.query.get(name, "0")) for name in WINDOWS})


def _answer(request: web.Request, document: Any, html: Callable[[], str], status: int = 200) -> web.Response:
    if _wants_json(request):
        return web.Response(
            body=codec.dumps(document), status=status, content_type="application/json", headers=HEADERS
        )
    return web.Response(
        text=html(), status=status, content_type="text/html", charset="utf-8", headers=HEADERS
    )


async def _render(
    request: web.Request, document: Any, html: Callable[[], str], status: int = 200
) -> web.Response:
    """:func:`_answer` in a worker thread: a large run's page must not hold the loop (and every other
    request) while it is built."""
    return await asyncio.to_thread(_answer, request, document, html, status)


def _problem(request: web.Request, status: int, title: str, message: str) -> web.Response:
    return _answer(request, {"error": message}, lambda: render.error_page(title, message), status)


def door_policy(allowed_hosts: Collection[str] = ()) -> Policy:
    """``serve``'s :class:`~streams.web.guard.Policy`: a loopback ``Host`` or one of ``allowed_hosts``
    (403 otherwise: no DNS rebinding), never an unreadable one (400)."""
    return Policy.local("serve", tuple(allowed_hosts), "the names --host and --allow-host give")


_TITLES = {400: "Bad request", 403: "Forbidden"}


async def _refused(request: web.Request, exc: RequestRefused) -> web.Response:
    """A request the guard refused, as a problem page (or its JSON)."""
    return _problem(request, exc.status, _TITLES.get(exc.status, "Bad request"), str(exc))


def build_app(settings: Settings, allowed_hosts: Collection[str] = ()) -> web.Application:
    """The web application over the audit database the settings name (nothing is opened yet).

    Only requests whose ``Host`` is a loopback name or one of ``allowed_hosts`` are answered."""
    read = _reader(settings)
    where = describe(settings)
    trusted = trusted_for(settings.trusted_keys_file)  # a bad file fails here, at start
    keys = receipt_keys(settings.trusted_keys_file, settings.signing_key_file)

    async def guarded(request: web.Request, page: Callable[[], Awaitable[web.Response]]) -> web.Response:
        try:
            return await page()
        except AuditStoreBusy as exc:
            return _problem(request, 503, "Audit database unavailable", f"{exc}; try again shortly")
        except ConfigurationError as exc:
            return _problem(request, 503, "Audit database unusable", str(exc))

    async def runs(request: web.Request) -> web.Response:
        problem = _query_problem(request, ("run_id", "limit", "offset", "format", *WINDOWS))
        if problem is not None:
            return _problem(request, 400, "Bad request", problem)
        wanted = request.query.get("run_id", "").strip()
        if wanted in render.DOT_SEGMENTS:  # its only address: no path can name it
            return await show_run(request, wanted)
        if wanted:
            raise web.HTTPFound(render.run_href(wanted, as_json=_wants_json(request)))
        limit = int(request.query.get("limit", str(RUNS_PER_PAGE)))
        offset = int(request.query.get("offset", "0"))

        async def page() -> web.Response:
            found = await read(lambda store: store.run_overview(limit, offset))
            overview: render.RunList = {**found, "limit": limit}
            return await _render(
                request, render.runs_document(overview), lambda: render.runs_page(overview, where)
            )

        return await guarded(request, page)

    async def run(request: web.Request) -> web.Response:
        problem = _query_problem(request, ("format", *WINDOWS))
        if problem is not None:
            return _problem(request, 400, "Bad request", problem)
        return await show_run(request, request.match_info["run_id"])

    async def show_run(request: web.Request, run_id: str) -> web.Response:
        async def page() -> web.Response:
            def everything(store: AuditStore) -> tuple[Any, ...]:
                tool_calls, trail = store.run_trail(run_id)
                verdicts = store.stored_verdicts(run_id)
                # each triple's owner first, as its receipt (receipt_parts) has it: SPEC 4.3
                guard_rows = owners_first(trail, verdicts, store.drafts_read(run_id), trusted)
                evidence = evidence_document(
                    tool_calls,
                    guard_rows,
                    store.ledger_entries(run_id),
                    store.station_records(run_id),
                    verdicts,
                    store.stored_drafts(run_id),
                    trusted,
                    settings.projection.max_excerpt_chars,
                    reports=store.stored_reports(run_id),
                    run_id=run_id,
                    judgements=store.stored_judgements(run_id),
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
            document = render.run_document(run_id, tool_calls, verdicts, details, evidence)
            starts = _starts(request)
            if _wants_json(request):  # a window of the run, under 5 MB, as the page is (window.py)
                body = await asyncio.to_thread(render.run_json, document, starts)
                return web.Response(body=body, content_type="application/json", headers=HEADERS)
            return await _render(request, None, lambda: render.run_page(document, starts))

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
                verdict, entries, missing = receipt_parts(store, run_id, draft_id, attempt, trusted)
                return verdict, entries, missing, receipt_judgement(store, verdict, trusted, entries)

            try:
                verdict, entries, missing, judgement = await read(parts)
            except UnknownVerdict as exc:
                return web.json_response({"error": str(exc)}, status=404, headers=HEADERS)
            if missing:
                message = (
                    f"the audit store lacks the ledger entries of {', '.join(missing)}; "
                    "`evidence-chain receipt` can read them from Redis"
                )
                return web.json_response({"error": message}, status=409, headers=HEADERS)
            doc = build_receipt(verdict, entries, keys, judgement)
            name = f"receipt-{run_id}-{draft_id}-{verdict.get('attempt')}.json"
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
            return web.Response(
                body=codec.dumps(doc),
                content_type="application/json",
                headers={**HEADERS, "Content-Disposition": f'attachment; filename="{safe}"'},
            )

        return await guarded(request, page)

    app = web.Application(middlewares=[Guard(door_policy(allowed_hosts), _refused)])
    app.add_routes(
        [
            web.get("/", runs),
            web.get("/runs", runs),
            web.get("/runs/{run_id}/drafts/{draft_id}/receipt.json", receipt),
            web.get("/runs/{run_id:.+}", run),
        ]
    )
    return app


async def serve(
    settings: Settings,
    host: str,
    port: int,
    stop: asyncio.Event,
    limits: Limits | None = None,
    allowed_hosts: Collection[str] = (),
) -> None:
    """Serve until ``stop`` is set, within ``limits`` (the defaults when None), answering only
    requests whose ``Host`` is a loopback name or one of ``allowed_hosts``.

    Raises:
        ConfigurationError: the port cannot be bound.
    """
    app = build_app(settings, allowed_hosts)
    async with listening(app, host, port, limits, what="serve") as bound:
        print(f"serving http://{host}:{bound}/ from {describe(settings)} (Ctrl-C stops)", flush=True)
        await stop.wait()


def allowed_host_names(host: str) -> tuple[str, ...]:
    """The ``Host`` names ``serve`` answers besides loopback ones: the ``--host`` it binds, unless
    that is a wildcard (then only loopback names, and those the proxy in front sends must be given)."""
    if host in ("", "0.0.0.0", "::"):  # noqa: S104 - compared, not bound
        return ()
    # an IPv6 address is written in brackets in a Host header (host_name keeps them)
    return (f"[{host}]",) if ":" in host and not host.startswith("[") else (host,)
