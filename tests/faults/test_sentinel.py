"""The Redis primary SIGKILLed mid-stream under Sentinel (issue 22, item 3): Sentinel promotes the replica,
the worker follows it, and every entry whose ledger event was sent is on the new primary.

The worker runs with ``EC_REDIS_SENTINELS`` and ``EC_REDIS_DURABILITY=replica``: a batch is acknowledged
(its ledger events sent, its offsets committed) only after ``WAIT`` counted the replica, so what the
killed primary acknowledged is on the replica Sentinel promotes. The set is ``make up-sentinel``'s
(``deploy/local/sentinel.sh``), started here when it is down and left as it was found.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import SecretStr
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel

from streams import codec
from streams.ledger.redis import RedisLedgerStore
from streams.settings import Settings, parse_host_port
from tests.faults.invariants import check_invariants, rejected_inputs
from tests.faults.support import HookedWorker, Run, expected, fault_env, record_mix, wait_progress
from tests.services import REPO, FaultKafka

RECORDS = 600
CHUNK = 25
"""Records are published CHUNK at a time, 0.2 s apart, so the kill lands among arriving records."""


class SentinelSet:
    """``make up-sentinel``'s primary, replica and three sentinels, through the script a person uses."""

    STACK = REPO / "deploy" / "local" / "stack.sh"
    HOME = REPO / ".local" / "sentinel"
    NODES = (6380, 6381)
    SENTINELS = (("127.0.0.1", 26379), ("127.0.0.1", 26380), ("127.0.0.1", 26381))
    MASTER = "ec-ledger"

    @property
    def sentinels(self) -> str:
        return ",".join(f"{host}:{port}" for host, port in self.SENTINELS)

    def _stack(self, *args: str) -> None:
        done = subprocess.run(  # noqa: S603 - the project's own script
            [str(self.STACK), *args], capture_output=True, text=True, timeout=180, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"stack.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")

    def up(self) -> None:
        """Start what is down (a node back joins the current primary) and wait until all is linked."""
        self._stack("up-sentinel")

    def down(self) -> None:
        self._stack("down-sentinel")

    def pid(self, port: int) -> int | None:
        try:
            pid = int((self.HOME / f"node-{port}" / "redis.pid").read_text().strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    def running(self) -> bool:
        return any(self.pid(port) is not None for port in self.NODES)

    async def primary(self) -> int:
        """The port of the primary the sentinels name now."""
        sentinel = Sentinel(list(self.SENTINELS), sentinel_kwargs={"socket_timeout": 1.0})
        try:
            _, port = await sentinel.discover_master(self.MASTER)
        finally:
            await sentinel.aclose()
        return int(port)

    async def wait_primary_other_than(self, port: int, timeout_s: float = 60) -> int:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(MasterNotFoundError):
                now = await self.primary()
                if now != port:
                    return now
            await asyncio.sleep(0.1)
        raise AssertionError(f"Sentinel named no primary other than {port} within {timeout_s}s")

    def kill(self, port: int) -> None:
        """SIGKILL one node and wait until it is gone."""
        pid = self.pid(port)
        assert pid is not None, f"no Redis runs on {port}"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        raise RuntimeError(f"Redis on {port} (pid {pid}) outlived SIGKILL for 30 s")


@pytest.fixture(scope="module")
def sentinel_set() -> Iterator[SentinelSet]:
    """Started when down; stopped at the end if this module started it, else its killed node is back."""
    stack = SentinelSet()
    was_running = stack.running()
    stack.up()
    try:
        yield stack
    finally:
        if was_running:
            stack.up()
        else:
            stack.down()


@dataclass
class SentinelRun(Run):
    """A run whose Redis is the primary the sentinels name (``redis`` gives only the user)."""

    sentinels: str = ""

    @property
    def settings(self) -> Settings:
        return super().settings.model_copy(
            update={"redis_sentinels": tuple(parse_host_port(p) for p in self.sentinels.split(","))}
        )


def note(test: str, **figures: object) -> None:
    """What the test measured, for docs/RELIABILITY.md (printed; ``pytest -s`` shows it)."""
    print(f"[figures] {test}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))  # noqa: T201


async def trickle(run: Run, records: list[bytes]) -> None:
    for start in range(0, len(records), CHUNK):
        await run.publish("raw-hits", records[start : start + CHUNK])
        await asyncio.sleep(0.2)


async def on_primary(run: Run, port: int, keys: list[tuple[str, str]]) -> int:
    """How many of ``keys`` have an entry on the node at ``port``, asked directly (not via Sentinel)."""
    store = RedisLedgerStore.from_settings(
        run.settings.model_copy(
            update={"redis_sentinels": (), "redis_url": SecretStr(f"redis://127.0.0.1:{port}/0")}
        )
    )
    try:
        found = await store.read_many(keys)
    finally:
        await store.close()
    return sum(1 for lookup in found.values() if lookup.entry is not None)


def sent_keys(ledger: list[bytes]) -> list[tuple[str, str]]:
    return sorted({(e["run_id"], e["tool_call_id"]) for e in map(codec.loads, ledger)})


async def test_the_primary_sigkilled_mid_stream_fails_over_and_loses_no_acknowledged_entry(
    sentinel_set: SentinelSet, fault_kafka: FaultKafka, tmp_path: Path
) -> None:
    old = await sentinel_set.primary()
    run = SentinelRun(
        f"s-{uuid.uuid4().hex[:6]}-",
        fault_kafka.bootstrap,
        f"redis://127.0.0.1:{old}/0",
        sentinels=sentinel_set.sentinels,
    )
    records = record_mix(RECORDS, seed=29)
    want = expected(records, run.settings)
    keys = sorted(want.entries)
    await run.prepare()
    env = fault_env(
        run.prefix,
        run.kafka,
        run.redis,
        EC_REDIS_SENTINELS=sentinel_set.sentinels,
        EC_REDIS_DURABILITY="replica",
    )
    worker = HookedWorker(env, tmp_path / "worker.log").start()
    publishing = asyncio.create_task(trickle(run, records))
    try:
        await wait_progress(run, keys, 0.25, worker)
        killed_at = time.monotonic()
        sentinel_set.kill(old)
        new = await sentinel_set.wait_primary_other_than(old)
        promoted_s = time.monotonic() - killed_at
        # Before the old primary is back: every entry whose ledger event was sent is on the new one.
        sent = sent_keys(await run.read("ledger", until=lambda v: True, settle=1.0))
        assert sent, "no ledger event before the kill: it was not mid-stream"
        assert await on_primary(run, new, sent) == len(sent), "an acknowledged entry was lost in the failover"
        # WAIT needs a replica: the killed node comes back as the new primary's.
        await asyncio.to_thread(sentinel_set.up)
        back_s = time.monotonic() - killed_at
        await publishing
        await run.wait_entries(keys, [worker])
        recovered_s = time.monotonic() - killed_at
        found = await run.check(want)  # the dead letters are exactly the hostile records': none for Redis
        assert await on_primary(run, new, keys) == len(keys)
        await check_invariants(
            run.settings, valid_inputs=want.entries, rejected_inputs=rejected_inputs(records, run.settings)
        )
        assert worker.running and worker.exits == [], worker.log_tail()
        note(
            "redis-failover",
            records=len(records),
            valid=len(keys),
            sent_before_kill=len(sent),
            old_primary=old,
            new_primary=new,
            seconds_to_promotion=round(promoted_s, 1),
            seconds_to_replica_back=round(back_s, 1),
            seconds_to_last_entry=round(recovered_s, 1),
            ledger_events=len(found["ledger"]),
            lost=0,
        )
    finally:
        publishing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await publishing
        worker.stop()
