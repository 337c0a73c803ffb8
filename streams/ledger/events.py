"""The ``ledger`` topic's events as entries: reading one, and the lifetime it has left (SPEC 3.6).

``ledger rebuild`` restores entries from them and ``ledger check`` compares them with Redis; both
read an event the same way here, so a check never judges an entry the rebuild would treat otherwise.
"""

from __future__ import annotations

from typing import cast

from models.ids import is_valid_id
from models.ledger import LedgerEntry, as_stored
from streams import codec


def entry_of(value: bytes) -> LedgerEntry | None:
    """A ``ledger`` event as a ledger entry, or None when it is not one."""
    try:
        doc = codec.loads(value)
    except codec.JSONDecodeError:
        return None
    if (
        not isinstance(doc, dict)
        or not is_valid_id(doc.get("run_id"))
        or not is_valid_id(doc.get("tool_call_id"))
    ):
        return None
    return as_stored(doc)


def restorable(entry: LedgerEntry, record_timestamp: int | None, ttl_ms: int, now_ms: int) -> LedgerEntry:
    """The entry with the lifetime it really has left.

    A ledger event carries the entry's ``expires_at`` (Redis ``TIME`` when it was written). An event
    written before that field existed lives ``ttl`` from the latest moment it can have been written:
    the ledger event's own timestamp (when the agent produced it), else the origin's.
    """
    if entry.get("expires_at") is not None:
        return entry
    born = record_timestamp or entry.get("source_timestamp") or now_ms
    restored = dict(entry)
    restored["written_at"], restored["expires_at"] = born, born + ttl_ms
    return cast(LedgerEntry, restored)


def expired(expires_at: int | None, now_ms: int) -> bool:
    """Whether an entry's lifetime is over (a restore reports ``EXPIRED``); no expiry counts as over."""
    return (expires_at or 0) <= now_ms
