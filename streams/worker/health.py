"""What ``/livez`` and ``/readyz`` answer, and the worker's web routes (``/metrics`` too).

The probes go through the edges (``KafkaSink.ping``, ``RedisLedgerStore.ping``), which map their
clients' errors into the project's tree; nothing here knows an aiokafka or redis exception.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import faust

from models.vocab import Station
from streams.errors import EvidenceChainError
from streams.http import CachedProbe
from streams.http.probe import PROBE_SECONDS
from streams.kafka import KafkaSink
from streams.ledger.redis import RedisLedgerStore
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
from streams.worker.loop import AgentLoop


class Health:
    """What ``/livez`` and ``/readyz`` answer, from the agents' own state and two quick probes.

    Live: no agent is stalled (see :meth:`AgentLoop.stalled`). Ready: the worker finished joining
    its group, is not rebalancing, no agent is holding a batch for an outage, Kafka answers a
    metadata request and (with the ledger or guard agent) Redis answers PING, each within
    ``PROBE_SECONDS``. Probe answers are reused for a second (:class:`streams.http.CachedProbe`) so
    scrapes cannot pile up. The routes are Faust's own web server's (:func:`add_web_routes`).
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


def add_web_routes(app: faust.App, health: Health, metrics: WorkerMetrics) -> None:
    """``GET /metrics`` (Prometheus text), ``/livez`` and ``/readyz`` (JSON; 200 or 503)."""

    @app.page("/metrics")
    async def metrics_page(web: Any, request: Any) -> Any:
        await health.lags()
        # Prometheus' text format 0.0.4 (aiohttp adds the charset itself)
        return web.bytes(metrics.render(), content_type="text/plain; version=0.0.4")

    @app.page("/livez")
    async def livez(web: Any, request: Any) -> Any:
        ok, body = await health.live()
        return web.json(body, status=200 if ok else 503)

    @app.page("/readyz")
    async def readyz(web: Any, request: Any) -> Any:
        ok, body = await health.ready()
        return web.json(body, status=200 if ok else 503)
