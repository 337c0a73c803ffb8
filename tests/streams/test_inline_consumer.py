"""Faust's consumer on the agents' event loop (streams/worker/inline.py): no thread, no second loop,
each call into it awaited directly, by default; with ``EC_CONSUMER_THREAD=true`` Faust's own thread."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from streams.settings import Settings
from streams.worker.app import create_app
from streams.worker.inline import InlineConsumerThread


def ignore(exc: BaseException, where: str) -> None:
    raise AssertionError(f"no crash expected: {where}: {exc}")


async def test_by_default_the_consumer_runs_on_the_agents_loop_and_its_calls_are_direct() -> None:
    app = create_app(Settings(topic_prefix="inline-t.", app_id="inline-t"), on_crash=ignore)
    consumer: Any = app.consumer
    thread = consumer._thread  # noqa: SLF001
    assert isinstance(thread, InlineConsumerThread)
    # the logs of the classes made at run time name their modules (not ``abc``)
    assert (type(thread).__module__, type(consumer).__module__) == (
        "streams.worker.inline",
        "streams.worker.drain",
    )
    loop = asyncio.get_running_loop()
    assert thread.thread_loop is loop and thread.parent_loop is loop

    async def where(value: int) -> tuple[int, int, asyncio.AbstractEventLoop]:
        return value, threading.get_ident(), asyncio.get_running_loop()

    value, ident, ran_on = await thread.call_thread(where, 7)
    assert (value, ident, ran_on) == (7, threading.get_ident(), loop)  # Faust's queue would hand it over
    done = asyncio.Event()

    async def later() -> None:
        done.set()

    await thread.cast_thread(later)
    await asyncio.wait_for(done.wait(), 1.0)


async def test_with_consumer_thread_the_consumer_keeps_fausts_thread() -> None:
    app = create_app(
        Settings(topic_prefix="inline-f.", app_id="inline-f", consumer_thread=True), on_crash=ignore
    )
    thread: Any = app.consumer._thread  # noqa: SLF001
    assert not isinstance(thread, InlineConsumerThread)
    assert thread.thread_loop is not asyncio.get_running_loop()
    thread.thread_loop.close()
