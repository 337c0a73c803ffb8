"""A ledger write pipeline that times out is sent again in halves, and what went through is not sent
again: on a link too slow for a whole batch within EC_REDIS_TIMEOUT_MS the worker makes progress
instead of timing out on the same pipeline forever (found by tests/faults/test_network.py: 485
entries behind 200 ms ± 50 ms and 1 % loss). The pipelines here are a fake that times out above a
size; the real one is the Lua script tested on Redis (tests/integration/test_same_entry.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from redis import exceptions as redis_exceptions

from models.ledger import LedgerEntry, WriteResult
from models.vocab import LedgerOutcome
from streams.errors import RedisUnavailable
from streams.ledger.client import open_client
from streams.ledger.redis import RedisLedgerStore, redis_errors
from streams.retry import RetryPolicy, hold
from streams.settings import load_settings


class SlowLink(RedisLedgerStore):
    """Pipelines of more than ``carries`` entries time out (``None``: every one does)."""

    def __init__(self, carries: int | None, *, fail: type[Exception] = redis_exceptions.TimeoutError) -> None:
        client = open_client(load_settings(redis_url="redis://127.0.0.1:1/0"))  # never connected
        super().__init__(client, ns="t", ttl_seconds=60)
        self.carries, self.fail = carries, fail
        self.sent: list[int] = []  # entries per pipeline attempted
        self.stored: list[str] = []  # tool call ids written, in order
        self._waitaof = True

    async def _write_pipeline(self, entries: Sequence[LedgerEntry], *, restore: bool) -> list[WriteResult]:
        self.sent.append(len(entries))
        with redis_errors(f"ledger write of {len(entries)} entries"):
            if self.carries is None or len(entries) > self.carries:
                raise self.fail("Timeout writing to socket")
        self.stored += [e["tool_call_id"] for e in entries]
        return [WriteResult(LedgerOutcome.WRITTEN, e, e["tool_call_id"]) for e in entries]


def entries(count: int) -> list[LedgerEntry]:
    return [{"run_id": "run-1", "tool_call_id": f"call-{n}"} for n in range(count)]  # type: ignore[typeddict-item]


async def write_as_the_worker_does(store: RedisLedgerStore, batch: list[LedgerEntry]) -> list[WriteResult]:
    results: list[WriteResult] = []
    await hold(
        lambda: store.write_many(batch[len(results) :], written=results),
        what="test",
        policy=RetryPolicy(0.001, 0.001, 5.0),
    )
    return results


async def test_a_batch_too_large_for_the_link_goes_through_in_halves_and_nothing_twice() -> None:
    store, batch = SlowLink(carries=70), entries(485)
    results = await write_as_the_worker_does(store, batch)
    assert [r.stored["tool_call_id"] for r in results] == [e["tool_call_id"] for e in batch]
    assert store.stored == [e["tool_call_id"] for e in batch], "an entry was sent twice or skipped"
    assert max(n for n in store.sent if n <= 70) > 30, "halved further than the link needs"
    assert store.span is not None and store.span <= 70


async def test_after_an_outage_the_span_doubles_back_with_each_pipeline_that_goes_through() -> None:
    store = SlowLink(carries=None)
    for _ in range(12):  # an outage: every attempt times out, the span falls to one entry
        with pytest.raises(RedisUnavailable):
            await store.write_many(entries(400))
    assert store.span == 1
    store.carries = 10_000  # the link is back
    store.sent.clear()
    await write_as_the_worker_does(store, entries(400))
    assert store.sent == [1, 2, 4, 8, 16, 32, 64, 128, 145], "not one entry a round trip until the next batch"
    for _ in range(8):
        await write_as_the_worker_does(store, entries(400))
    assert store.span is None and store.sent[-1] == 400  # a whole batch a pipeline again


async def test_two_timeouts_in_a_row_are_the_caller_s_to_hold_and_one_entry_is_the_floor() -> None:
    store = SlowLink(carries=None)  # Redis unreachable: every pipeline times out
    with pytest.raises(RedisUnavailable):
        await store.write_many(entries(400))
    assert store.sent == [400, 200], "a dead Redis is not probed all the way down in one call"
    for _ in range(12):
        with pytest.raises(RedisUnavailable):
            await store.write_many(entries(400))
    assert store.span == 1 and store.sent[-1] == 1


async def test_other_failures_are_not_split() -> None:
    store = SlowLink(carries=None, fail=redis_exceptions.ConnectionError)
    with pytest.raises(RedisUnavailable):
        await store.write_many(entries(400))
    assert store.sent == [400] and store.span is None
