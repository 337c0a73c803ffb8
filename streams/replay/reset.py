"""``replay --mode reset``: move the workers' committed offsets back so they re-process a range, safely.

An operator runs this at 3 a.m.; it must not make things worse. So it first shows the plan (per
partition: committed now → new offset, records to be re-processed or skipped) and changes nothing
without ``--yes``; it refuses to move any offset forward (that skips records: nothing would ever
process them) without ``--allow-skip``; it refuses a start past the end of a partition, end
options (a reset has no end: the workers go on to the end), topics the workers do not consume,
and a group that has running members (a live group's offsets cannot be moved).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiokafka.structs import TopicPartition

from streams.errors import ConfigurationError
from streams.kafka.admin import WORKER_INPUTS
from streams.kafka.config import new_admin, new_consumer, started
from streams.kafka.offsets import commit_offsets, committed_offsets, group_members
from streams.kafka.ranges import Range, plan_range
from streams.settings import Settings


@dataclass(frozen=True, slots=True)
class Move:
    """One partition of a reset plan."""

    partition: int
    committed: int | None
    """The group's committed offset now (None: it has none, and would start at ``beginning``)."""
    target: int
    beginning: int
    end: int

    @property
    def current(self) -> int:
        """Where the group would resume now."""
        return self.beginning if self.committed is None else self.committed

    @property
    def reprocessed(self) -> int:
        """Records the workers will process again."""
        return max(0, self.current - self.target)

    @property
    def skipped(self) -> int:
        """Records the workers will never process (moving forward)."""
        return max(0, self.target - self.current)


@dataclass(frozen=True, slots=True)
class ResetPlan:
    """What a reset would do to one topic's offsets in the workers' group."""

    group: str
    topic: str
    moves: list[Move]

    @property
    def skips(self) -> bool:
        """Whether any partition would move forward."""
        return any(move.skipped for move in self.moves)


def check_range(wanted: Range) -> None:
    """Refuse what a reset cannot mean.

    Raises:
        ConfigurationError: an end option, or a topic the workers do not consume.
    """
    if wanted.to_offset is not None or wanted.until_ms is not None:
        raise ConfigurationError(
            "--to-offset/--until have no meaning for --mode reset: the workers re-process from the start "
            "of the range to the end of the topic; use --mode compare to look at a bounded range"
        )
    if wanted.topic not in WORKER_INPUTS:
        raise ConfigurationError(
            f"the workers do not consume {str(wanted.topic)!r}; reset one of {', '.join(WORKER_INPUTS)}"
        )


async def plan_reset(settings: Settings, wanted: Range) -> ResetPlan:
    """The plan of a reset, changing nothing.

    Raises:
        ConfigurationError: a refused range (see :func:`check_range`), or a start past the end.
        KafkaUnavailable: the broker cannot be reached.
    """
    check_range(wanted)
    full_topic = settings.topic(wanted.topic)
    consumer = new_consumer(settings, group_id=None)
    async with started(consumer, f"planning a reset of {full_topic}"):
        plan = await plan_range(settings, consumer, wanted)
    tps = sorted(plan.starts, key=lambda tp: tp.partition)
    if wanted.from_offset is not None:
        past = [tp for tp in tps if wanted.from_offset > plan.end[tp]]
        if past:
            ends = ", ".join(f"partition {tp.partition} ends at {plan.end[tp]}" for tp in past)
            raise ConfigurationError(
                f"--from-offset {wanted.from_offset} is past the end of {full_topic} ({ends}); nothing was "
                "changed. To skip a backlog on purpose, give the end offset with --allow-skip"
            )
    async with started(new_admin(settings), f"reading the offsets of {settings.app_id}") as admin:
        committed = await committed_offsets(admin, settings.app_id, tps)
    moves = [
        Move(tp.partition, committed[tp], plan.starts[tp], plan.beginning[tp], plan.end[tp]) for tp in tps
    ]
    return ResetPlan(settings.app_id, full_topic, moves)


async def apply_reset(settings: Settings, plan: ResetPlan, *, allow_skip: bool = False) -> None:
    """Commit the plan's offsets for the group.

    Raises:
        ConfigurationError: the plan skips records without ``allow_skip``, or the group has members.
        KafkaUnavailable: the broker cannot be reached.
    """
    if plan.skips and not allow_skip:
        skipped = sum(move.skipped for move in plan.moves)
        raise ConfigurationError(
            f"the reset would move offsets forward and skip {skipped} records that no worker would ever "
            "process; nothing was changed. Add --allow-skip if that is what you want"
        )
    members = await group_members(settings, plan.group)
    if members:
        raise ConfigurationError(
            f"consumer group {plan.group} has {members} running member(s); stop the workers first "
            "(a live group's offsets cannot be moved), then run replay --mode reset again"
        )
    await commit_offsets(
        settings, plan.group, {TopicPartition(plan.topic, m.partition): m.target for m in plan.moves}
    )
