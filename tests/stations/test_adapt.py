"""SPEC 2 (input validation) and SPEC 3.1 (adapt): one table or test per rule, with the SPEC's own numbers.

Where the code disagrees with the SPEC the test says what the SPEC wants; the cases that once disagreed
keep the SPEC's words in their docstring.
"""

from __future__ import annotations

from typing import Any

import pytest

from models.limits import InputLimits
from models.rag import PY_RAG_RESPONSE_ADAPTER
from models.validation import ContractError, validate
from streams import codec
from streams.stations.adapt import adapt, chunk_index
from tests.stations.builders import (
    ABSENT,
    accepted,
    hit,
    keys,
    raw_record,
    rejected,
    rules,
    run,
    without_absent,
)

# =============================================================================================
# SPEC 2: input validation
# =============================================================================================


def test_a_valid_record_is_accepted_with_unknown_fields_ignored() -> None:
    record = raw_record(hit(extra="x", nested={"a": [1]}), retrieval_trace={"mode": "hybrid"}, shiny=True)
    record["added_by_py_rag"] = {"v": 2}
    lookup = accepted(record)
    assert keys(lookup) == ["doc-a#chunk-0"]
    assert lookup["retrieval_trace"] == {"mode": "hybrid"}


def test_oversized_is_checked_on_the_raw_bytes_first() -> None:
    raw = codec.dumps(raw_record(hit()))
    assert run(raw, rules(input_limits=InputLimits(max_message_bytes=len(raw)))).rejection is None
    rejection = rejected(raw, rules(input_limits=InputLimits(max_message_bytes=len(raw) - 1)))
    assert rejection["reason"] == "OVERSIZED"
    garbage = b"\xff" * 20
    assert (
        rejected(garbage, rules(input_limits=InputLimits(max_message_bytes=10)))["reason"] == "OVERSIZED"
    )


def test_oversized_record_with_valid_ids_still_ends_as_a_failed_entry() -> None:
    """SPEC 1: each raw-hits record with valid ids ends in the ledger, FAILED when it was rejected."""
    raw = codec.dumps(raw_record(hit()))
    outcome = run(raw, rules(input_limits=InputLimits(max_message_bytes=len(raw) - 1)))
    assert outcome.rejection is not None and outcome.rejection["reason"] == "OVERSIZED"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) != (None, None)
    assert outcome.lookup is not None and outcome.lookup["status"] == "FAILED"
    assert outcome.lookup["failure_reason"] == "OVERSIZED"
    garbage = run(b"{" + b" " * 30, rules(input_limits=InputLimits(max_message_bytes=10)))
    assert garbage.lookup is None and garbage.rejection is not None and garbage.rejection["run_id"] is None


def padded_to(size: int) -> bytes:
    """A valid raw-hits record of exactly ``size`` bytes (the query is the padding)."""
    bare = codec.dumps(raw_record(hit(), query=""))
    raw = codec.dumps(raw_record(hit(), query="x" * (size - len(bare))))
    assert len(raw) == size
    return raw


def test_default_max_message_bytes_is_1_mib() -> None:
    assert run(padded_to(1024 * 1024)).rejection is None
    assert rejected(padded_to(1024 * 1024 + 1))["reason"] == "OVERSIZED"


GOOD_TEXT = codec.dumps(raw_record(hit())).decode()


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(GOOD_TEXT.replace("0.9", "NaN").encode(), id="nan"),
        pytest.param(GOOD_TEXT.replace("0.9", "Infinity").encode(), id="infinity"),
        pytest.param(GOOD_TEXT.replace("0.9", "-Infinity").encode(), id="minus-infinity"),
        pytest.param(GOOD_TEXT.replace("0.9", "1e400").encode(), id="1e400"),
        pytest.param(GOOD_TEXT.replace("0.9", "1" + "0" * 400).encode(), id="huge-integer"),
        pytest.param(b"[" + GOOD_TEXT.encode() + b"]", id="array"),
        pytest.param(b'"run-1"', id="string"),
        pytest.param(b"42", id="number"),
        pytest.param(b"null", id="null"),
        pytest.param(b"", id="empty"),
        pytest.param(GOOD_TEXT.encode()[:-1], id="truncated"),
        pytest.param(
            GOOD_TEXT.replace("gateway", "gate\udcffway").encode("utf-8", "surrogateescape"), id="bad-utf8"
        ),
        pytest.param(b"\xef\xbb\xbf" + GOOD_TEXT.encode(), id="bom"),
        pytest.param(GOOD_TEXT.replace("gateway", "\\ud800").encode(), id="lone-surrogate"),
        pytest.param(GOOD_TEXT.encode().decode("utf-8").encode("utf-16"), id="utf-16"),
    ],
)
def test_malformed_json(raw: bytes) -> None:
    outcome = run(raw)
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "MALFORMED_JSON"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == (None, None)
    assert outcome.lookup is None


@pytest.mark.parametrize("field", ["run_id", "tool_call_id"])
@pytest.mark.parametrize(
    "value",
    [
        pytest.param("run:1", id="colon"),
        pytest.param("r" * 129, id="129-chars"),
        pytest.param("", id="empty"),
        pytest.param(" ", id="blank"),
        pytest.param("run 1", id="space"),
        pytest.param("run-1\n", id="trailing-newline"),
        pytest.param("rün", id="non-ascii"),
        pytest.param("run/1", id="slash"),
        pytest.param(7, id="int"),
        pytest.param(None, id="null"),
        pytest.param(["run-1"], id="list"),
        pytest.param(ABSENT, id="absent"),
    ],
)
def test_invalid_id(field: str, value: Any) -> None:
    outcome = run(raw_record(hit(), **{field: value}))
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "INVALID_ID"
    # Both ids are given only when both are valid; an invalid id never reaches the ledger.
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == (None, None)
    assert outcome.lookup is None


@pytest.mark.parametrize("value", ["r" * 128, "A", "Az09._-", "..", "-"])
def test_valid_ids(value: str) -> None:
    lookup = accepted(raw_record(hit(), run_id=value, tool_call_id=value))
    assert (lookup["run_id"], lookup["tool_call_id"]) == (value, value)


def test_invalid_id_wins_over_a_bad_response() -> None:
    assert rejected(raw_record(run_id="a:b", query=5))["reason"] == "INVALID_ID"


def _set_record(field: str, value: Any) -> dict[str, Any]:
    return without_absent({**raw_record(hit()), field: value})


def _set_response(field: str, value: Any) -> dict[str, Any]:
    record = raw_record(hit())
    record["response"] = without_absent({**record["response"], field: value})
    return record


def _set_hit(field: str, value: Any) -> dict[str, Any]:
    return raw_record(hit(**{field: value}))


SCHEMA_CASES = [
    pytest.param(_set_record("response", ABSENT), id="response-absent"),
    pytest.param(_set_record("response", "hits"), id="response-not-object"),
    pytest.param(_set_record("response", None), id="response-null"),
    pytest.param(_set_response("query", ABSENT), id="query-absent"),
    pytest.param(_set_response("query", 5), id="query-int"),
    pytest.param(_set_response("query", None), id="query-null"),
    pytest.param(_set_response("evidence_status", ABSENT), id="status-absent"),
    pytest.param(_set_response("evidence_status", "maybe"), id="status-unknown"),
    pytest.param(_set_response("evidence_status", "SUPPORTED"), id="status-upper-case"),
    pytest.param(_set_response("hits", ABSENT), id="hits-absent"),
    pytest.param(_set_response("hits", {"0": {}}), id="hits-object"),
    pytest.param(_set_response("hits", None), id="hits-null"),
    pytest.param(_set_response("hits", ["hit"]), id="hit-not-object"),
    pytest.param(_set_hit("evidence_key", ABSENT), id="evidence_key-absent"),
    pytest.param(_set_hit("evidence_key", ""), id="evidence_key-empty"),
    pytest.param(_set_hit("evidence_key", 3), id="evidence_key-int"),
    pytest.param(_set_hit("document_id", ABSENT), id="document_id-absent"),
    pytest.param(_set_hit("document_id", ""), id="document_id-empty"),
    pytest.param(_set_hit("document_id", None), id="document_id-null"),
    pytest.param(_set_hit("source", ABSENT), id="source-absent"),
    pytest.param(_set_hit("source", None), id="source-null"),
    pytest.param(_set_hit("source", 1), id="source-int"),
    pytest.param(_set_hit("excerpt", ABSENT), id="excerpt-absent"),
    pytest.param(_set_hit("excerpt", ["x"]), id="excerpt-list"),
    pytest.param(_set_hit("title", 1), id="title-int"),
    pytest.param(_set_hit("breadcrumb", ["a", "b"]), id="breadcrumb-list"),
    pytest.param(_set_hit("quality_score", ABSENT), id="score-absent"),
    pytest.param(_set_hit("quality_score", None), id="score-null"),
    pytest.param(_set_hit("quality_score", "0.9"), id="score-string"),
    pytest.param(_set_hit("quality_score", True), id="score-true"),
    pytest.param(_set_hit("quality_score", False), id="score-false"),
    pytest.param(_set_hit("quality_score", [0.9]), id="score-list"),
]


@pytest.mark.parametrize("record", SCHEMA_CASES)
def test_schema_violation_keeps_the_ids(record: dict[str, Any]) -> None:
    outcome = run(record)
    assert outcome.rejection is not None
    assert outcome.rejection["reason"] == "SCHEMA_VIOLATION"
    assert (outcome.rejection["run_id"], outcome.rejection["tool_call_id"]) == ("run-1", "call-1")
    # A rejected record with valid ids travels on as FAILED, with no content (SPEC 3.4).
    assert outcome.lookup == {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "event_id": None,
        "origin": None,
        "source_timestamp": None,
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
    }


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")], ids=["nan", "inf", "-inf"])
def test_non_finite_scores_are_not_numbers(score: float) -> None:
    # Strict JSON cannot carry them (MALFORMED_JSON above); the contract refuses them as well.
    response = raw_record(hit(score=score))["response"]
    with pytest.raises(ContractError) as info:
        validate(PY_RAG_RESPONSE_ADAPTER, response)
    assert info.value.path == "hits[0].quality_score"


@pytest.mark.parametrize("title", [None, ABSENT, "t", ""], ids=["null", "absent", "text", "empty"])
def test_title_and_breadcrumb_may_be_null_or_absent(title: Any) -> None:
    lookup = accepted(raw_record(hit(title=title, breadcrumb=title)))
    block = lookup["evidence_blocks"][0]
    expected = None if title is ABSENT else title
    assert (block["title"], block["breadcrumb"]) == (expected, expected)


def test_max_hits() -> None:
    three = raw_record(hit("a"), hit("b"), hit("c"))
    assert run(three, rules(input_limits=InputLimits(max_hits=3))).rejection is None
    rejection = rejected(three, rules(input_limits=InputLimits(max_hits=2)))
    assert rejection["reason"] == "SCHEMA_VIOLATION"
    assert rejected(raw_record(*[hit(f"d{i}") for i in range(1001)]))["reason"] == "SCHEMA_VIOLATION"
    assert accepted(raw_record(*[hit(f"d{i}") for i in range(1000)]))["candidate_count"] == 1000


# =============================================================================================
# SPEC 3.1: adapt
# =============================================================================================


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("doc#chunk-3", 3),
        ("doc#chunk-0", 0),
        ("doc#chunk-007", 7),
        ("doc#chunk-12#chunk-4", 4),
        ("doc", None),
        ("doc#chunk-", None),
        ("doc#chunk-x", None),
        ("doc#chunk--1", None),
        ("doc#chunk-3 ", None),
        ("doc#chunk-3\n", None),
        ("doc#chunk-3a", None),
        ("doc#chunk-٣", None),
        ("doc#Chunk-3", None),
        ("doc-chunk-3", None),
    ],
)
def test_chunk_index(key: str, expected: int | None) -> None:
    assert chunk_index(key) == expected


def test_chunk_index_through_the_pipeline() -> None:
    lookup = accepted(raw_record(hit("a#chunk-5"), hit("b", doc="b"), hit("c#chunk-", doc="c")))
    assert [b["chunk_index"] for b in lookup["evidence_blocks"]] == [5, None, None]


def test_adapt_maps_every_field_in_array_order() -> None:
    response = raw_record(
        hit("k#chunk-2", 0.4, doc="d", source="src", title=ABSENT, breadcrumb=None, excerpt="body"),
        hit("z", 1.5, doc="y"),
    )["response"]
    first, second = adapt(validate(PY_RAG_RESPONSE_ADAPTER, response))
    assert first == {
        "evidence_key": "k#chunk-2",
        "doc_id": "d",
        "chunk_index": 2,
        "content": "body",
        "score": 0.4,
        "score_label": "rerank",
        "original_rank": 1,
        "source": "src",
        "title": None,
        "breadcrumb": None,
        "hit_reasons": ["semantic_rank:1", "attempt:UNFILTERED_VECTOR"],
    }
    assert (second["original_rank"], second["hit_reasons"][0], second["score"]) == (2, "semantic_rank:2", 1.5)
