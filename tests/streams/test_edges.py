"""Third-party errors are translated once, at their edge, and the error tree's ``retriable`` decides."""

from __future__ import annotations

import asyncio

import pytest
from aiokafka import errors as kafka
from redis import exceptions as redis

from streams.errors import (
    EvidenceChainError,
    HoldExpired,
    HoldInterrupted,
    KafkaRefused,
    KafkaUnavailable,
    RedisRefused,
    RedisUnavailable,
)
from streams.kafka.config import kafka_errors
from streams.ledger.redis import redis_errors
from streams.retry import RetryPolicy, hold


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (redis.ConnectionError("refused"), RedisUnavailable),
        (redis.TimeoutError("slow"), RedisUnavailable),
        (redis.BusyLoadingError("LOADING"), RedisUnavailable),
        (redis.ReadOnlyError("READONLY You can't write against a read only replica."), RedisUnavailable),
        (redis.OutOfMemoryError("OOM command not allowed"), RedisUnavailable),
        (redis.TryAgainError("TRYAGAIN"), RedisUnavailable),
        (redis.MovedError("3999 127.0.0.1:6381"), RedisUnavailable),
        (redis.AskError("3999 127.0.0.1:6381"), RedisUnavailable),
        (redis.ClusterDownError("CLUSTERDOWN"), RedisUnavailable),
        (redis.NoScriptError("NOSCRIPT"), RedisUnavailable),
        (OSError("network unreachable"), RedisUnavailable),
        (redis.NoPermissionError("NOPERM this user has no permissions"), RedisRefused),
        (redis.AuthenticationError("WRONGPASS"), RedisRefused),
        (redis.ResponseError("ERR Error running script"), RedisRefused),
    ],
)
def test_redis_errors_are_mapped_once(raised: Exception, expected: type[EvidenceChainError]) -> None:
    with pytest.raises(expected) as caught, redis_errors("writing"):
        raise raised
    assert caught.value.__cause__ is raised
    assert caught.value.retriable is (expected is RedisUnavailable)


def test_a_refused_redis_says_what_to_fix() -> None:
    with pytest.raises(RedisRefused, match="EC_REDIS_URL"), redis_errors("writing"):
        raise redis.AuthenticationError("WRONGPASS invalid username-password pair")


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (kafka.KafkaConnectionError("down"), KafkaUnavailable),
        (kafka.KafkaTimeoutError(), KafkaUnavailable),
        (kafka.NotLeaderForPartitionError(), KafkaUnavailable),
        (kafka.RequestTimedOutError(), KafkaUnavailable),
        (kafka.MessageSizeTooLargeError(), KafkaRefused),
        (kafka.TopicAuthorizationFailedError(), KafkaRefused),
    ],
)
def test_kafka_errors_follow_aiokafkas_retriable_flag(
    raised: Exception, expected: type[EvidenceChainError]
) -> None:
    with pytest.raises(expected), kafka_errors("producing"):
        raise raised


async def test_hold_retries_only_what_is_retriable_and_gives_up_after_the_limit() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise RedisUnavailable("not yet")
        return "done"

    policy = RetryPolicy(0.001, 0.002, 5.0)
    assert await hold(flaky, what="x", policy=policy) == "done" and calls == 3

    async def refused() -> None:
        raise RedisRefused("NOPERM")

    with pytest.raises(RedisRefused):
        await hold(refused, what="x", policy=policy)

    async def down() -> None:
        raise KafkaUnavailable("down")

    held: list[float | None] = []
    with pytest.raises(HoldExpired, match="EC_MAX_HOLD_SECONDS"):
        await hold(
            down, what="x", policy=RetryPolicy(0.01, 0.01, 0.05), on_hold=lambda h, _why: held.append(h)
        )
    assert held and max(h for h in held if h is not None) <= 0.05

    stop = asyncio.Event()
    stop.set()
    with pytest.raises(HoldInterrupted):
        await hold(down, what="x", policy=RetryPolicy(0.01, 0.01, None), stop=stop)


async def test_hold_tells_its_listener_from_the_first_failure_until_it_is_released() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise KafkaUnavailable("down")
        return "done"

    told: list[tuple[float | None, str | None]] = []

    def listener(held: float | None, why: str | None) -> None:
        told.append((held, why))

    assert await hold(flaky, what="sending", policy=RetryPolicy(0.01, 0.01, 5), on_hold=listener) == "done"
    assert told[0] == (0.0, "sending: down") and told[-1] == (None, None) and len(told) == 3
    assert told[1][0] is not None and told[1][0] > 0
