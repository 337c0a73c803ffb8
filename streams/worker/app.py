"""The Faust edge: :func:`create_app` builds the app and registers the agents; each agent reads its
batches straight from its channel, runs the station over them, and commits what it finished.

Delivery: at-least-once with ``concurrency=1`` per agent (higher can commit past an in-flight record,
faust #606) and no ``exactly_once`` (faust #323/#517/#440). Offsets are never acked through Faust:
faust-streaming 0.15.3's ``Consumer._new_offset`` can commit past an unprocessed record (see
``streams.worker.offsets``), and ``on_task_error`` commits. Each agent keeps an
:class:`~streams.worker.offsets.OffsetTracker` and commits, through the consumer, only offsets whose records
(and every record before them) are fully processed: outputs acknowledged by the broker (acks=all),
Redis effects durable.

Crash-only: a batch-level error that is neither one record's fault (those are dead letters) nor a
known outage (held and retried, for at most ``EC_MAX_HOLD_SECONDS``) makes the process exit with
status 70 at once, without committing the batch and without Faust's in-process agent restart; a
supervisor (compose ``restart:``, Kubernetes, systemd) starts it again and the batch is re-read.

Importing this module reads no environment and creates nothing: ``faust -A streams.app worker``
gets ``app`` from the module ``__getattr__``, which composes it from the environment on first use.

Faust internals used here, and why (pinned faust-streaming 0.15.x):
- ``stream.channel.queue``: the agent's buffer of events. Taking from it directly gives batches of
  whatever is waiting without Faust's per-event stream machinery and without waiting to fill a batch
  (``take_events`` waits ``within`` even when records are there).
- ``app.consumer._commit(offsets)``: commits explicit offsets through Faust's consumer thread (the
  group member that owns the partitions); Faust's public ``commit()`` only commits its own acks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn

import faust
from faust.types import TP as FaustTP

from models.topology import TOPOLOGY
from models.vocab import Station, Topic
from streams.envelope import event_id
from streams.errors import RecordsSkipped
from streams.kafka import KafkaSink, OffsetProbe, ensure_topics, kafka_errors, ssl_context, topic_configs
from streams.ledger.redis import RedisLedgerStore
from streams.messages import Record
from streams.observe.logs import record_fields
from streams.observe.metrics import WorkerMetrics
from streams.observe.tracing import tracer_for
from streams.pipeline import Outcome
from streams.retry import RetryPolicy, hold
from streams.settings import Settings
from streams.worker.offsets import OffsetTracker
from streams.worker.runner import BatchRunner

log = logging.getLogger(__name__)

EXIT_CRASH = 70
"""Exit status of a crash-only exit (``EX_SOFTWARE``)."""

INPUT_TOPIC: dict[Station, Topic] = {station: wiring.input for station, wiring in TOPOLOGY.items()}
"""The topic each agent consumes, in the chain's order (from :data:`models.topology.TOPOLOGY`)."""


def _brokers(bootstrap: str) -> str:
    return ";".join(f"kafka://{host.strip()}" for host in bootstrap.split(",") if host.strip())


def broker_credentials(settings: Settings) -> Any:
    """``EC_KAFKA_SECURITY_PROTOCOL`` and its SASL/SSL settings as Faust's ``broker_credentials``."""
    protocol = settings.kafka_security_protocol
    context = ssl_context(settings)
    if protocol.startswith("SASL"):
        password = settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else None
        return faust.SASLCredentials(
            username=settings.kafka_sasl_username,
            password=password,
            mechanism=settings.kafka_sasl_mechanism,
            ssl_context=context,
        )
    if protocol == "SSL":
        return faust.SSLCredentials(context)
    return None


class EvidenceChainApp(faust.App):
    """The Faust app; on its first start it makes sure all nine topics exist with one partition count
    (unless ``evidence-chain worker`` already did, waiting for a starting broker)."""

    ec_settings: Settings
    ec_sink: KafkaSink
    ec_topics_ready: bool = False

    async def on_start(self) -> None:
        """Start the agents' producer before the agents."""
        await super().on_start()
        await self.ec_sink.start()

    async def on_shutdown(self) -> None:
        """Close the agents' producer once the agents have stopped."""
        await self.ec_sink.stop()
        await super().on_shutdown()

    async def on_stop(self) -> None:
        """Before Faust stops the consumer (and leaves the group), commit what each agent finished."""
        loops: dict[Station, AgentLoop] = getattr(self, "ec_loops", {})
        await asyncio.gather(*(loop.commit_on_the_way_out() for loop in loops.values()))
        await super().on_stop()

    async def on_first_start(self) -> None:
        """Create the data directory (Faust makes only its last level) and the topics, once."""
        os.makedirs(self.ec_settings.data_dir, exist_ok=True)
        await super().on_first_start()
        if not self.ec_topics_ready:  # a bare ``faust -A streams.app worker``
            with kafka_errors("creating topics"):
                await ensure_topics(self.ec_settings)
            self.ec_topics_ready = True


def crash(exc: BaseException, what: str) -> NoReturn:
    """Exit the process at once, without committing anything more (crash-only)."""
    log.critical(
        "%s: %s: %s; exiting (status %d) without committing this batch",
        what,
        type(exc).__name__,
        exc,
        EXIT_CRASH,
        exc_info=exc,
    )
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001, S110 - flushing is best effort on the way out
            pass
    sys.stderr.flush()
    os._exit(EXIT_CRASH)


def to_record(event: Any) -> Record:
    """A Faust event as the stations' :class:`Record` (timestamp in epoch ms)."""
    message = event.message
    timestamp = int(round(message.timestamp * 1000)) if message.timestamp else None
    value = message.value if isinstance(message.value, bytes) else bytes(message.value or b"")
    headers = tuple((k, v) for k, v in (message.headers or ()) if isinstance(v, bytes))
    return Record(message.topic, message.partition, message.offset, timestamp, message.key, value, headers)


async def batches(
    stream: Any, max_records: int, on_wait: Callable[[bool], None] | None = None
) -> AsyncIterator[list[Any]]:
    """Batches of the events waiting in an agent's channel: wait only when there is nothing.

    The first event is awaited; then everything already buffered, up to ``max_records``, joins it.
    Faust ends a channel on shutdown by throwing ``StopAsyncIteration`` into its queue.
    ``on_wait(True)`` is called before waiting on an empty channel, ``on_wait(False)`` after.
    """
    queue = stream.channel.queue
    while True:
        try:
            if on_wait is not None and queue.empty():
                on_wait(True)
                events = [await queue.get()]
                on_wait(False)
            else:
                events = [await queue.get()]
        except StopAsyncIteration:
            return
        while len(events) < max_records and not queue.empty():
            events.append(queue.get_nowait())
        yield events


CommitFn = Callable[[dict[tuple[str, int], int]], Awaitable[bool]]
"""Commits ``{(topic, partition): offset}`` for the group; False when the group rebalanced meanwhile."""


def consumer_commit(app: faust.App) -> CommitFn:
    """Explicit offsets committed through Faust's consumer (the group member owning the partitions)."""

    async def commit(offsets: dict[tuple[str, int], int]) -> bool:
        consumer: Any = app.consumer
        done = await consumer._commit({FaustTP(t, p): o for (t, p), o in offsets.items()})  # noqa: SLF001
        return bool(done)

    return commit


class Committer:
    """Commits an agent's finished offsets, at most every commit interval, only within their generation."""

    def __init__(
        self, app: faust.App, tracker: OffsetTracker, interval_seconds: float, commit: CommitFn | None = None
    ) -> None:
        self.app = app
        self.tracker = tracker
        self.interval = interval_seconds
        self.commit = commit or consumer_commit(app)
        self._wake = asyncio.Event()

    def poke(self) -> None:
        """Something finished: commit soon."""
        self._wake.set()

    async def commit_now(self) -> bool:
        """Commit what moved since the last commit; False if there was nothing or the group rebalanced."""
        offsets = self.tracker.to_commit()
        if not offsets or self.tracker.generation != self.app.consumer_generation_id:
            return False
        done = await self.commit(offsets)
        if done:
            self.tracker.committed(offsets)
        return done

    async def run(self) -> None:
        """Commit in the background until cancelled; a failed commit is tried again later."""
        while True:
            await self._wake.wait()
            await asyncio.sleep(self.interval)
            self._wake.clear()
            try:
                await self.commit_now()
            except Exception as exc:  # noqa: BLE001 - a commit that fails is retried; nothing is lost
                log.warning("committing offsets failed (%s); will retry", exc)
                self._wake.set()


class AgentLoop:
    """One agent: batches from its channel, gap checks, the station, explicit commits, crash-only."""

    def __init__(
        self,
        app: faust.App,
        station: Station,
        settings: Settings,
        runner: BatchRunner,
        probe: OffsetProbe,
        *,
        on_crash: Callable[[BaseException, str], Any] = crash,
        commit: CommitFn | None = None,
        metrics: WorkerMetrics | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.station = station
        self.settings = settings
        self.runner = runner
        self.probe = probe
        self.tracker = OffsetTracker()
        self.committer = Committer(app, self.tracker, settings.broker_commit_interval_seconds, commit)
        self.policy = RetryPolicy.from_settings(settings)
        self.on_crash = on_crash
        self.metrics = metrics or WorkerMetrics()
        self.metrics.start_agent(station)
        self.clock = clock
        self.processed = 0
        self.last_progress = clock()
        """When the agent last took a batch or finished one."""
        self.waiting_since: float | None = None
        """Since when the agent waits on an empty channel (None while it has a batch)."""
        self.hold_started: float | None = None
        """Since when the current batch has been held for an outage (None when it is not)."""
        if runner.on_hold is None:
            runner.on_hold = self.on_hold

    def on_hold(self, held: float | None) -> None:
        """The retry policy's listener: how long the current batch has been held, None when released."""
        self.hold_started = None if held is None else self.clock() - held
        self.metrics.set_held(self.station, self.held_seconds())

    def held_seconds(self) -> float:
        return 0.0 if self.hold_started is None else self.clock() - self.hold_started

    def on_wait(self, waiting: bool) -> None:
        now = self.clock()
        self.waiting_since = now if waiting else None
        if not waiting:
            self.last_progress = now

    async def lags(self) -> dict[tuple[str, int], int]:
        """Unprocessed records per assigned partition of the agent's input topic."""
        consumer: Any = self.app.consumer
        topic = self.settings.topic(INPUT_TOPIC[self.station])
        out: dict[tuple[str, int], int] = {}
        for tp in consumer.assignment():
            if tp.topic != topic:
                continue
            high = consumer.highwater(tp)
            done = self.tracker.position((tp.topic, tp.partition))
            if done is None:
                done = await consumer.position(tp)
            if high is not None and high >= 0 and done is not None:
                out[(tp.topic, tp.partition)] = max(0, high - done)
        return out

    def stalled(self, lags: dict[tuple[str, int], int], stall_seconds: float) -> str | None:
        """Why the agent counts as stuck, or None: no progress for ``stall_seconds`` while it has work.

        A batch held for a known outage is not a stall (``/readyz`` reports the outage, and
        ``EC_MAX_HOLD_SECONDS`` bounds it); an agent waiting on an empty channel is stuck only if
        its input has lag, i.e. records are not being delivered to it.
        """
        if self.hold_started is not None:
            return None
        now = self.clock()
        if self.waiting_since is None:
            if now - self.last_progress > stall_seconds:
                held = now - self.last_progress
                return f"{self.station}: one batch for {held:.0f}s (EC_STALL_SECONDS={stall_seconds:g})"
            return None
        lag = sum(lags.values())
        if lag and now - self.waiting_since > stall_seconds:
            return (
                f"{self.station}: waiting {now - self.waiting_since:.0f}s for records while its input has "
                f"{lag} unprocessed (EC_STALL_SECONDS={stall_seconds:g})"
            )
        return None

    async def consume(self, stream: Any) -> None:
        """The agent body: runs until the worker stops; never raises into Faust's supervisor."""
        committing = asyncio.ensure_future(self.committer.run())
        try:
            async for events in batches(stream, self.settings.batch_size, self.on_wait):
                await self.process(events)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - crash-only: nothing of this batch is committed
            self.on_crash(exc, f"{self.station} agent")
            raise
        finally:
            committing.cancel()
            await self.commit_on_the_way_out()

    async def commit_on_the_way_out(self) -> None:
        """Commit what is finished (best effort: not committing only means repeats, never a loss)."""
        try:
            await asyncio.wait_for(self.committer.commit_now(), 5.0)
        except Exception as exc:  # noqa: BLE001 - the records are read again after a restart
            log.warning("%s: final commit failed (%s); finished records are read again", self.station, exc)

    async def process(self, events: Sequence[Any]) -> None:
        """One batch of events: stale ones skipped, gaps verified, processed, then marked for commit."""
        generation = self.app.consumer_generation_id
        current = [e for e in events if e.message.generation_id == generation]
        if not current:
            return
        started = self.clock()
        trips = self.runner.round_trips()
        records = [to_record(e) for e in current]
        self.tracker.start_generation(generation)
        with self.runner.tracer.batch(records[0].topic, len(records)):
            await self._verify(records)
            outcomes = await self.runner.run(records)
        self.tracker.finish([((r.topic, r.partition), r.offset) for r in records])  # type: ignore[misc]
        self.processed += len(records)
        self.last_progress = self.clock()
        self.metrics.batch(
            self.station, outcomes, self.last_progress - started, self.runner.round_trips() - trips
        )
        for record, outcome in zip(records, outcomes, strict=True):
            if outcome.rejection is not None:
                self._log_rejection(record, outcome)
        self.committer.poke()

    def _log_rejection(self, record: Record, outcome: Outcome[Any]) -> None:
        refused: dict[str, Any] = dict(outcome.rejection or {})
        fields = record_fields(
            record,
            agent=str(self.station),
            run_id=outcome.run_id,
            tool_call_id=outcome.tool_call_id,
            event_id=event_id(self.station, outcome.origin or record.coordinates),
            reason=refused.get("reason"),
        )
        log.warning(
            "%s: dead letter %s: %s", self.station, refused.get("reason"), refused.get("error"), extra=fields
        )

    async def _verify(self, records: Sequence[Record]) -> None:
        """Know where each partition starts, and make sure no record was skipped on the way to us.

        Raises:
            RecordsSkipped: records the broker holds were never delivered (the worker must exit).
        """
        positions = [((r.topic, r.partition), r.offset) for r in records]
        unknown = self.tracker.unknown(tp for tp, _ in positions)  # type: ignore[misc]
        if unknown:
            committed = await hold(
                lambda: self.probe.committed(unknown),
                what=f"{self.station}: reading committed offsets",
                policy=self.policy,
                on_hold=self.on_hold,
            )
            for tp in unknown:
                self.tracker.start_at(tp, committed.get(tp))
        for gap in self.tracker.gaps(positions):  # type: ignore[arg-type]
            first: int | None = await hold(
                functools.partial(self.probe.first_offset_from, gap.tp[0], gap.tp[1], gap.start),
                what=f"{self.station}: checking {gap}",
                policy=self.policy,
                on_hold=self.on_hold,
            )
            if first != gap.found:
                raise RecordsSkipped(
                    f"{gap} were never delivered to the {self.station} agent (the broker's first record "
                    "there is "
                    f"{first}); exiting so they are read again"
                )
            log.info("%s: %s hold no records (first record is %d); accepted", self.station, gap, first)


class Health:
    """What ``/livez`` and ``/readyz`` answer, from the agents' own state and two quick probes.

    Live: no agent is stalled (see :meth:`AgentLoop.stalled`). Ready: the worker finished joining
    its group, is not rebalancing, no agent is holding a batch for an outage, Kafka answers a
    metadata request and (with the ledger or guard agent) Redis answers PING, each within
    ``PROBE_SECONDS``. Probe answers are reused for ``CACHE_SECONDS`` so scrapes cannot pile up.
    """

    PROBE_SECONDS = 2.0
    CACHE_SECONDS = 1.0

    def __init__(
        self,
        app: faust.App,
        loops: dict[Station, AgentLoop],
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
        self._probed: tuple[float, dict[str, str | None]] | None = None

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

    async def _probe(self) -> dict[str, str | None]:
        now = time.monotonic()
        if self._probed is not None and now - self._probed[0] < self.CACHE_SECONDS:
            return self._probed[1]
        found: dict[str, str | None] = {"kafka": await self._kafka()}
        if self.stores:
            found["redis"] = await self._redis()
        self._probed = (now, found)
        return found

    async def _kafka(self) -> str | None:
        try:
            if await asyncio.wait_for(self.sink.producer.client.force_metadata_update(), self.PROBE_SECONDS):
                return None
            return "no broker answered a metadata request"
        except (TimeoutError, RuntimeError) as exc:
            return (
                f"no metadata within {self.PROBE_SECONDS:g}s" if isinstance(exc, TimeoutError) else str(exc)
            )

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
                problems[str(station)] = f"holding a batch for an outage for {loop.held_seconds():.0f}s"
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


def create_app(
    settings: Settings, *, on_crash: Callable[[BaseException, str], Any] = crash, topics_ready: bool = False
) -> faust.App:
    """The Faust app for ``settings``, with the agents ``settings.agents`` names registered.

    ``topics_ready``: the caller already made sure the topics exist (the ``worker`` command does, so
    a broker that is still starting gets a clear wait instead of Faust's tracebacks).
    """
    credentials = broker_credentials(settings)
    app = EvidenceChainApp(
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
        stream_buffer_maxsize=settings.stream_buffer_maxsize,
        stream_wait_empty=False,
        broker_session_timeout=settings.broker_session_timeout_seconds,
        broker_heartbeat_interval=settings.broker_heartbeat_seconds,
        broker_rebalance_timeout=settings.broker_rebalance_timeout_seconds,
        # Faust commits only its own acks, and the agents never ack: these commits commit nothing.
        broker_commit_interval=settings.broker_commit_interval_seconds,
        **({"broker_credentials": credentials} if credentials is not None else {}),
    )
    app.ec_settings = settings
    app.ec_topics_ready = topics_ready
    sink = KafkaSink(settings)
    app.ec_sink = sink
    probe = OffsetProbe(settings, settings.app_id)
    metrics = WorkerMetrics()
    stores: dict[Station, RedisLedgerStore] = {
        # one store (client) per agent, so each counts its own round trips; inert until used
        station: RedisLedgerStore.from_settings(settings)
        for station in settings.agents & {Station.LEDGER, Station.GUARD}
    }
    app.ec_loops = {}  # type: ignore[attr-defined]
    app.ec_metrics = metrics  # type: ignore[attr-defined]
    for station in sorted(settings.agents, key=list(INPUT_TOPIC).index):
        runner = BatchRunner(
            station,
            settings,
            sink,
            stores.get(station),
            tracer=tracer_for(settings.tracing, station, settings.app_id),
        )
        loop = AgentLoop(app, station, settings, runner, probe, on_crash=on_crash, metrics=metrics)
        app.ec_loops[station] = loop  # type: ignore[attr-defined]
        name = INPUT_TOPIC[station]
        topic = app.topic(
            settings.topic(name),
            partitions=settings.topic_partitions,
            replicas=settings.topic_replication_factor,
            config=topic_configs(settings, name),
            # internal: Faust declares the topic before consuming it, so a bare ``faust -A streams.app
            # worker`` never lets the broker auto-create it with one partition.
            internal=True,
            value_type=bytes,
            key_type=bytes,
        )
        app.agent(topic, name=str(station), concurrency=1)(_body(loop))
    health = Health(app, app.ec_loops, sink, list(stores.values()), settings, metrics)  # type: ignore[attr-defined]
    app.ec_health = health  # type: ignore[attr-defined]

    @app.on_rebalance_complete.connect  # type: ignore[arg-type]
    async def assigned(sender: Any, *args: Any, **kwargs: Any) -> None:
        health.assigned = True

    if settings.web_enabled:
        add_web_routes(app, health, metrics)
    log.info(
        "evidence-chain agents: %s; topic prefix %r",
        ", ".join(sorted(settings.agents)),
        settings.topic_prefix,
    )
    return app


def _body(loop: AgentLoop) -> Callable[[Any], Any]:
    async def agent(stream: Any) -> None:
        await loop.consume(stream)

    agent.__name__ = agent.__qualname__ = f"{loop.station}_agent"
    agent.__doc__ = f"{INPUT_TOPIC[loop.station]} → the {loop.station} station."
    return agent


_app: faust.App | None = None


def __getattr__(name: str) -> Any:
    """``streams.worker.app.app`` (and ``streams.app.app``): the app of the environment's settings,
    composed on first access."""
    global _app
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _app is None:
        from streams.settings import get_settings

        _app = create_app(get_settings())
    return _app
