"""What ``/livez`` and ``/readyz`` answer, and the worker's probe server (``/metrics`` too).

The probes go through the edges (``KafkaSink.ping``, ``RedisLedgerStore.ping``), which map their
clients' errors into the project's tree; nothing here knows an aiokafka or redis exception.

The probe server is the project's one listener (:func:`streams.web.listener.listening`, with its limits and
connection gate), not Faust's own web server, which the worker leaves off (``web_enabled=False``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import faust
from aiohttp import web
from aiohttp.typedefs import Handler

from models.vocab import Station
from streams import codec
from streams.errors import EvidenceChainError, RequestRefused
from streams.kafka.producer import KafkaSink
from streams.ledger.redis import RedisLedgerStore
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
from streams.web.hosts import host_name
from streams.web.listener import ErrorShape, Limits, listening
from streams.web.probe import PROBE_SECONDS, CachedProbe
from streams.worker.loop import AgentLoop

log = logging.getLogger(__name__)

METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""Prometheus' text format 0.0.4, what ``generate_latest`` writes (and what Faust's server labelled it)."""


class Health:
    """What ``/livez`` and ``/readyz`` answer, from the agents' own state and two quick probes.

    Live: no agent is stalled (see :meth:`AgentLoop.stalled`). Ready: the worker finished joining
    its group, is not rebalancing, no agent is holding a batch for an outage, Kafka answers a
    metadata request and (with the ledger or guard agent) Redis answers PING, each within
    ``PROBE_SECONDS``. Probe answers are reused for a second (:class:`streams.web.probe.CachedProbe`) so
    scrapes cannot pile up. :func:`serving` answers them over HTTP.
    """

    PROBE_SECONDS = PROBE_SECONDS

    def __init__(
        self,
        app: faust.App,
        loops: Mapping[Station, AgentLoop],
        sink: KafkaSink,
        stores: Sequence[RedisLedgerStore],
        settings: Settings,
        metrics: WorkerMetrics,
    ) -> None:
        self.app = app
        self.loops = loops
        self.sink = sink
        self.stores = stores
        self.settings = settings
        self.metrics = metrics
        self.assigned = False
        self._probe = CachedProbe(self._services)

    async def lags(self) -> dict[Station, dict[tuple[str, int], int]]:
        out = {station: await loop.lags() for station, loop in self.loops.items()}
        self.metrics.set_lag({tp: lag for lags in out.values() for tp, lag in lags.items()})
        for station, loop in self.loops.items():
            self.metrics.set_held(station, loop.held_seconds())
        return out

    async def live(self) -> tuple[bool, dict[str, Any]]:
        lags = await self.lags()
        stalls = {
            str(station): reason
            for station, loop in self.loops.items()
            if (reason := loop.stalled(lags[station], self.settings.stall_seconds)) is not None
        }
        return not stalls, {"live": not stalls, "stalled": stalls}

    async def _services(self) -> dict[str, str | None]:
        found: dict[str, str | None] = {"kafka": await self._kafka()}
        if self.stores:
            found["redis"] = await self._redis()
        return found

    async def _kafka(self) -> str | None:
        try:
            await asyncio.wait_for(self.sink.ping(), self.PROBE_SECONDS)
        except TimeoutError:
            return f"no metadata within {self.PROBE_SECONDS:g}s"
        except EvidenceChainError as exc:
            return str(exc)
        return None

    async def _redis(self) -> str | None:
        try:
            await asyncio.wait_for(self.stores[0].ping(), self.PROBE_SECONDS)
        except TimeoutError:
            return f"no PONG within {self.PROBE_SECONDS:g}s"
        except Exception as exc:  # noqa: BLE001 - any failure means not ready; say which
            return f"{type(exc).__name__}: {exc}"
        return None

    async def ready(self) -> tuple[bool, dict[str, Any]]:
        problems: dict[str, str] = {}
        if not self.assigned:
            problems["group"] = "not yet assigned partitions"
        elif getattr(self.app, "rebalancing", False):
            problems["group"] = "rebalancing"
        for station, loop in self.loops.items():
            if loop.hold_started is not None:
                problems[str(station)] = (
                    f"holding a batch for an outage for {loop.held_seconds():.0f}s: {loop.hold_reason}"
                )
        for name, problem in (await self._probe()).items():
            if problem is not None:
                problems[name] = problem
        return not problems, {"ready": not problems, "problems": problems}


def probe_app(health: Health, metrics: WorkerMetrics) -> web.Application:
    """``GET /metrics`` (Prometheus text), ``/livez`` and ``/readyz`` (JSON; 200 or 503).

    A ``Host`` that cannot be read (two of them, a bare IPv6 literal), an unknown path or another method
    is refused in the listener's JSON error shape (:meth:`ErrorShape.json`), like a head the listener
    cannot parse. A request with no ``Host`` at all is answered: an HTTP/1.0 health checker sends none,
    and the probes name no host of their own.
    """
    shape = ErrorShape.json()

    def refusal(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
        body, content_type = shape.render(status, message)
        response = web.Response(status=status, body=body, content_type=content_type, headers=headers)
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    @web.middleware
    async def refusals(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            if "Host" in request.headers:
                host_name(request.headers)
            return await handler(request)
        except RequestRefused as exc:
            return refusal(exc.status, str(exc))
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
            return refusal(exc.status, exc.reason, allow)

    async def metrics_page(request: web.Request) -> web.Response:
        await health.lags()
        ready, _ = await health.ready()
        metrics.set_ready(ready)
        return web.Response(body=metrics.render(), headers={"Content-Type": METRICS_CONTENT_TYPE})

    async def livez(request: web.Request) -> web.Response:
        ok, body = await health.live()
        return _json(body, 200 if ok else 503)

    async def readyz(request: web.Request) -> web.Response:
        ok, body = await health.ready()
        return _json(body, 200 if ok else 503)

    app = web.Application(middlewares=[refusals])
    app.add_routes([web.get("/metrics", metrics_page), web.get("/livez", livez), web.get("/readyz", readyz)])
    return app


def _json(body: dict[str, Any], status: int) -> web.Response:
    body_bytes = codec.dumps(body)
    return web.Response(status=status, body=body_bytes, content_type="application/json", charset="utf-8")


@contextlib.asynccontextmanager
async def serving(
    settings: Settings, health: Health, metrics: WorkerMetrics, limits: Limits | None = None
) -> AsyncIterator[int]:
    """The probe server on ``EC_WEB_PORT`` (every address, as Faust's server was) while the block
    runs; yields the bound port.

    Raises:
        ConfigurationError: the port cannot be bound.
    """
    app = probe_app(health, metrics)
    # probes and scrapes come from the cluster: every address, within the one listener's limits
    every_address = "0.0.0.0"  # noqa: S104
    shape = ErrorShape.json()
    async with listening(
        app, every_address, settings.web_port, limits, shape=shape, what="worker probes", access_log=None
    ) as port:
        log.info("worker: /metrics, /livez, /readyz on port %d", port)
        yield port
