"""The Faust edge on Faust's own types: batches from a real channel of real ``Event``s, the gap check,
the station, explicit commits and the crash-only exit; and ``create_app`` composing the app."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import faust
import pytest

from models.vocab import Station
from streams.errors import ConfigurationError, HoldExpired, KafkaUnavailable, RecordsSkipped
from streams.settings import Settings, load_settings
from streams.worker.app import create_app
from streams.worker.batches import batches
from streams.worker.drain import BatchDrainMixin
from tests.streams.conftest import FakeSink
from tests.streams.loop_fakes import RAW, TOPIC, FakeProbe, Loop, event

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def app() -> Any:
    return faust.App("agent-loop-test", broker="memory://", value_serializer="raw", key_serializer="raw")


async def test_a_batch_is_what_is_waiting_no_more_no_waiting(app: Any) -> None:
    stream = app.stream(app.channel())
    for offset in range(5):
        stream.channel.queue.put_nowait(event(app, offset))
    got = batches(stream, 3)
    first = await asyncio.wait_for(got.__anext__(), 1)
    second = await asyncio.wait_for(got.__anext__(), 1)
    assert [e.message.offset for e in first] == [0, 1, 2]
    assert [e.message.offset for e in second] == [3, 4]  # not held back to fill a batch of 3
    waiting = asyncio.ensure_future(got.__anext__())
    await asyncio.sleep(0.05)
    assert not waiting.done()  # nothing there: it waits for the first
    stream.channel.queue.put_nowait(event(app, 5))
    assert [e.message.offset for e in await asyncio.wait_for(waiting, 1)] == [5]


async def test_a_thin_batch_settles_first_so_records_arriving_meanwhile_join_it(app: Any) -> None:
    stream = app.stream(app.channel())
    queue = stream.channel.queue
    settled: list[int] = []

    async def settle() -> None:  # the loop's wait for its batch in flight; records arrive meanwhile
        settled.append(queue.qsize())
        for offset in range(1, 4):
            queue.put_nowait(event(app, offset))

    queue.put_nowait(event(app, 0))
    got = batches(stream, 10, settle=settle)
    assert [e.message.offset for e in await asyncio.wait_for(got.__anext__(), 1)] == [0, 1, 2, 3]
    assert settled == [0]


async def test_a_full_batch_waiting_is_taken_without_settling(app: Any) -> None:
    stream = app.stream(app.channel())
    settled: list[int] = []

    async def settle() -> None:
        settled.append(1)

    for offset in range(4):
        stream.channel.queue.put_nowait(event(app, offset))
    got = batches(stream, 3, settle=settle)
    assert [e.message.offset for e in await asyncio.wait_for(got.__anext__(), 1)] == [0, 1, 2]
    assert settled == []  # three were there: no wait
    assert [e.message.offset for e in await asyncio.wait_for(got.__anext__(), 1)] == [3]
    assert settled == [1]  # one alone: the loop may let more come


async def test_settle_waits_for_the_oldest_batch_in_flight_and_no_longer(app: Any) -> None:
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 0}))
    loop = fixture.loop
    await asyncio.wait_for(loop.settle(), 0.01)  # nothing in flight: no wait at all
    head: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    loop._in_flight.append(head)
    settling = asyncio.ensure_future(loop.settle())
    await asyncio.sleep(0.01)
    assert not settling.done()  # the head awaits its acks: the next batch may grow meanwhile
    head.set_result(None)
    await asyncio.wait_for(settling, 0.5)
    loop._in_flight.append(asyncio.get_running_loop().create_future())  # acks that never come
    started = asyncio.get_running_loop().time()
    await asyncio.wait_for(loop.settle(), 2)
    assert asyncio.get_running_loop().time() - started < 1  # bounded by SETTLE_SECONDS


async def test_shutdown_ends_the_batches(app: Any) -> None:
    stream = app.stream(app.channel())
    stream.channel.queue._throw(StopAsyncIteration())  # what Faust does to a channel on shutdown
    assert [b async for b in batches(stream, 10)] == []


async def test_a_processed_batch_is_committed_one_past_its_last_record(app: Any) -> None:
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 10}))
    await fixture.loop.process([event(app, 10, RAW[0]), event(app, 11, RAW[1])])
    assert len(fixture.sink.on("t.postprocessed")) == 2
    assert await fixture.loop.committer.commit_now() is True
    assert fixture.commits == [{(TOPIC, 0): 12}]
    assert fixture.crashes == []


async def test_faust_gap_of_one_cannot_be_committed_here(app: Any) -> None:
    """Committed 10, record 10 never delivered, 11 delivered (Faust would commit 12): the broker
    holds 10, so the worker exits without processing or committing anything."""
    probe = FakeProbe({(TOPIC, 0): 10}, first={10: 10})
    fixture = Loop(app, probe)
    stream = app.stream(app.channel())
    stream.channel.queue.put_nowait(event(app, 11))
    with pytest.raises(RecordsSkipped):
        await asyncio.wait_for(fixture.loop.consume(stream), 5)
    assert [type(e) for e in fixture.crashes] == [RecordsSkipped]
    assert probe.asked == [(TOPIC, 0, 10)]
    assert fixture.sink.messages == [] and fixture.commits == []


async def test_nothing_committed_yet_and_records_missing_from_the_start(app: Any) -> None:
    """No commit yet (Faust skips its gap check): the first record must be the log's first."""
    fixture = Loop(app, FakeProbe({}, first={0: 0}))
    with pytest.raises(RecordsSkipped):
        await fixture.loop.process([event(app, 5)])
    assert fixture.sink.messages == [] and fixture.loop.tracker.to_commit() == {}


async def test_a_gap_the_broker_confirms_is_accepted(app: Any) -> None:
    """Transaction markers, aborted or deleted records: the broker's first record after 10 is 12."""
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 10}, first={10: 12}))
    await fixture.loop.process([event(app, 12)])
    assert await fixture.loop.committer.commit_now() is True
    assert fixture.commits == [{(TOPIC, 0): 13}]


async def test_events_of_an_older_generation_are_skipped(app: Any) -> None:
    app.consumer_generation_id = 4
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 0}))
    await fixture.loop.process([event(app, 0, generation=3), event(app, 1, generation=3)])
    assert fixture.sink.messages == [] and fixture.loop.tracker.to_commit() == {}
    await fixture.loop.process([event(app, 0, generation=4)])
    assert len(fixture.sink.on("t.postprocessed")) == 1


async def test_an_unexpected_batch_error_exits_without_commit(app: Any) -> None:
    class Broken(FakeSink):
        async def send_all(self, messages: Any) -> None:
            raise RuntimeError("a bug at the edge")

    fixture = Loop(app, FakeProbe({(TOPIC, 0): 0}), sink=Broken())
    stream = app.stream(app.channel())
    stream.channel.queue.put_nowait(event(app, 0))
    with pytest.raises(RuntimeError):
        await asyncio.wait_for(fixture.loop.consume(stream), 5)
    assert [type(e) for e in fixture.crashes] == [RuntimeError]
    assert fixture.commits == []  # the final commit found nothing finished


async def test_an_outage_longer_than_the_hold_limit_exits(app: Any) -> None:
    class Down(FakeSink):
        async def send_all(self, messages: Any) -> None:
            raise KafkaUnavailable("broker down")

    settings = Settings(
        topic_prefix="t.", retry_initial_backoff_ms=5, retry_max_backoff_ms=10, max_hold_seconds=0.05
    )
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 0}), sink=Down(), settings=settings)
    stream = app.stream(app.channel())
    stream.channel.queue.put_nowait(event(app, 0))
    with pytest.raises(HoldExpired, match="EC_MAX_HOLD_SECONDS"):
        await asyncio.wait_for(fixture.loop.consume(stream), 5)
    assert fixture.commits == []


async def test_a_record_the_station_rejects_is_a_dead_letter_and_the_batch_goes_on(app: Any) -> None:
    fixture = Loop(app, FakeProbe({(TOPIC, 0): 0}))
    deep = (
        b'{"run_id":"r","tool_call_id":"c","response":{"query":"q","evidence_status":"supported","hits":[],'
        b'"retrieval_trace":' + b"[" * 400 + b"]" * 400 + b"}}"
    )
    await fixture.loop.process([event(app, 0, deep), event(app, 1, RAW[0])])
    assert [d["reason"] for d in fixture.sink.values("t.dead-letters")] == ["SCHEMA_VIOLATION"]
    assert [v["status"] for v in fixture.sink.values("t.postprocessed")] == ["FAILED", "OK"]
    assert fixture.loop.tracker.to_commit() == {(TOPIC, 0): 2}


async def test_create_app_registers_the_chosen_agents_only() -> None:
    app = create_app(Settings(app_id="compose-test", agents="project,ledger", data_dir="/nonexistent/x"))
    assert sorted(app.agents) == ["ledger", "project"]
    assert set(app.context.loops) == {Station.PROJECT, Station.LEDGER}
    assert issubclass(app.transport.Consumer, BatchDrainMixin)  # records handed over a batch at a time
    assert not Path("/nonexistent/x").exists()  # noqa: ASYNC240 - composed, not started: nothing created
    for loop in app.context.loops.values():
        store = loop.runner.store
        if store is not None:
            await store.close()


def test_agents_setting_rejects_unknown_names() -> None:
    with pytest.raises(ConfigurationError, match="EC_AGENTS"):
        load_settings(agents="postprocess,bogus")


def test_importing_streams_app_reads_no_environment_and_creates_nothing(tmp_path: Path) -> None:
    data = tmp_path / "faust-data"
    env = dict(os.environ, EC_AGENTS="bogus", EC_DATA_DIR=str(data))
    code = "import streams.worker.app, sys; print('imported')"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported" and not data.exists()
    # the app itself is composed on first access (faust -A streams.app), and then says what is wrong
    code = "import streams.worker.app; streams.worker.app.app"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode != 0 and "EC_AGENTS" in done.stderr


def test_crash_exits_at_once_with_status_70() -> None:
    code = (
        "import streams.worker.crash\n"
        "try:\n    raise ValueError('boom')\n"
        "except ValueError as exc:\n    streams.worker.crash.crash(exc, 'test')\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 70
    assert "not reached" not in done.stdout


class HeldAcks(FakeSink):
    """A producer whose acknowledgements arrive when the test releases them, batch by batch."""

    def __init__(self, fail: set[int] | None = None) -> None:
        super().__init__()
        self.submitted: list[int] = []  # the first offset of each batch, in the order submitted
        self.release: dict[int, asyncio.Event] = {}
        self.fail = fail or set()

    async def submit(self, messages: Any) -> Any:
        batch = len(self.submitted)
        self.submitted.append(batch)
        released = self.release[batch] = asyncio.Event()

        async def acknowledged() -> None:
            await released.wait()
            if batch in self.fail:
                raise RuntimeError(f"batch {batch}: the broker refused")
            await self.send_all(messages)

        return acknowledged()


def pipelined(app: Any, sink: HeldAcks, in_flight: int) -> Loop:
    settings = Settings(
        topic_prefix="t.",
        retry_initial_backoff_ms=1,
        retry_max_backoff_ms=2,
        broker_commit_interval_seconds=0.01,
        batch_size=2,
        batches_in_flight=in_flight,
    )
    return Loop(app, FakeProbe({(TOPIC, 0): 0}), sink=sink, settings=settings)


async def until(condition: Any, seconds: float = 2.0) -> None:
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


async def test_the_next_batches_start_while_the_first_awaits_its_acks_and_commits_wait_in_order(
    app: Any,
) -> None:
    sink = HeldAcks()
    fixture = pipelined(app, sink, in_flight=3)
    stream = app.stream(app.channel())
    for offset in range(8):  # four batches of two
        stream.channel.queue.put_nowait(event(app, offset, RAW[offset % len(RAW)]))
    consuming = asyncio.ensure_future(fixture.loop.consume(stream))
    try:
        await until(lambda: len(sink.submitted) == 3)  # three batches in flight, none acknowledged
        await asyncio.sleep(0.05)
        assert len(sink.submitted) == 3, "a fourth batch started past the in-flight bound"
        assert fixture.commits == []
        sink.release[1].set()  # the second is acknowledged first: it must wait for the first
        await asyncio.sleep(0.05)
        assert fixture.commits == [] and fixture.loop.tracker.position((TOPIC, 0)) == 0
        sink.release[0].set()
        await until(lambda: fixture.commits and fixture.commits[-1] == {(TOPIC, 0): 4})
        await until(lambda: len(sink.submitted) == 4)  # the window moved: the fourth batch started
        sink.release[2].set()
        sink.release[3].set()
        await until(lambda: fixture.commits[-1] == {(TOPIC, 0): 8})
        assert len(sink.on("t.postprocessed")) == 8 and fixture.crashes == []
    finally:
        consuming.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consuming


async def test_a_batch_that_fails_in_flight_stops_the_line_behind_it(app: Any) -> None:
    sink = HeldAcks(fail={0})
    fixture = pipelined(app, sink, in_flight=3)
    stream = app.stream(app.channel())
    for offset in range(4):
        stream.channel.queue.put_nowait(event(app, offset, RAW[offset % len(RAW)]))
    consuming = asyncio.ensure_future(fixture.loop.consume(stream))
    await until(lambda: len(sink.submitted) == 2)
    sink.release[1].set()  # the second batch is acknowledged...
    await asyncio.sleep(0.05)
    sink.release[0].set()  # ...and the first is refused: neither is finished, nothing is committed
    with pytest.raises(RuntimeError, match="batch 0"):
        await asyncio.wait_for(consuming, 5)
    assert [str(e) for e in fixture.crashes] == ["batch 0: the broker refused"]  # reported once
    assert fixture.commits == [] and fixture.loop.tracker.position((TOPIC, 0)) == 0


async def test_one_batch_in_flight_is_one_batch_at_a_time(app: Any) -> None:
    sink = HeldAcks()
    fixture = pipelined(app, sink, in_flight=1)
    stream = app.stream(app.channel())
    for offset in range(4):
        stream.channel.queue.put_nowait(event(app, offset, RAW[offset % len(RAW)]))
    consuming = asyncio.ensure_future(fixture.loop.consume(stream))
    try:
        await until(lambda: len(sink.submitted) == 1)
        await asyncio.sleep(0.05)
        assert len(sink.submitted) == 1  # the second waits until the first is acknowledged
        sink.release[0].set()
        await until(lambda: len(sink.submitted) == 2)
        sink.release[1].set()
        await until(lambda: bool(fixture.commits) and fixture.commits[-1] == {(TOPIC, 0): 4})
    finally:
        consuming.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consuming


async def test_the_commit_on_stop_waits_for_a_batch_whose_acks_are_on_their_way(app: Any) -> None:
    """SIGTERM right after the broker acknowledged a batch (a reader already sees its outputs) but before
    the worker took the acks in: the worker's last commit waits for that batch instead of leaving it to
    be judged again by the next worker."""
    sink = HeldAcks()
    fixture = pipelined(app, sink, in_flight=2)
    stream = app.stream(app.channel())
    for offset in range(2):
        stream.channel.queue.put_nowait(event(app, offset, RAW[offset]))
    consuming = asyncio.ensure_future(fixture.loop.consume(stream))
    try:
        await until(lambda: len(sink.submitted) == 1)
        stopping = asyncio.ensure_future(fixture.loop.commit_on_the_way_out())  # the app's on_stop
        await asyncio.sleep(0.05)
        assert not stopping.done(), "the last commit did not wait for the batch in flight"
        sink.release[0].set()
        await asyncio.wait_for(stopping, 5)
        assert fixture.commits and fixture.commits[-1] == {(TOPIC, 0): 2}
    finally:
        consuming.cancel()
        with pytest.raises(asyncio.CancelledError):
            await consuming
