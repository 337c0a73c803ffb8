"""Envelope shapes shared by every topic: origin, source coordinates, dead letters (the audit records:
:mod:`models.audit`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from models.vocab import DeadLetterReason, Station


class Origin(TypedDict):
    """The raw-hits or diagnosis-drafts record that started a chain, carried unchanged."""

    topic: Annotated[str, Field(description="Its topic, as consumed (the topic prefix included).")]
    partition: int
    offset: int
    timestamp: Annotated[int | None, Field(description="Its Kafka timestamp, epoch milliseconds.")]


EventId = Annotated[
    str | None,
    Field(
        description="Deterministic id of this event, a function of its station and origin record: the "
        "same on every re-delivery, so a consumer drops repeats by it. Null offline."
    ),
]
"""``event_id`` of every produced value (SPEC 1)."""

ChainOrigin = Annotated[
    Origin | None,
    Field(description="The raw-hits or diagnosis-drafts record that started this chain; null offline."),
]
"""``origin`` of every produced value (SPEC 1)."""

SourceTimestamp = Annotated[
    int | None,
    Field(
        description="The origin record's timestamp (epoch ms), never wall-clock time, so a replay "
        "reproduces the bytes. Null offline."
    ),
]
"""``source_timestamp`` of every produced value (SPEC 1)."""


class SourceRef(TypedDict):
    """The record one station consumed."""

    topic: str
    partition: int
    offset: int


class DeadLetterSource(TypedDict):
    """Coordinates of a dead-lettered record in its own topic."""

    topic: str | None
    partition: int | None
    offset: int | None
    timestamp: int | None


class Rejection(TypedDict):
    """Why a station refused its input: the core of a dead letter, and what ``pipe`` prints."""

    reason: DeadLetterReason
    error: str
    run_id: str | None
    tool_call_id: str | None


class DeadLetter(TypedDict):
    """A record that could not be processed, with its original bytes (SPEC 5)."""

    event_id: EventId
    origin: ChainOrigin
    station: Annotated[Station, Field(description="The station that refused the record.")]
    reason: DeadLetterReason
    error: Annotated[
        str, Field(description="What was wrong, and where (free text, at most 1000 characters).")
    ]
    run_id: Annotated[str | None, Field(description="Given only when both ids are valid ids.")]
    tool_call_id: Annotated[str | None, Field(description="Given only when both ids are valid ids.")]
    source: Annotated[DeadLetterSource, Field(description="The refused record in its own topic.")]
    key: Annotated[str | None, Field(description="The refused record's Kafka key, as UTF-8 text.")]
    value: Annotated[
        str,
        Field(
            description="The refused record's value: UTF-8 text when it decodes, else base64; at most "
            "the first dead_letter_max_value_bytes (default 64 KiB) of it."
        ),
    ]
    value_encoding: Literal["utf-8", "base64"]
    value_bytes: Annotated[int, Field(description="Length of the whole original value, in bytes.")]
    value_sha256: Annotated[
        str, Field(description="Lowercase hex SHA-256 of the whole original value, to find and match it.")
    ]


ORIGIN_ADAPTER: TypeAdapter[Origin] = TypeAdapter(Origin)
DEAD_LETTER_ADAPTER: TypeAdapter[DeadLetter] = TypeAdapter(DeadLetter)
