"""The bytes a signature covers (SPEC 3.7 for ledger entries, 4.1 for verdicts). Pure.

Each message is a run of netstrings, ``<byte length in decimal>:<UTF-8 bytes>,``, so no field can
run into the next: ``24:evidence-chain/ledger/v1,2:r1,2:c1,5:READY,…``. A field that is absent or
null is the empty string (``0:,``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

LEDGER_CONTEXT = "evidence-chain/ledger/v1"
VERDICT_CONTEXT = "evidence-chain/verdict/v1"

ENTRY_SIGNED_FIELDS: tuple[str, ...] = (
    "run_id",
    "tool_call_id",
    "status",
    "projection_sha256",
    "evidence_status",
    "failure_reason",
)
"""The entry's fields the signature covers, in message order; the projection is covered by its hash."""


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):  # never a field's legal value; spelled as JSON would
        return "true" if value else "false"
    return str(value)


def netstrings(fields: Iterable[Any]) -> bytes:
    """Each field as a netstring, concatenated; None is the empty string."""
    out = bytearray()
    for field in fields:
        data = _text(field).encode("utf-8", "surrogatepass")
        out += b"%d:%s," % (len(data), data)
    return bytes(out)


def entry_message(entry: Mapping[str, Any]) -> bytes:
    """What a ledger entry's signature covers, from its stored fields (SPEC 3.7)."""
    return netstrings((LEDGER_CONTEXT, *(entry.get(name) for name in ENTRY_SIGNED_FIELDS)))


def verdict_message(verdict: Mapping[str, Any]) -> bytes:
    """What a verdict's signature covers (SPEC 4.1).

    Missing lists count as empty, so a malformed verdict still has a message (that will not verify)
    rather than an error.
    """
    snapshot = verdict.get("evidence_snapshot") or []
    violations = verdict.get("violations") or []
    fields: list[Any] = [
        VERDICT_CONTEXT,
        verdict.get("run_id"),
        verdict.get("draft_id"),
        verdict.get("draft_sha256"),
        verdict.get("attempt"),
        verdict.get("verdict"),
        verdict.get("violation_count"),
        len(snapshot),
    ]
    for item in snapshot:
        item = item if isinstance(item, Mapping) else {}
        fields += (item.get("tool_call_id"), item.get("projection_sha256"))
    fields.append(len(violations))
    for violation in violations:
        violation = violation if isinstance(violation, Mapping) else {}
        fields += (violation.get("code"), violation.get("path"))
    return netstrings(fields)
