"""Faust's Kafka consumer on the agents' own event loop, instead of in a thread of its own.

faust-streaming 0.15.x's aiokafka driver always runs its ``AIOKafkaConsumer`` in a
:class:`~mode.threads.ServiceThread` with a second event loop, and every call into it — each
``getmany``, each commit, each position — is a hand-over between the two threads: a
``call_soon_threadsafe`` into the consumer's loop, a queue and a worker task there, the call, and a
``call_soon_threadsafe`` back with the result. Records that arrive one at a time pay those hand-overs
(and the wake-ups and GIL switches behind them) per record and hop: at 100 records/s offered they
were most of the worker's CPU (BENCHMARKS.md, "The fixed cost of a batch").
:class:`InlineConsumerThread` keeps Faust's consumer service and its aiokafka consumer exactly as they
are, but starts it on the app's loop and makes each call a plain ``await``; the rebalance callbacks
run directly too. Nothing else changes: the same consumer, the same group protocol, the same fetches,
the agents' explicit commits (``streams.worker.commit``) and gap checks (``streams.worker.loop``).

Faust/mode internals used here, and why (pinned faust-streaming 0.15.x, mode-streaming): the
``ServiceThread`` life cycle (``start`` spawns a thread that runs ``_default_start`` then waits for
``_stopped``, then ``_shutdown_thread``), replaced by the same steps on the calling loop;
``QueueServiceThread.call_thread`` / ``cast_thread`` (the hand-over), replaced by a direct call;
``ThreadDelegateConsumer._new_consumer_thread`` (which class the consumer's "thread" is).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any

from mode.utils.futures import maybe_async

from streams.worker.runner import retrieved


class InlineConsumerThread:
    """Mixed in before Faust's ``AIOKafkaConsumerThread``: the same service, run on the caller's loop."""

    def __init__(self, consumer: Any, **kwargs: Any) -> None:
        loop = kwargs.get("loop") or asyncio.get_event_loop_policy().get_event_loop()
        kwargs["loop"] = loop
        kwargs["thread_loop"] = loop  # one loop: ServiceThread keeps it open on stop (not its own)
        super().__init__(consumer, **kwargs)  # type: ignore[call-arg]

    async def start(self) -> None:  # pragma: no cover - run by Faust
        """What the thread would run, up to its wait: start the service (its aiokafka consumer)."""
        this: Any = self
        this._thread_started.set()
        await this._default_start()

    async def stop(self) -> None:  # pragma: no cover - run by Faust
        """What ``Service.stop`` and the thread's shutdown do, in order, on this loop."""
        this: Any = self
        if not this._started.is_set() or this._stopped.is_set():
            return
        this._stopped.set()
        await this.on_stop()
        await this.on_thread_stop()  # the method queue, then the aiokafka consumer
        await this._default_stop_children()
        this._shutdown.set()
        await this._default_stop_futures()
        await this._default_stop_exit_stacks()
        await this.on_shutdown()

    async def call_thread(self, fun: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Any:
        """The call itself, awaited here (no queue, no hand-over)."""
        return await maybe_async(fun(*args, **kwargs))

    async def cast_thread(self, fun: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> None:
        """Run ``fun`` in the background on this loop, as the thread's queue would."""
        task = asyncio.ensure_future(maybe_async(fun(*args, **kwargs)))
        task.add_done_callback(retrieved)

    async def on_partitions_revoked(self, revoked: Any) -> None:  # pragma: no cover - run by aiokafka
        """Faust's revocation, awaited directly (the thread would queue it to the main loop)."""
        this: Any = self
        await this.consumer.on_partitions_revoked(revoked)

    async def on_partitions_assigned(self, assigned: Any, generation_id: int = 0) -> None:  # pragma: no cover
        """Faust's assignment, awaited directly (the thread would queue it to the main loop)."""
        this: Any = self
        await this.consumer.on_partitions_assigned(assigned, generation_id)


@functools.cache
def inline_consumer(consumer_class: type) -> type:
    """``consumer_class`` (Faust's aiokafka ``Consumer``) whose consumer "thread" runs on the app's loop."""
    from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

    thread_class = type(
        "InlineAIOKafkaConsumerThread",
        (InlineConsumerThread, AIOKafkaConsumerThread),
        {"__module__": __name__},
    )

    def _new_consumer_thread(self: Any) -> Any:
        return thread_class(self, loop=self.loop, beacon=self.beacon)

    namespace = {"_new_consumer_thread": _new_consumer_thread, "__module__": __name__}
    return type(f"Inline{consumer_class.__name__}", (consumer_class,), namespace)
