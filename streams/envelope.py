"""Pure helpers for the envelope every event carries: origin, event ids, dead letters, audit records.

Nothing here reads a clock except :func:`audit_record`, whose ``processed_at`` is the only
wall-clock field anywhere; every other byte is a function of the input, so replays repeat them.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from models.events import AuditRecord, DeadLetter, Origin, Rejection, SourceRef
from models.vocab import Station
from streams import json


def origin_of(topic: str, partition: int, offset: int, timestamp: int | None) -> Origin:
    """The origin of a chain: the raw-hits or diagnosis-drafts record that started it."""
    return {"topic": topic, "partition": partition, "offset": offset, "timestamp": timestamp}


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
    return origin_of(topic, partition, offset, timestamp if _is_int(timestamp) else None)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def event_id(station: Station | str, origin: Origin) -> str:
    """Deterministic id of the event one station makes from one origin record.

    ``<station>:<topic>:<partition>:<offset>`` — readable, and the same on every re-delivery.
    """
    return f"{station}:{origin['topic']}:{origin['partition']}:{origin['offset']}"


def dead_letter(
    rejection: Rejection,
    *,
    station: Station,
    origin: Origin | None,
    source: Origin,
    key: bytes | None,
    value: bytes,
    max_value_bytes: int,
) -> DeadLetter:
    """A dead letter with the original bytes (cut to ``max_value_bytes``) and where to find them."""
    kept = value[:max_value_bytes]
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(kept).decode("ascii"), "base64"
    else:  # UTF-8 text: a cut that splits a character drops only that character's first bytes
        text, encoding = kept.decode("utf-8", errors="ignore"), "utf-8"
    key_text = None if key is None else key.decode("utf-8", errors="replace")
    return {
        "event_id": event_id(f"{Station.DEAD_LETTER}.{station}", origin or source),
        "origin": origin,
        "station": station,
        "reason": rejection["reason"],
        "error": rejection["error"],
        "run_id": rejection["run_id"],
        "tool_call_id": rejection["tool_call_id"],
        "source": {
            "topic": source["topic"],
            "partition": source["partition"],
            "offset": source["offset"],
            "timestamp": source["timestamp"],
        },
        "key": key_text,
        "value": text,
        "value_encoding": encoding,  # type: ignore[typeddict-item]
        "value_bytes": len(value),
        "value_sha256": json.sha256_hex(value),
    }


def audit_record(
    *,
    station: Station,
    event: str,
    run_id: str | None,
    tool_call_id: str | None,
    origin: Origin | None,
    source: SourceRef,
    fields: dict[str, Any],
    now: datetime | None = None,
) -> AuditRecord:
    """One audit record; ``now`` is injectable for tests."""
    at = (now or datetime.now(UTC)).isoformat(timespec="milliseconds")
    return {
        "event_id": event,
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "station": station,
        "origin": origin,
        "source": source,
        "source_timestamp": origin["timestamp"] if origin is not None else None,
        "processed_at": at,
        "fields": fields,
    }
