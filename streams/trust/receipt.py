"""A receipt: a verdict and the ledger entries it rests on, checkable offline with trusted keys (SPEC 4.1).

``{"receipt": "evidence-chain/receipt/v1", "verdict": <as on the topic>, "entries": [<each entry the
snapshot lists, as stored, in snapshot order>], "public_keys": {<key_id>: <64 hex>}}``.

It verifies when the verdict's and every entry's signature verify under trusted keys, every entry's
projection hashes to its ``projection_sha256``, and every snapshot item equals what its entry's
projection holds. What the signatures do not cover is metadata, not proof: ``event_id``, ``origin``,
timestamps and the violations' ``message`` texts (an explanation for people; ``code`` and ``path``
are signed). ``public_keys`` is a convenience for the reader: only the trusted keys decide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from models.vocab import FALLBACK_LIMITATION
from streams import codec
from streams.hashing import sha256_hex
from streams.trust.keys import TrustedKeys, key_id_of

RECEIPT_KIND = "evidence-chain/receipt/v1"

SNAPSHOT_FIELDS: tuple[str, ...] = (
    "tool_call_id",
    "evidence_status",
    "relevance_level",
    "truncated",
    "projection_sha256",
    "evidence",
)
_FROM_PROJECTION = ("tool_call_id", "evidence_status", "relevance_level", "truncated", "evidence")


def build_receipt(
    verdict: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], keys: TrustedKeys | None
) -> dict[str, Any]:
    """The receipt of ``verdict``, with ``entries`` (by tool call id, as stored) in snapshot order.

    ``public_keys`` lists each signing key the verdict and entries name that ``keys`` holds.

    Raises:
        KeyError: an entry the snapshot lists is missing (the receipt would not verify).
    """
    chosen: list[Mapping[str, Any]] = []
    for item in verdict.get("evidence_snapshot") or []:
        tool_call_id = item["tool_call_id"]
        if tool_call_id not in entries:
            raise KeyError(tool_call_id)
        chosen.append(entries[tool_call_id])
    named: list[Any] = [(verdict.get("signature") or {}).get("key_id")]
    named += [entry.get("key_id") for entry in chosen]
    public_keys: dict[str, str] = {}
    for key_id in named:
        hexed = keys.public_hex(key_id) if keys is not None and isinstance(key_id, str) else None
        if hexed is not None:
            public_keys[key_id] = hexed
    return {
        "receipt": RECEIPT_KIND,
        "verdict": dict(verdict),
        "entries": [dict(e) for e in chosen],
        "public_keys": public_keys,
    }


def _same_json(a: Any, b: Any) -> bool:
    """Whether two parsed values are the same JSON: key order ignored, ``true`` never equal to ``1``."""
    try:
        return codec.dumps_sorted(a) == codec.dumps_sorted(b)
    except codec.JSONEncodeError:  # nested too deep to write: not what a projection holds
        return False


def _entry_failures(where: str, entry: Any, item: Any, run_id: Any, trusted: TrustedKeys) -> list[str]:
    if not isinstance(entry, Mapping):
        return [f"{where}: not an object"]
    out: list[str] = []
    why = trusted.verify_entry(entry)
    if why is not None:
        out.append(f"{where}: {why}")
    if entry.get("run_id") != run_id:
        out.append(f"{where}: run_id {entry.get('run_id')!r} is not the verdict's {run_id!r}")
    if entry.get("status") != "READY":
        out.append(f"{where}: status {entry.get('status')!r}, not READY")
    projection, sha = entry.get("projection"), entry.get("projection_sha256")
    if not isinstance(projection, str) or sha256_hex(projection.encode("utf-8", "surrogatepass")) != sha:
        out.append(f"{where}: the projection does not hash to its projection_sha256")
        return out
    if not isinstance(item, Mapping):
        return [*out, f"{where}: its snapshot item is not an object"]
    if set(item) != set(SNAPSHOT_FIELDS):
        out.append(f"{where}: its snapshot item must have exactly the fields {', '.join(SNAPSHOT_FIELDS)}")
    if item.get("projection_sha256") != sha:
        out.append(f"{where}: the snapshot's projection_sha256 is not the entry's")
    try:
        shown = codec.loads(projection)
    except codec.JSONDecodeError:
        return [*out, f"{where}: the projection is not JSON"]
    if not isinstance(shown, Mapping):
        return [*out, f"{where}: the projection is not a JSON object"]
    for name in _FROM_PROJECTION:
        if name not in shown or not _same_json(item.get(name), shown[name]):
            out.append(f"{where}: the snapshot's {name} differs from the entry's projection")
    return out


def verify_receipt(doc: Any, trusted: TrustedKeys) -> list[str]:
    """Every reason ``doc`` does not verify under ``trusted`` (empty: it verifies). One line each."""
    if not isinstance(doc, Mapping):
        return ["the receipt is not a JSON object"]
    out: list[str] = []
    if doc.get("receipt") != RECEIPT_KIND:
        out.append(f"receipt: not {RECEIPT_KIND!r}")
    verdict, entries = doc.get("verdict"), doc.get("entries")
    if not isinstance(verdict, Mapping):
        return [*out, "verdict: missing or not an object"]
    why = trusted.verify_verdict(verdict)
    if why is not None:
        out.append(f"verdict: {why}")
    out += _verdict_shape(verdict)
    keys = doc.get("public_keys", {})
    if not isinstance(keys, Mapping):
        out.append("public_keys: not an object")
    else:
        for key_id, hexed in keys.items():
            try:
                matches = isinstance(hexed, str) and key_id_of(bytes.fromhex(hexed)) == key_id
            except ValueError:
                matches = False
            if not matches:
                out.append(f"public_keys[{key_id!r}]: the key does not hash to its key_id")
    snapshot = verdict.get("evidence_snapshot")
    snapshot = snapshot if isinstance(snapshot, list) else []
    if not isinstance(entries, list):
        return [*out, "entries: missing or not a list"]
    if len(entries) != len(snapshot):
        out.append(f"entries: {len(entries)} entries for {len(snapshot)} snapshot items")
    for index, (entry, item) in enumerate(zip(entries, snapshot, strict=False)):
        tool_call_id = item.get("tool_call_id") if isinstance(item, Mapping) else None
        where = f"entries[{index}] ({tool_call_id})"
        if isinstance(entry, Mapping) and entry.get("tool_call_id") != tool_call_id:
            out.append(f"{where}: the entry is for {entry.get('tool_call_id')!r}, not the snapshot's call")
        out += _entry_failures(where, entry, item, verdict.get("run_id"), trusted)
    return out


def _verdict_shape(verdict: Mapping[str, Any]) -> list[str]:
    """What the verdict's own fields imply of each other (the unsigned ones included)."""
    out: list[str] = []
    listed = verdict.get("violations")
    violations: Sequence[Any] = listed if isinstance(listed, list) else []
    count = verdict.get("violation_count")
    kind = verdict.get("verdict")
    if not isinstance(count, int) or isinstance(count, bool) or count < len(violations):
        out.append("verdict: violation_count is not a count of at least the listed violations")
    elif verdict.get("violations_truncated") is not (count > len(violations)):
        out.append("verdict: violations_truncated does not match violation_count")
    if (kind == "PASS") != (count == 0):
        out.append(f"verdict: {kind!r} with violation_count {count!r}")
    if kind not in ("PASS", "REJECT", "FALLBACK"):
        out.append(f"verdict: unknown verdict {kind!r}")
    report = verdict.get("fallback_report")
    fixed = {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}
    if report != (fixed if kind == "FALLBACK" else None):
        out.append("verdict: fallback_report must be the fixed report exactly when FALLBACK, else null")
    return out
