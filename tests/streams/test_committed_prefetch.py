"""The group's committed offsets read when partitions are assigned (issue 42: the fill), used by an
agent's first batch only when they are of its generation and were read without error."""

from __future__ import annotations

import asyncio
from typing import Any

import faust
import pytest
from faust.types import TP

from streams.errors import KafkaUnavailable, RecordsSkipped
from tests.streams.loop_fakes import TOPIC, FakeProbe, Loop, event


class CountingProbe(FakeProbe):
    """Counts the reads of committed offsets; the first ``failures`` of them fail as an outage."""

    def __init__(self, committed: dict[tuple[str, int], int | None], failures: int = 0) -> None:
        super().__init__(committed, first={})
        self.reads: list[list[tuple[str, int]]] = []
        self.failures = failures

    async def committed(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int | None]:
        self.reads.append(list(partitions))
        if len(self.reads) <= self.failures:
            raise KafkaUnavailable("the coordinator is away")
        return await super().committed(partitions)


@pytest.fixture
async def app() -> Any:
    return faust.App("prefetch-test", broker="memory://", value_serializer="raw", key_serializer="raw")


ASSIGNED = [TP(TOPIC, 0), TP(TOPIC, 1), TP("t.postprocessed", 0)]


async def test_the_first_batch_uses_the_offsets_read_at_the_assignment(app: Any) -> None:
    probe = CountingProbe({(TOPIC, 0): 10})
    fixture = Loop(app, probe)
    fixture.loop.prefetch_committed(ASSIGNED)
    await fixture.loop.process([event(app, 10), event(app, 11)])
    assert probe.reads == [[(TOPIC, 0), (TOPIC, 1)]]  # once, the agent's own input only
    assert await fixture.loop.committer.commit_now() is True
    assert fixture.commits == [{(TOPIC, 0): 12}]


async def test_what_was_read_still_guards_against_records_skipped(app: Any) -> None:
    """Committed 10 at the assignment, the first record delivered is 11, the broker holds 10."""
    probe = CountingProbe({(TOPIC, 0): 10})
    probe.first = {10: 10}
    fixture = Loop(app, probe)
    fixture.loop.prefetch_committed(ASSIGNED)
    with pytest.raises(RecordsSkipped):
        await fixture.loop.process([event(app, 11)])
    # the gap made it ask again (the group still says 10): the early answer is never the last word
    assert probe.reads == [[(TOPIC, 0), (TOPIC, 1)], [(TOPIC, 0)]] and fixture.commits == []


async def test_a_commit_that_landed_after_the_early_read_is_not_taken_for_a_gap(app: Any) -> None:
    """The early read says 10; a commit of the last generation, retried into this one, moved the group
    to 20 before Faust read where to start; the first record is 20 and the broker holds 10..19. Asked
    again, the group says 20: no gap, no exit (before: RecordsSkipped, a restart for nothing)."""
    probe = CountingProbe({(TOPIC, 0): 10})
    probe.first = {10: 10}
    fixture = Loop(app, probe)
    fixture.loop.prefetch_committed(ASSIGNED)
    await asyncio.sleep(0)  # the early read answers 10
    probe._committed[(TOPIC, 0)] = 20
    await fixture.loop.process([event(app, 20), event(app, 21)])
    assert len(probe.reads) == 2
    assert fixture.loop.tracker.to_commit() == {(TOPIC, 0): 22}


async def test_a_batch_of_another_generation_reads_them_again(app: Any) -> None:
    probe = CountingProbe({(TOPIC, 0): 10})
    fixture = Loop(app, probe)
    app.consumer_generation_id = 1
    fixture.loop.prefetch_committed(ASSIGNED)
    await asyncio.sleep(0)  # the early read answers 10
    probe._committed[(TOPIC, 0)] = 20  # committed by another member in between
    app.consumer_generation_id = 2
    await fixture.loop.process([event(app, 20, generation=2)])
    assert len(probe.reads) == 2
    assert fixture.loop.tracker.to_commit() == {(TOPIC, 0): 21}


async def test_a_read_that_failed_is_read_again_and_held_through_the_outage(app: Any) -> None:
    probe = CountingProbe({(TOPIC, 1): 5}, failures=2)
    fixture = Loop(app, probe)
    fixture.loop.prefetch_committed(ASSIGNED)
    await fixture.loop.process([event(app, 5, partition=1)])
    assert len(probe.reads) == 3  # the early read, one held retry that failed, one that answered
    assert fixture.loop.tracker.to_commit() == {(TOPIC, 1): 6}


async def test_partitions_assigned_to_other_agents_start_no_read(app: Any) -> None:
    probe = CountingProbe({})
    fixture = Loop(app, probe)
    fixture.loop.prefetch_committed([TP("t.postprocessed", 0)])
    await fixture.loop.process([event(app, 0)])
    assert probe.reads == [[(TOPIC, 0)]]  # read when the batch came, as without the early read
