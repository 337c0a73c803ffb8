"""The Faust edge: :func:`create_app` composes the worker's running parts into one
:class:`~streams.worker.context.WorkerContext` and registers one agent per station named in
``EC_AGENTS``; each agent body is that station's :class:`~streams.worker.loop.AgentLoop`.

Delivery: at-least-once (``processing_guarantee="at_least_once"``, no ``exactly_once``: faust
#323/#517/#440). The agents never ack through Faust; they commit explicitly what they finished
(``streams.worker.commit``), so Faust's periodic commits commit nothing.

Importing this module reads no environment and creates nothing: ``faust -A streams.app worker``
gets ``app`` from the module ``__getattr__``, which composes it from the environment on first use.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from typing import Any

import faust

from models.topology import TOPOLOGY
from models.vocab import Station, Topic
from streams.judge.openai import OpenAIChatJudge
from streams.kafka.admin import ensure_topics, topic_configs
from streams.kafka.config import kafka_errors
from streams.kafka.offsets import OffsetProbe
from streams.kafka.producer import KafkaSink
from streams.ledger.redis import RedisLedgerStore
from streams.observe.metrics import WorkerMetrics
from streams.observe.tracing import tracer_for
from streams.settings import Settings
from streams.trust.keys import roles_signed_by, signing_status
from streams.web.probes import serving
from streams.worker.context import WorkerContext
from streams.worker.crash import crash
from streams.worker.credentials import broker_credentials, faust_brokers
from streams.worker.drain import batch_drain
from streams.worker.health import Health
from streams.worker.inline import inline_consumer
from streams.worker.judging import SemanticRunner
from streams.worker.loop import AgentLoop, LoopConfig
from streams.worker.runner import BatchRunner, RunnerConfig

log = logging.getLogger(__name__)

FAUST_PRODUCER_METADATA_MAX_AGE_MS = 3_600_000
"""How often Faust's unused producer refreshes its metadata: once an hour, not every
``EC_KAFKA_METADATA_MAX_AGE_MS`` (its every refresh asks for all the cluster's topics)."""

INPUT_TOPIC: dict[Station, Topic] = {station: wiring.input for station, wiring in TOPOLOGY.items()}
"""The topic each agent consumes, in the chain's order (from :data:`models.topology.TOPOLOGY`)."""


class EvidenceChainApp(faust.App):
    """The Faust app; on its first start it makes sure all nine topics exist with one partition count
    (unless ``evidence-chain worker`` already did, waiting for a starting broker)."""

    context: WorkerContext
    """The running parts; :func:`create_app` sets it before anything starts."""
    _probes: contextlib.AsyncExitStack | None = None
    _loop_watch: asyncio.Task[None] | None = None

    def _new_transport(self) -> Any:
        """Faust's transport, its consumer handing each fetched batch over in one step
        (:mod:`streams.worker.drain`), on the agents' event loop (:mod:`streams.worker.inline`)."""
        transport = super()._new_transport()
        consumer = transport.Consumer
        context = getattr(self, "context", None)
        if context is None or not context.settings.consumer_thread:  # streams.worker.inline
            consumer = inline_consumer(consumer)
        transport.Consumer = batch_drain(consumer)  # type: ignore[misc]  # this instance only
        return transport

    async def on_start(self) -> None:
        """Start the probe server (with ``EC_WEB_ENABLED``), the event-loop probe and the agents'
        producer before the agents."""
        await super().on_start()
        context = self.context
        if context.settings.web_enabled and self._probes is None:  # never bound twice
            probes = contextlib.AsyncExitStack()
            await probes.enter_async_context(serving(context.health, "worker", context.settings.web_port))
            self._probes = probes
        if self._loop_watch is None:
            self._loop_watch = asyncio.create_task(context.metrics.watch_loop(), name="event-loop-lag")
        await context.sink.start()

    async def on_shutdown(self) -> None:
        """Close the agents' producer once the agents have stopped, then the probe server (which
        answered while they drained)."""
        watch, self._loop_watch = self._loop_watch, None
        if watch is not None:
            watch.cancel()
        try:
            await self.context.sink.stop()
            for loop in self.context.loops.values():
                if isinstance(loop.runner, SemanticRunner):
                    await loop.runner.judge.close()
        finally:
            probes, self._probes = self._probes, None
            if probes is not None:
                await probes.aclose()
        await super().on_shutdown()

    async def on_stop(self) -> None:
        """Before Faust stops the consumer (and leaves the group), commit what each agent finished."""
        await asyncio.gather(*(loop.commit_on_the_way_out() for loop in self.context.loops.values()))
        await super().on_stop()

    async def on_first_start(self) -> None:
        """Create the data directory (Faust makes only its last level) and the topics, once."""
        context = self.context
        os.makedirs(context.settings.data_dir, exist_ok=True)
        await super().on_first_start()
        if not context.topics_ready:  # a bare ``faust -A streams.app worker``
            with kafka_errors("creating topics"):
                await ensure_topics(context.settings)
            context.topics_ready = True


def app_options(settings: Settings) -> dict[str, Any]:
    """Faust's settings for the worker: raw bytes, acks=all, explicit commits, the topics' limits."""
    credentials = broker_credentials(settings)
    return {
        "broker": faust_brokers(settings.kafka_bootstrap),
        "value_serializer": "raw",
        "key_serializer": "raw",
        "datadir": os.path.join(settings.data_dir, "{conf.name}"),
        # the probes are served by the project's one listener (streams.web.probes.serving), not Faust's
        "web_enabled": False,
        "topic_partitions": settings.topic_partitions,
        "topic_replication_factor": settings.topic_replication_factor,
        "processing_guarantee": "at_least_once",
        "producer_acks": -1,
        "producer_max_request_size": settings.topic_max_message_bytes + 64 * 1024,
        # per partition: a backlog's 8 MB fetches of one input held every other hop's records back
        "consumer_max_fetch_size": settings.consumer_fetch_bytes,
        "consumer_auto_offset_reset": "earliest",
        "consumer_metadata_max_age_ms": settings.kafka_metadata_max_age_ms,
        # Faust's own producer sends nothing (the agents produce through KafkaSink, whose metadata age
        # is EC_KAFKA_METADATA_MAX_AGE_MS); tracking no topic, aiokafka refreshes it with every topic's
        # metadata, which on a broker of 3,000 topics held the one event loop 65-150 ms every 5 s.
        "producer_metadata_max_age_ms": FAUST_PRODUCER_METADATA_MAX_AGE_MS,
        "stream_buffer_maxsize": settings.stream_buffer_maxsize,
        "stream_wait_empty": False,
        "broker_session_timeout": settings.broker_session_timeout_seconds,
        "broker_heartbeat_interval": settings.broker_heartbeat_seconds,
        "broker_rebalance_timeout": settings.broker_rebalance_timeout_seconds,
        # Faust commits only its own acks, and the agents never ack: these commits commit nothing.
        "broker_commit_interval": settings.broker_commit_interval_seconds,
        **({"broker_credentials": credentials} if credentials is not None else {}),
    }


def create_app(
    settings: Settings, *, on_crash: Callable[[BaseException, str], Any] = crash, topics_ready: bool = False
) -> EvidenceChainApp:
    """The Faust app for ``settings``, with the agents ``settings.agents`` names registered.

    ``topics_ready``: the caller already made sure the topics exist (the ``worker`` command does, so
    a broker that is still starting gets a clear wait instead of Faust's tracebacks).
    """
    options = app_options(settings)
    # refuses bad keys, and a signing key not trusted in the role of what these agents sign (SPEC 3.7)
    status = signing_status(
        settings.signing_key_file, settings.trusted_keys_file, signs=roles_signed_by(settings.running_agents)
    )
    log.log(logging.INFO if settings.signing_key_file else logging.WARNING, "%s", status)
    config = RunnerConfig.from_settings(settings)  # the key files read once: a later change needs a restart
    app = EvidenceChainApp(settings.app_id, **options)
    sink = KafkaSink(settings)
    probe = OffsetProbe(settings, settings.app_id)
    metrics = WorkerMetrics()
    stores: dict[Station, RedisLedgerStore] = {
        # one store (client) per agent, so each counts its own round trips; inert until used
        station: RedisLedgerStore.from_settings(settings)
        for station in settings.running_agents & {Station.LEDGER, Station.GUARD, Station.SEMANTIC}
    }
    loops: dict[Station, AgentLoop] = {}
    for station in sorted(settings.running_agents, key=list(INPUT_TOPIC).index):
        tracer = tracer_for(settings.tracing, station, settings.app_id)
        runner: BatchRunner
        if station == Station.SEMANTIC:  # SPEC 4.4: the judge's calls overlap across batches
            judge = OpenAIChatJudge(settings.semantic)  # ConfigurationError: no URL, model or token
            runner = SemanticRunner(
                config, sink, stores[station], tracer=tracer, judge=judge, metrics=metrics
            )
        else:
            runner = BatchRunner(station, config, sink, stores.get(station), tracer=tracer)
        loop_config = LoopConfig.from_settings(settings, station)
        loops[station] = AgentLoop(
            app, station, loop_config, runner, probe, on_crash=on_crash, metrics=metrics
        )
    health = Health(app, loops, sink, list(stores.values()), settings, metrics)
    context = WorkerContext(settings, sink, probe, metrics, stores, loops, health, topics_ready)
    app.context = context
    for station in context.loops:
        _register(app, context, station)

    @app.on_rebalance_complete.connect  # type: ignore[arg-type]
    async def assigned(sender: Any, *args: Any, **kwargs: Any) -> None:
        context.health.assigned = True
        assignment = app.consumer.assignment()
        for loop in context.loops.values():
            loop.prefetch_committed(assignment)  # read before the first batches wait for them

    log.info(
        "evidence-chain agents: %s; topic prefix %r",
        ", ".join(sorted(settings.running_agents)),
        settings.topic_prefix,
    )
    return app


def _register(app: faust.App, context: WorkerContext, station: Station) -> None:
    """The agent of ``station`` on its input topic, one at a time (``concurrency=1``, faust #606)."""
    settings, name = context.settings, INPUT_TOPIC[station]
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
    app.agent(topic, name=str(station), concurrency=1)(_body(context, station))


def _body(context: WorkerContext, station: Station) -> Callable[[Any], Any]:
    async def agent(stream: Any) -> None:
        await context.loops[station].consume(stream)

    agent.__name__ = agent.__qualname__ = f"{station}_agent"
    agent.__doc__ = f"{INPUT_TOPIC[station]} → the {station} station."
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
