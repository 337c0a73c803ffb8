"""The Faust app and its four agents. Each agent is thin: batch → processor (decode → station → send).

Delivery: at-least-once, ``concurrency=1`` (higher can commit past an in-flight record, faust #606),
no ``exactly_once`` (faust #323/#517/#440). A batch is acked only after its Redis effects are done
and every output is acknowledged by the broker (acks=all); while Kafka or Redis is down the batch is
held and retried. If the worker stops during such a hold, the batch's acks are held back so its
offsets are not committed and it is redelivered on restart.

``EC_AGENTS`` (comma-separated; default all) selects the agents this worker runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Sequence
from typing import Any

import faust
from aiokafka.errors import KafkaError
from faust.exceptions import ProducerSendError
from faust.types import EventT as _EventT

from streams.agents.base import StationProcessor
from streams.agents.guard import GuardProcessor
from streams.agents.ledger import LedgerProcessor
from streams.agents.postprocess import PostprocessProcessor
from streams.agents.project import ProjectProcessor
from streams.errors import KafkaUnavailable
from streams.ledger_store import RedisLedgerStore
from streams.runtime import Outbound, Record
from streams.settings import Settings, get_settings
from streams.topics import ensure_topics, topic_configs

log = logging.getLogger(__name__)
EventT = _EventT[Any]

AGENT_NAMES = ("postprocess", "project", "ledger", "guard")


def _brokers(bootstrap: str) -> str:
    return ";".join(f"kafka://{host.strip()}" for host in bootstrap.split(",") if host.strip())


def create_app(settings: Settings) -> faust.App:
    """The Faust app configured from the settings (raw serializers: decoding happens in the stations)."""
    os.makedirs(settings.data_dir, exist_ok=True)  # Faust creates only the last level of its datadir
    return faust.App(
        settings.app_id,
        broker=_brokers(settings.kafka_bootstrap),
        value_serializer="raw",
        key_serializer="raw",
        datadir=os.path.join(settings.data_dir, "{conf.name}"),
        web_enabled=settings.web_enabled,
        web_port=settings.web_port,
        topic_partitions=settings.topic_partitions,
        topic_replication_factor=settings.topic_replication_factor,
        processing_guarantee="at_least_once",
        producer_acks=-1,
        producer_max_request_size=settings.topic_max_message_bytes + 64 * 1024,
        consumer_max_fetch_size=2 * settings.topic_max_message_bytes,
        consumer_auto_offset_reset="earliest",
        stream_wait_empty=False,
        broker_session_timeout=settings.broker_session_timeout_seconds,
        broker_heartbeat_interval=settings.broker_heartbeat_seconds,
        broker_rebalance_timeout=settings.broker_rebalance_timeout_seconds,
        broker_commit_interval=settings.broker_commit_interval_seconds,
    )


class FaustSink:
    """Sends through the app's producer and waits for every broker acknowledgement.

    Before its first send it makes sure all nine topics exist with one partition count, so an output
    topic is never auto-created by the broker with a different one (``faust -A streams.app worker``
    skips the ``evidence-chain worker`` preflight).
    """

    def __init__(self, app: faust.App, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self._topics_ready = False
        self._lock = asyncio.Lock()

    async def _ensure_topics(self) -> None:
        async with self._lock:
            if not self._topics_ready:
                await ensure_topics(self.settings)
                self._topics_ready = True

    async def send_all(self, messages: Sequence[Outbound]) -> None:
        """Enqueue all messages, then wait for all deliveries."""
        if not self._topics_ready:
            await self._ensure_topics()
        try:
            producer = self.app.producer
            futures = [await producer.send(m.topic, m.key, m.value, None, None, None) for m in messages]
            await asyncio.gather(*futures)
        except (TimeoutError, KafkaError, ProducerSendError) as exc:
            raise KafkaUnavailable(f"producing {len(messages)} messages: {exc!r}") from exc


def to_record(event: EventT) -> Record:
    """A Faust event as the stations' Record (timestamp in epoch ms)."""
    message = event.message
    timestamp = int(round(message.timestamp * 1000)) if message.timestamp else None
    value = message.value if isinstance(message.value, bytes) else bytes(message.value or b"")
    return Record(message.topic, message.partition, message.offset, timestamp, message.key, value)


def _hold_acks(events: Sequence[EventT]) -> None:
    """Take the batch's acks away from the stream while it is processed.

    ``take_events`` acks a batch when its generator resumes *or closes*, and a stopping worker closes
    it while the body may still be holding the batch (Redis down): that ack would commit records
    never processed. A message already marked acked makes the stream's ack a no-op.
    """
    for event in events:
        event.message.acked = True


def _release_acks(events: Sequence[EventT]) -> None:
    """Give the acks back once every effect of the batch is done; the stream then acks as usual."""
    for event in events:
        event.message.acked = False


async def run_batches(stream: Any, processor: StationProcessor, settings: Settings) -> AsyncIterator[int]:
    """The body every agent shares: batch, process, and let only a fully processed batch be acked.

    If processing does not finish (the worker stops while holding, or a bug escapes), the batch's
    offsets are never committed and it is redelivered after a restart.
    """
    async for events in stream.take_events(settings.batch_size, within=settings.batch_within_seconds):
        _hold_acks(events)
        await processor.handle([to_record(e) for e in events])
        _release_acks(events)
        yield len(events)


settings = get_settings()
app = create_app(settings)
sink = FaustSink(app, settings)
_store: RedisLedgerStore | None = None


def ledger_store() -> RedisLedgerStore:
    """The worker's Redis ledger store, created on first use (inside the worker's event loop)."""
    global _store
    if _store is None:
        _store = RedisLedgerStore.from_settings(settings)
    return _store


def _topic(name: str) -> faust.TopicT:
    # internal=True: Faust declares the topic (partitions, replicas, configs) before consuming it, so
    # ``faust -A streams.app worker`` never lets the broker auto-create it with one partition.
    return app.topic(
        settings.topic(name),
        partitions=settings.topic_partitions,
        replicas=settings.topic_replication_factor,
        config=topic_configs(settings, name),
        internal=True,
        value_type=bytes,
        key_type=bytes,
    )


def _selected() -> set[str]:
    raw = os.environ.get("EC_AGENTS", "").strip()
    chosen = {a.strip() for a in raw.split(",") if a.strip()} if raw else set(AGENT_NAMES)
    unknown = chosen - set(AGENT_NAMES)
    if unknown:
        raise SystemExit(
            f"EC_AGENTS: unknown agent(s) {sorted(unknown)}; choose from {', '.join(AGENT_NAMES)}"
        )
    return chosen


_agents = _selected()

if "postprocess" in _agents:

    @app.agent(_topic("raw-hits"), name="postprocess", concurrency=1)
    async def postprocess_agent(stream: Any) -> AsyncIterator[int]:
        """raw-hits → postprocessed."""
        async for n in run_batches(stream, PostprocessProcessor(settings, sink), settings):
            yield n


if "project" in _agents:

    @app.agent(_topic("postprocessed"), name="project", concurrency=1)
    async def project_agent(stream: Any) -> AsyncIterator[int]:
        """postprocessed → projected."""
        async for n in run_batches(stream, ProjectProcessor(settings, sink), settings):
            yield n


if "ledger" in _agents:

    @app.agent(_topic("projected"), name="ledger", concurrency=1)
    async def ledger_agent(stream: Any) -> AsyncIterator[int]:
        """projected → Redis write-once → ledger."""
        async for n in run_batches(stream, LedgerProcessor(settings, sink, ledger_store()), settings):
            yield n


if "guard" in _agents:

    @app.agent(_topic("diagnosis-drafts"), name="guard", concurrency=1)
    async def guard_agent(stream: Any) -> AsyncIterator[int]:
        """diagnosis-drafts → verdicts + violations."""
        async for n in run_batches(stream, GuardProcessor(settings, sink, ledger_store()), settings):
            yield n


log.info("evidence-chain agents: %s; topic prefix %r", ", ".join(sorted(_agents)), settings.topic_prefix)
