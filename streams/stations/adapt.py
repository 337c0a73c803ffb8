"""Station 1, the anti-corruption layer: validate a raw-hits record and adapt py-rag's hits (SPEC 2, 3.1).

Only this module knows py-rag's field names; every later station reads ``KnowledgeSearchHit``.
"""

from __future__ import annotations

from typing import Literal

from models.ids import is_valid_id
from models.limits import InputLimits
from models.rag import PY_RAG_RESPONSE_ADAPTER, KnowledgeSearchHit, PyRagResponse, RawHitsRecord
from models.validation import ContractError, validate
from models.vocab import ATTEMPT_REASON, SCORE_LABEL
from streams import codec
from streams.codec import JSONObject
from streams.errors import InvalidId, MalformedJson, OversizedInput, SchemaViolation

_MAX_CHUNK_DIGITS = 18  # SPEC 3.1: 1-18 ASCII digits, so every chunk index fits a signed 64-bit integer


def parse_object(raw: bytes | str) -> JSONObject:
    """Parse strict JSON whose top level must be an object.

    Raises:
        MalformedJson: not UTF-8, not strict JSON, or not an object.
    """
    try:
        value = codec.loads(raw)
    except codec.JSONDecodeError as exc:
        raise MalformedJson(str(exc)) from exc
    if not isinstance(value, dict):
        raise MalformedJson("not an object")
    return value


def _readable_ids(raw: bytes) -> tuple[str | None, str | None]:
    """The ids of a record too large to process, if it parses: a FAILED entry can then record it.

    The broker caps a value at 4 MiB, so parsing once more is bounded.
    """
    try:
        doc = codec.loads(raw)
    except codec.JSONDecodeError:
        return None, None
    if not isinstance(doc, dict):
        return None, None
    run_id, tool_call_id = doc.get("run_id"), doc.get("tool_call_id")
    if is_valid_id(run_id) and is_valid_id(tool_call_id):
        return str(run_id), str(tool_call_id)
    return None, None


def validate_raw_hits(raw: bytes, limits: InputLimits) -> RawHitsRecord:
    """Validate one raw-hits value (SPEC 2) in the SPEC's order: size, strict JSON object, ids, schema.

    A value nested more than 64 levels deep anywhere (unknown fields included) is a schema
    violation: what we read, we can also write back.

    Raises:
        OversizedInput, MalformedJson, InvalidId, SchemaViolation: the record is rejected; the
            exception carries the reason and, when readable, the ids.
    """
    if len(raw) > limits.max_message_bytes:
        run_id, tool_call_id = _readable_ids(raw)
        raise OversizedInput(
            f"value is {len(raw)} bytes, over max_message_bytes={limits.max_message_bytes}; "
            "split the response or raise EC_INPUT__MAX_MESSAGE_BYTES",
            run_id=run_id,
            tool_call_id=tool_call_id,
        )
    doc = parse_object(raw)
    run_id, tool_call_id = doc.get("run_id"), doc.get("tool_call_id")
    if not is_valid_id(run_id):
        raise InvalidId("bad run_id: must be 1-128 characters of [A-Za-z0-9._-]", run_id=None)
    if not is_valid_id(tool_call_id):
        raise InvalidId("bad tool_call_id: must be 1-128 characters of [A-Za-z0-9._-]", run_id=run_id)
    if codec.nested_deeper_than(raw, doc):
        raise SchemaViolation(
            f"the record nests arrays/objects more than {codec.MAX_DEPTH} levels deep; flatten the "
            "deepest field (often retrieval_trace)",
            run_id=run_id,
            tool_call_id=tool_call_id,
        )
    response = doc.get("response")
    if not isinstance(response, dict):
        raise SchemaViolation("response: must be an object", run_id=run_id, tool_call_id=tool_call_id)
    hits = response.get("hits")
    if isinstance(hits, list) and len(hits) > limits.max_hits:
        raise SchemaViolation(
            f"hits: {len(hits)} hits, over max_hits={limits.max_hits}",
            run_id=run_id,
            tool_call_id=tool_call_id,
        )
    try:
        validated = validate(PY_RAG_RESPONSE_ADAPTER, response)
    except ContractError as exc:
        raise SchemaViolation(str(exc), run_id=run_id, tool_call_id=tool_call_id) from exc
    return {"run_id": str(run_id), "tool_call_id": str(tool_call_id), "response": validated}


def chunk_index(evidence_key: str) -> int | None:
    """The N of an evidence key ending in ``#chunk-N`` with N of 1-18 ASCII digits, else None.

    The length is checked before ``int``: a 5,000-digit number is not a chunk index, and parsing it
    would hit Python's int-from-string limit.
    """
    _, marker, digits = evidence_key.rpartition("#chunk-")
    if (
        not marker
        or not 1 <= len(digits) <= _MAX_CHUNK_DIGITS
        or not digits.isascii()
        or not digits.isdigit()
    ):
        return None
    return int(digits)


_RANK_REASONS = tuple(f"semantic_rank:{rank}" for rank in range(1001))  # index = rank; built once


def rank_reason(rank: int) -> str:
    """``semantic_rank:<rank>``: where this hit stood in py-rag's answer."""
    return _RANK_REASONS[rank] if rank < len(_RANK_REASONS) else f"semantic_rank:{rank}"


def adapt(response: PyRagResponse) -> list[KnowledgeSearchHit]:
    """One KnowledgeSearchHit per hit, in array order.

    ``no_evidence`` means there are no candidates, even if py-rag sent hits.
    """
    if response["evidence_status"] == "no_evidence":
        return []
    hits: list[KnowledgeSearchHit] = []
    append = hits.append  # this loop runs once per hit of every record: keep it tight
    for rank, hit in enumerate(response["hits"], start=1):
        key = hit["evidence_key"]
        append(
            {
                "evidence_key": key,
                "doc_id": hit["document_id"],
                "chunk_index": chunk_index(key),
                "content": hit["excerpt"],
                "score": hit["quality_score"],
                "score_label": SCORE_LABEL,
                "original_rank": rank,
                "source": hit["source"],
                "title": hit.get("title"),
                "breadcrumb": hit.get("breadcrumb"),
                "hit_reasons": [rank_reason(rank), ATTEMPT_REASON],
            }
        )
    return hits


def contract_anomaly(response: PyRagResponse) -> Literal["hits_with_no_evidence"] | None:
    """A py-rag contract oddity worth auditing: ``no_evidence`` that still carries hits."""
    if response["evidence_status"] == "no_evidence" and response["hits"]:
        return "hits_with_no_evidence"
    return None
