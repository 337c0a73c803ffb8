"""SPEC's bounds on hostile input (sections 2, 3.1, 4 A.1): each at its limit and one over, and what an
input can make the guard build."""

from __future__ import annotations

from typing import Any

import pytest

from models.limits import GuardSettings
from models.vocab import Station
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import (
    PendingRead,
    StationRules,
    emissions,
    finish_read,
    guard_station,
    process_raw_hits,
)
from streams.settings import Settings
from streams.stations.adapt import chunk_index
from tests.support import verdict_of

RULES = StationRules.from_settings(Settings())


def raw(**response: Any) -> bytes:
    body = {"query": "q", "evidence_status": "supported", "hits": [], **response}
    return codec.dumps({"run_id": "run-1", "tool_call_id": "call-1", "response": body})


def hit(key: str = "d#chunk-1", **extra: Any) -> dict[str, Any]:
    return {
        "evidence_key": key,
        "document_id": "d",
        "source": "s",
        "excerpt": "e",
        "quality_score": 0.9,
        **extra,
    }


def nested(depth: int) -> Any:
    """A value whose own nesting is ``depth`` levels (a list is one level)."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


# --- chunk numbers: 1-18 ASCII digits ------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("d#chunk-1", 1),
        ("d#chunk-" + "9" * 18, 10**18 - 1),
        ("d#chunk-" + "9" * 19, None),
        ("d#chunk-" + "9" * 5000, None),  # over Python's int-from-string limit: never parsed
        ("d#chunk-", None),
        ("d#chunk-١٢", None),  # Arabic-Indic digits are digits, but not ASCII ones
        ("d#chunk-0012", 12),
    ],
)
def test_chunk_numbers_have_1_to_18_digits(key: str, expected: int | None) -> None:
    assert chunk_index(key) == expected


def test_a_5000_digit_chunk_number_is_a_well_formed_record() -> None:
    outcome = process_raw_hits(raw(hits=[hit("d#chunk-" + "9" * 5000)]), RULES)
    assert outcome.rejection is None
    assert outcome.lookup is not None and outcome.lookup["evidence_blocks"][0]["chunk_index"] is None


# --- nesting: at most 64 levels, the top-level object is depth 1 ---------------------------------


def test_64_levels_are_accepted_and_65_are_a_schema_violation_with_a_failed_entry() -> None:
    # record (1) → response (2) → retrieval_trace (3..): the trace itself may nest 62 levels
    ok = process_raw_hits(raw(retrieval_trace=nested(62)), RULES)
    assert ok.rejection is None and ok.lookup is not None
    assert codec.loads(codec.dumps(ok.lookup)) is not None  # what we read, we can write back
    deep = process_raw_hits(raw(retrieval_trace=nested(63)), RULES)
    assert deep.rejection is not None and deep.rejection["reason"] == "SCHEMA_VIOLATION"
    assert (deep.rejection["run_id"], deep.rejection["tool_call_id"]) == ("run-1", "call-1")
    assert deep.lookup is not None and deep.lookup["status"] == "FAILED"  # the ledger records it FAILED


@pytest.mark.parametrize("where", ["trace", "hit-extra", "top-level-extra"])
def test_400_levels_anywhere_unknown_fields_included(where: str) -> None:
    # orjson reads 1,024 levels but writes only about 254: the text is built by hand
    value = b"[" * 400 + b"]" * 400
    if where == "trace":
        data = raw(retrieval_trace="X").replace(b'"X"', value)
    elif where == "hit-extra":
        data = raw(hits=[hit(extra="X")]).replace(b'"X"', value)
    else:
        data = b'{"run_id":"run-1","tool_call_id":"call-1","response":{},"x":' + value + b"}"
    outcome = process_raw_hits(data, RULES)
    assert outcome.rejection is not None and outcome.rejection["reason"] == "SCHEMA_VIOLATION"


def test_many_brackets_that_are_shallow_are_fine() -> None:
    hits = [hit(f"d{i}#chunk-{i}", tags=[[1], {"a": [2]}]) for i in range(300)]
    outcome = process_raw_hits(raw(hits=hits, retrieval_trace={"s": "[[[[{{{{" * 100}), RULES)
    assert outcome.rejection is None


# --- drafts: ids, attempt, nesting ---------------------------------------------------------------


def draft(**fields: Any) -> dict[str, Any]:
    value = {
        "run_id": "run-1",
        "draft_id": "d-1",
        "analysis": [
            {"id": "a1", "kind": "NEGATIVE_OBSERVATION", "content": "x", "tool_call_ids": ["call-9"]}
        ],
        "conclusion": None,
        "limitations": ["l"],
    }
    value.update(fields)
    return value


def judge(value: dict[str, Any] | bytes) -> dict[str, Any]:
    data = value if isinstance(value, bytes) else codec.dumps(value)
    return dict(verdict_of(data, MemoryLedgerStore()))


def codes(verdict: dict[str, Any]) -> list[str]:
    return [v["code"] for v in verdict["violations"]]


def test_draft_id_of_128_characters_is_read_129_is_unparsable() -> None:
    assert judge(draft(draft_id="d" * 128))["draft_id"] == "d" * 128
    verdict = judge(draft(draft_id="d" * 129))
    assert codes(verdict) == ["DRAFT_UNPARSABLE"] and verdict["draft_id"] is None


@pytest.mark.parametrize("field", ["analysis", "action_plan"])
def test_item_ids_of_129_characters_are_unparsable(field: str) -> None:
    item = {
        "id": "i" * 129,
        "kind": "NORMAL",
        "content": "x",
        "tool_call_ids": ["c"],
        "based_on_analysis_ids": ["a1"],
    }
    value = draft(**{field: [item]}) if field == "analysis" else draft(action_plan=[item])
    assert codes(judge(value)) == ["DRAFT_UNPARSABLE"]
    item["id"] = "i" * 128
    assert "DRAFT_UNPARSABLE" not in codes(judge(draft(**{field: [item]})))


@pytest.mark.parametrize(
    ("attempt", "read_as", "unparsable"),
    [
        (1_000_000, 1_000_000, False),
        (1_000_001, 1, True),
        (18446744073709551615, 1, True),
        (0, 1, False),
        (-7, 1, False),
        (None, 1, False),
    ],
)
def test_attempt_bounds(attempt: int | None, read_as: int, unparsable: bool) -> None:
    verdict = judge(draft(attempt=attempt))
    assert verdict["attempt"] == read_as
    assert ("DRAFT_UNPARSABLE" in codes(verdict)) is unparsable


def test_a_draft_nested_65_levels_is_unparsable_64_is_read() -> None:
    shallow = judge(draft(extra=nested(63)))  # draft (1) + 63
    assert "DRAFT_UNPARSABLE" not in codes(shallow)
    deep = judge(draft(extra=nested(64)))
    assert codes(deep) == ["DRAFT_UNPARSABLE"] and deep["draft_id"] == "d-1"


# --- what one draft can make the guard build ------------------------------------------------------


def test_a_hostile_draft_cannot_inflate_its_verdict_or_violations() -> None:
    """The largest draft the guard parses (256 KiB), made of long invalid citations: every message
    quotes at most 80 characters of the input, so its events stay small whatever it holds."""
    long_id = "x:" + "y" * 1150  # not a valid id: CITATION_NOT_FOUND, quoted in the message
    # 100 items citing twice each, 50 distinct tool calls: the most the guard checks
    items = [
        {"id": f"a{i}", "kind": "NORMAL", "content": "c", "tool_call_ids": [f"{long_id}{i % 50}"] * 2}
        for i in range(100)
    ]
    data = codec.dumps(draft(analysis=items, draft_id="d" * 128))
    assert len(data) <= GuardSettings().max_draft_bytes
    record = Record("t.diagnosis-drafts", 0, 1, 1, None, data)
    step = guard_station(record, RULES)
    assert isinstance(step, PendingRead)
    outcome = finish_read(step, {}, record)
    assert outcome.detail["violation_count"] == 200
    messages = emissions(outcome, record, RULES, "2026-12-03T00:00:00.000+00:00")
    violations = [m for m in messages if m.topic == "violations"]
    (verdict,) = [m for m in messages if m.topic == "verdicts"]
    assert len(violations) == 200
    assert max(len(m.value) for m in violations) < 1024
    assert len(verdict.value) < 64 * 1024  # no evidence snapshot: nothing was found
    assert (
        sum(len(m.value) for m in messages) < 300 * 1024
    )  # about the size of the draft, not 200 copies of it
    assert all(len(v["message"]) <= 200 for v in outcome.detail["violations"])
    assert outcome.station is Station.GUARD
