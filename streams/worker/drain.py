"""Faust's consumer, handing each fetched batch to the agents in one step instead of one record at a time.

faust-streaming 0.15.x's ``Consumer._drain_messages`` delivers every fetched record through
``Service.wait_first(callback(message), suspend_flow.wait())``: four tasks created, an
``asyncio.wait`` and three cancellations **per record**, each needing its own turns of the event
loop. Measured on 20,000 preloaded records (BENCHMARKS.md, "Why CPU per record grows"): the agents
took batches of 2.3 records on average with thousands waiting, spent a fifth of their time waiting
for records, and the worker used 2.2 ms of CPU per record where the same three agents alone used
0.7. :class:`BatchDrainConsumer` races each fetched *batch* against a suspended flow instead: one
``wait_first`` per ``getmany``, the records delivered one after the other inside it.

What is kept, line for line with Faust's loop: records below the read offset are dropped; Faust's
gap bookkeeping and ``broker_commit_every`` run as before; the read offset moves only past a record
that was delivered; a suspended flow (a rebalance) abandons the records not yet delivered (they are
read again from the committed offsets, as Faust's own loop leaves them); the loop yields to others
every ``YIELD_EVERY`` records. Safety never rests on this loop: the agents check gaps and commit
explicitly (``streams.worker.loop``, ``streams.worker.commit``).

Faust internals used here, and why (pinned faust-streaming 0.15.x): ``Consumer._drain_messages``
(replaced), ``_read_offset``, ``_add_gap``, ``_n_acked``, ``_commit_every``, ``diag`` flags and
``Transport.Consumer`` (the class the transport creates its consumer from).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

from faust.transport.consumer import CONSUMER_FETCHING
from faust.types import TP
from mode import Service, ServiceT

YIELD_EVERY = 100
"""Records delivered between two turns given to the rest of the event loop (Faust's own figure)."""


class BatchDrainMixin:
    """Replaces Faust's per-record drain loop with one that races each fetched batch once."""

    async def _drain_messages(self, fetcher: ServiceT) -> None:  # pragma: no cover - run by Faust
        consumer: Any = self
        getmany = consumer.getmany
        consumer_should_stop = consumer._stopped.is_set
        fetcher_should_stop = cast(Service, fetcher)._stopped.is_set
        set_flag, unset_flag = consumer.diag.set_flag, consumer.diag.unset_flag
        try:
            while not (consumer_should_stop() or fetcher_should_stop()):
                set_flag(CONSUMER_FETCHING)
                fetched = cast(AsyncIterator[tuple[TP, Any]], getmany(timeout=1.0))
                await consumer.sleep(0)  # Faust's: getmany may return at once, again and again
                if not consumer.should_stop:
                    batch = [item async for item in fetched]  # fetched already: no waiting inside
                    if batch:
                        await consumer.wait_first(self._deliver(batch), consumer.suspend_flow.wait())
                unset_flag(CONSUMER_FETCHING)
        except consumer.consumer_stopped_errors:
            if consumer.transport.app.should_stop:
                consumer.log.info("Broker stopped consumer, shutting down...")
                return
            raise
        except asyncio.CancelledError:
            if consumer.transport.app.should_stop:
                consumer.log.info("Consumer shutting down for user cancel.")
                return
            raise
        except Exception:
            consumer.log.exception("Drain messages raised")
            raise
        finally:
            unset_flag(CONSUMER_FETCHING)

    async def _deliver(self, batch: Sequence[tuple[TP, Any]]) -> None:
        """Hand ``batch`` to the conductor, record by record, as Faust's loop does for each one."""
        consumer: Any = self
        callback = consumer.callback
        read_offset = consumer._read_offset
        commit_every = consumer._commit_every
        acks_enabled_for = consumer.app.topics.acks_enabled_for
        for n, (tp, message) in enumerate(batch, 1):
            if n % YIELD_EVERY == 0:
                await asyncio.sleep(0)
            offset = message.offset
            r_offset = read_offset.get(tp)
            if r_offset is not None and offset < r_offset:
                consumer.log.dev("DROPPED MESSAGE ROFF %r: k=%r v=%r", offset, message.key, message.value)
                continue
            gap = offset - (r_offset or 0)
            if gap > 1 and r_offset and acks_enabled_for(message.topic):
                await consumer._add_gap(tp, r_offset + 1, offset)
            if commit_every is not None and consumer._n_acked >= commit_every:
                consumer._n_acked = 0
                await consumer.commit()
            await callback(message)
            read_offset[tp] = offset


@functools.cache
def batch_drain(consumer_class: type) -> type:
    """``consumer_class`` with :class:`BatchDrainMixin`'s drain loop (the class is made once per class)."""
    return type(
        f"BatchDrain{consumer_class.__name__}", (BatchDrainMixin, consumer_class), {"__module__": __name__}
    )
