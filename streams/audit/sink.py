"""The audit sink: the ``audit`` topic into the audit store (:mod:`streams.audit.store`), and with it the
evidence — ``ledger``, ``verdicts``, ``diagnosis-drafts`` and ``reports``
(:data:`models.topology.AUDIT_SINK_INPUTS`, rows by :mod:`streams.audit.evidence`) — so pages and
receipts outlive the Redis ledger, and show what was published.

Delivery: :func:`run_sink` consumes in its own consumer group (``<app_id>-audit-sink``) without
auto-commit; each batch is applied in one database transaction (SQLite with ``synchronous=FULL``, or
PostgreSQL), committed *before* the Kafka offsets are. A crash between the two only replays the
batch, which the ``event_id`` dedupe drops: nothing is lost and nothing is counted twice. The
database is opened (and its schema migrated) before the consumer joins; a PostgreSQL server that
cannot be reached is waited for, like Kafka.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaError
from aiokafka.structs import ConsumerRecord, TopicPartition

from models.topology import AUDIT_SINK_INPUTS
from models.vocab import Topic
from streams.audit.evidence import TopicValue, applied_at, evidence_of
from streams.audit.factory import store_from_settings
from streams.audit.store import AuditStore, describe
from streams.errors import AuditStoreBusy, HoldInterrupted
from streams.kafka.admin import ensure_topics
from streams.kafka.config import kafka_errors, new_consumer
from streams.observe.metrics import AuditSinkMetrics
from streams.retry import RetryPolicy, hold
from streams.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class SinkStats:
    """What one :func:`run_sink` call did."""

    read: int = 0
    """Records read from every topic the sink consumes."""
    inserted: int = 0
    """New audit events."""
    evidence: int = 0
    """Records read from ``ledger``, ``verdicts``, ``diagnosis-drafts`` and ``reports`` (each stored once at
    most)."""
    malformed: int = 0
    batches: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    ticked: float = field(default_factory=time.monotonic)
    """When the consume loop last went round (it does at least every half second)."""
    assigned: bool = False
    """Whether the consumer holds partitions (readiness)."""
    holding: bool = False
    """Whether a batch is being held because the database is busy or failing."""
    metrics: AuditSinkMetrics | None = None


def _consumer(settings: Settings) -> AIOKafkaConsumer:
    return new_consumer(
        settings,
        *(settings.topic(topic) for topic in AUDIT_SINK_INPUTS),
        group_id=f"{settings.app_id}-audit-sink",
        client_id=f"{settings.app_id}-audit-sink",
        session_timeout_ms=int(settings.broker_session_timeout_seconds * 1000),
        heartbeat_interval_ms=int(settings.broker_heartbeat_seconds * 1000),
        rebalance_timeout_ms=int(settings.broker_rebalance_timeout_seconds * 1000),
        max_partition_fetch_bytes=settings.topic_max_message_bytes + 64 * 1024,
    )


async def run_sink(
    settings: Settings,
    stop_event: asyncio.Event | None = None,
    batch_size: int = 500,
    *,
    once: bool = False,
    handle_signals: bool = True,
    stats: SinkStats | None = None,
) -> SinkStats:
    """Consume ``audit`` into the audit database until stopped (or, with ``once``, until drained).

    Stops on ``stop_event``, or SIGINT/SIGTERM when ``handle_signals``, after the batch in hand is
    stored and committed. With ``once`` it stops when its partitions reach the end offsets they had
    when it joined. While Kafka or a PostgreSQL server is unreachable it logs and retries with
    backoff; a busy database too.

    Raises:
        ConfigurationError: the database cannot be used, or a topic has the wrong partition count.
    """
    stop = stop_event or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
                installed.append(sig)
    stats = stats or SinkStats()
    # The sink is its own process with nothing to hand back: it waits out outages for as long as they last.
    policy = RetryPolicy.from_settings(settings, forever=True)

    async def open_store() -> AuditStore:
        return await asyncio.to_thread(store_from_settings, settings)

    async def session(store: AuditStore) -> None:
        consumer = _consumer(settings)
        try:
            with kafka_errors(f"audit sink on {settings.kafka_bootstrap}"):
                await ensure_topics(settings)
                await consumer.start()
                log.info(
                    "audit sink: %s into %s",
                    ", ".join(settings.topic(topic) for topic in AUDIT_SINK_INPUTS),
                    store.where,
                )
                await _consume(consumer, store, stats, stop, batch_size, once, policy, settings)
        finally:
            stats.assigned = False
            with contextlib.suppress(Exception):
                await consumer.stop()

    def on_hold(held: float | None, _why: str | None) -> None:
        stats.holding = held is not None

    store: AuditStore | None = None
    try:
        where = describe(settings)
        with contextlib.suppress(HoldInterrupted):
            store = await hold(
                open_store, what=f"audit sink: opening {where}", policy=policy, stop=stop, on_hold=on_hold
            )
        if store is None:
            return stats
        opened = store
        with contextlib.suppress(HoldInterrupted):
            await hold(lambda: session(opened), what="audit sink", policy=policy, stop=stop)
        try:  # in a thread, like every database call: a slow server never blocks the loop
            stats.counts = await asyncio.to_thread(store.counts)
        except AuditStoreBusy as exc:  # everything read was stored and committed; only the totals are missing
            log.warning("audit sink: cannot count the stored rows (%s)", exc)
    finally:
        if store is not None:
            await asyncio.to_thread(store.close)
        for sig in installed:
            loop.remove_signal_handler(sig)
    return stats


async def _consume(
    consumer: AIOKafkaConsumer,
    store: AuditStore,
    stats: SinkStats,
    stop: asyncio.Event,
    batch_size: int,
    once: bool,
    policy: RetryPolicy,
    settings: Settings,
) -> None:
    """Store batches until stopped, or with ``once`` until drained.

    Raises:
        KafkaError: the consumer failed; the caller starts a new one.
    """
    end: dict[TopicPartition, int] = {}
    while not stop.is_set():
        stats.ticked = time.monotonic()
        stats.assigned = bool(consumer.assignment())
        batch = await consumer.getmany(timeout_ms=500, max_records=batch_size)
        if batch:
            await _store_batch(consumer, store, stats, batch, policy, stop, settings)
        if stats.metrics is not None:
            stats.metrics.set_lag(await _lags(consumer))
        if once and await _drained(consumer, end):
            return


async def _store_batch(
    consumer: AIOKafkaConsumer,
    store: AuditStore,
    stats: SinkStats,
    batch: dict[TopicPartition, list[ConsumerRecord[bytes, bytes]]],
    policy: RetryPolicy,
    stop: asyncio.Event,
    settings: Settings,
) -> None:
    """The database first, Kafka offsets after: a crash in between replays the batch, which dedupes.

    Audit records and evidence go into one transaction. While the database is busy or failing the
    batch is held and retried; a stop meanwhile leaves its offsets uncommitted, so the batch is read
    again next time.
    """
    started = time.monotonic()
    audit = settings.topic(Topic.AUDIT)
    by_kind: dict[str, list[TopicValue]] = {
        settings.topic(t): []
        for t in (Topic.LEDGER, Topic.VERDICTS, Topic.DIAGNOSIS_DRAFTS, Topic.REPORTS, Topic.JUDGEMENTS)
    }
    values: list[tuple[str, bytes | None]] = []
    for rs in batch.values():
        for r in rs:
            if r.topic == audit:
                values.append((f"{r.topic}[{r.partition}]@{r.offset}", r.value))
            else:
                by_kind[r.topic].append(TopicValue(r.topic, r.partition, r.offset, r.value))
    before = store.stats.malformed
    records = store.decode(values)
    evidence = evidence_of(
        by_kind[settings.topic(Topic.LEDGER)],
        by_kind[settings.topic(Topic.VERDICTS)],
        by_kind[settings.topic(Topic.DIAGNOSIS_DRAFTS)],
        applied_at(),
        settings.guard.max_draft_bytes,
        by_kind[settings.topic(Topic.REPORTS)],
        by_kind[settings.topic(Topic.JUDGEMENTS)],
    )
    read = len(values) + sum(len(v) for v in by_kind.values())

    def on_hold(held: float | None, _why: str | None) -> None:
        stats.holding = held is not None

    try:
        inserted = await hold(
            lambda: asyncio.to_thread(store.apply, records, evidence),
            what=f"audit sink: storing {len(records)} records in {store.where}",
            policy=policy,
            stop=stop,
            on_hold=on_hold,
        )
    except HoldInterrupted:
        log.warning("audit sink: stopping with %d records not stored; they will be read again", len(records))
        return
    stats.read += read
    stats.inserted += inserted
    stats.evidence += read - len(values)
    malformed = store.stats.malformed - before
    stats.malformed += malformed
    stats.batches += 1
    if stats.metrics is not None:
        stats.metrics.batch(len(values), inserted, malformed, time.monotonic() - started)
    offsets = {tp: rs[-1].offset + 1 for tp, rs in batch.items() if rs}
    try:
        await consumer.commit(offsets)
    except KafkaError as exc:  # the batch is stored; re-reading it is harmless (deduped by event_id)
        log.warning("audit sink: committing offsets failed (%s); those records will be re-read", exc)
    log.debug("audit sink: %d records, %d new events", len(values), inserted)


def health(
    stats: SinkStats, stall_seconds: float
) -> tuple[tuple[bool, dict[str, object]], tuple[bool, dict[str, object]]]:
    """(live, ready) of the sink: live while its consume loop goes round; ready while it holds
    partitions and is not holding a batch for the database."""
    quiet = time.monotonic() - stats.ticked
    live = quiet <= stall_seconds
    problems = {}
    if not stats.assigned:
        problems["kafka"] = "no partitions assigned (joining, or Kafka unreachable)"
    if stats.holding:
        problems["database"] = "holding a batch: the audit database is busy or failing"
    return (live, {"live": live, "loop_quiet_seconds": round(quiet, 1)}), (
        not problems,
        {"ready": not problems, "problems": problems},
    )


class SinkProbes:
    """What the sink's ``/livez``, ``/readyz`` and ``/metrics`` answer, from its :class:`SinkStats`
    (:func:`health`); the web room's one probe server serves them (:mod:`streams.web.probes`, on
    ``EC_AUDIT_SINK_PORT``). The sink's metrics are recorded from here on."""

    def __init__(self, stats: SinkStats, stall_seconds: float) -> None:
        self.stats = stats
        self.stall_seconds = stall_seconds
        self.metrics = stats.metrics = stats.metrics or AuditSinkMetrics()

    async def live(self) -> tuple[bool, dict[str, object]]:
        return health(self.stats, self.stall_seconds)[0]

    async def ready(self) -> tuple[bool, dict[str, object]]:
        return health(self.stats, self.stall_seconds)[1]

    async def exposition(self) -> bytes:
        return self.metrics.render()


async def _lags(consumer: AIOKafkaConsumer) -> dict[tuple[str, int], int]:
    """Records not yet stored per assigned partition: the high watermark of the last fetch minus the
    position (the next offset to store). A partition not fetched yet has no watermark and is left out."""
    lags = {}
    for tp in consumer.assignment():
        highwater = consumer.highwater(tp)
        if highwater is not None:
            lags[(tp.topic, tp.partition)] = max(0, highwater - await consumer.position(tp))
    return lags


async def _drained(consumer: AIOKafkaConsumer, end: dict[TopicPartition, int]) -> bool:
    """Whether every assigned partition has reached the end offset it had when first assigned."""
    assigned = consumer.assignment()
    if not assigned:
        return False
    new = [tp for tp in assigned if tp not in end]
    if new:
        end.update(await consumer.end_offsets(new))
    for tp in assigned:
        if await consumer.position(tp) < end[tp]:
            return False
    return True
