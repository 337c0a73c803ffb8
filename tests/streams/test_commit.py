"""Explicit commits through the one retry policy: an outage is held and retried, anything else ends the
worker (crash-only); and the health probe reads Kafka through the edge."""

from __future__ import annotations

import asyncio
from typing import Any

import faust
import pytest
from faust.exceptions import ConsumerNotStarted

from models.vocab import Station
from streams.errors import KafkaRefused, KafkaUnavailable
from streams.kafka.producer import KafkaSink
from streams.observe.metrics import WorkerMetrics
from streams.retry import RetryPolicy, hold
from streams.settings import Settings
from streams.worker.commit import Committer, consumer_commit
from streams.worker.health import Health
from streams.worker.offsets import OffsetTracker
from tests.streams.loop_fakes import RAW, TOPIC, FakeProbe, Loop, event

FAST = RetryPolicy(0.001, 0.002, None)


@pytest.fixture
async def app() -> Any:
    return faust.App("commit-test", broker="memory://", value_serializer="raw", key_serializer="raw")


def finished(app: Any) -> OffsetTracker:
    tracker = OffsetTracker()
    tracker.start_generation(app.consumer_generation_id)
    tracker.start_at((TOPIC, 0), 0)
    tracker.finish([((TOPIC, 0), 0), ((TOPIC, 0), 1)])
    return tracker


async def test_a_commit_that_fails_for_an_outage_is_held_and_retried(app: Any) -> None:
    answers: list[Any] = [KafkaUnavailable("broker down"), KafkaUnavailable("still down"), True]
    commits: list[dict[tuple[str, int], int]] = []

    async def commit(offsets: dict[tuple[str, int], int]) -> bool:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        commits.append(dict(offsets))
        return bool(answer)

    told: list[int] = []
    committer = Committer(app, finished(app), 0.001, FAST, commit, on_commit=lambda: told.append(1))
    running = asyncio.ensure_future(committer.run())
    committer.poke()
    for _ in range(200):
        if commits:
            break
        await asyncio.sleep(0.01)
    running.cancel()
    assert commits == [{(TOPIC, 0): 2}] and answers == []
    assert told == [1]  # the commits metric: the one that went through, not the two tries that failed
    assert committer.tracker.to_commit() == {}


async def test_a_commit_error_that_is_not_retriable_is_not_retried(app: Any) -> None:
    calls = 0

    async def commit(offsets: dict[tuple[str, int], int]) -> bool:
        nonlocal calls
        calls += 1
        raise KafkaRefused("not authorized")

    committer = Committer(app, finished(app), 0.001, FAST, commit)
    committer.poke()
    with pytest.raises(KafkaRefused):
        await asyncio.wait_for(committer.run(), 5)
    assert calls == 1


async def test_an_agent_whose_commits_are_refused_exits(app: Any) -> None:
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 0}))

    async def refused(offsets: dict[tuple[str, int], int]) -> bool:
        raise KafkaRefused("not authorized")

    fixture.loop.committer.commit = refused
    stream = app.stream(app.channel())
    stream.channel.queue.put_nowait(event(app, 0, RAW[0]))
    consuming = asyncio.ensure_future(fixture.loop.consume(stream))
    for _ in range(200):
        if fixture.crashes:
            break
        await asyncio.sleep(0.01)
    consuming.cancel()
    assert [type(e) for e in fixture.crashes] == [KafkaRefused]


async def test_faust_s_consumer_not_running_is_an_outage() -> None:
    class Consumer:
        async def _commit(self, offsets: Any) -> bool:
            raise ConsumerNotStarted("Consumer thread not yet started")

    class App:
        consumer = Consumer()

    with pytest.raises(KafkaUnavailable, match="ConsumerNotStarted"):
        await consumer_commit(App())({(TOPIC, 0): 1})  # type: ignore[arg-type]


async def test_readiness_asks_kafka_through_the_edge(app: Any) -> None:
    settings = Settings(topic_prefix="t.")
    health = Health(app, {}, KafkaSink(settings), [], settings, WorkerMetrics())
    ready, body = await health.ready()
    assert not ready
    assert body["problems"]["kafka"] == "the agents' producer has not started"


async def test_readiness_says_which_outage_holds_a_batch(app: Any) -> None:
    """Two of three brokers down: the ledger agent's sends are held, and ``/readyz`` names the error."""
    fixture = Loop(app, FakeProbe({}))
    settings = fixture.settings
    health = Health(
        app, {Station.POSTPROCESS: fixture.loop}, KafkaSink(settings), [], settings, WorkerMetrics()
    )
    answers: list[dict[str, Any]] = []

    async def sends() -> None:
        if not answers:
            answers.append({})
            raise KafkaUnavailable("NotEnoughReplicasError: 1 of min.insync.replicas=2")
        answers.append((await health.ready())[1])

    await hold(
        sends, what="sending 3 messages", policy=RetryPolicy(0.001, 0.001), on_hold=fixture.loop.on_hold
    )
    problem = answers[-1]["problems"]["postprocess"]
    assert problem.startswith(
        "holding a batch for an outage for 0s: sending 3 messages: NotEnoughReplicasError"
    )
    assert (await health.ready())[1]["problems"].get("postprocess") is None  # released: no longer said
