"""The consumer's drain loop: each fetched batch handed over in one race against a suspended flow."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from faust.transport.drivers.aiokafka import Consumer as AIOKafkaConsumer

from streams.worker.drain import YIELD_EVERY, BatchDrainMixin, batch_drain


@dataclass
class Message:
    topic: str
    partition: int
    offset: int
    key: bytes = b"k"
    value: bytes = b"v"


class Diag:
    def set_flag(self, flag: str) -> None: ...

    def unset_flag(self, flag: str) -> None: ...


class FakeConsumer(BatchDrainMixin):
    """Just what the drain loop touches of Faust's consumer; ``fetches`` are the getmany results."""

    consumer_stopped_errors = (ConnectionError,)

    def __init__(self, fetches: list[list[Message]], *, gate: dict[int, asyncio.Event] | None = None) -> None:
        self.fetches = list(fetches)
        self.gate = gate or {}
        self.delivered: list[tuple[str, int, int]] = []
        self.gaps: list[tuple[Any, int, int]] = []
        self.races = 0
        self.blocked = asyncio.Event()  # set when the callback waits at a gate
        self._read_offset: dict[Any, int | None] = defaultdict(lambda: None)
        self._commit_every = None
        self._n_acked = 0
        self._stopped = asyncio.Event()
        self.fetcher_stopped = asyncio.Event()
        self.suspend_flow = asyncio.Event()
        self.should_stop = False
        self.diag = Diag()
        self.log = SimpleNamespace(dev=lambda *a: None, info=lambda *a: None, exception=lambda *a: None)
        self.app = SimpleNamespace(topics=SimpleNamespace(acks_enabled_for=lambda topic: True))
        self.transport = SimpleNamespace(app=SimpleNamespace(should_stop=False))

    async def getmany(self, **options: Any) -> Any:
        if not self.fetches:  # nothing more: the worker stops
            self._stopped.set()
            return
        for m in self.fetches.pop(0):
            yield (m.topic, m.partition), m

    async def callback(self, message: Message) -> None:
        gate = self.gate.get(message.offset)
        if gate is not None:
            self.blocked.set()
            await gate.wait()
        self.delivered.append((message.topic, message.partition, message.offset))

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _add_gap(self, tp: Any, start: int, end: int) -> None:
        self.gaps.append((tp, start, end))

    async def commit(self) -> None: ...

    async def wait_first(self, *coros: Any) -> None:
        """mode's ``Service.wait_first``: the first to finish wins, the others are cancelled."""
        self.races += 1
        futures = [asyncio.ensure_future(c) for c in coros]
        try:
            await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for f in futures:
                f.cancel()

    async def drain(self) -> None:
        await self._drain_messages(SimpleNamespace(_stopped=self.fetcher_stopped))


def batch(topic: str, partition: int, offsets: range | list[int]) -> list[Message]:
    return [Message(topic, partition, o) for o in offsets]


async def test_each_fetched_batch_is_one_race_and_every_record_is_delivered_in_order() -> None:
    fetches = [batch("raw", 0, range(0, 250)), batch("raw", 0, range(250, 260)) + batch("ledger", 1, [0, 1])]
    consumer = FakeConsumer(fetches)
    await asyncio.wait_for(consumer.drain(), 5)
    assert consumer.races == 2  # one per getmany, not one per record (262)
    assert consumer.delivered == [("raw", 0, o) for o in range(260)] + [("ledger", 1, 0), ("ledger", 1, 1)]
    assert consumer._read_offset[("raw", 0)] == 259
    assert consumer._read_offset[("ledger", 1)] == 1
    assert consumer.gaps == []


async def test_records_below_the_read_offset_are_dropped_and_a_gap_is_recorded_as_faust_does() -> None:
    consumer = FakeConsumer([batch("raw", 0, [5, 6, 3, 9])])
    consumer._read_offset[("raw", 0)] = 4
    await asyncio.wait_for(consumer.drain(), 5)
    assert consumer.delivered == [("raw", 0, 5), ("raw", 0, 6), ("raw", 0, 9)]  # 3 < read offset: dropped
    assert consumer.gaps == [(("raw", 0), 7, 9)]
    assert consumer._read_offset[("raw", 0)] == 9


async def test_a_suspended_flow_abandons_the_records_not_yet_delivered() -> None:
    blocked = asyncio.Event()  # the conductor waits for room in a full channel at offset 2
    consumer = FakeConsumer([batch("raw", 0, range(5))], gate={2: blocked})
    draining = asyncio.ensure_future(consumer.drain())
    await asyncio.wait_for(consumer.blocked.wait(), 5)
    consumer.suspend_flow.set()  # a rebalance starts
    await asyncio.wait_for(draining, 5)
    assert consumer.delivered == [("raw", 0, 0), ("raw", 0, 1)]
    assert consumer._read_offset[("raw", 0)] == 1  # not past a record that was not delivered


async def test_the_loop_gives_others_a_turn_while_delivering_a_large_batch() -> None:
    turns = 0
    consumer = FakeConsumer([batch("raw", 0, range(3 * YIELD_EVERY))])

    async def other() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    ticking = asyncio.ensure_future(other())
    await asyncio.sleep(0)
    before = turns
    await asyncio.wait_for(consumer.drain(), 5)
    ticking.cancel()
    assert len(consumer.delivered) == 3 * YIELD_EVERY
    assert turns - before >= 3


async def test_a_stopped_broker_ends_the_loop_quietly_only_when_the_app_stops(caplog: Any) -> None:
    class Failing(FakeConsumer):
        async def getmany(self, **options: Any) -> Any:
            raise ConnectionError("broker gone")
            yield  # pragma: no cover

    quiet = Failing([])
    quiet.transport.app.should_stop = True
    with caplog.at_level(logging.INFO):
        await asyncio.wait_for(quiet.drain(), 5)
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(Failing([]).drain(), 5)


def test_the_workers_transport_makes_its_consumer_with_this_drain_loop() -> None:
    made = batch_drain(AIOKafkaConsumer)
    assert issubclass(made, AIOKafkaConsumer) and issubclass(made, BatchDrainMixin)
    assert made._drain_messages is BatchDrainMixin._drain_messages
    assert batch_drain(AIOKafkaConsumer) is made  # one class, however many apps
