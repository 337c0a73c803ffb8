"""A batch of ledger writes is one Redis round trip (issue 33): EVALSHA in the pipeline, no
``SCRIPT EXISTS`` before it; a script the server does not hold yet is loaded once and the batch sent
again, with the same outcomes."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from redis.asyncio.client import Pipeline

from models.vocab import LedgerOutcome
from tests.integration.helpers import redis_store
from tests.integration.test_same_entry import entry


def entries(n: int) -> list[Any]:
    return [entry(run_id="run-pipe", tool_call_id=f"call_{i}", event_id=f"e{i}") for i in range(n)]


async def test_a_batch_of_writes_asks_nothing_before_its_pipeline(
    redis_url: str, unique_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = redis_store(redis_url, unique_prefix.rstrip("-"))
    asked: list[tuple[Any, ...]] = []
    immediate = Pipeline.immediate_execute_command

    async def spy(self: Pipeline, *args: Any, **options: Any) -> Any:
        asked.append(args)
        return await immediate(self, *args, **options)

    monkeypatch.setattr(Pipeline, "immediate_execute_command", spy)
    try:
        await store.write_many(entries(1))  # the script is loaded by now, whatever the server held
        asked.clear()
        results = await store.write_many(entries(3))
    finally:
        await store.close()
    assert [r.outcome for r in results] == [LedgerOutcome.DUPLICATE] + [LedgerOutcome.WRITTEN] * 2
    assert asked == []  # redis-py's registered script asked SCRIPT EXISTS before every pipeline


async def test_a_script_the_server_does_not_hold_is_loaded_and_the_batch_sent_again(
    redis_url: str, unique_prefix: str
) -> None:
    store = redis_store(redis_url, unique_prefix.rstrip("-"))
    # the same script under a text no server has seen (a comment of its own): NOSCRIPT at first
    store._script = store.client.register_script(f"{store._script.script}\n-- {uuid.uuid4().hex}")  # noqa: SLF001
    try:
        first = await store.write_many(entries(2))
        again = await store.write_many(entries(2))
        round_trips = store.round_trips
    finally:
        await store.close()
    assert [r.outcome for r in first] == [LedgerOutcome.WRITTEN] * 2
    assert [r.outcome for r in again] == [LedgerOutcome.DUPLICATE] * 2
    assert round_trips == 2
