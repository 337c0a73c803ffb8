"""Guard check C: re-read a projection from the ledger; the draft's words are never evidence (SPEC 4).

Precedence: TAMPERED (hash first), INVALID if the bytes are not a JSON object, UNKNOWN_FIELD (at any
level), then the remaining INVALID checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from models.ledger import LedgerEntry
from models.projection import EVIDENCE_ITEM_FIELDS, RAG_TOOL_RESULT_FIELDS, RagToolResult
from models.vocab import EvidenceStatus, RelevanceLevel, ViolationCode
from streams import codec
from streams.codec import JSONObject
from streams.trust.integrity import EntryFault, check_entry
from streams.trust.keys import TrustedKeys

_TOP = frozenset(RAG_TOOL_RESULT_FIELDS)
_ITEM = frozenset(EVIDENCE_ITEM_FIELDS)
_STATUSES = frozenset(EvidenceStatus)
_LEVELS = frozenset(RelevanceLevel)


@dataclass(frozen=True, slots=True)
class Reread:
    """The outcome of re-reading one entry: the projection, or the code that refused it."""

    result: RagToolResult | None
    code: ViolationCode | None = None
    detail: str = ""


def _fail(code: ViolationCode, detail: str) -> Reread:
    return Reread(None, code, detail)


def _is_str_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _unknown_field(doc: JSONObject) -> str | None:
    extra = sorted(set(doc) - _TOP)
    if extra:
        return f"unknown field {extra[0]!r}"
    evidence = doc.get("evidence")
    if isinstance(evidence, list):
        for index, item in enumerate(evidence):
            if isinstance(item, dict):
                extra = sorted(set(item) - _ITEM)
                if extra:
                    return f"unknown field evidence[{index}].{extra[0]}"
    return None


def _invalid(doc: JSONObject, tool_call_id: str) -> str | None:
    missing = [name for name in RAG_TOOL_RESULT_FIELDS if name not in doc]
    if missing:
        return f"missing field {missing[0]!r}"
    if not isinstance(doc["evidence_status"], str) or doc["evidence_status"] not in _STATUSES:
        return f"unknown evidence_status {doc['evidence_status']!r}"
    level = doc["relevance_level"]
    if level is not None and (not isinstance(level, str) or level not in _LEVELS):
        return f"unknown relevance_level {doc['relevance_level']!r}"
    if not isinstance(doc["tool_call_id"], str) or not isinstance(doc["query"], str):
        return "tool_call_id and query must be strings"
    if not isinstance(doc["truncated"], bool):
        return "truncated must be a boolean"
    count = doc["returned_count"]
    if not isinstance(count, int) or isinstance(count, bool):
        return "returned_count must be an integer"
    evidence = doc["evidence"]
    if not isinstance(evidence, list):
        return "evidence must be a list"
    for index, item in enumerate(evidence):
        if not isinstance(item, dict):
            return f"evidence[{index}] must be an object"
        absent = [name for name in EVIDENCE_ITEM_FIELDS if name not in item]
        if absent:
            return f"evidence[{index}] lacks {absent[0]!r}"
        if not isinstance(item["document_id"], str) or not isinstance(item["excerpt"], str):
            return f"evidence[{index}]: document_id and excerpt must be strings"
        if not all(_is_str_or_null(item[name]) for name in ("source", "title", "breadcrumb")):
            return f"evidence[{index}]: source, title and breadcrumb must be strings or null"
    if count != len(evidence):
        return f"returned_count {count} but {len(evidence)} items"
    if doc["tool_call_id"] != tool_call_id:
        return f"tool_call_id {doc['tool_call_id']!r} is not the key's {tool_call_id!r}"
    return None


def reread(entry: LedgerEntry, tool_call_id: str, trusted: TrustedKeys | None = None) -> Reread:
    """Re-read and check the stored projection of one ledger entry.

    With ``trusted`` keys (SPEC 3.7), an entry that is unsigned, not signed by a trusted ledger key, or
    whose signature does not verify over its stored fields is TAMPERED, checked right after the hash
    (:func:`streams.trust.integrity.check_entry`).
    """
    held = check_entry(entry, trusted)  # the one "does this entry hold?" (hash, then signature)
    if held.fault in (EntryFault.HASH, EntryFault.SIGNATURE):
        return _fail(ViolationCode.LEDGER_PAYLOAD_TAMPERED, held.detail)
    if held.data is None:
        return _fail(ViolationCode.LEDGER_PAYLOAD_INVALID, "the entry holds no projection")
    data = held.data
    try:
        # Canonical bytes never repeat a name; stored bytes that do are not JSON here, as in a draft
        # (SPEC 4 A.1): which of the two values would be "the" projection is not ours to pick.
        doc = codec.loads_unique(data)
    except codec.JSONDecodeError as exc:
        return _fail(ViolationCode.LEDGER_PAYLOAD_INVALID, f"the projection is not JSON: {exc}")
    if not isinstance(doc, dict):
        return _fail(ViolationCode.LEDGER_PAYLOAD_INVALID, "the projection is not a JSON object")
    unknown = _unknown_field(doc)
    if unknown is not None:
        return _fail(ViolationCode.LEDGER_PAYLOAD_UNKNOWN_FIELD, unknown)
    invalid = _invalid(doc, tool_call_id)
    if invalid is not None:
        return _fail(ViolationCode.LEDGER_PAYLOAD_INVALID, invalid)
    return Reread(cast(RagToolResult, doc))
