"""The running parts of one worker, composed once by ``create_app`` (as Quix Streams' ``ProcessingContext``).

The Faust app, its agents, ``/livez`` ``/readyz`` ``/metrics`` and the shutdown commit all read these
parts from one :class:`WorkerContext` instead of attributes hung on the framework's app object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from models.vocab import Station
from streams.kafka.offsets import OffsetProbe
from streams.kafka.producer import KafkaSink
from streams.ledger.redis import RedisLedgerStore
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
from streams.worker.health import Health
from streams.worker.loop import AgentLoop


@dataclass(slots=True)
class WorkerContext:
    """Settings, the agents' producer and offset probe, metrics, the ledger stores, one loop per agent
    (in the chain's order) and the health answers over them."""

    settings: Settings
    sink: KafkaSink
    probe: OffsetProbe
    metrics: WorkerMetrics
    stores: Mapping[Station, RedisLedgerStore]
    """One store (client) per agent that uses Redis, so each counts its own round trips."""
    loops: Mapping[Station, AgentLoop]
    health: Health
    topics_ready: bool = False
    """The topics exist: the ``worker`` command made sure (waiting for a starting broker), or the app did
    on its first start."""
