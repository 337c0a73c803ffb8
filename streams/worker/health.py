"""What the worker's ``/livez``, ``/readyz`` and ``/metrics`` answer (:class:`Health`).

The probes go through the edges (``KafkaSink.ping``, ``RedisLedgerStore.ping``), which map their
clients' errors into the project's tree; nothing here knows an aiokafka or redis exception.

The web room's one probe server answers them (:func:`streams.web.probes.serving`, on ``EC_WEB_PORT``),
not Faust's own web server, which the worker leaves off (``web_enabled=False``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

import faust

from models.vocab import Station
from streams.errors import EvidenceChainError
from streams.kafka.producer import KafkaSink
from streams.ledger.redis import RedisLedgerStore
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
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
    scrapes cannot pile up. It is what :mod:`streams.web.probes` serves (:class:`~streams.web.probes.Probed`).
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

    async def live(self) -> tuple[bool, dict[str, object]]:
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

    async def ready(self) -> tuple[bool, dict[str, object]]:
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

    async def exposition(self) -> bytes:
        """``/metrics``: the registry, with the lags, the held seconds and readiness brought up to date."""
        await self.lags()
        ready, _ = await self.ready()
        self.metrics.set_ready(ready)
        return self.metrics.render()
