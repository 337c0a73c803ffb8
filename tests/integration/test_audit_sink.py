"""The audit sink on the real broker: one row per event, replays add none, a SIGKILL loses nothing,
and ``inspect`` shows a run's whole trail (with the Redis ledger) — each test on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from aiokafka import AIOKafkaConsumer
from pydantic import SecretStr

from models.audit import AuditRecord
from models.ledger import LedgerEntry
from models.vocab import Station
from streams import codec
from streams.audit.factory import store_from_settings
from streams.audit.sink import SinkStats, run_sink
from streams.envelope import event_id
from streams.observe.metrics import AuditSinkMetrics
from streams.settings import Settings
from tests.integration.audit_db import (
    fresh_database,
    settings_fixture,  # noqa: F401 - the settings fixture
    sink_settings,
)
from tests.integration.helpers import CLI, CuttableProxy, publish, redis_store
from tests.streams.audit_records import chain, guard
from tests.streams.conftest import origin_of

pytestmark = pytest.mark.timeout(120)


def many_runs(runs: int, calls: int) -> list[AuditRecord]:
    """``runs`` runs of ``calls`` tool calls each (three records a call) and one rejected draft a run."""
    out: list[AuditRecord] = []
    for r in range(runs):
        for c in range(calls):
            out += chain(f"run-{r}", f"call_{c}", r * calls + c)
        out.append(guard(f"run-{r}", r, 1, "REJECT", ["CITATION_NOT_FOUND"], draft_id=f"d-{r}"))
    return out


def values(records: list[AuditRecord]) -> list[bytes]:
    return [codec.dumps(r) for r in records]


def sink_env(settings: Settings, redis_url: str = "") -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        EC_KAFKA_BOOTSTRAP=settings.kafka_bootstrap,
        EC_TOPIC_PREFIX=settings.topic_prefix,
        EC_APP_ID=settings.app_id,
        EC_AUDIT_DB=settings.audit_db,
        EC_AUDIT_DSN=settings.audit_dsn.get_secret_value() if settings.audit_dsn else "",
        EC_NS=settings.ns,
        EC_TOPIC_PARTITIONS=str(settings.topic_partitions),
        EC_BROKER_SESSION_TIMEOUT_SECONDS="6",
        EC_BROKER_HEARTBEAT_SECONDS="1",
        EC_BROKER_REBALANCE_TIMEOUT_SECONDS="10",
        EC_AUDIT_SINK_PORT="0",  # no probe server: two sinks of tests run in parallel would fight for 9108
        COLUMNS="200",
    )
    if redis_url:
        env["EC_REDIS_URL"] = redis_url
    return env


def stored_ids(settings: Settings) -> set[str]:
    """The event ids in the test's audit database (none while the sink has not created its tables)."""
    if settings.audit_dsn is None and not Path(settings.audit_db).is_file():
        return set()
    try:
        store = store_from_settings(settings, readonly=True)
    except Exception:  # noqa: BLE001 - the sink may not have created the tables yet
        return set()
    try:
        return store.event_ids()
    finally:
        store.close()


async def wait_until(condition: Callable[[], bool], seconds: float, poll: float = 0.2) -> bool:
    """Poll ``condition`` until it holds (True) or ``seconds`` pass (False)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(poll)
    return True


async def test_each_event_is_stored_once_and_a_replay_adds_no_rows(settings: Settings) -> None:
    records = many_runs(runs=6, calls=4)  # 6 × (4 × 3 + 1) = 78 events
    topic = settings.topic("audit")
    await publish(settings.kafka_bootstrap, topic, [*values(records), b"not an audit record"])

    first = await run_sink(settings, once=True, handle_signals=False, batch_size=20)
    assert (first.read, first.inserted, first.malformed) == (79, 78, 1)
    assert first.counts == {"events": 78, "tool_calls": 24, "verdicts": 6}

    await publish(settings.kafka_bootstrap, topic, values(records))  # a replay of the whole topic
    second = await run_sink(settings, once=True, handle_signals=False)
    # Offsets were committed after the first run: only the replayed records are read, and dropped.
    assert (second.read, second.inserted, second.malformed) == (78, 0, 0)
    assert second.counts == first.counts


async def test_the_lag_gauge_counts_down_to_zero_as_batches_are_stored(settings: Settings) -> None:
    records = many_runs(runs=4, calls=4)  # 52 events
    await publish(settings.kafka_bootstrap, settings.topic("audit"), values(records))
    seen: list[dict[tuple[str, int], int]] = []

    class Recording(AuditSinkMetrics):
        def set_lag(self, lags: Mapping[tuple[str, int], int]) -> None:
            seen.append(dict(lags))
            super().set_lag(lags)

    metrics = Recording()
    await run_sink(settings, once=True, handle_signals=False, batch_size=10, stats=SinkStats(metrics=metrics))
    audit = [lags for lags in seen if any(topic == settings.topic("audit") for topic, _ in lags)]
    assert audit, f"the lag gauge was never set for the audit topic: {seen}"
    first = sum(lag for (topic, _), lag in audit[0].items() if topic == settings.topic("audit"))
    assert 0 < first < len(records)  # set after each batch of 10: some stored, the rest counted
    assert all(lag == 0 for lag in seen[-1].values())
    scraped = metrics.render().decode()
    assert f'evidence_chain_consumer_lag{{partition="0",topic="{settings.topic("audit")}"}} 0.0' in scraped


async def test_a_crash_between_the_database_and_the_offset_commit_only_replays(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = many_runs(runs=3, calls=3)  # 30 events
    expected = {r["event_id"] for r in records}
    await publish(settings.kafka_bootstrap, settings.topic("audit"), values(records))

    class Crash(Exception):
        pass

    async def crash(self: AIOKafkaConsumer, offsets: object = None) -> None:
        raise Crash("the process died after the database commit, before the offset commit")

    monkeypatch.setattr(AIOKafkaConsumer, "commit", crash)
    with pytest.raises(Crash):
        await run_sink(settings, once=True, handle_signals=False)
    before = stored_ids(settings)
    assert before and before <= expected  # the first batch is stored: the database commits first
    monkeypatch.undo()

    again = await run_sink(settings, once=True, handle_signals=False)
    assert again.read == len(records)  # no offset was committed: everything is read again
    assert again.inserted == len(expected - before)  # and what was stored is dropped
    assert stored_ids(settings) == expected


async def test_a_stop_event_ends_the_sink_after_its_batch(settings: Settings) -> None:
    records = many_runs(runs=2, calls=2)
    await publish(settings.kafka_bootstrap, settings.topic("audit"), values(records))
    stop = asyncio.Event()
    task = asyncio.create_task(run_sink(settings, stop, handle_signals=False))
    await wait_until(lambda: len(stored_ids(settings)) == len(records), 30)
    stop.set()
    stats = await asyncio.wait_for(task, 15)
    assert stats.inserted == len(records) == stats.counts["events"]


async def test_sigkill_mid_stream_loses_nothing_and_duplicates_nothing(
    settings: Settings, tmp_path: Path
) -> None:
    records = many_runs(runs=100, calls=10)  # 3100 events
    expected = {r["event_id"] for r in records}
    chunks = [records[i : i + 310] for i in range(0, len(records), 310)]
    topic, env = settings.topic("audit"), sink_env(settings)
    log_path = tmp_path / "sink.log"

    def start() -> subprocess.Popen[bytes]:
        with log_path.open("ab") as log:
            return subprocess.Popen(  # noqa: S603 - our own console script
                [CLI, "audit-sink", "--batch-size", "50"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    async def publish_slowly() -> None:
        for chunk in chunks:
            await publish(settings.kafka_bootstrap, topic, values(chunk))
            await asyncio.sleep(0.3)
        await publish(settings.kafka_bootstrap, topic, values(chunks[0]))  # and a replay

    sink = start()
    publisher = asyncio.create_task(publish_slowly())
    try:
        await wait_until(lambda: len(stored_ids(settings)) >= 600, 30, poll=0.05)
        assert 0 < len(stored_ids(settings)) < len(expected), log_path.read_text()
        os.killpg(sink.pid, signal.SIGKILL)
        sink.wait(10)
        sink = start()
        await publisher
        await wait_until(lambda: stored_ids(settings) == expected, 45)
        os.killpg(sink.pid, signal.SIGTERM)
        assert sink.wait(20) == 0, log_path.read_text()
    finally:
        publisher.cancel()
        if sink.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(sink.pid, signal.SIGKILL)
            sink.wait(10)
    store = store_from_settings(settings, readonly=True)
    try:
        assert store.event_ids() == expected  # nothing missing, nothing foreign
        assert store.counts() == {"events": len(expected), "tool_calls": 1000, "verdicts": 100}
    finally:
        store.close()


async def test_inspect_shows_every_tool_call_and_draft_of_a_run(settings: Settings, redis_url: str) -> None:
    prefix, run = settings.topic_prefix, "run-inspect"
    records = [
        *chain(run, "call_0", 100, candidates=4, truncated=True),
        *chain(run, "call_1", 101),
        *chain(run, "call_2", 102),
        guard(run, 100, 1, "REJECT", ["CITATION_NOT_FOUND", "LIMITATIONS_MISSING"], draft_id="d-100"),
        guard(run, 101, 2, "PASS", [], draft_id="d-101"),
        *many_runs(runs=2, calls=2),  # other runs in the same database (offsets 0-3)
    ]
    await publish(settings.kafka_bootstrap, settings.topic("audit"), values(records))
    env = sink_env(settings, redis_url)
    drained = await asyncio.to_thread(
        subprocess.run, [CLI, "audit-sink", "--once"], env=env, capture_output=True, timeout=60, check=False
    )
    assert drained.returncode == 0, drained.stderr.decode()
    assert b"25 new events" in drained.stdout

    # What the agent was shown, for two of the three tool calls, in this test's own ledger namespace.
    ledger = redis_store(redis_url, settings.ns, ttl_seconds=600)
    entries: list[LedgerEntry] = [  # type: ignore[misc]
        {
            "event_id": event_id(Station.LEDGER, origin_of(f"{prefix}raw-hits", 0, 100 + i, None)),
            "run_id": run,
            "tool_call_id": f"call_{i}",
            "status": "READY",
            "evidence_status": "EVIDENCE_FOUND",
            "projection": "{}",
            "projection_sha256": f"{100 + i:064x}",
            "origin": origin_of(f"{prefix}raw-hits", 0, 100 + i, None),
            "source_timestamp": None,
            "failure_reason": None,
            "written_at": None,
            "expires_at": None,
        }
        for i in (0, 1)
    ]
    try:
        await ledger.write_many(entries)
        shown = await asyncio.to_thread(
            subprocess.run,
            [CLI, "inspect", run, "--json"],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        table = await asyncio.to_thread(
            subprocess.run, [CLI, "inspect", run], env=env, capture_output=True, timeout=60, check=False
        )
    finally:
        keys = [k async for k in ledger.client.scan_iter(match=f"{settings.ns}:*")]
        if keys:
            await ledger.client.delete(*keys)
        await ledger.close()
    assert shown.returncode == 0, shown.stderr.decode()
    doc = codec.loads(shown.stdout)
    assert doc["run_id"] == run and doc["ledger_error"] is None
    calls = {c["tool_call_id"]: c for c in doc["tool_calls"]}
    assert sorted(calls) == ["call_0", "call_1", "call_2"]
    assert calls["call_0"]["candidate_count"] == 4 and calls["call_0"]["truncated"] is True
    assert calls["call_1"]["ledger_entry"]["projection_sha256"] == f"{101:064x}"
    assert calls["call_2"]["ledger_entry"] is None
    assert [(d["attempt"], d["verdict"], d["violation_codes"]) for d in doc["drafts"]] == [
        (1, "REJECT", ["CITATION_NOT_FOUND", "LIMITATIONS_MISSING"]),
        (2, "PASS", []),
    ]
    assert table.returncode == 0, table.stderr.decode()
    for text in (
        b"call_0",
        b"call_1",
        b"call_2",
        b"d-100",
        b"d-101",
        b"REJECT",
        b"READY/WRITTEN",
        b"0000000000",
    ):
        assert text in table.stdout

    unknown = await asyncio.to_thread(
        subprocess.run, [CLI, "inspect", "run-nobody"], env=env, capture_output=True, timeout=60, check=False
    )
    assert unknown.returncode == 1
    assert b"no audit records for run run-nobody; is the audit sink running" in unknown.stderr


async def test_inspect_without_redis_says_so_and_goes_on(settings: Settings) -> None:
    run = "run-no-redis"
    await publish(settings.kafka_bootstrap, settings.topic("audit"), values(chain(run, "call_0", 0)))
    await run_sink(settings, once=True, handle_signals=False)
    env = sink_env(settings, "redis://127.0.0.1:1/0")  # nothing listens on port 1
    shown = await asyncio.to_thread(
        subprocess.run, [CLI, "inspect", run, "--json"], env=env, capture_output=True, timeout=60, check=False
    )
    assert shown.returncode == 0, shown.stderr.decode()
    doc = codec.loads(shown.stdout)
    assert "could not be read" in doc["ledger_error"]
    assert [c["tool_call_id"] for c in doc["tool_calls"]] == ["call_0"]


async def test_a_postgresql_outage_holds_the_sink_and_loses_nothing(
    kafka_bootstrap: str, unique_prefix: str, tmp_path: Path, postgres_admin: str
) -> None:
    """The server is unreachable at start, then again mid-stream: the sink waits, reconnects, stores
    every event once, and commits no offset for a batch it has not stored."""
    records = many_runs(runs=20, calls=3)  # 200 events
    expected = {r["event_id"] for r in records}
    with fresh_database(postgres_admin) as dsn:
        parts = urlsplit(dsn)
        proxy = CuttableProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
        port = await proxy.start()
        await proxy.cut()  # down before the sink starts
        through = urlunsplit(
            (parts.scheme, f"{parts.username}:{parts.password}@127.0.0.1:{port}", parts.path, "", "")
        )
        stop = asyncio.Event()
        async with sink_settings(
            kafka_bootstrap, unique_prefix, tmp_path, through, retry_max_backoff_ms=500
        ) as settings:
            direct = settings.model_copy(update={"audit_dsn": SecretStr(dsn)})
            try:
                await publish(kafka_bootstrap, settings.topic("audit"), values(records[:100]))
                stats = SinkStats()
                task = asyncio.create_task(
                    run_sink(settings, stop, handle_signals=False, batch_size=25, stats=stats)
                )
                assert await wait_until(lambda: stats.holding, 15)  # waiting for the database, not crashed
                assert not task.done() and stored_ids(direct) == set()
                await proxy.restore()
                assert await wait_until(
                    lambda: stored_ids(direct) == {r["event_id"] for r in records[:100]}, 30
                )
                await proxy.cut()  # and again, mid-stream
                await publish(kafka_bootstrap, settings.topic("audit"), values(records[100:]))
                assert await wait_until(lambda: stats.holding, 15)
                await proxy.restore()
                assert await wait_until(lambda: stored_ids(direct) == expected, 30)
                stop.set()
                done = await asyncio.wait_for(task, 20)
                assert done.counts == {"events": len(expected), "tool_calls": 60, "verdicts": 20}
            finally:
                stop.set()
                await proxy.cut()
