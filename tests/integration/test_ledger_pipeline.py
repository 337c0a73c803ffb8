"""A batch of ledger writes is one Redis round trip (issue 33): EVALSHA in the pipeline, no
``SCRIPT EXISTS`` before it; a script the server does not hold yet is loaded once and the batch sent
again, with the same outcomes. The fields travel as one JSON argument (issue 42) and are stored as
the hash fields they were, whatever text they hold."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from redis.asyncio.client import Pipeline

from models.vocab import LedgerOutcome
from streams import codec
from streams.hashing import sha256_hex
from streams.ledger.keys import ledger_key
from streams.ledger.redis import to_hash
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


# Text JSON escapes, and text it does not: what cjson in Redis must give back byte for byte.
AWKWARD = (
    '\x00 nul, \x01\x1f controls, \\ " quotes, \\u0041 not an escape, '
    + "\u2028\u2029, é 网关 😀 \U0010ffff, \x7f"
)


async def test_the_fields_are_stored_as_given_whatever_text_they_hold(
    redis_url: str, unique_prefix: str
) -> None:
    store = redis_store(redis_url, unique_prefix.rstrip("-"))
    projection = codec.dumps({"query": AWKWARD, "hits": [{"excerpt": AWKWARD * 200}]}).decode("utf-8")
    sha = sha256_hex(projection.encode("utf-8"))
    written = [
        entry(
            run_id="run-text",
            tool_call_id="call_text",
            event_id=AWKWARD,
            projection=projection,
            projection_sha256=sha,
        ),
        entry("FAILED", run_id="run-text", tool_call_id="call_failed", failure_reason="SCHEMA_VIOLATION"),
    ]
    try:
        results = await store.write_many(written)
        keys = [ledger_key(store.ns, e["run_id"], e["tool_call_id"]) for e in written]
        stored = [await store.client.hgetall(key) for key in keys]
        again = await store.write_many(written)
        read = await store.read_entries([("run-text", "call_text"), ("run-text", "call_failed")])
    finally:
        await store.close()
    assert [r.outcome for r in results] == [LedgerOutcome.WRITTEN] * 2
    assert [r.outcome for r in again] == [LedgerOutcome.DUPLICATE] * 2
    for entry_, fields, result, back in zip(written, stored, results, read, strict=True):
        text = {k.decode("utf-8"): v.decode("utf-8") for k, v in fields.items()}
        stamps = {"written_at", "expires_at"}
        assert {k: v for k, v in text.items() if k not in stamps} == to_hash(entry_)  # no field more or less
        assert back == result.stored  # what the write answered is what a read finds
        assert back is not None and back["event_id"] == entry_["event_id"]
    assert read[0] is not None and read[0]["projection"] == projection
