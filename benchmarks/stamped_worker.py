"""The worker, stamping each stage of its records' way into a file (``benchmarks/stages.py`` reads it).

    EC_STAMPS=stamps.log .venv/bin/python benchmarks/stamped_worker.py worker --loglevel warning

One line per event, ``<epoch ms> <kind> <fields...>``: ``taken`` (an agent took a batch: its station,
records, and the offsets per partition), ``begun`` (its station ran, its Redis effects are durable and
its messages are handed to the producer), ``acked`` (the broker acknowledged them), ``redis`` (a ledger
write and how long it took), ``commit`` (an agent's commit and how long it took), ``fetch`` (a fetch
request and how long it took), ``metadata`` (a client's metadata refresh: how many topics it asked
for, or all, and how long it took), ``stall`` (the event loop woke a 5 ms sleeper more than 15 ms late),
``gc`` (a garbage collection of more than 2 ms: its generation and duration). It wraps the worker's own
methods and changes nothing they do; it is a benchmark tool, not the product.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiokafka.client as kafka_client  # noqa: E402
import aiokafka.consumer.fetcher as fetcher  # noqa: E402

import streams.ledger.redis as ledger_redis  # noqa: E402
import streams.observe.metrics as metrics  # noqa: E402
import streams.worker.commit as commit  # noqa: E402
import streams.worker.loop as loop  # noqa: E402
from streams.cli import main  # noqa: E402

STALL_PROBE_SECONDS = 0.005
STALL_MS = 15.0
GC_MS = 2.0
OUT = open(os.environ.get("EC_STAMPS", "stamps.log"), "w", buffering=1 << 16)  # noqa: SIM115 - the process's


def now() -> float:
    return time.time() * 1000


def stamp(*fields: object) -> None:
    OUT.write(f"{now():.1f} " + " ".join(map(str, fields)) + "\n")


def _wrap(cls: Any, name: str, wrapper: Any) -> None:
    original = getattr(cls, name)
    setattr(cls, name, wrapper(original))


def _taken(original: Any) -> Any:
    async def begin(self: Any, events: Any) -> Any:
        offsets: dict[int, list[int]] = defaultdict(list)
        for event in events:
            offsets[event.message.partition].append(event.message.offset)
        spans = ",".join(f"{p}:{min(o)}-{max(o)}" for p, o in sorted(offsets.items()))
        stamp("taken", self.station, len(events), spans)
        taken = await original(self, events)
        stamp("begun", self.station, len(events), spans)
        return taken

    return begin


def _acked(original: Any) -> Any:
    async def finish(self: Any, previous: Any, taken: Any) -> None:
        await original(self, previous, taken)
        stamp("acked", self.station, len(taken.records))

    return finish


def _timed(kind: str, original: Any, describe: Any) -> Any:
    async def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = now()
        result = await original(self, *args, **kwargs)
        stamp(kind, describe(self, args, result), f"{now() - started:.1f}ms")
        return result

    return timed


async def _stalls() -> None:
    while True:
        started = time.monotonic()
        await asyncio.sleep(STALL_PROBE_SECONDS)
        late = (time.monotonic() - started - STALL_PROBE_SECONDS) * 1000
        if late > STALL_MS:
            stamp("stall", f"{late:.1f}ms")


def _with_stalls(original: Any) -> Any:
    async def watch_loop(self: Any, *args: Any, **kwargs: Any) -> None:
        probe = asyncio.ensure_future(_stalls())
        try:
            await original(self, *args, **kwargs)
        finally:
            probe.cancel()

    return watch_loop


_gc_started = [0.0]


def _gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    elif (spent := (time.perf_counter() - _gc_started[0]) * 1000) > GC_MS:
        stamp("gc", info.get("generation"), f"{spent:.1f}ms")


gc.callbacks.append(_gc)
_wrap(loop.AgentLoop, "begin", _taken)
_wrap(loop.AgentLoop, "_finish", _acked)
_wrap(
    ledger_redis.RedisLedgerStore,
    "write_many",
    lambda f: _timed("redis", f, lambda self, args, result: len(args[0])),
)
_wrap(commit.Committer, "commit_now", lambda f: _timed("commit", f, lambda self, args, result: self.name))
_wrap(
    fetcher.Fetcher,
    "_proc_fetch_request",
    lambda f: _timed("fetch", f, lambda self, args, result: "records" if result else "none"),
)
_wrap(
    kafka_client.AIOKafkaClient,
    "_metadata_update",
    lambda f: _timed("metadata", f, lambda self, args, result: len(args[1]) if args[1] else "all"),
)
_wrap(metrics.WorkerMetrics, "watch_loop", _with_stalls)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
