"""Fakes for the agent loop's tests: a Faust event of the golden raw-hits, the broker's answers
(``FakeProbe``), and an ``AgentLoop`` that records its commits and crashes (``Loop``)."""

from __future__ import annotations

from typing import Any

from faust.events import Event
from faust.types import Message

from models.vocab import Station
from streams.settings import Settings
from streams.worker.loop import AgentLoop, LoopConfig
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.streams.conftest import FakeSink, golden_lines

RAW = golden_lines("pipe", "input.jsonl")
TOPIC = "t.raw-hits"


def event(app: Any, offset: int, value: bytes = RAW[0], *, partition: int = 0, generation: int = 0) -> Event:
    message = Message(
        TOPIC,
        partition,
        offset,
        1_700_000_000.0 + offset / 1000,
        0,
        [],
        b"run-golden-1",
        value,
        None,
        generation_id=generation,
    )
    return Event(app, message.key, value, [], message)


class FakeProbe:
    """The broker's answers: committed offsets, and the first record at or after an offset."""

    def __init__(
        self, committed: dict[tuple[str, int], int | None], first: dict[int, int | None] | None = None
    ):
        self._committed = committed
        self.first = first or {}
        self.asked: list[tuple[str, int, int]] = []

    async def committed(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int | None]:
        return {tp: self._committed.get(tp) for tp in partitions}

    async def first_offset_from(self, topic: str, partition: int, offset: int) -> int | None:
        self.asked.append((topic, partition, offset))
        return self.first.get(offset)


class Loop:
    """An AgentLoop wired to fakes, recording commits and crash-only exits instead of exiting."""

    def __init__(
        self, app: Any, probe: FakeProbe, sink: Any = None, settings: Settings | None = None
    ) -> None:
        self.settings = settings or Settings(
            topic_prefix="t.",
            retry_initial_backoff_ms=1,
            retry_max_backoff_ms=2,
            broker_commit_interval_seconds=0.01,
        )
        self.sink = sink or FakeSink()
        self.commits: list[dict[tuple[str, int], int]] = []
        self.crashes: list[BaseException] = []
        runner = BatchRunner(Station.POSTPROCESS, RunnerConfig.from_settings(self.settings), self.sink)
        config = LoopConfig.from_settings(self.settings, Station.POSTPROCESS)
        self.loop = AgentLoop(
            app, Station.POSTPROCESS, config, runner, probe, on_crash=self._crash, commit=self._commit
        )

    async def _commit(self, offsets: dict[tuple[str, int], int]) -> bool:
        self.commits.append(dict(offsets))
        return True

    def _crash(self, exc: BaseException, what: str) -> None:
        self.crashes.append(exc)
