"""A search request as an agent sends it (``POST /v1/search``): read and checked, nothing else."""

from __future__ import annotations

from dataclasses import dataclass

from models.ids import is_valid_id
from streams import codec
from streams.errors import InvalidId, MalformedJson, SchemaViolation
from streams.search.port import DEFAULT_MODE, Filters

MAX_QUERY_CHARS = 8_192
"""The longest query taken; py-rag's own limit is lower, this one only bounds what is forwarded."""
SEARCH_BODY_BYTES = 64 * 1024
"""The largest search a door takes as JSON (``POST /v1/search``, the MCP ``lookup_knowledge``): ids, a
query of at most :data:`MAX_QUERY_CHARS` characters and py-rag's filters."""


def check_query(query: object) -> str:
    """``query`` if it is a question py-rag may be asked: a string, not blank, of at most 8,192 characters.

    The one rule for every door that takes a query (``POST /v1/search``, the MCP ``lookup_knowledge``).

    Raises:
        SchemaViolation: it is not.
    """
    if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
        raise SchemaViolation(
            f"query: must be a non-empty string of at most {MAX_QUERY_CHARS:,} characters; ask one "
            "question, in words"
        )
    return query


def check_nesting(raw: bytes, search: object) -> None:
    """Refuse a search (``raw``, parsed as ``search``) nested more than 64 arrays/objects deep, as every
    record may be (SPEC 2): the filters are written again for py-rag, and orjson reads JSON 1,024 levels
    deep but writes only about 254, so a deeper search would fail after it was taken.

    The one rule for every door that takes filters (``POST /v1/search``, the MCP ``lookup_knowledge``).

    Raises:
        SchemaViolation: it is nested deeper.
    """
    if codec.nested_deeper_than(raw, search):
        raise SchemaViolation(
            f"filters: nested more than {codec.MAX_DEPTH} arrays/objects deep (with the search around "
            "them), deeper than any record may be; flatten them"
        )


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """One knowledge lookup: the tool call's ids and what to ask py-rag."""

    run_id: str
    tool_call_id: str
    query: str
    filters: Filters | None = None
    mode: str = DEFAULT_MODE


def parse_search_request(raw: bytes) -> SearchRequest:
    """``{"run_id", "tool_call_id", "query", "filters"?, "mode"?}`` as a :class:`SearchRequest`.

    Raises:
        MalformedJson: not strict JSON, or not an object.
        InvalidId: ``run_id`` or ``tool_call_id`` is not 1-128 characters of ``[A-Za-z0-9._-]``.
        SchemaViolation: ``query`` is not a non-empty string of at most 8,192 characters, ``filters``
            not an object (or null) or the body nested more than 64 levels deep, or ``mode`` not a
            non-empty string (or null).
    """
    try:
        doc = codec.loads(raw)
    except codec.JSONDecodeError as exc:
        raise MalformedJson(f"the body is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise MalformedJson('the body must be a JSON object: {"run_id", "tool_call_id", "query", ...}')
    check_nesting(raw, doc)
    run_id, tool_call_id = doc.get("run_id"), doc.get("tool_call_id")
    for name, value in (("run_id", run_id), ("tool_call_id", tool_call_id)):
        if not is_valid_id(value):
            raise InvalidId(f"bad {name}: must be 1-128 characters of [A-Za-z0-9._-]")
    query, filters, mode = check_query(doc.get("query")), doc.get("filters"), doc.get("mode")
    if filters is not None and not isinstance(filters, dict):
        raise SchemaViolation("filters: must be a JSON object (py-rag's filters) or absent")
    if mode is not None and (not isinstance(mode, str) or not mode):
        raise SchemaViolation(f"mode: must be a non-empty string (default {DEFAULT_MODE}) or absent")
    return SearchRequest(str(run_id), str(tool_call_id), query, filters, mode or DEFAULT_MODE)
