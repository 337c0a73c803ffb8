"""The envelope every event carries, built in one place: origin, event ids, rejections, dead letters,
audit records, the key an output is produced under, and :func:`emissions`, the one place an
:class:`Outcome` becomes the messages to produce (outputs, dead letter and its headers, audit records).

Nothing here reads a clock: :func:`audit_record` takes ``processed_at`` from its caller (the only
wall-clock field anywhere), so every other byte is a function of the input and replays repeat them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from models.audit import AuditFigures, AuditRecord, DeadLetterFigures
from models.events import DeadLetter, Origin, Rejection, SourceRef
from models.ids import is_valid_id
from models.limits import DeadLetterSettings
from models.vocab import DeadLetterReason, Station, Topic
from streams import codec
from streams.hashing import sha256_hex
from streams.messages import Headers, Output, Record

T = TypeVar("T", covariant=True)

MAX_ERROR_CHARS = 1000
"""A rejection's error text is cut to this many characters: an input cannot inflate its dead letter."""

MAX_SHOWN_CHARS = 80
"""A value from the input quoted in a message is cut to this many characters."""


def read_origin(value: Any) -> Origin | None:
    """An origin carried in an upstream event, if it has the right shape."""
    if not isinstance(value, dict):
        return None
    topic, partition, offset = value.get("topic"), value.get("partition"), value.get("offset")
    timestamp = value.get("timestamp")
    if not isinstance(topic, str) or not isinstance(partition, int) or not isinstance(offset, int):
        return None
    if isinstance(partition, bool) or isinstance(offset, bool):
        return None
    return {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "timestamp": timestamp if _is_int(timestamp) else None,
    }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def event_id(station: Station | str, origin: Origin | None) -> str | None:
    """Deterministic id of the event one station makes from one origin record; None offline.

    ``<station>:<topic>:<partition>:<offset>:<timestamp>`` — readable, the same on every
    re-delivery, and different for a record at the same offset of a topic that was deleted and
    created again (its records carry new timestamps), so an idempotent consumer never drops them.
    A missing timestamp is written ``-``.
    """
    if origin is None:
        return None
    timestamp = origin["timestamp"]
    stamp = "-" if timestamp is None else str(timestamp)
    return f"{station}:{origin['topic']}:{origin['partition']}:{origin['offset']}:{stamp}"


def shown(value: Any) -> str:
    """A value from the input as a message quotes it: its ``repr``, cut to a few dozen characters."""
    text = repr(value)
    return text if len(text) <= MAX_SHOWN_CHARS else f"{text[: MAX_SHOWN_CHARS - 1]}…"


def rejection(
    reason: DeadLetterReason, error: str, run_id: Any = None, tool_call_id: Any = None
) -> Rejection:
    """The dead-letter core of a rejected record; the ids are given only when both are valid ids."""
    both_valid = is_valid_id(run_id) and is_valid_id(tool_call_id)
    return {
        "reason": reason,
        "error": error if len(error) <= MAX_ERROR_CHARS else f"{error[: MAX_ERROR_CHARS - 1]}…",
        "run_id": run_id if both_valid else None,
        "tool_call_id": tool_call_id if both_valid else None,
    }


def key_for(run_id: Any, record: Record) -> bytes | None:
    """Outputs are keyed by run id; without a valid one, by the consumed record's own key."""
    return run_id.encode("ascii") if is_valid_id(run_id) else record.key


def dead_letter(
    rejected: Rejection, *, station: Station, origin: Origin | None, record: Record, max_value_bytes: int
) -> DeadLetter:
    """A dead letter with the original bytes (cut to ``max_value_bytes``) and where to find them."""
    value = record.value
    kept = value[:max_value_bytes]
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(kept).decode("ascii"), "base64"
    else:  # UTF-8 text: a cut that splits a character drops only that character's first bytes
        text, encoding = kept.decode("utf-8", errors="ignore"), "utf-8"
    key_text = None if record.key is None else record.key.decode("utf-8", errors="replace")
    source = record.coordinates
    return {
        "event_id": _dead_letter_id(station, origin or source),
        "origin": origin,
        "station": station,
        "reason": rejected["reason"],
        "error": rejected["error"],
        "run_id": rejected["run_id"],
        "tool_call_id": rejected["tool_call_id"],
        "source": {
            "topic": record.topic,
            "partition": record.partition,
            "offset": record.offset,
            "timestamp": record.timestamp,
        },
        "key": key_text,
        "value": text,
        "value_encoding": encoding,  # type: ignore[typeddict-item]
        "value_bytes": len(value),
        "value_sha256": sha256_hex(value),
    }


def _dead_letter_id(station: Station, origin: Origin | None) -> str | None:
    return event_id(f"{Station.DEAD_LETTER}.{station}", origin)


def audit_record(
    *,
    station: Station,
    event: str | None,
    run_id: str | None,
    tool_call_id: str | None,
    origin: Origin | None,
    record: Record,
    fields: AuditFigures,
    processed_at: str,
) -> AuditRecord:
    """One audit record of one station for one consumed record (ids only when valid).

    ``fields`` are ``station``'s figures (:mod:`models.audit`): which figures go with which station is
    the pipeline's to keep, and the contract tests hold every record to the topic's schema.
    """
    source: SourceRef = {"topic": record.topic, "partition": record.partition, "offset": record.offset}  # type: ignore[typeddict-item]
    made = {
        "event_id": event,
        "run_id": run_id if is_valid_id(run_id) else None,
        "tool_call_id": tool_call_id if is_valid_id(tool_call_id) else None,
        "station": station,
        "origin": origin,
        "source": source,
        "source_timestamp": origin["timestamp"] if origin is not None else None,
        "processed_at": processed_at,
        "fields": fields,
    }
    return cast(AuditRecord, made)  # a union by station: the pipeline pairs each station with its figures


# --- outcome → messages --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome(Generic[T]):
    """Everything one consumed record makes happen at one station.

    ``event_id`` is the station's event id for this record (its outputs carry it; its audit record
    and the agent's log line use it as is); ``outputs`` are the station's own encoded values
    (``postprocessed``, ``projected``, ``ledger``, ``verdicts`` + ``violations``, ``reports``);
    ``rejection`` becomes the one dead letter, ``exception`` the class behind it (the dead letter's
    headers); ``audit`` holds the station's figures; ``detail`` is the station's typed result (a
    LookupResult, a projection, a stored entry, a verdict) for the offline CLI and ``replay``.
    """

    station: Station
    origin: Origin | None
    event_id: str | None
    run_id: str | None
    tool_call_id: str | None
    outputs: tuple[Output, ...] = ()
    rejection: Rejection | None = None
    exception: str | None = None
    audit: AuditFigures
    detail: T


class DeadLetterLimits(Protocol):
    """What :func:`emissions` reads of its rules: how much of a rejected value a dead letter keeps."""

    @property
    def dead_letters(self) -> DeadLetterSettings: ...


def emissions(
    outcome: Outcome[object], record: Record, limits: DeadLetterLimits, processed_at: str
) -> list[Output]:
    """Every message one outcome produces: its outputs, its dead letter (and that letter's audit
    record) when it rejected the record, and the station's audit record — in that order."""
    station, origin = outcome.station, outcome.origin
    messages = list(outcome.outputs)
    if outcome.rejection is not None:
        refused = outcome.rejection
        letter = dead_letter(
            refused,
            station=station,
            origin=origin,
            record=record,
            max_value_bytes=limits.dead_letters.dead_letter_max_value_bytes,
        )
        key = key_for(refused["run_id"], record)
        headers = dead_letter_headers(letter, outcome.exception)
        messages.append(Output(Topic.DEAD_LETTERS, key, codec.dumps(letter), headers))
        fields = DeadLetterFigures(reason=refused["reason"], error=refused["error"], station=station)
        audit = audit_record(
            station=Station.DEAD_LETTER,
            event=letter["event_id"],
            run_id=refused["run_id"],
            tool_call_id=refused["tool_call_id"],
            origin=origin,
            record=record,
            fields=fields,
            processed_at=processed_at,
        )
        messages.append(Output(Topic.AUDIT, key, encode_audit(audit)))
    audit = audit_record(
        station=station,
        event=outcome.event_id,
        run_id=outcome.run_id,
        tool_call_id=outcome.tool_call_id,
        origin=origin,
        record=record,
        fields=outcome.audit,
        processed_at=processed_at,
    )
    messages.append(Output(Topic.AUDIT, key_for(outcome.run_id, record), encode_audit(audit)))
    return messages


def _be(value: int | None, size: int) -> bytes:
    return b"" if value is None else value.to_bytes(size, "big", signed=True)


def dead_letter_headers(letter: DeadLetter, exception: str | None) -> Headers:
    """Kafka headers in the style redrive tools read (Spring Kafka's ``kafka_dlt-*``), plus ours.

    Partition is a 4-byte and offset/timestamp 8-byte big-endian integer, as Spring writes them;
    ``ec-reason`` and ``ec-station`` are UTF-8 text.
    """
    source = letter["source"]
    headers: list[tuple[str, bytes]] = []
    if source["topic"] is not None:
        headers += [
            ("kafka_dlt-original-topic", source["topic"].encode()),
            ("kafka_dlt-original-partition", _be(source["partition"], 4)),
            ("kafka_dlt-original-offset", _be(source["offset"], 8)),
        ]
        if source["timestamp"] is not None:
            headers.append(("kafka_dlt-original-timestamp", _be(source["timestamp"], 8)))
    headers += [
        ("kafka_dlt-exception-fqcn", (exception or letter["reason"]).encode()),
        ("kafka_dlt-exception-message", letter["error"].encode("utf-8", "replace")[:1024]),
        ("ec-reason", str(letter["reason"]).encode()),
        ("ec-station", str(letter["station"]).encode()),
    ]
    return tuple(headers)


def encode_audit(audit: AuditRecord) -> bytes:
    """An audit record's bytes; a figure JSON cannot hold is replaced by why, the record is kept."""
    try:
        return codec.dumps(audit)
    except codec.JSONEncodeError as exc:  # a figure JSON cannot hold: keep the record, say why
        return codec.dumps({**audit, "fields": {"unencodable": f"{type(exc).__name__}: {exc}"}})
