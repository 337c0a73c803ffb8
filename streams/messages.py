"""The two message shapes at every edge: a consumed :class:`Record` and an :class:`Output` to produce.

Pure data: the stations read records and say what to produce; only the Kafka edge touches a client.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.events import Origin
from models.vocab import Topic

Headers = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True, slots=True)
class Record:
    """One consumed Kafka record (or one offline input line), reduced to what the stations need.

    An offline line (``pipe``, ``verify``) has no coordinates: its outputs carry no ``event_id`` and
    no ``origin``.
    """

    topic: str | None
    partition: int | None
    offset: int | None
    timestamp: int | None
    key: bytes | None
    value: bytes
    headers: Headers = ()

    @classmethod
    def offline(cls, value: bytes) -> Record:
        """An input line read without Kafka."""
        return cls(None, None, None, None, None, value)

    @property
    def coordinates(self) -> Origin | None:
        """This record as an origin (``{topic, partition, offset, timestamp}``); None offline."""
        if self.topic is None or self.partition is None or self.offset is None:
            return None
        return {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "timestamp": self.timestamp,
        }

    @property
    def where(self) -> str:
        """``topic[partition]@offset``, for messages."""
        if self.topic is None:
            return "an input line"
        return f"{self.topic}[{self.partition}]@{self.offset}"


@dataclass(frozen=True, slots=True)
class Output:
    """One message to produce on one of the SPEC's topics (by short name; the edge adds the prefix).

    ``key`` is the run id, so a run stays in one partition number.
    """

    topic: Topic
    key: bytes | None
    value: bytes
    headers: Headers = ()
