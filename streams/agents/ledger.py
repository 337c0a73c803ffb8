"""The ledger agent: ``projected`` → Redis write-once → ``ledger`` (the entry as stored)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.events import Origin, Rejection
from models.ids import is_valid_id
from models.ledger import LedgerEntry
from models.vocab import DeadLetterReason, LedgerOutcome, LedgerStatus, RecordStatus, Station, parse_reason
from streams import json
from streams.agents.base import StationProcessor
from streams.envelope import event_id, read_origin
from streams.errors import rejection
from streams.ledger_store import LedgerStore, WriteResult
from streams.pipeline import internal_error
from streams.runtime import Outbound, Record, Sink, hold_until_done
from streams.settings import Settings


@dataclass(frozen=True, slots=True)
class _Planned:
    record: Record
    origin: Origin | None
    entry: LedgerEntry | None
    rejection: Rejection | None


def build_entry(
    value: bytes, fallback_origin: Origin
) -> tuple[LedgerEntry | None, Rejection | None, Origin | None]:
    """The ledger entry a ``projected`` value asks for, or why it cannot be written."""
    try:
        event = json.loads(value)
    except json.JSONDecodeError as exc:
        return None, rejection(DeadLetterReason.MALFORMED_JSON, str(exc)), None
    if not isinstance(event, dict):
        return None, rejection(DeadLetterReason.MALFORMED_JSON, "not an object"), None
    origin = read_origin(event.get("origin")) or fallback_origin
    run_id, tool_call_id = event.get("run_id"), event.get("tool_call_id")
    if not is_valid_id(run_id) or not is_valid_id(tool_call_id):
        bad = "run_id" if not is_valid_id(run_id) else "tool_call_id"
        return (
            None,
            rejection(DeadLetterReason.INVALID_ID, f"bad {bad}: must be 1-128 of [A-Za-z0-9._-]"),
            origin,
        )
    status = event.get("status")
    projection, sha = event.get("projection"), event.get("projection_sha256")
    evidence_status = None
    if status == RecordStatus.OK:
        if not isinstance(projection, str) or json.sha256_hex(projection.encode("utf-8")) != sha:
            error = (
                "projection missing or its projection_sha256 does not match; the projected value is corrupt"
            )
            return None, rejection(DeadLetterReason.SCHEMA_VIOLATION, error, run_id, tool_call_id), origin
        parsed = json.loads(projection)
        evidence_status = parsed.get("evidence_status") if isinstance(parsed, dict) else None
        ledger_status, failure = LedgerStatus.READY, None
    elif status == RecordStatus.FAILED:
        reason = event.get("failure_reason")
        failure = parse_reason(reason) or DeadLetterReason.INTERNAL_ERROR
        ledger_status, projection, sha = LedgerStatus.FAILED, None, None
    else:
        error = f"status must be OK or FAILED, not {status!r}"
        return None, rejection(DeadLetterReason.SCHEMA_VIOLATION, error, run_id, tool_call_id), origin
    entry: LedgerEntry = {
        "event_id": event_id(Station.LEDGER, origin),
        "run_id": str(run_id),
        "tool_call_id": str(tool_call_id),
        "status": ledger_status,
        "evidence_status": evidence_status,
        "projection": projection,
        "projection_sha256": sha,
        "origin": origin,
        "source_timestamp": origin["timestamp"],
        "failure_reason": failure,
    }
    return entry, None, origin


class LedgerProcessor(StationProcessor):
    """Writes each projection once; what the agent was shown is never overwritten."""

    station = Station.LEDGER

    def __init__(self, settings: Settings, sink: Sink, store: LedgerStore) -> None:
        super().__init__(settings, sink)
        self.store = store

    def _plan(self, record: Record) -> _Planned:
        try:
            entry, refused, origin = build_entry(record.value, record.coordinates)
        except Exception as exc:  # noqa: BLE001 - an unexpected failure is an INTERNAL_ERROR dead letter
            return _Planned(record, record.coordinates, None, internal_error(exc))
        return _Planned(record, origin, entry, refused)

    def _after_write(self, planned: _Planned, entry: LedgerEntry, result: WriteResult) -> list[Outbound]:
        record, origin = planned.record, planned.origin
        key = self.key_for(entry["run_id"], record)
        messages: list[Outbound] = []
        if result.outcome in (LedgerOutcome.WRITTEN, LedgerOutcome.DUPLICATE):
            stored: dict[str, Any] = dict(result.stored)
            messages.append(
                self.out(
                    "ledger",
                    key,
                    {
                        "event_id": stored["event_id"],
                        **{
                            k: stored[k]
                            for k in (
                                "run_id",
                                "tool_call_id",
                                "status",
                                "evidence_status",
                                "projection",
                                "projection_sha256",
                                "origin",
                                "source_timestamp",
                                "failure_reason",
                            )
                        },
                    },
                )
            )
        elif entry["status"] == LedgerStatus.READY:  # a CONFLICT on a FAILED write is audited only
            error = (
                f"{result.key} already holds sha256 {result.stored['projection_sha256']} "
                f"({result.stored['status']}); refusing {entry['projection_sha256']} ({entry['status']})"
            )
            messages += self.reject(
                record,
                origin,
                rejection(DeadLetterReason.LEDGER_CONFLICT, error, entry["run_id"], entry["tool_call_id"]),
            )
        fields = {"status": entry["status"], "outcome": result.outcome, "key": result.key}
        messages.append(
            self.audit(
                record, origin, run_id=entry["run_id"], tool_call_id=entry["tool_call_id"], fields=fields
            )
        )
        return messages

    async def handle(self, records: Sequence[Record]) -> None:
        """Plan every entry, write the batch in one Redis round trip, then deliver all messages."""
        plans = [self._plan(record) for record in records]
        to_write = [p.entry for p in plans if p.entry is not None]
        results = await hold_until_done(
            lambda: self.store.write_many(to_write),
            what=f"ledger: writing {len(to_write)} entries",
            backoff=self.backoff,
        )
        written = iter(results)
        messages: list[Outbound] = []
        for plan in plans:
            if plan.entry is not None:
                messages += self._after_write(plan, plan.entry, next(written))
                continue
            refused = plan.rejection or internal_error(
                RuntimeError("a ledger plan without entry or rejection")
            )
            messages += self.reject(plan.record, plan.origin, refused)
            messages.append(
                self.audit(
                    plan.record,
                    plan.origin,
                    run_id=refused["run_id"],
                    tool_call_id=refused["tool_call_id"],
                    fields={"status": None, "outcome": None, "key": None},
                )
            )
        await self.deliver(messages)
