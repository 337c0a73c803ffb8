"""``evidence-chain worker`` with the fault suite's test hooks (``python -m tests.faults.hooked_worker``).

- ``EC_TEST_RAISE_ON=<text>``: the postprocess station raises for every record whose bytes hold the
  text (an unexpected exception in a station: that record's INTERNAL_ERROR dead letter).
- ``EC_TEST_STALL_ON=<text>``: the project agent's batch holding the text never finishes (a wedged
  await: the event loop, the web server included, keeps running).
- ``EC_TEST_BATCH_ERROR_FILE=<path>``: while that file exists, the first postprocess batch holding
  ``EC_TEST_BATCH_ERROR_ON`` fails outside any record (an unexpected batch-level error); the file is
  removed first, so the restarted worker processes the batch.
- ``EC_TEST_BATCH_DELAY=<seconds>``: every postprocess batch waits that long before it starts (a slow
  worker, so a test can be sure work is still in flight when it breaks something).
- ``EC_TEST_GATE_DIR=<dir>`` and ``EC_TEST_GATE_ON=<text>``: the first ledger batch holding the text
  writes ``<dir>/waiting`` and waits for ``<dir>/go`` before it starts (before any Redis write), so
  a test can break Redis while a batch is provably in flight, then let it go.

Nothing here is importable from the product: the hooks patch it from outside, in this process only.
They patch ``BatchRunner.start``, the step every batch goes through (``run`` and the agent loop's
pipelined ``begin`` both call it).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from models.vocab import Station
from streams import pipeline
from streams.cli import main
from streams.worker.runner import BatchRunner


def _install_stall() -> None:
    marker = os.environ.get("EC_TEST_STALL_ON", "").encode()
    if not marker:
        return
    start = BatchRunner.start

    async def wedged(self: BatchRunner, records: Any) -> Any:
        if self.station is Station.PROJECT and any(marker in r.value for r in records):
            await asyncio.Event().wait()  # never set
        return await start(self, records)

    BatchRunner.start = wedged  # type: ignore[method-assign]


def _install_delay() -> None:
    delay = float(os.environ.get("EC_TEST_BATCH_DELAY", "0") or 0)
    if delay <= 0:
        return
    start = BatchRunner.start

    async def slow(self: BatchRunner, records: Any) -> Any:
        if self.station is Station.POSTPROCESS:
            await asyncio.sleep(delay)
        return await start(self, records)

    BatchRunner.start = slow  # type: ignore[method-assign]


def _install_gate() -> None:
    folder, marker = os.environ.get("EC_TEST_GATE_DIR"), os.environ.get("EC_TEST_GATE_ON", "").encode()
    if not folder or not marker:
        return
    start = BatchRunner.start
    waiting, go = Path(folder) / "waiting", Path(folder) / "go"

    async def gated(self: BatchRunner, records: Any) -> Any:
        if (
            self.station is Station.LEDGER
            and not waiting.exists()
            and any(marker in r.value for r in records)
        ):
            waiting.write_text(f"{len(records)} records\n")
            while not go.exists():  # noqa: ASYNC110 - the gate is a file the test (another process) makes
                await asyncio.sleep(0.05)
        return await start(self, records)

    BatchRunner.start = gated  # type: ignore[method-assign]


def _install() -> None:
    _install_stall()
    _install_delay()
    _install_gate()
    marker = os.environ.get("EC_TEST_RAISE_ON", "").encode()
    if marker:
        original = pipeline.STATIONS[Station.POSTPROCESS]

        def raising(record: Any, settings: Any) -> Any:
            if marker in record.value:
                raise RuntimeError("test hook: the station raised for this record")
            return original(record, settings)

        pipeline.STATIONS[Station.POSTPROCESS] = raising
    flag = os.environ.get("EC_TEST_BATCH_ERROR_FILE")
    trigger = os.environ.get("EC_TEST_BATCH_ERROR_ON", "").encode()
    if flag and trigger:
        start = BatchRunner.start

        async def failing(self: BatchRunner, records: Any) -> Any:
            if (
                self.station is Station.POSTPROCESS
                and os.path.exists(flag)  # noqa: ASYNC240 - a test hook, once per batch
                and any(trigger in r.value for r in records)
            ):
                os.remove(flag)
                raise RuntimeError("test hook: an unexpected batch-level error")
            return await start(self, records)

        BatchRunner.start = failing  # type: ignore[method-assign]


if __name__ == "__main__":
    _install()
    sys.exit(main(["worker", "--loglevel", "info"]))
