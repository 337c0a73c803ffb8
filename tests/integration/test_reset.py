"""``replay --mode reset`` cannot skip a backlog by accident: it shows the plan, changes nothing without
``--yes``, never moves an offset forward without ``--allow-skip``, and refuses what it cannot mean."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator

import pytest
from aiokafka.structs import TopicPartition

from streams.kafka.admin import ensure_topics
from streams.kafka.config import new_admin, started
from streams.kafka.offsets import commit_offsets, committed_offsets
from streams.settings import Settings
from tests.integration.helpers import CLI, new_prefix, publish, worker_env

RECORDS = [f'{{"run_id":"run-r","tool_call_id":"c{i}","response":{{}}}}'.encode() for i in range(9)]


@pytest.fixture
def group(kafka_bootstrap: str, redis_url: str) -> Iterator[tuple[Settings, dict[str, str]]]:
    """One partition of raw-hits with 9 records; the workers' group has committed offset 4 (none running)."""
    prefix = new_prefix()
    env = worker_env(prefix, kafka_bootstrap, redis_url, EC_TOPIC_PARTITIONS="1")
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap, topic_prefix=prefix, topic_partitions=1, app_id=env["EC_APP_ID"]
    )

    async def prepare() -> None:
        await ensure_topics(settings)
        await publish(kafka_bootstrap, settings.topic("raw-hits"), RECORDS)
        await commit_offsets(settings, settings.app_id, {TopicPartition(settings.topic("raw-hits"), 0): 4})

    asyncio.run(prepare())
    yield settings, env


def committed(settings: Settings) -> int | None:
    async def read() -> int | None:
        tp = TopicPartition(settings.topic("raw-hits"), 0)
        async with started(new_admin(settings), "test") as admin:
            return (await committed_offsets(admin, settings.app_id, [tp]))[tp]

    return asyncio.run(read())


def reset(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own console script
        [CLI, "replay", "--mode", "reset", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_plan_changes_nothing_without_yes(group: tuple[Settings, dict[str, str]]) -> None:
    settings, env = group
    done = reset(env, "--from-offset", "1")
    assert done.returncode == 0, done.stderr
    assert "Nothing was changed" in done.stdout
    row = next(
        line for line in done.stdout.splitlines() if line.strip().startswith("│ 0") or " 0 " in line[:12]
    )
    assert "4" in row and "1" in row and "3" in row  # committed 4 → 1: three records re-processed
    assert committed(settings) == 4
    done = reset(env, "--from-offset", "1", "--yes")
    assert done.returncode == 0, done.stderr
    assert committed(settings) == 1


def test_past_the_end_exits_non_zero_and_leaves_the_offsets(group: tuple[Settings, dict[str, str]]) -> None:
    settings, env = group
    for args in (("--from-offset", "100000000"), ("--from-offset", "100000000", "--yes", "--allow-skip")):
        done = reset(env, *args)
        assert done.returncode == 2, done.stdout
        assert "past the end" in done.stderr
    assert committed(settings) == 4


def test_moving_forward_needs_allow_skip(group: tuple[Settings, dict[str, str]]) -> None:
    settings, env = group
    done = reset(env, "--from-time", "2099-01-01T00:00:00Z", "--yes")  # after the last record: the end
    assert done.returncode == 2
    assert "skip 5 records" in done.stderr and "--allow-skip" in done.stderr
    assert committed(settings) == 4
    done = reset(env, "--from-offset", "7", "--yes")
    assert done.returncode == 2 and committed(settings) == 4
    done = reset(env, "--from-offset", "7", "--yes", "--allow-skip")
    assert done.returncode == 0, done.stderr
    assert committed(settings) == 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--from-offset", "0", "--to-offset", "3"), "no meaning for --mode reset"),
        (("--from-offset", "0", "--until", "2099-01-01T00:00:00Z"), "no meaning for --mode reset"),
        (("--topic", "audit", "--from-offset", "0"), "do not consume"),
        (("--topic", "ledger", "--from-offset", "0"), "do not consume"),
        (("--from-offset", "-1"), "0 or more"),
    ],
)
def test_refused_ranges(group: tuple[Settings, dict[str, str]], args: tuple[str, ...], message: str) -> None:
    settings, env = group
    done = reset(env, *args, "--yes")
    assert done.returncode == 2
    assert message in done.stderr
    assert committed(settings) == 4
