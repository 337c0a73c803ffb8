"""The one probe server of a process that serves nothing else: the worker and the audit sink.

``GET /livez`` and ``/readyz`` (JSON; 200 or 503) and ``/metrics`` (Prometheus text) on one port, from
what the process says of itself (:class:`Probed`: the worker's :class:`~streams.worker.health.Health`,
the audit sink's :class:`~streams.audit.sink.SinkProbes`). The port is the project's one listener
(:func:`streams.web.listener.listening`, with its limits and connection gate) on every address, since
probes and scrapes come from the cluster; Faust's own web server stays off.

The head is checked by the one guard (:class:`streams.web.guard.Guard`, :meth:`Policy.probes`): any
name a cluster gives the pod, and a request with no ``Host`` at all (an HTTP/1.0 health checker sends
none), are answered; a ``Host`` that cannot be read (two of them, a bare IPv6 literal) is refused, like
an unknown path or another method, in the listener's JSON error shape
(:meth:`~streams.web.listener.ErrorShape.json`), as a head the listener cannot parse is.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Protocol

from aiohttp import web
from aiohttp.typedefs import Handler

from streams import codec
from streams.errors import RequestRefused
from streams.web.guard import Guard, Policy
from streams.web.listener import ErrorShape, Limits, listening

log = logging.getLogger(__name__)

METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""Prometheus' text format 0.0.4, what ``generate_latest`` writes (and what Faust's server labelled it)."""
EVERY_ADDRESS = "0.0.0.0"  # noqa: S104 - probes and scrapes come from the cluster
"""Where the probes listen."""

Answer = tuple[bool, Mapping[str, object]]
"""Whether the process is live (or ready), and the JSON body that says why."""


class Probed(Protocol):
    """What a process says of itself to its probes."""

    async def live(self) -> Answer:
        """``/livez``: 200 when true, else 503."""
        ...

    async def ready(self) -> Answer:
        """``/readyz``: 200 when true, else 503."""
        ...

    async def exposition(self) -> bytes:
        """``/metrics``: the registry in Prometheus' text format, brought up to date first."""
        ...


def _refusal(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    body, content_type = ErrorShape.json().render(status, message)
    response = web.Response(status=status, body=body, content_type=content_type, headers=headers)
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


async def _refuse(request: web.Request, exc: RequestRefused) -> web.Response:
    return _refusal(exc.status, str(exc))


@web.middleware
async def _http_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """aiohttp's own refusals (no route, another method) in the JSON error shape."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        return _refusal(exc.status, exc.reason, allow)


def probe_app(probed: Probed, server: str) -> web.Application:
    """``GET /metrics``, ``/livez`` and ``/readyz`` of ``probed``; ``server`` names it in refusals."""

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=await probed.exposition(), headers={"Content-Type": METRICS_CONTENT_TYPE})

    def page(answer: Callable[[], Awaitable[Answer]]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def probe(request: web.Request) -> web.Response:
            ok, body = await answer()
            return web.Response(
                status=200 if ok else 503,
                body=codec.dumps(body),
                content_type="application/json",
                charset="utf-8",
            )

        return probe

    guard = Guard(Policy.probes(f"{server} probes"), _refuse)
    app = web.Application(middlewares=[guard, _http_errors])
    app.add_routes(
        [
            web.get("/metrics", metrics),
            web.get("/livez", page(probed.live)),
            web.get("/readyz", page(probed.ready)),
        ]
    )
    return app


@contextlib.asynccontextmanager
async def serving(probed: Probed, server: str, port: int, limits: Limits | None = None) -> AsyncIterator[int]:
    """The probe server of ``probed`` on ``port`` of every address (0: one the system picks) while the
    block runs; yields the bound port. ``server`` names the process (``worker``, ``audit sink``).

    Raises:
        ConfigurationError: the port cannot be bound.
    """
    app = probe_app(probed, server)
    what = f"{server} probes"
    async with listening(
        app, EVERY_ADDRESS, port, limits, shape=ErrorShape.json(), what=what, access_log=None
    ) as bound:
        log.info("%s: /metrics, /livez, /readyz on port %d", server, bound)
        yield bound
