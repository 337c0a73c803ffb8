"""The ledger station's rule: which entry a ``projected`` value asks the write-once ledger for (SPEC 3.6).

Pure: the write itself (one Lua script, atomic) happens at the edge; the outcome of the write is
judged by :func:`conflict_error` and the pipeline.
"""

from __future__ import annotations

from models.events import Origin
from models.ids import is_valid_id
from models.ledger import LedgerEntry
from models.vocab import DeadLetterReason, LedgerStatus, RecordStatus, parse_reason
from streams import codec
from streams.codec import JSONObject
from streams.errors import InvalidId, SchemaViolation
from streams.trust.integrity import check_projection
from streams.trust.keys import Signer


def ledger_entry(
    event: JSONObject, *, origin: Origin | None, event_id: str | None, signer: Signer | None = None
) -> LedgerEntry:
    """The entry a parsed ``projected`` value asks to write.

    With a ``signer`` the entry carries ``key_id`` and ``signature`` over its stored fields (SPEC 3.7).
    The ids are validated again before they become a Redis key. An ``OK`` value must carry a
    projection whose SHA-256 matches: one that does not is corrupt in transit and is not written.

    Raises:
        InvalidId: ``run_id`` or ``tool_call_id`` is not a valid id (no ledger write at all).
        SchemaViolation: the status is neither OK nor FAILED, or the projection does not match its hash.
    """
    run_id, tool_call_id = event.get("run_id"), event.get("tool_call_id")
    if not isinstance(run_id, str) or not isinstance(tool_call_id, str) or not is_valid_id(run_id):
        raise InvalidId("bad run_id: must be 1-128 of [A-Za-z0-9._-]")
    if not is_valid_id(tool_call_id):
        bad = "run_id" if not is_valid_id(run_id) else "tool_call_id"
        raise InvalidId(f"bad {bad}: must be 1-128 of [A-Za-z0-9._-]")
    status = event.get("status")
    projection, sha = event.get("projection"), event.get("projection_sha256")
    evidence_status = None
    if status == RecordStatus.OK:
        held = check_projection(LedgerStatus.READY, projection, sha)
        if not isinstance(projection, str) or not held.holds:
            raise SchemaViolation(
                "projection missing or its projection_sha256 does not match; the projected value is corrupt",
                run_id=run_id,
                tool_call_id=tool_call_id,
            )
        try:
            parsed = codec.loads(projection)
        except codec.JSONDecodeError:
            parsed = None
        evidence_status = parsed.get("evidence_status") if isinstance(parsed, dict) else None
        ledger_status, failure = LedgerStatus.READY, None
    elif status == RecordStatus.FAILED:
        failure = parse_reason(event.get("failure_reason")) or DeadLetterReason.INTERNAL_ERROR
        ledger_status, projection, sha = LedgerStatus.FAILED, None, None
    else:
        raise SchemaViolation(
            f"status must be OK or FAILED, not {str(status)[:40]!r}", run_id=run_id, tool_call_id=tool_call_id
        )
    entry: LedgerEntry = {
        "event_id": event_id,
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": ledger_status,
        "evidence_status": evidence_status,
        "projection": projection,
        "projection_sha256": sha,
        "origin": origin,
        "source_timestamp": origin["timestamp"] if origin is not None else None,
        "failure_reason": failure,
        "written_at": None,
        "expires_at": None,
    }
    if signer is not None:  # deterministic (Ed25519): a re-delivered record signs to the same bytes
        signed = signer.sign_entry(entry)
        entry["key_id"], entry["signature"] = signed["key_id"], signed["signature"]
    return entry


def conflict_error(key: str, stored: LedgerEntry, wanted: LedgerEntry) -> str:
    """Why a write was refused: the key already holds something else (what the agent was shown)."""
    return (
        f"{key} already holds sha256 {stored['projection_sha256']} ({stored['status']}); "
        f"refusing {wanted['projection_sha256']} ({wanted['status']})"
    )
