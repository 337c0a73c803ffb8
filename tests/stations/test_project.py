"""SPEC 3.5 (project): one table or test per rule; ``eblock`` and ``lookup`` build the projector's input.

Where the code disagrees with the SPEC the test says what the SPEC wants; the cases that once disagreed
keep the SPEC's words in their docstring.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from models.limits import ToolProjectionLimits
from models.projection import EVIDENCE_ITEM_FIELDS, RAG_TOOL_RESULT_FIELDS
from streams import codec
from streams.pipeline import process_lookup, process_raw_hits
from streams.stations.project import Projection, canonical_projection, project_lookup
from tests.stations.builders import (
    ABSENT,
    accepted,
    hit,
    raw_record,
    rules,
    run,
    seed_record,
    without_absent,
)

# =============================================================================================
# SPEC 3.5: project
# =============================================================================================


def eblock(key: Any = ABSENT, content: Any = "c", **fields: Any) -> dict[str, Any]:
    """One evidence block as the projector reads it (any field may be left out or odd)."""
    return without_absent(
        {"evidence_key": key, "source": "s", "title": "t", "breadcrumb": "b", "content": content, **fields}
    )


def lookup(*blocks: Any, query: Any = "q", level: Any = "PRECISE", **fields: Any) -> dict[str, Any]:
    return without_absent(
        {
            "run_id": "run-1",
            "tool_call_id": "call-1",
            "query": query,
            "relevance_level": level,
            "evidence_blocks": list(blocks),
            **fields,
        }
    )


def projected(value: dict[str, Any], limits: ToolProjectionLimits | None = None) -> Projection:
    return project_lookup(value, limits or ToolProjectionLimits())


def document_ids(projection: Projection) -> list[str]:
    return [item["document_id"] for item in projection.result["evidence"]]


def test_projection_shape_and_canonical_bytes() -> None:
    p = projected(lookup(eblock("k#chunk-1", "网关超时 😀", title=None), query="网关"))
    expected = (
        '{"evidence_status":"EVIDENCE_FOUND","tool_call_id":"call-1","query":"网关","evidence":'
        '[{"document_id":"k#chunk-1","source":"s","title":null,"breadcrumb":"b",'
        '"excerpt":"网关超时 😀"}],"returned_count":1,"relevance_level":"PRECISE","truncated":false}'
    )
    assert p.canonical == expected.encode()
    assert p.canonical == canonical_projection(p.result)
    assert p.sha256 == hashlib.sha256(p.canonical).hexdigest()
    parsed = codec.loads(p.canonical)
    assert tuple(parsed) == RAG_TOOL_RESULT_FIELDS
    assert tuple(parsed["evidence"][0]) == EVIDENCE_ITEM_FIELDS


@pytest.mark.parametrize(
    ("query", "shown", "truncated"),
    [
        ("q" * 500, "q" * 500, False),
        ("q" * 501, "q" * 500, True),
        ("😀" * 501, "😀" * 500, True),
        ("", "", False),
        (ABSENT, "", False),
        (None, "", False),
        (42, "", False),
    ],
    ids=["500", "501", "astral-501", "empty", "absent", "null", "int"],
)
def test_query_cut_at_500(query: Any, shown: str, truncated: bool) -> None:
    p = projected(lookup(eblock("k"), query=query))
    assert (p.result["query"], p.result["truncated"]) == (shown, truncated)


@pytest.mark.parametrize(
    ("content", "shown", "truncated"),
    [
        ("e" * 1200, "e" * 1200, False),
        ("e" * 1201, "e" * 1200, True),
        ("😀" * 1201, "😀" * 1200, True),
    ],
    ids=["1200", "1201", "astral-1201"],
)
def test_excerpt_cut_at_1200(content: str, shown: str, truncated: bool) -> None:
    p = projected(lookup(eblock("k", content)))
    assert (p.result["evidence"][0]["excerpt"], p.result["truncated"]) == (shown, truncated)


def test_query_and_excerpt_limits_are_settings() -> None:
    limits = ToolProjectionLimits(max_query_chars=3, max_excerpt_chars=2)
    p = projected(lookup(eblock("k", "abc"), query="abcd"), limits)
    assert (p.result["query"], p.result["evidence"][0]["excerpt"], p.result["truncated"]) == (
        "abc",
        "ab",
        True,
    )


def test_item_cap_8() -> None:
    eight = projected(lookup(*[eblock(f"k{i}") for i in range(8)]))
    assert (eight.result["returned_count"], eight.result["truncated"]) == (8, False)
    nine = projected(lookup(*[eblock(f"k{i}") for i in range(9)]))
    assert document_ids(nine) == [f"k{i}" for i in range(8)]
    assert (nine.result["returned_count"], nine.result["truncated"]) == (8, True)


def test_duplicate_after_the_8th_still_sets_truncated() -> None:
    p = projected(lookup(*[eblock(f"k{i}") for i in range(8)], eblock("k0")))
    assert (p.result["returned_count"], p.result["truncated"]) == (8, True)


def test_duplicate_inside_the_cap_is_skipped_not_truncation() -> None:
    p = projected(
        lookup(
            *[eblock(f"k{i}") for i in range(4)],
            eblock("k1", "other"),
            *[eblock(f"k{i}") for i in range(4, 8)],
        )
    )
    assert document_ids(p) == [f"k{i}" for i in range(8)]
    assert p.result["evidence"][1]["excerpt"] == "c"  # the first occurrence is shown
    assert p.result["truncated"] is False


@pytest.mark.parametrize(
    ("fields", "identity"),
    [
        ({"evidence_key": "k", "document_id": "D", "doc_id": "d", "chunk_index": 1}, "k"),
        ({"evidence_key": "  ", "document_id": "D", "doc_id": "d", "chunk_index": 1}, "D"),
        ({"evidence_key": "", "document_id": "\t", "doc_id": "d", "chunk_index": 2}, "d#chunk-2"),
        ({"doc_id": "d", "chunk_index": 0}, "d#chunk-0"),
        ({"doc_id": "d"}, "evidence-1"),
        ({"doc_id": "d", "chunk_index": None}, "evidence-1"),
        ({"doc_id": " ", "chunk_index": 3}, "evidence-1"),
        ({"chunk_index": 3}, "evidence-1"),
        ({}, "evidence-1"),
        ({"evidenceKey": "ck"}, "ck"),
        ({"documentId": "CD"}, "CD"),
        ({"docId": "cd", "chunkIndex": 4}, "cd#chunk-4"),
        ({"doc_id": "d", "chunkIndex": 5}, "d#chunk-5"),
        ({"evidence_key": "snake", "evidenceKey": "camel"}, "snake"),
        ({"evidence_key": None, "evidenceKey": "camel"}, "camel"),
        ({"document_id": "snake", "documentId": "camel"}, "snake"),
        ({"doc_id": "snake", "docId": "camel", "chunk_index": 1, "chunkIndex": 2}, "snake#chunk-1"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_identity_fallback_chain(fields: dict[str, Any], identity: str) -> None:
    p = projected(lookup({"source": "s", "content": "c", **fields}))
    assert document_ids(p) == [identity]


def test_identity_position_is_1_based_in_the_input_list() -> None:
    p = projected(lookup(eblock("k"), eblock(), eblock("k"), eblock()))
    assert document_ids(p) == ["k", "evidence-2", "evidence-4"]


@pytest.mark.parametrize(
    ("fields", "excerpt"),
    [
        ({"content": "c"}, "c"),
        ({"excerpt": "x"}, "x"),
        ({"content": "c", "excerpt": "x"}, "c"),
        ({"content": None, "excerpt": "x"}, "x"),
        ({"content": "", "excerpt": "x"}, ""),
        ({"content": 5}, ""),
        ({}, ""),
    ],
    ids=[
        "content",
        "excerpt-alias",
        "snake-first",
        "null-falls-back",
        "empty-is-not-null",
        "not-a-string",
        "missing",
    ],
)
def test_content_and_its_excerpt_alias(fields: dict[str, Any], excerpt: str) -> None:
    p = projected(lookup({"evidence_key": "k", **fields}))
    assert p.result["evidence"][0]["excerpt"] == excerpt


def test_source_title_breadcrumb_that_are_not_strings_become_null() -> None:
    p = projected(
        lookup(eblock("k", source=1, title=["t"], breadcrumb={"a": 1}), eblock("j", source="", title="t"))
    )
    first, second = p.result["evidence"]
    assert (first["source"], first["title"], first["breadcrumb"]) == (None, None, None)
    assert (second["source"], second["title"]) == ("", "t")


def test_non_object_blocks_count_as_empty_objects() -> None:
    p = projected(lookup(5, "k", None, ["k"], eblock("k")))
    assert document_ids(p) == ["evidence-1", "evidence-2", "evidence-3", "evidence-4", "k"]
    assert p.result["evidence"][0] == {
        "document_id": "evidence-1",
        "source": None,
        "title": None,
        "breadcrumb": None,
        "excerpt": "",
    }


@pytest.mark.parametrize(
    "blocks",
    [{"0": {"evidence_key": "k"}}, "k", 7, None, ABSENT],
    ids=["object", "string", "int", "null", "absent"],
)
def test_evidence_blocks_not_a_list_is_empty(blocks: Any) -> None:
    value = lookup()
    value["evidence_blocks"] = blocks
    p = projected(without_absent(value))
    assert p.result["evidence"] == []
    assert (p.result["evidence_status"], p.result["relevance_level"]) == ("NO_EVIDENCE", None)


def test_camel_case_aliases_for_blocks_level_and_call_id() -> None:
    value = {
        "toolCallId": "call-9",
        "query": "q",
        "relevanceLevel": "reference",
        "evidenceBlocks": [eblock("k")],
    }
    p = projected(value)
    assert (p.result["tool_call_id"], p.result["relevance_level"], document_ids(p)) == (
        "call-9",
        "REFERENCE",
        ["k"],
    )
    both = {
        "tool_call_id": "snake",
        "toolCallId": "camel",
        "evidence_blocks": None,
        "evidenceBlocks": [eblock("k")],
    }
    p = projected(both)
    assert (p.result["tool_call_id"], document_ids(p)) == ("snake", ["k"])


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("PRECISE", "PRECISE"),
        ("precise", "PRECISE"),
        ("Reference", "REFERENCE"),
        ("rEfErEnCe", "REFERENCE"),
        ("Precise", "PRECISE"),
        ("reference", "REFERENCE"),
        # Only a-z and A-Z fold (SPEC 3.5.4); Unicode upper-casing would take the first two to PRECISE.
        ("preci\u017fe", None),  # LATIN SMALL LETTER LONG S
        ("prec\u0131se", None),  # LATIN SMALL LETTER DOTLESS I
        ("PREC\u0130SE", None),  # LATIN CAPITAL LETTER I WITH DOT ABOVE
        ("\uff30\uff32\uff25\uff23\uff29\uff33\uff25", None),  # FULLWIDTH "PRECISE"
        ("PRECISE\u200b", None),
        ("HIGH", None),
        (" PRECISE", None),
        ("", None),
        (None, None),
        (1, None),
        (["PRECISE"], None),
    ],
    ids=str,
)
def test_relevance_level_case_insensitive(level: Any, expected: str | None) -> None:
    assert projected(lookup(eblock("k"), level=level)).result["relevance_level"] == expected


def test_relevance_level_only_when_there_is_evidence() -> None:
    p = projected(lookup(level="PRECISE"))
    assert (p.result["evidence_status"], p.result["relevance_level"], p.result["returned_count"]) == (
        "NO_EVIDENCE",
        None,
        0,
    )


def items_bytes_lookup(n: int) -> dict[str, Any]:
    return lookup(*[eblock(f"k{i}", "x" * 50) for i in range(n)])


def test_byte_budget_trims_from_the_tail() -> None:
    value = items_bytes_lookup(4)
    full = projected(value)
    assert (full.result["returned_count"], full.result["truncated"]) == (4, False)
    cut = projected(value, ToolProjectionLimits(max_bytes=len(full.canonical) - 1))
    assert document_ids(cut) == ["k0", "k1", "k2"]
    assert (cut.result["returned_count"], cut.result["truncated"]) == (3, True)
    assert len(cut.canonical) <= len(full.canonical) - 1


def test_byte_budget_boundary_is_inclusive() -> None:
    value = items_bytes_lookup(3)
    one = dict(
        projected(value).result,
        evidence=projected(value).result["evidence"][:1],
        returned_count=1,
        truncated=True,
    )
    size = len(canonical_projection(one))
    assert projected(value, ToolProjectionLimits(max_bytes=size)).canonical == canonical_projection(one)
    assert projected(value, ToolProjectionLimits(max_bytes=size - 1)).result["returned_count"] == 0


NO_EVIDENCE_LEFT = {
    "evidence_status": "NO_EVIDENCE",
    "tool_call_id": "call-1",
    "query": "q",
    "evidence": [],
    "returned_count": 0,
    "relevance_level": None,
    "truncated": True,
}
"""What ``items_bytes_lookup`` projects to when the byte budget leaves room for no item."""


def test_byte_budget_degrades_honestly_to_no_evidence() -> None:
    value = items_bytes_lookup(2)
    empty = NO_EVIDENCE_LEFT
    limit = len(codec.dumps(empty))
    p = projected(value, ToolProjectionLimits(max_bytes=limit))
    assert p.result == empty
    assert p.canonical == codec.dumps(empty)


def test_fail_closed_when_even_no_evidence_is_too_large() -> None:
    value = items_bytes_lookup(2)
    empty = NO_EVIDENCE_LEFT
    tight = rules(projection=ToolProjectionLimits(max_bytes=len(codec.dumps(empty)) - 1))
    outcome = process_lookup(codec.dumps(value), tight)
    assert outcome.projection is None
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "PROJECTION_BUDGET_EXCEEDED"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == ("run-1", "call-1")
    assert outcome.event is not None
    assert (outcome.event["status"], outcome.event["failure_reason"]) == (
        "FAILED",
        "PROJECTION_BUDGET_EXCEEDED",
    )
    assert (outcome.event["projection"], outcome.event["projection_sha256"]) == (None, None)


def test_fail_closed_through_the_whole_chain_with_tightened_limits() -> None:
    tight = rules(projection=ToolProjectionLimits(max_bytes=40))
    lookup_ = accepted(seed_record(), tight)
    outcome = process_lookup(codec.dumps(lookup_), tight)
    assert outcome.projection is None
    assert outcome.rejection is not None and outcome.rejection["reason"] == "PROJECTION_BUDGET_EXCEEDED"
    assert outcome.event is not None and outcome.event["status"] == "FAILED"


def test_projected_event_carries_the_canonical_text_and_hash() -> None:
    outcome = process_lookup(codec.dumps(lookup(eblock("k"))), rules())
    assert outcome.projection is not None and outcome.event is not None
    assert outcome.event["projection"] == outcome.projection.canonical.decode()
    assert outcome.event["projection_sha256"] == hashlib.sha256(outcome.projection.canonical).hexdigest()
    assert (outcome.event["status"], outcome.event["failure_reason"]) == ("OK", None)


@pytest.mark.parametrize(
    "text", [b"[]", b'"x"', b"nope", b"", b"\xff"], ids=["array", "string", "not-json", "empty", "bad-utf8"]
)
def test_projector_text_that_is_not_an_object(text: bytes) -> None:
    outcome = process_lookup(text, rules())
    assert outcome.rejection is not None and outcome.rejection["reason"] == "MALFORMED_JSON"
    assert (outcome.event, outcome.projection) == (None, None)


ORIGIN = {"topic": "raw-hits", "partition": 2, "offset": 41, "timestamp": 1700000000123}


def test_event_ids_and_origin_are_deterministic() -> None:
    raw = codec.dumps(seed_record())
    first = process_raw_hits(raw, rules(), ORIGIN)
    again = process_raw_hits(raw, rules(), ORIGIN)
    assert first.lookup is not None
    assert codec.dumps(first.lookup) == codec.dumps(again.lookup)  # a re-delivery repeats the bytes
    assert first.lookup["event_id"] == "postprocess:raw-hits:2:41:1700000000123"
    assert (first.lookup["origin"], first.lookup["source_timestamp"]) == (ORIGIN, 1700000000123)
    consumed = {"topic": "postprocessed", "partition": 2, "offset": 7, "timestamp": 5}
    projected_ = process_lookup(codec.dumps(first.lookup), rules(), consumed)
    assert projected_.event is not None
    # The origin travels unchanged: the raw-hits record, not the record this station consumed.
    assert projected_.event["event_id"] == "project:raw-hits:2:41:1700000000123"
    assert (projected_.event["origin"], projected_.event["source_timestamp"]) == (ORIGIN, 1700000000123)


def test_a_recreated_topic_gives_new_event_ids_at_the_same_offsets() -> None:
    """After a topic is deleted and created again, offsets restart: the timestamp tells the records apart."""
    raw = codec.dumps(seed_record())
    before = process_raw_hits(raw, rules(), ORIGIN)
    recreated = process_raw_hits(raw, rules(), {**ORIGIN, "timestamp": 1800000000000})  # type: ignore[typeddict-item]
    assert before.lookup is not None and recreated.lookup is not None
    assert before.lookup["event_id"] != recreated.lookup["event_id"]
    no_time = process_raw_hits(raw, rules(), {**ORIGIN, "timestamp": None})  # type: ignore[typeddict-item]
    assert no_time.lookup is not None and no_time.lookup["event_id"] == "postprocess:raw-hits:2:41:-"


def test_a_rejected_record_travels_on_with_its_envelope() -> None:
    outcome = process_raw_hits(codec.dumps(raw_record(hit(score="x"))), rules(), ORIGIN)
    assert outcome.lookup == {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "event_id": "postprocess:raw-hits:2:41:1700000000123",
        "origin": ORIGIN,
        "source_timestamp": 1700000000123,
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
    }


def test_failed_lookup_travels_on_as_failed() -> None:
    failed = run(raw_record(hit(quality_score="x"))).lookup
    outcome = process_lookup(codec.dumps(failed), rules())
    assert (outcome.projection, outcome.rejection) == (None, None)
    assert outcome.event is not None
    assert (outcome.event["status"], outcome.event["failure_reason"]) == ("FAILED", "SCHEMA_VIOLATION")
    assert (outcome.event["run_id"], outcome.event["tool_call_id"]) == ("run-1", "call-1")


def test_failed_lookup_with_an_odd_failure_reason_still_travels_on() -> None:
    value = {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "status": "FAILED",
        "failure_reason": ["SCHEMA_VIOLATION"],
    }
    outcome = process_lookup(codec.dumps(value), rules())
    assert outcome.rejection is None or outcome.rejection["reason"] != "INTERNAL_ERROR"
    assert outcome.event is not None and outcome.event["status"] == "FAILED"
