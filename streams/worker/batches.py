"""An agent's channel as batches: whatever waits, taken at once, each event as the stations' Record.

Faust internal used here, and why (pinned faust-streaming 0.15.x): ``stream.channel.queue``, the
agent's buffer of events. Taking from it directly gives batches of whatever is waiting without
Faust's per-event stream machinery and without waiting to fill a batch (``take_events`` waits
``within`` even when records are there).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from streams.messages import Record


def to_record(event: Any) -> Record:
    """A Faust event as the stations' :class:`Record` (timestamp in epoch ms)."""
    message = event.message
    timestamp = int(round(message.timestamp * 1000)) if message.timestamp else None
    value = message.value if isinstance(message.value, bytes) else bytes(message.value or b"")
    headers = tuple((k, v) for k, v in (message.headers or ()) if isinstance(v, bytes))
    return Record(message.topic, message.partition, message.offset, timestamp, message.key, value, headers)


async def batches(
    stream: Any,
    max_records: int,
    on_wait: Callable[[bool], None] | None = None,
    settle: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[list[Any]]:
    """Batches of the events waiting in an agent's channel: wait only when there is nothing.

    The first event is awaited; then everything already buffered, up to ``max_records``, joins it.
    Faust ends a channel on shutdown by throwing ``StopAsyncIteration`` into its queue.
    ``on_wait(True)`` is called before waiting on an empty channel, ``on_wait(False)`` after.
    ``settle()``, when given, is awaited after the first event whenever less than a full batch is
    waiting: the caller's chance to let more arrive while it has work in flight anyway.
    """
    queue = stream.channel.queue
    while True:
        try:
            if on_wait is not None and queue.empty():
                on_wait(True)
                events = [await queue.get()]
                on_wait(False)
            else:
                events = [await queue.get()]
        except StopAsyncIteration:
            return
        if settle is not None and queue.qsize() + 1 < max_records:
            await settle()
        while len(events) < max_records and not queue.empty():
            events.append(queue.get_nowait())
        yield events
