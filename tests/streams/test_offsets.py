"""Commits can never pass an unprocessed record: the two faust-streaming 0.15.3 bugs, reproduced on
Faust's own consumer, and the same sequences through the project's OffsetTracker."""

from __future__ import annotations

import faust
import pytest
from faust.types import TP

from streams.worker.offsets import Gap, OffsetTracker

RAW = ("t.raw-hits", 0)


@pytest.fixture
async def faust_consumer():
    """Faust's own aiokafka-driver consumer, never started: only its offset bookkeeping is used."""
    app = faust.App("offsets-test", broker="kafka://127.0.0.1:1")
    consumer = app.consumer
    yield consumer
    consumer._thread.thread_loop.close()  # made by Faust's consumer thread, which never started


async def test_faust_commits_past_a_gap_of_exactly_one_offset(faust_consumer) -> None:
    """Committed 10, offset 10 never acked, 11 acked: Faust's _new_offset answers 12 (skipping 10)."""
    tp = TP(*RAW)
    faust_consumer._committed_offset[tp] = 10
    faust_consumer._acked[tp] = [11]
    faust_consumer._acked_index[tp] = {11}
    assert faust_consumer._new_offset(tp) == 12  # the bug: record 10 would never be processed


async def test_faust_skips_the_gap_check_when_nothing_was_committed(faust_consumer) -> None:
    """No commit yet (or committed 0): Faust commits past records 0..4 it never saw acked."""
    tp = TP(*RAW)
    faust_consumer._committed_offset[tp] = None
    faust_consumer._acked[tp] = [5, 6]
    faust_consumer._acked_index[tp] = {5, 6}
    assert faust_consumer._new_offset(tp) == 7
    faust_consumer._committed_offset[tp] = 0
    faust_consumer._acked[tp] = [5]
    faust_consumer._acked_index[tp] = {5}
    assert faust_consumer._new_offset(tp) == 6


def test_a_gap_of_one_is_caught_and_nothing_moves_past_it() -> None:
    tracker = OffsetTracker()
    tracker.start_generation(1)
    tracker.start_at(RAW, 10)
    assert tracker.gaps([(RAW, 11)]) == [Gap(RAW, 10, 11)]
    assert tracker.to_commit() == {}  # nothing finished: nothing to commit, certainly not 12


def test_nothing_committed_yet_means_the_first_record_must_be_the_log_start() -> None:
    tracker = OffsetTracker()
    tracker.start_generation(1)
    tracker.start_at(RAW, None)
    assert tracker.gaps([(RAW, 5), (RAW, 6)]) == [Gap(RAW, 0, 5)]
    tracker.start_at(("t.raw-hits", 1), 0)
    assert tracker.gaps([(("t.raw-hits", 1), 5)]) == [Gap(("t.raw-hits", 1), 0, 5)]


def test_a_contiguous_batch_commits_one_past_its_last_record() -> None:
    tracker = OffsetTracker()
    tracker.start_generation(1)
    tracker.start_at(RAW, 10)
    batch = [(RAW, 10), (RAW, 11), (RAW, 12)]
    assert tracker.gaps(batch) == []
    tracker.finish(batch)
    assert tracker.to_commit() == {RAW: 13}
    tracker.committed({RAW: 13})
    assert tracker.to_commit() == {}


def test_gaps_inside_a_batch_and_across_partitions() -> None:
    other = ("t.raw-hits", 2)
    tracker = OffsetTracker()
    tracker.start_generation(3)
    tracker.start_at(RAW, 0)
    tracker.start_at(other, 7)
    batch = [(RAW, 0), (other, 7), (RAW, 1), (RAW, 3), (other, 8)]
    assert tracker.gaps(batch) == [Gap(RAW, 2, 3)]
    assert str(Gap(RAW, 2, 3)) == "t.raw-hits[0] offsets 2..2"


def test_repeats_below_the_position_are_harmless_and_never_move_it_back() -> None:
    tracker = OffsetTracker()
    tracker.start_generation(1)
    tracker.start_at(RAW, 20)
    assert tracker.gaps([(RAW, 15), (RAW, 16)]) == []
    tracker.finish([(RAW, 15), (RAW, 16)])
    assert tracker.position(RAW) == 20
    assert tracker.to_commit() == {}


def test_a_new_generation_forgets_every_position() -> None:
    tracker = OffsetTracker()
    tracker.start_generation(1)
    tracker.start_at(RAW, 4)
    tracker.finish([(RAW, 4)])
    assert tracker.start_generation(2) is True
    assert tracker.unknown([RAW]) == [RAW]
    assert tracker.to_commit() == {}
    assert tracker.start_generation(2) is False


def test_an_unknown_partition_must_be_placed_before_gaps_are_asked() -> None:
    tracker = OffsetTracker()
    tracker.start_generation(1)
    with pytest.raises(KeyError):
        tracker.gaps([(RAW, 0)])


def test_a_batch_in_flight_moves_the_gap_check_but_not_the_commit() -> None:
    """Taken but not finished (its acks on the way): the next batch is judged after it, and nothing
    is committed until it finishes."""
    tracker = OffsetTracker()
    tracker.start_generation(1)
    tracker.start_at(RAW, 10)
    first, second = [(RAW, 10), (RAW, 11)], [(RAW, 12), (RAW, 13)]
    tracker.take(first)
    assert tracker.gaps(second) == []  # judged against what was taken, not what is done
    assert tracker.gaps([(RAW, 13)]) == [Gap(RAW, 12, 13)]
    tracker.take(second)
    assert tracker.to_commit() == {} and tracker.position(RAW) == 10
    tracker.finish(first)
    assert tracker.to_commit() == {RAW: 12}
    tracker.finish(second)
    assert tracker.to_commit() == {RAW: 14}
    assert tracker.start_generation(2) and tracker.unknown([RAW]) == [RAW]  # taken is forgotten too
