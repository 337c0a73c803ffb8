"""Which offsets may be committed: a record is committed only when it and every record before it in
its partition is processed (or provably does not exist). Pure: no Faust, no Kafka client.

Faust's own bookkeeping cannot be trusted with this (faust-streaming 0.15.3,
``Consumer._new_offset``): it commits past a gap of exactly one offset (committed 10, offset 10
never acked, 11 acked → commits 12), it skips the gap check when the committed offset is 0 or
unset, and ``on_task_error`` commits. So the agents never ack through Faust at all; each keeps an
:class:`OffsetTracker` and commits explicitly what it finished.

For every partition of the current consumer-group generation the tracker knows ``done``: every
offset below it has been processed; and ``taken``: every offset below it has been taken into a
batch, processed or still in flight (an agent may take its next batch while the previous one's
messages await their acks). Gaps are judged against ``taken``, commits follow ``done``.

The first record of a partition is expected at the group's committed offset (or, with none, at the
start of the log); each next record right after the previous one. A record that arrives later than
expected leaves a :class:`Gap`: the records in it may have been dropped on the way (a rebalance
clearing Faust's buffers, an agent restarted by Faust's supervisor) or may simply not exist
(transaction markers, aborted or compacted records, retention). The edge asks the broker which: a
gap is accepted only when the broker's first record at or after its start is the one that arrived;
otherwise the worker exits without committing and the records are read again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

TP = tuple[str, int]
"""``(topic, partition)``."""


@dataclass(frozen=True, slots=True)
class Gap:
    """Records from ``start`` up to ``found`` (exclusive) of one partition were not delivered."""

    tp: TP
    start: int
    found: int

    def __str__(self) -> str:
        return f"{self.tp[0]}[{self.tp[1]}] offsets {self.start}..{self.found - 1}"


class OffsetTracker:
    """The commit position of each partition one agent consumes, for one group generation."""

    def __init__(self) -> None:
        self.generation: int | None = None
        self._done: dict[TP, int] = {}
        self._taken: dict[TP, int] = {}
        self._committed: dict[TP, int] = {}

    def start_generation(self, generation: int) -> bool:
        """Begin a new group generation: partitions may have moved, so every position is forgotten.

        Returns whether the generation changed.
        """
        if generation == self.generation:
            return False
        self.generation = generation
        self._done.clear()
        self._taken.clear()
        self._committed.clear()
        return True

    def unknown(self, tps: Iterable[TP]) -> list[TP]:
        """The partitions among ``tps`` whose starting position is not known yet."""
        return sorted({tp for tp in tps if tp not in self._done})

    def start_at(self, tp: TP, committed: int | None) -> None:
        """The group's committed offset of a partition; None (no commit yet) means the start of the log."""
        start = 0 if committed is None else committed
        self._done.setdefault(tp, start)
        self._taken.setdefault(tp, start)
        self._committed.setdefault(tp, start)  # nothing to commit until a record there is finished

    def restart_at(self, tp: TP, committed: int | None) -> None:
        """:meth:`start_at` again, in place of the first answer, for a partition of which nothing was
        taken yet (the group's committed offset read again)."""
        start = 0 if committed is None else committed
        if self._taken.get(tp, start) != self._done.get(tp, start):
            raise ValueError(f"{tp[0]}[{tp[1]}] has records in flight; its start cannot move")
        self._done[tp] = self._taken[tp] = self._committed[tp] = start

    def gaps(self, records: Sequence[tuple[TP, int]]) -> list[Gap]:
        """The gaps a batch of ``(partition, offset)`` records (in delivery order) would leave.

        A record at or below a position already passed is a harmless repeat; it leaves no gap.

        Raises:
            KeyError: a partition's starting position is unknown (call :meth:`start_at` first).
        """
        expected: dict[TP, int] = {}
        found: list[Gap] = []
        for tp, offset in records:
            nxt = expected.get(tp, self._taken[tp])
            if offset > nxt:
                found.append(Gap(tp, nxt, offset))
            expected[tp] = max(nxt, offset + 1)
        return found

    def take(self, records: Sequence[tuple[TP, int]]) -> None:
        """The batch passed its gap check and is being processed: the next batch is judged after it."""
        for tp, offset in records:
            if offset + 1 > self._taken.get(tp, 0):
                self._taken[tp] = offset + 1

    def finish(self, records: Sequence[tuple[TP, int]]) -> None:
        """Every record of the batch is processed (its outputs delivered, its effects done).

        The caller finishes batches in the order it took them, so ``done`` only moves past records
        that are all processed."""
        for tp, offset in records:
            if offset + 1 > self._done.get(tp, 0):
                self._done[tp] = offset + 1

    def to_commit(self) -> dict[TP, int]:
        """The positions that moved since they were last committed."""
        return {tp: done for tp, done in self._done.items() if self._committed.get(tp) != done}

    def committed(self, offsets: Mapping[TP, int]) -> None:
        """Those positions are now committed."""
        self._committed.update(offsets)

    def position(self, tp: TP) -> int | None:
        """The offset below which everything of ``tp`` is processed (None if unknown)."""
        return self._done.get(tp)
