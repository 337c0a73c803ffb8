"""SPEC 4 (the guard): each of the twenty-three codes, the citation checks and the verdict.

Builders first (``rag_result``, ``entry``, ``ledger_with``, ``item``, ``draft``). Where the code disagrees
with the SPEC the test says what the SPEC wants; the cases that once disagreed keep the SPEC's words
in their docstring.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from models.limits import GuardSettings
from models.projection import EVIDENCE_ITEM_FIELDS, RAG_TOOL_RESULT_FIELDS
from models.verdict import VERDICT_ADAPTER, Verdict
from models.vocab import (
    FALLBACK_LIMITATION,
    ViolationCode,
)
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.stations.guard import violation_events
from streams.stations.ledger_view import LedgerLookup
from streams.stations.project import canonical_projection
from tests.stations.builders import (
    ABSENT,
    without_absent,
)
from tests.support import memory_ledger, verdict_of

_DEFAULT: Any = object()

# =============================================================================================
# SPEC 4: the guard — builders
# =============================================================================================

RUN = "run-1"
FOUND, NONE, MISSING = "call-found", "call-none", "call-missing"
DOC = "gw#chunk-1"


def rag_result(
    tool_call_id: str, *docs: str, level: Any = _DEFAULT, truncated: bool = False
) -> dict[str, Any]:
    """A well-formed RagToolResult citing some documents (NO_EVIDENCE when none)."""
    evidence = [
        {"document_id": d, "source": "src", "title": "t", "breadcrumb": "b", "excerpt": f"about {d}"}
        for d in docs
    ]
    return {
        "evidence_status": "EVIDENCE_FOUND" if docs else "NO_EVIDENCE",
        "tool_call_id": tool_call_id,
        "query": "q",
        "evidence": evidence,
        "returned_count": len(evidence),
        "relevance_level": ("PRECISE" if docs else None) if level is _DEFAULT else level,
        "truncated": truncated,
    }


def entry(
    tool_call_id: str,
    projection: dict[str, Any] | bytes | None = _DEFAULT,
    *,
    run_id: str = RUN,
    status: str = "READY",
    sha256: str | None = _DEFAULT,
    index_status: Any = _DEFAULT,
) -> dict[str, Any]:
    """A ledger entry whose ``projection_sha256`` is genuine unless given."""
    if projection is _DEFAULT:
        projection = rag_result(tool_call_id, DOC)
    data: bytes | None
    if isinstance(projection, dict):
        data = canonical_projection(projection)
    else:
        data = projection
    genuine = hashlib.sha256(data).hexdigest() if data is not None else None
    status_index = projection.get("evidence_status") if isinstance(projection, dict) else None
    return {
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": status,
        "evidence_status": status_index if index_status is _DEFAULT else index_status,
        "projection": data.decode("utf-8") if data is not None else None,
        "projection_sha256": genuine if sha256 is _DEFAULT else sha256,
    }


def base_entries() -> list[dict[str, Any]]:
    return [entry(FOUND, rag_result(FOUND, DOC)), entry(NONE, rag_result(NONE))]


def ledger_with(*entries: dict[str, Any]) -> MemoryLedgerStore:
    return memory_ledger(entries or base_entries())


def item(
    item_id: str = "a1",
    *tool_call_ids: str,
    kind: Any = "NORMAL",
    content: Any = "finding",
    document_ids: Any = ABSENT,
) -> dict[str, Any]:
    return without_absent(
        {
            "id": item_id,
            "kind": kind,
            "content": content,
            "tool_call_ids": list(tool_call_ids),
            "document_ids": document_ids,
        }
    )


def action(action_id: str = "p1", *refs: str, content: Any = "do it") -> dict[str, Any]:
    return without_absent({"id": action_id, "content": content, "based_on_analysis_ids": list(refs)})


def draft(
    analysis: Any = _DEFAULT,
    *,
    run_id: Any = RUN,
    draft_id: Any = "d-1",
    attempt: Any = 1,
    conclusion: Any = _DEFAULT,
    action_plan: Any = _DEFAULT,
    limitations: Any = _DEFAULT,
) -> dict[str, Any]:
    """A draft that passes against ``base_entries()`` unless a part is replaced."""
    return without_absent(
        {
            "run_id": run_id,
            "draft_id": draft_id,
            "attempt": attempt,
            "analysis": [item("a1", FOUND, document_ids=[DOC]), item("a2", NONE, kind="NEGATIVE_OBSERVATION")]
            if analysis is _DEFAULT
            else analysis,
            "conclusion": {"content": "raise the timeout", "based_on_analysis_ids": ["a1"]}
            if conclusion is _DEFAULT
            else conclusion,
            "action_plan": [action("p1", "a1")] if action_plan is _DEFAULT else action_plan,
            "limitations": ["only the knowledge base"] if limitations is _DEFAULT else limitations,
        }
    )


class FixedReader:
    """A ledger reader that returns given lookups and records every call."""

    def __init__(
        self, lookups: Mapping[str, LedgerLookup] | None = None, backing: MemoryLedgerStore | None = None
    ):
        self.lookups = dict(lookups or {})
        self.backing = backing
        self.calls: list[tuple[str, list[str]]] = []

    def read(self, run_id: str, tool_call_ids: Sequence[str]) -> Mapping[str, LedgerLookup]:
        self.calls.append((run_id, list(tool_call_ids)))
        if self.backing is not None:
            found = self.backing.read_now([(run_id, t) for t in tool_call_ids])
            return {t: found[(run_id, t)] for t in tool_call_ids}
        return {tcid: self.lookups.get(tcid, LedgerLookup(None, False)) for tcid in tool_call_ids}


def encode(value: dict[str, Any] | bytes) -> bytes:
    return value if isinstance(value, bytes) else codec.dumps(value)


def check(
    value: dict[str, Any] | bytes,
    ledger: Any = None,
    guard_settings: GuardSettings | None = None,
    record: Record | None = None,
) -> Verdict:
    """The guard station on one draft (offline unless ``record`` gives its coordinates)."""
    raw = encode(value)
    if record is not None:
        record = Record(record.topic, record.partition, record.offset, record.timestamp, None, raw)
    return verdict_of(raw, ledger if ledger is not None else ledger_with(), guard_settings, record)


def found(verdict: Verdict) -> list[tuple[str, str]]:
    return [(v["code"], v["path"]) for v in verdict["violations"]]


# =============================================================================================
# SPEC 4: each of the twenty codes
# =============================================================================================


def test_the_base_draft_passes() -> None:
    verdict = check(draft())
    assert (verdict["verdict"], verdict["violations"], verdict["violation_count"]) == ("PASS", [], 0)
    assert [s["tool_call_id"] for s in verdict["evidence_snapshot"]] == [FOUND, NONE]
    assert verdict["fallback_report"] is None


def at(i: int, j: int = 0) -> str:
    return f"analysis[{i}].tool_call_ids[{j}]"


def _with_first(**changes: Any) -> list[dict[str, Any]]:
    first = {**item("a1", FOUND, document_ids=[DOC]), **changes}
    return [without_absent(first), item("a2", NONE, kind="NEGATIVE_OBSERVATION")]


CODE_CASES = [
    pytest.param(b"{not json", None, [("DRAFT_UNPARSABLE", "")], id="DRAFT_UNPARSABLE"),
    pytest.param(
        draft([item(f"a{i}", FOUND) for i in range(1, 102)]),
        None,
        [("DRAFT_TOO_LARGE", "")],
        id="DRAFT_TOO_LARGE",
    ),
    pytest.param(draft(run_id=ABSENT), None, [("RUN_ID_MISSING", "run_id")], id="RUN_ID_MISSING"),
    pytest.param(
        draft([], conclusion=None, action_plan=[]),
        None,
        [("ANALYSIS_EMPTY", "analysis")],
        id="ANALYSIS_EMPTY",
    ),
    pytest.param(
        draft(action_plan=[action("a2", "a1")]),
        None,
        [("ID_DUPLICATE", "action_plan[0].id")],
        id="ID_DUPLICATE",
    ),
    pytest.param(
        draft(_with_first(content="  ")), None, [("CONTENT_EMPTY", "analysis[0].content")], id="CONTENT_EMPTY"
    ),
    pytest.param(
        draft(_with_first(kind="normal")),
        None,
        [("ANALYSIS_KIND_INVALID", "analysis[0].kind")],
        id="ANALYSIS_KIND_INVALID",
    ),
    pytest.param(
        draft(_with_first(tool_call_ids=[], document_ids=ABSENT)),
        None,
        [("ANALYSIS_CITATION_MISSING", "analysis[0].tool_call_ids")],
        id="ANALYSIS_CITATION_MISSING",
    ),
    pytest.param(
        draft(conclusion={"content": "c", "based_on_analysis_ids": []}),
        None,
        [("REFERENCE_MISSING", "conclusion.based_on_analysis_ids")],
        id="REFERENCE_MISSING",
    ),
    pytest.param(
        draft(action_plan=[action("p1", "a1", "p1")]),
        None,
        [("REFERENCE_UNKNOWN_ANALYSIS", "action_plan[0].based_on_analysis_ids[1]")],
        id="REFERENCE_UNKNOWN_ANALYSIS",
    ),
    pytest.param(
        draft(limitations=[" ", ""]), None, [("LIMITATIONS_MISSING", "limitations")], id="LIMITATIONS_MISSING"
    ),
    pytest.param(
        draft(_with_first(tool_call_ids=[MISSING])),
        None,
        [("CITATION_NOT_FOUND", at(0))],
        id="CITATION_NOT_FOUND",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, None, status="FAILED"), entry(NONE, rag_result(NONE))],
        [("CITATION_NOT_READY", at(0))],
        id="CITATION_NOT_READY",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, run_id="run-2"), entry(NONE, rag_result(NONE))],
        [("CITATION_CROSS_RUN", at(0))],
        id="CITATION_CROSS_RUN",
    ),
    pytest.param(
        draft([item("a1", FOUND), item("a2", NONE)]),
        None,
        [("NORMAL_CITES_NO_EVIDENCE", at(1))],
        id="NORMAL_CITES_NO_EVIDENCE",
    ),
    pytest.param(
        draft(_with_first(kind="NEGATIVE_OBSERVATION")),
        None,
        [("NEGATIVE_CITES_EVIDENCE", at(0))],
        id="NEGATIVE_CITES_EVIDENCE",
    ),
    pytest.param(
        draft(_with_first(document_ids=[DOC, "made-up#chunk-9"])),
        None,
        [("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[1]")],
        id="CITATION_DOCUMENT_UNKNOWN",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, b'{"evidence_status":'), entry(NONE, rag_result(NONE))],
        [("LEDGER_PAYLOAD_INVALID", at(0))],
        id="LEDGER_PAYLOAD_INVALID",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, {**rag_result(FOUND, DOC), "score": 0.9}), entry(NONE, rag_result(NONE))],
        [("LEDGER_PAYLOAD_UNKNOWN_FIELD", at(0))],
        id="LEDGER_PAYLOAD_UNKNOWN_FIELD",
    ),
    pytest.param(
        draft(),
        [entry(FOUND, sha256=hashlib.sha256(b"other bytes").hexdigest()), entry(NONE, rag_result(NONE))],
        [("LEDGER_PAYLOAD_TAMPERED", at(0))],
        id="LEDGER_PAYLOAD_TAMPERED",
    ),
    # D, the review (SPEC 4.2): the base evidence's excerpt is "about gw#chunk-1"
    pytest.param(
        draft(_with_first(content="timeout is 30s")),
        None,
        [("CLAIM_NUMBER_UNSUPPORTED", "analysis[0].content")],
        id="CLAIM_NUMBER_UNSUPPORTED",
    ),
    pytest.param(
        draft(conclusion={"content": "raise proxy_read_timeout", "based_on_analysis_ids": ["a1"]}),
        None,
        [("CLAIM_IDENTIFIER_UNSUPPORTED", "conclusion.content")],
        id="CLAIM_IDENTIFIER_UNSUPPORTED",
    ),
    pytest.param(
        draft(action_plan=[action("p1", "a1", content="run `nginx -s reload`")]),
        None,
        [("CLAIM_QUOTE_UNSUPPORTED", "action_plan[0].content")],
        id="CLAIM_QUOTE_UNSUPPORTED",
    ),
]


def test_the_code_table_covers_all_twenty_three_codes() -> None:
    # 24-26 are the semantic review's (SPEC 4.4: tests/stations/test_semantic.py), never the guard's
    semantic = ["CLAIM_SEMANTIC_UNSUPPORTED", "CLAIM_SEMANTIC_CONTRADICTED", "SEMANTIC_INPUT_TOO_LARGE"]
    assert {case.id for case in CODE_CASES} == set(ViolationCode) - set(semantic)
    assert len(ViolationCode) == 26 and list(ViolationCode)[23:] == semantic


@pytest.mark.parametrize(("value", "entries", "expected"), CODE_CASES)
def test_each_violation_code_with_its_path(
    value: dict[str, Any] | bytes, entries: list[dict[str, Any]] | None, expected: list[tuple[str, str]]
) -> None:
    verdict = check(value, ledger_with(*(entries or [])))
    assert found(verdict) == expected
    assert verdict["violation_count"] == len(expected)
    assert verdict["verdict"] == "REJECT"


# -- A. structure -----------------------------------------------------------------------------

UNPARSABLE_CASES = [
    pytest.param(b"not json", id="not-json"),
    pytest.param(b"", id="empty"),
    pytest.param(b"\xff\xfe", id="bad-utf8"),
    pytest.param(b"[]", id="array"),
    pytest.param(b'"draft"', id="string"),
    pytest.param(b"null", id="null"),
    pytest.param(codec.dumps(draft()).replace(b'"attempt":1', b'"attempt":NaN'), id="nan"),
    pytest.param(draft(draft_id=ABSENT), id="draft_id-absent"),
    pytest.param(draft(draft_id=None), id="draft_id-null"),
    pytest.param(draft(draft_id=""), id="draft_id-empty"),
    pytest.param(draft(draft_id=7), id="draft_id-int"),
    pytest.param(draft([{k: v for k, v in item("a1", FOUND).items() if k != "id"}]), id="analysis-id-absent"),
    pytest.param(draft([{**item("a1", FOUND), "id": 1}]), id="analysis-id-int"),
    pytest.param(
        draft(action_plan=[{"content": "x", "based_on_analysis_ids": ["a1"]}]), id="action-id-absent"
    ),
    pytest.param(draft(action_plan=[action(None, "a1")]), id="action-id-null"),
    pytest.param(draft("a1"), id="analysis-string"),
    pytest.param(draft(["a1"]), id="analysis-item-string"),
    pytest.param(draft(conclusion="done"), id="conclusion-string"),
    pytest.param(draft(action_plan={"p1": {}}), id="action_plan-object"),
    pytest.param(draft(limitations="none"), id="limitations-string"),
    pytest.param(draft(limitations=[1]), id="limitations-int-entry"),
    pytest.param(draft(_with_first(tool_call_ids=FOUND)), id="tool_call_ids-string"),
    pytest.param(draft(_with_first(tool_call_ids=[1])), id="tool_call_ids-int-entry"),
    pytest.param(draft(_with_first(document_ids=[None])), id="document_ids-null-entry"),
    pytest.param(draft(conclusion={"content": "c", "based_on_analysis_ids": "a1"}), id="based_on-string"),
    pytest.param(draft(_with_first(kind=1)), id="kind-int"),
    pytest.param(draft(_with_first(content=["x"])), id="content-list"),
    pytest.param(draft(attempt="2"), id="attempt-string"),
    pytest.param(draft(attempt=True), id="attempt-bool"),
    pytest.param(draft(attempt=1.5), id="attempt-float"),
    pytest.param(draft(run_id=5), id="run_id-int"),
    pytest.param(
        draft([item(f"a{i}", FOUND) for i in range(1, 102)], limitations="x"), id="type-checked-before-counts"
    ),
]


@pytest.mark.parametrize("value", UNPARSABLE_CASES)
def test_draft_unparsable_ends_the_check(value: dict[str, Any] | bytes) -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(value, reader)
    assert found(verdict) == [("DRAFT_UNPARSABLE", "")]
    assert verdict["evidence_snapshot"] == []
    assert reader.calls == []
    assert verdict["draft_sha256"] == hashlib.sha256(encode(value)).hexdigest()


def _repeat(value: dict[str, Any], inside: str, name: str, first: Any) -> bytes:
    """``value`` as JSON with ``name`` written twice in the object holding ``inside``: ``first``, then
    its real value (a reader that keeps the last one sees exactly ``value``).
    """
    text = codec.dumps(value)
    anchor = inside.encode()
    assert text.count(anchor) == 1, inside
    return text.replace(anchor, codec.dumps(name) + b":" + codec.dumps(first) + b"," + anchor)


REPEATED_NAME_CASES = [
    pytest.param(
        codec.dumps(draft(run_id="run-b"))[:-1] + b',"run_id":"run-1"}', id="top-level-run_id-last-valid"
    ),
    pytest.param(_repeat(draft(), '"draft_id"', "run_id", "run-b"), id="top-level-run_id-first-valid"),
    pytest.param(_repeat(draft(), '"draft_id"', "draft_id", "d-0"), id="top-level-draft_id"),
    pytest.param(_repeat(draft(), '"draft_id"', "attempt", 2), id="top-level-attempt"),
    pytest.param(_repeat(draft(), '"draft_id"', "analysis", []), id="top-level-analysis"),
    pytest.param(_repeat(draft() | {"x-unknown": 2}, '"x-unknown"', "x-unknown", 1), id="top-level-unknown"),
    pytest.param(
        _repeat(draft(), '"kind":"NEGATIVE_OBSERVATION"', "kind", "NORMAL"), id="in-analysis-item-kind"
    ),
    pytest.param(
        _repeat(draft(), '"kind":"NEGATIVE_OBSERVATION"', "tool_call_ids", [FOUND]),
        id="in-analysis-item-citations",
    ),
    pytest.param(_repeat(draft(), '"content":"raise the timeout"', "content", ""), id="in-conclusion"),
    pytest.param(_repeat(draft(), '"content":"do it"', "id", "p0"), id="in-action"),
    pytest.param(
        _repeat(draft(limitations=["l"]) | {"meta": {"by": {"a": 1}}}, '"a":1', "a", 0),
        id="inside-an-unknown-field",
    ),
    pytest.param(
        _repeat(draft() | {"meta": [[{"z": 1}]]}, '"z":1', "z", 0), id="object-in-arrays-of-an-unknown-field"
    ),
    pytest.param(
        codec.dumps(draft()).replace(b'"draft_id"', b'"draft\\u005fid":"d-0","draft_id"'),
        id="same-name-escaped",
    ),
    pytest.param(
        codec.dumps(draft() | {"m": {"a:": 1}}).replace(b'"a:":1', b'"a\\u003a":0,"a:":1'),
        id="escaped-colon-in-a-name",
    ),
    pytest.param(  # deeper than orjson writes back: found by the token scan, reported before the depth
        codec.dumps(draft())[:-1] + b',"deep":' + b"[" * 300 + b'{"a":1,"a":2}' + b"]" * 300 + b"}",
        id="deeper-than-orjson-writes",
    ),
]


@pytest.mark.parametrize("raw", REPEATED_NAME_CASES)
def test_a_repeated_name_anywhere_is_draft_unparsable(raw: bytes) -> None:
    """SPEC 4 A.1: a repeated name in any object is not JSON (I-JSON): a reader that kept the first
    would judge another draft. Like any text that is not JSON, it gives nothing to read.
    """
    reader = FixedReader(backing=ledger_with())
    verdict = check(raw, reader)
    assert found(verdict) == [("DRAFT_UNPARSABLE", "")]
    assert "repeats the name" in verdict["violations"][0]["message"]
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (None, None, 1)
    assert (verdict["verdict"], verdict["evidence_snapshot"], reader.calls) == ("REJECT", [], [])
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()


NO_REPEATED_NAME_CASES = [
    pytest.param(
        draft() | {"meta": {"run_id": "run-b", "draft_id": "d-2"}}, id="same-names-in-another-object"
    ),
    pytest.param(draft(_with_first(id="a1") + [item("a3", FOUND)]), id="same-names-in-sibling-items"),
    pytest.param(draft() | {"m": {"a": {"a": {"a": 1}}}}, id="same-name-nested"),
    pytest.param(draft() | {"note": "a:b", "c:": {"d": "::"}}, id="colons-in-names-and-values"),
    pytest.param(draft() | {"a:": 1, "a": 2}, id="names-that-differ-by-a-colon"),
]


@pytest.mark.parametrize("value", NO_REPEATED_NAME_CASES)
def test_a_draft_without_repeated_names_is_unaffected(value: dict[str, Any]) -> None:
    assert check(value)["verdict"] == "PASS"
    escaped = codec.dumps(value).replace(b"a:", b"a\\u003a")  # the same draft, a colon escaped
    assert check(escaped)["verdict"] == "PASS"


def _many_tool_calls() -> list[dict[str, Any]]:
    ids = [f"call-{i}" for i in range(51)]
    return [item("a1", *ids[:17]), item("a2", *ids[17:34]), item("a3", *ids[34:])]


TOO_LARGE_CASES = [
    pytest.param(draft([item(f"a{i}", FOUND) for i in range(1, 102)]), id="101-analysis-items"),
    pytest.param(draft(action_plan=[action(f"p{i}", "a1") for i in range(101)]), id="101-actions"),
    pytest.param(draft([item("a1", *[FOUND] * 51)]), id="51-tool_call_ids"),
    pytest.param(draft([item("a1", FOUND, document_ids=[DOC] * 51)]), id="51-document_ids"),
    pytest.param(
        draft(conclusion={"content": "c", "based_on_analysis_ids": ["a1"] * 51}), id="51-conclusion-refs"
    ),
    pytest.param(draft(action_plan=[action("p1", *["a1"] * 51)]), id="51-action-refs"),
    pytest.param(draft(_many_tool_calls()), id="51-distinct-tool-calls"),
]


@pytest.mark.parametrize("value", TOO_LARGE_CASES)
def test_draft_too_large_ends_the_check(value: dict[str, Any]) -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(value, reader)
    assert found(verdict) == [("DRAFT_TOO_LARGE", "")]
    assert reader.calls == []
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (RUN, "d-1", 1)


FIT_CASES = [
    pytest.param(draft([item(f"a{i}", FOUND) for i in range(1, 101)]), id="100-analysis-items"),
    pytest.param(draft(action_plan=[action(f"p{i}", "a1") for i in range(100)]), id="100-actions"),
    pytest.param(draft([item("a1", *[FOUND] * 50, document_ids=[DOC] * 50)]), id="50-entries"),
    pytest.param(
        draft(conclusion={"content": "c", "based_on_analysis_ids": ["a1"] * 50}), id="50-conclusion-refs"
    ),
]


@pytest.mark.parametrize("value", FIT_CASES)
def test_at_the_limits_a_draft_is_checked(value: dict[str, Any]) -> None:
    assert check(value)["verdict"] == "PASS"


def test_fifty_distinct_tool_calls_are_checked_not_too_large() -> None:
    verdict = check(
        draft(
            [item("a1", *[f"call-{i}" for i in range(25)]), item("a2", *[f"call-{i}" for i in range(25, 50)])]
        )
    )
    assert [code for code, _ in found(verdict)] == ["CITATION_NOT_FOUND"] * 50


def test_draft_over_max_draft_bytes_is_not_parsed() -> None:
    raw = codec.dumps(draft(attempt=2))
    assert check(raw, guard_settings=GuardSettings(max_draft_bytes=len(raw)))["verdict"] == "PASS"
    verdict = check(raw, guard_settings=GuardSettings(max_draft_bytes=len(raw) - 1))
    assert found(verdict) == [("DRAFT_TOO_LARGE", "")]
    # Not parsed at all: nothing is read from it, not even its ids or attempt.
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (None, None, 1)
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()
    garbage = b"\xff" * 300
    assert found(check(garbage, guard_settings=GuardSettings(max_draft_bytes=299))) == [
        ("DRAFT_TOO_LARGE", "")
    ]
    assert found(check(b"x" * (256 * 1024 + 1))) == [("DRAFT_TOO_LARGE", "")]


def test_default_max_draft_bytes_is_256_kib() -> None:
    bare = codec.dumps(draft(limitations=[""]))
    raw = codec.dumps(draft(limitations=["x" * (256 * 1024 - len(bare))]))
    assert len(raw) == 256 * 1024
    assert check(raw)["verdict"] == "PASS"
    bigger = codec.dumps(draft(limitations=["x" * (256 * 1024 - len(bare) + 1)]))
    assert found(check(bigger)) == [("DRAFT_TOO_LARGE", "")]


@pytest.mark.parametrize(
    "run_id",
    [ABSENT, None, "", "  ", "run:1", "r" * 129],
    ids=["absent", "null", "empty", "blank", "colon", "129-chars"],
)
def test_run_id_missing_disables_citation_checks(run_id: Any) -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(
        draft([item("a1", MISSING, "bad:id", kind="NEGATIVE_OBSERVATION")], run_id=run_id), reader
    )
    assert found(verdict) == [("RUN_ID_MISSING", "run_id")]
    assert verdict["evidence_snapshot"] == []
    assert reader.calls == []


@pytest.mark.parametrize("analysis", [[], None, ABSENT], ids=["empty", "null", "absent"])
def test_analysis_empty(analysis: Any) -> None:
    verdict = check(draft(analysis, conclusion=None, action_plan=ABSENT))
    assert found(verdict) == [("ANALYSIS_EMPTY", "analysis")]


def test_ids_share_one_namespace_and_every_repeat_is_reported() -> None:
    analysis = [item("a1", FOUND), item("a1", FOUND), item("x", FOUND)]
    verdict = check(draft(analysis, action_plan=[action("x", "a1"), action("a1", "a1")]))
    assert found(verdict) == [
        ("ID_DUPLICATE", "analysis[1].id"),
        ("ID_DUPLICATE", "action_plan[0].id"),
        ("ID_DUPLICATE", "action_plan[1].id"),
    ]


# SPEC 4 A.6: blank = nothing but White_Space, format characters (Cf) and the Hangul fillers.
BLANK_TEXTS = [
    pytest.param("", id="empty"),
    pytest.param("  ", id="spaces"),
    pytest.param("\n\t\r\v\f", id="ascii-whitespace"),
    pytest.param("\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000", id="unicode-white-space"),
    pytest.param("\u200b", id="zero-width-space"),
    pytest.param("\u200d", id="zero-width-joiner"),
    pytest.param("\u2060\ufeff", id="word-joiner-bom"),
    pytest.param("\u180e", id="mongolian-vowel-separator-cf"),
    pytest.param("\xad\u061c\u200e\u202e\U000e0001\U000e0041", id="other-format-chars"),
    pytest.param("\u3164", id="hangul-filler"),
    pytest.param("\u115f\u1160\uffa0", id="other-hangul-fillers"),
    pytest.param(" \u200b\u3164 ", id="mix"),
    pytest.param("\u200b" * 20_000 + "\u3000", id="long-mix"),
]
NOT_BLANK_TEXTS = [
    pytest.param("\x1c", id="file-separator-is-Cc"),  # str.isspace() says yes; White_Space says no
    pytest.param("\x1f\x1e\x1d", id="other-separators-are-Cc"),
    pytest.param("\x00", id="nul"),
    pytest.param("a\u200b", id="letter-then-zwsp"),
    pytest.param("\u200b \u3164.", id="blanks-then-dot"),
    pytest.param("\u2800", id="braille-blank-is-So"),
    pytest.param("\u3164" * 1000 + "x", id="long-blank-then-letter"),
]


@pytest.mark.parametrize("text", BLANK_TEXTS)
def test_blank_content_is_content_empty_everywhere(text: str) -> None:
    conclusion = {"content": text, "based_on_analysis_ids": ["a1"]}
    verdict = check(
        draft(
            _with_first(content=text), conclusion=conclusion, action_plan=[action("p1", "a1", content=text)]
        )
    )
    assert found(verdict) == [
        ("CONTENT_EMPTY", "analysis[0].content"),
        ("CONTENT_EMPTY", "conclusion.content"),
        ("CONTENT_EMPTY", "action_plan[0].content"),
    ]


@pytest.mark.parametrize("text", BLANK_TEXTS)
def test_only_blank_limitations_are_missing(text: str) -> None:
    assert found(check(draft(limitations=[text]))) == [("LIMITATIONS_MISSING", "limitations")]
    assert found(check(draft(limitations=[text, "\u200d", ""]))) == [("LIMITATIONS_MISSING", "limitations")]
    assert check(draft(limitations=[text, "the knowledge base only"]))["verdict"] == "PASS"


@pytest.mark.parametrize("text", BLANK_TEXTS)
def test_blank_run_id_is_run_id_missing(text: str) -> None:
    assert found(check(draft(run_id=text))) == [("RUN_ID_MISSING", "run_id")]


@pytest.mark.parametrize("text", NOT_BLANK_TEXTS)
def test_text_with_anything_else_is_not_blank(text: str) -> None:
    conclusion = {"content": text, "based_on_analysis_ids": ["a1"]}
    value = draft(
        _with_first(content=text),
        conclusion=conclusion,
        action_plan=[action("p1", "a1", content=text)],
        limitations=[text],
    )
    assert check(value)["verdict"] == "PASS"


@pytest.mark.parametrize(
    "content", ["", "  ", "\n\t", None, ABSENT], ids=["empty", "spaces", "whitespace", "null", "absent"]
)
def test_content_empty_everywhere(content: Any) -> None:
    conclusion = without_absent({"content": content, "based_on_analysis_ids": ["a1"]})
    verdict = check(
        draft(
            _with_first(content=content),
            conclusion=conclusion,
            action_plan=[action("p1", "a1", content=content)],
        )
    )
    assert found(verdict) == [
        ("CONTENT_EMPTY", "analysis[0].content"),
        ("CONTENT_EMPTY", "conclusion.content"),
        ("CONTENT_EMPTY", "action_plan[0].content"),
    ]


@pytest.mark.parametrize(
    "kind", ["normal", "NEGATIVE", "", None, ABSENT], ids=["lower", "short", "empty", "null", "absent"]
)
def test_analysis_kind_invalid(kind: Any) -> None:
    verdict = check(draft(_with_first(kind=kind)))
    assert found(verdict) == [("ANALYSIS_KIND_INVALID", "analysis[0].kind")]


@pytest.mark.parametrize("tool_call_ids", [[], None, ABSENT], ids=["empty", "null", "absent"])
def test_analysis_citation_missing(tool_call_ids: Any) -> None:
    verdict = check(draft(_with_first(tool_call_ids=tool_call_ids, document_ids=ABSENT)))
    assert found(verdict) == [("ANALYSIS_CITATION_MISSING", "analysis[0].tool_call_ids")]


@pytest.mark.parametrize("refs", [[], None, ABSENT], ids=["empty", "null", "absent"])
def test_reference_missing_for_conclusion_and_actions(refs: Any) -> None:
    conclusion = without_absent({"content": "c", "based_on_analysis_ids": refs})
    act = without_absent({"id": "p1", "content": "do", "based_on_analysis_ids": refs})
    verdict = check(draft(conclusion=conclusion, action_plan=[act]))
    assert found(verdict) == [
        ("REFERENCE_MISSING", "conclusion.based_on_analysis_ids"),
        ("REFERENCE_MISSING", "action_plan[0].based_on_analysis_ids"),
    ]


def test_conclusion_null_or_absent_is_legal() -> None:
    assert check(draft(conclusion=None))["verdict"] == "PASS"
    assert check(draft(conclusion=ABSENT, action_plan=None))["verdict"] == "PASS"


@pytest.mark.parametrize(
    "limitations",
    [[], None, ABSENT, [""], [" ", "\n"]],
    ids=["empty", "null", "absent", "one-blank", "blanks"],
)
def test_limitations_missing(limitations: Any) -> None:
    assert found(check(draft(limitations=limitations))) == [("LIMITATIONS_MISSING", "limitations")]


# -- B and C: citations and re-read ------------------------------------------------------------


def test_cited_id_that_is_not_a_valid_id_is_reported_not_found() -> None:
    reader = FixedReader(backing=ledger_with())
    verdict = check(draft([item("a1", FOUND, "bad:id", "")]), reader)
    assert found(verdict) == [("CITATION_NOT_FOUND", at(0, 1)), ("CITATION_NOT_FOUND", at(0, 2))]
    assert reader.calls == [(RUN, [FOUND])]  # an invalid id is never looked up


def test_only_invalid_cited_ids_are_still_reported_not_found() -> None:
    verdict = check(draft([item("a1", "bad:id")], conclusion=None, action_plan=[]), ledger_with())
    assert found(verdict) == [("CITATION_NOT_FOUND", at(0))]
    assert verdict["verdict"] == "REJECT"


def _precedence_cases() -> list[Any]:
    proj = rag_result(FOUND, DOC)
    missing_truncated = {k: v for k, v in proj.items() if k != "truncated"}
    extra_item = {**proj, "evidence": [{**proj["evidence"][0], "score": 1}], "returned_count": "1"}
    other = hashlib.sha256(b"x").hexdigest()
    return [
        pytest.param(
            entry(FOUND, b"{not json", sha256=other), "LEDGER_PAYLOAD_TAMPERED", id="tampered-over-not-json"
        ),
        pytest.param(
            entry(FOUND, {**proj, "extra": 1}, sha256=other),
            "LEDGER_PAYLOAD_TAMPERED",
            id="tampered-over-unknown",
        ),
        pytest.param(
            entry(FOUND, {**proj, "tool_call_id": "x"}, sha256=other),
            "LEDGER_PAYLOAD_TAMPERED",
            id="tampered-over-invalid",
        ),
        pytest.param(entry(FOUND, b"[1]"), "LEDGER_PAYLOAD_INVALID", id="not-an-object"),
        pytest.param(entry(FOUND, b'"text"'), "LEDGER_PAYLOAD_INVALID", id="a-string"),
        pytest.param(
            entry(FOUND, {**missing_truncated, "extra": 1}),
            "LEDGER_PAYLOAD_UNKNOWN_FIELD",
            id="unknown-over-missing",
        ),
        pytest.param(
            entry(FOUND, extra_item), "LEDGER_PAYLOAD_UNKNOWN_FIELD", id="unknown-item-field-over-wrong-type"
        ),
        pytest.param(
            entry(FOUND, {**proj, "tool_call_id": "call-x", "evidence": [{**proj["evidence"][0], "x": 1}]}),
            "LEDGER_PAYLOAD_UNKNOWN_FIELD",
            id="unknown-item-field-over-foreign-call-id",
        ),
        pytest.param(entry(FOUND, missing_truncated), "LEDGER_PAYLOAD_INVALID", id="missing-field"),
    ]


@pytest.mark.parametrize(("bad", "code"), _precedence_cases())
def test_precedence_inside_reread(bad: dict[str, Any], code: str) -> None:
    verdict = check(draft([item("a1", FOUND)]), ledger_with(bad))
    assert found(verdict) == [(code, at(0))]
    assert verdict["evidence_snapshot"] == []


@pytest.mark.parametrize(
    ("inside", "name", "first"),
    [
        ('"evidence_status"', "evidence_status", "NO_EVIDENCE"),
        ('"excerpt"', "document_id", "other#chunk-9"),
    ],
    ids=["top-level", "in-an-item"],
)
def test_reread_projection_that_repeats_a_name_is_invalid(inside: str, name: str, first: str) -> None:
    """Canonical bytes never repeat a name; stored bytes that do are not JSON (as in SPEC 4 A.1), even
    with a genuine hash: which value is "the" projection is not the guard's to pick.
    """
    text = canonical_projection(rag_result(FOUND, DOC))
    data = text.replace(inside.encode(), f'"{name}":"{first}",'.encode() + inside.encode(), 1)
    verdict = check(draft([item("a1", FOUND, document_ids=[DOC])]), ledger_with(entry(FOUND, data)))
    assert found(verdict) == [("LEDGER_PAYLOAD_INVALID", at(0))]
    assert "repeats the name" in verdict["violations"][0]["message"]
    assert verdict["evidence_snapshot"] == []


def _drop(projection: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in projection.items() if k != name}


def _item_set(projection: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**projection, "evidence": [{**projection["evidence"][0], **changes}]}


def _item_drop(projection: dict[str, Any], name: str) -> dict[str, Any]:
    return {**projection, "evidence": [{k: v for k, v in projection["evidence"][0].items() if k != name}]}


P = rag_result(FOUND, DOC)
INVALID_CASES = [
    pytest.param(None, id="no-projection"),
    pytest.param(b"", id="empty-bytes"),
    pytest.param(b"{not json", id="not-json"),
    pytest.param(b"null", id="null"),
    *[pytest.param(_drop(P, name), id=f"missing-{name}") for name in RAG_TOOL_RESULT_FIELDS],
    *[pytest.param(_item_drop(P, name), id=f"item-missing-{name}") for name in EVIDENCE_ITEM_FIELDS],
    pytest.param(_item_set(P, document_id=5), id="document_id-int"),
    pytest.param(_item_set(P, document_id=None), id="document_id-null"),
    pytest.param(_item_set(P, excerpt=None), id="excerpt-null"),
    pytest.param(_item_set(P, source=5), id="source-int"),
    pytest.param(_item_set(P, title=["t"]), id="title-list"),
    pytest.param(_item_set(P, breadcrumb=False), id="breadcrumb-bool"),
    pytest.param({**P, "query": None}, id="query-null"),
    pytest.param({**P, "tool_call_id": 7}, id="tool_call_id-int"),
    pytest.param({**P, "truncated": "false"}, id="truncated-string"),
    pytest.param({**P, "truncated": 0}, id="truncated-int"),
    pytest.param({**P, "returned_count": "1"}, id="returned_count-string"),
    pytest.param({**P, "returned_count": True}, id="returned_count-bool"),
    pytest.param({**P, "returned_count": 1.0}, id="returned_count-float"),
    pytest.param({**P, "returned_count": 2}, id="returned_count-mismatch"),
    pytest.param({**P, "evidence_status": "FOUND"}, id="evidence_status-unknown"),
    pytest.param({**P, "evidence_status": None}, id="evidence_status-null"),
    pytest.param({**P, "relevance_level": "precise"}, id="relevance_level-lower-case"),
    pytest.param({**P, "relevance_level": 1}, id="relevance_level-int"),
    pytest.param({**P, "tool_call_id": "call-other"}, id="tool_call_id-not-the-key"),
    pytest.param({**P, "evidence": {"0": P["evidence"][0]}}, id="evidence-object"),
    pytest.param({**P, "evidence": ["item"], "returned_count": 1}, id="evidence-item-string"),
]


@pytest.mark.parametrize("bad", INVALID_CASES)
def test_ledger_payload_invalid(bad: dict[str, Any] | bytes | None) -> None:
    verdict = check(draft([item("a1", FOUND)]), ledger_with(entry(FOUND, bad)))
    assert found(verdict) == [("LEDGER_PAYLOAD_INVALID", at(0))]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({**P, "evidence_status": ["EVIDENCE_FOUND"]}, id="evidence_status-list"),
        pytest.param({**P, "relevance_level": {"level": "PRECISE"}}, id="relevance_level-object"),
    ],
)
def test_ledger_payload_invalid_for_unhashable_enum_values(bad: dict[str, Any]) -> None:
    verdict = check(draft([item("a1", FOUND)]), ledger_with(entry(FOUND, bad)))
    assert found(verdict) == [("LEDGER_PAYLOAD_INVALID", at(0))]


def test_ledger_payload_unknown_field_at_any_level() -> None:
    top = entry(FOUND, {**P, "scores": [0.9]})
    nested = entry(NONE, _item_set(rag_result(NONE, DOC), rerank=0.9))
    verdict = check(draft([item("a1", FOUND, NONE)]), ledger_with(top, nested))
    assert found(verdict) == [
        ("LEDGER_PAYLOAD_UNKNOWN_FIELD", at(0, 0)),
        ("LEDGER_PAYLOAD_UNKNOWN_FIELD", at(0, 1)),
    ]


def test_tampered_is_judged_on_the_stored_bytes() -> None:
    good = entry(FOUND)
    upper = dict(good, projection_sha256=good["projection_sha256"].upper())
    assert found(check(draft([item("a1", FOUND)]), ledger_with(upper))) == [
        ("LEDGER_PAYLOAD_TAMPERED", at(0))
    ]
    edited = dict(good, projection=good["projection"].replace("about", "abut"))
    assert found(check(draft([item("a1", FOUND)]), ledger_with(edited))) == [
        ("LEDGER_PAYLOAD_TAMPERED", at(0))
    ]
    no_hash = dict(good, projection_sha256=None)
    assert found(check(draft([item("a1", FOUND)]), ledger_with(no_hash))) == [
        ("LEDGER_PAYLOAD_TAMPERED", at(0))
    ]


def _b_order_cases() -> list[Any]:
    def case(lookup: LedgerLookup, code: str, name: str) -> Any:
        return pytest.param(FixedReader({FOUND: lookup}), code, id=name)

    foreign_failed = entry(FOUND, None, run_id="run-2", status="FAILED")
    foreign_tampered = entry(FOUND, run_id="run-2", sha256="0" * 64)
    return [
        pytest.param(FixedReader({}), "CITATION_NOT_FOUND", id="no-entry-no-owner"),
        case(LedgerLookup(None, True), "CITATION_CROSS_RUN", "no-entry-foreign-owner"),
        case(
            LedgerLookup(entry(FOUND, None, status="FAILED"), True),
            "CITATION_NOT_READY",
            "entry-wins-over-foreign-owner",
        ),
        case(LedgerLookup(foreign_failed), "CITATION_NOT_READY", "ready-before-same-run"),
        case(LedgerLookup(entry(FOUND, status="PENDING")), "CITATION_NOT_READY", "unknown-status"),
        case(LedgerLookup(foreign_tampered), "CITATION_CROSS_RUN", "same-run-before-reread"),
        case(LedgerLookup(entry(FOUND, sha256="0" * 64)), "LEDGER_PAYLOAD_TAMPERED", "reread-before-kind"),
    ]


@pytest.mark.parametrize(("reader", "code"), _b_order_cases())
def test_citation_check_order(reader: FixedReader, code: str) -> None:
    # A NEGATIVE item citing evidence would also fail the kind check: only the first failure counts.
    verdict = check(draft([item("a1", FOUND, kind="NEGATIVE_OBSERVATION")]), reader)
    assert found(verdict) == [(code, at(0))]


def test_cross_run_in_the_in_memory_ledger() -> None:
    ledger = ledger_with(entry(FOUND, run_id="run-2"), entry(NONE, rag_result(NONE)))
    assert found(check(draft([item("a1", FOUND)]), ledger)) == [("CITATION_CROSS_RUN", at(0))]
    assert found(check(draft([item("a1", FOUND)], run_id="run-2"), ledger)) == []


def test_kind_is_judged_on_the_reread_projection_not_the_index() -> None:
    lying_index = entry(FOUND, index_status="NO_EVIDENCE")
    verdict = check(draft([item("a1", FOUND)]), ledger_with(lying_index))
    assert verdict["verdict"] == "PASS"
    assert verdict["evidence_snapshot"][0]["evidence_status"] == "EVIDENCE_FOUND"


def test_a_tool_call_cited_twice_is_reported_at_both_paths() -> None:
    analysis = [item("a1", MISSING, FOUND, MISSING), item("a2", MISSING, NONE, NONE)]
    reader = FixedReader(backing=ledger_with())
    verdict = check(draft(analysis), reader)
    assert found(verdict) == [
        ("CITATION_NOT_FOUND", at(0, 0)),
        ("CITATION_NOT_FOUND", at(0, 2)),
        ("CITATION_NOT_FOUND", at(1, 0)),
        ("NORMAL_CITES_NO_EVIDENCE", at(1, 1)),
        ("NORMAL_CITES_NO_EVIDENCE", at(1, 2)),
    ]
    # Every cited entry is read in one call, each distinct id once, in first-cited order.
    assert reader.calls == [(RUN, [MISSING, FOUND, NONE])]
    assert [s["tool_call_id"] for s in verdict["evidence_snapshot"]] == [FOUND, NONE]


@pytest.mark.parametrize(
    ("analysis_item", "expected"),
    [
        pytest.param(
            item("a1", MISSING, document_ids=["made-up"]), [("CITATION_NOT_FOUND", at(0))], id="none-passed"
        ),
        pytest.param(
            item("a1", "call-tampered", document_ids=[DOC]),
            [("LEDGER_PAYLOAD_TAMPERED", at(0))],
            id="only-tampered",
        ),
        pytest.param(
            item("a1", MISSING, FOUND, document_ids=["made-up", DOC]),
            [("CITATION_NOT_FOUND", at(0)), ("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]")],
            id="one-passed",
        ),
        pytest.param(
            item("a1", FOUND, kind="NEGATIVE_OBSERVATION", document_ids=["made-up"]),
            [
                ("NEGATIVE_CITES_EVIDENCE", at(0)),
                ("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]"),
            ],
            id="kind-failure-still-passed-reread",
        ),
        pytest.param(
            item("a1", NONE, document_ids=[DOC]),
            [
                ("NORMAL_CITES_NO_EVIDENCE", at(0)),
                ("CITATION_DOCUMENT_UNKNOWN", "analysis[0].document_ids[0]"),
            ],
            id="not-in-the-cited-projection",
        ),
        pytest.param(
            item("a1", NONE, FOUND, document_ids=[DOC]),
            [("NORMAL_CITES_NO_EVIDENCE", at(0, 0))],
            id="known-through-another-citation",
        ),
        pytest.param(item("a1", FOUND, document_ids=[]), [], id="empty-list"),
        pytest.param(item("a1", FOUND, document_ids=None), [], id="null-list"),
    ],
)
def test_citation_document_unknown_only_after_a_citation_passed(
    analysis_item: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    ledger = ledger_with(*base_entries(), entry("call-tampered", sha256="0" * 64))
    verdict = check(draft([analysis_item], conclusion=None, action_plan=[]), ledger)
    assert found(verdict) == expected


def test_all_violations_are_collected_in_a_deterministic_order() -> None:
    analysis = [item("a1", MISSING, kind="GUESS", content=""), item("a1", NONE)]
    conclusion = {"content": "", "based_on_analysis_ids": ["zz"]}
    value = draft(analysis, conclusion=conclusion, action_plan=[action("p1", "a1", "zz")], limitations=[])
    first, second = check(value), check(value)
    assert found(first) == [
        ("CONTENT_EMPTY", "analysis[0].content"),
        ("ANALYSIS_KIND_INVALID", "analysis[0].kind"),
        ("ID_DUPLICATE", "analysis[1].id"),
        ("CONTENT_EMPTY", "conclusion.content"),
        ("REFERENCE_UNKNOWN_ANALYSIS", "conclusion.based_on_analysis_ids[0]"),
        ("REFERENCE_UNKNOWN_ANALYSIS", "action_plan[0].based_on_analysis_ids[1]"),
        ("LIMITATIONS_MISSING", "limitations"),
        ("CITATION_NOT_FOUND", at(0)),
        ("NORMAL_CITES_NO_EVIDENCE", at(1)),
    ]
    assert codec.dumps(first) == codec.dumps(second)


# -- the verdict --------------------------------------------------------------------------------


def _many_violations() -> dict[str, Any]:
    return draft([item(f"a{i}", MISSING) for i in range(1, 6)], conclusion=None, action_plan=[])


def test_max_violations_truncates_the_list_not_the_count() -> None:
    full = check(_many_violations())
    assert full["violation_count"] == 5 and full["violations_truncated"] is False
    cut = check(_many_violations(), guard_settings=GuardSettings(max_violations=2))
    assert cut["violations"] == full["violations"][:2]
    assert (cut["violation_count"], cut["violations_truncated"]) == (5, True)
    exact = check(_many_violations(), guard_settings=GuardSettings(max_violations=5))
    assert (len(exact["violations"]), exact["violations_truncated"]) == (5, False)
    none = check(_many_violations(), guard_settings=GuardSettings(max_violations=0))
    assert (none["violations"], none["violation_count"], none["verdict"]) == ([], 5, "REJECT")


def test_default_max_violations_is_200() -> None:
    analysis = [item(f"a{i}", *[MISSING] * 3) for i in range(1, 71)]  # 210 citation failures
    verdict = check(draft(analysis, conclusion=None, action_plan=[]))
    assert (len(verdict["violations"]), verdict["violation_count"], verdict["violations_truncated"]) == (
        200,
        210,
        True,
    )


FALLBACK_REPORT = {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}


@pytest.mark.parametrize(
    ("attempt", "max_attempts", "bad", "expected", "shown_attempt"),
    [
        (1, 2, False, "PASS", 1),
        (5, 2, False, "PASS", 5),
        (1, 2, True, "REJECT", 1),
        (2, 2, True, "FALLBACK", 2),
        (3, 2, True, "FALLBACK", 3),
        (1, 1, True, "FALLBACK", 1),
        (2, 3, True, "REJECT", 2),
        (ABSENT, 2, True, "REJECT", 1),
        (None, 1, True, "FALLBACK", 1),
    ],
)
def test_pass_reject_fallback(
    attempt: Any, max_attempts: int, bad: bool, expected: str, shown_attempt: int
) -> None:
    value = draft(limitations=[] if bad else _DEFAULT, attempt=attempt)
    verdict = check(value, guard_settings=GuardSettings(max_attempts=max_attempts))
    assert (verdict["verdict"], verdict["attempt"]) == (expected, shown_attempt)
    assert verdict["fallback_report"] == (FALLBACK_REPORT if expected == "FALLBACK" else None)


@pytest.mark.parametrize(
    ("raw", "run_id", "draft_id", "attempt"),
    [
        pytest.param(b"not json", None, None, 1, id="not-json"),
        pytest.param(b'["run-1"]', None, None, 1, id="array"),
        pytest.param(
            codec.dumps({"run_id": "  ", "draft_id": "d", "attempt": 3, "analysis": "x"}),
            "  ",
            "d",
            3,
            id="all-readable",
        ),
        pytest.param(
            codec.dumps({"run_id": 5, "draft_id": "", "attempt": 0}), None, None, 1, id="none-readable"
        ),
        pytest.param(
            codec.dumps({"run_id": "r", "draft_id": 5, "attempt": True}), "r", None, 1, id="bool-attempt"
        ),
        pytest.param(
            codec.dumps({"run_id": "r:1", "draft_id": "d", "attempt": 2.0}), "r:1", "d", 1, id="float-attempt"
        ),
        pytest.param(codec.dumps({"run_id": None, "attempt": -2}), None, None, 1, id="negative-attempt"),
    ],
)
def test_early_end_carries_what_could_be_read(
    raw: bytes, run_id: str | None, draft_id: str | None, attempt: int
) -> None:
    verdict = check(raw)
    assert found(verdict) == [("DRAFT_UNPARSABLE", "")]
    assert (verdict["run_id"], verdict["draft_id"], verdict["attempt"]) == (run_id, draft_id, attempt)
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()


def test_too_many_items_at_the_last_attempt_falls_back() -> None:
    verdict = check(draft([item(f"a{i}", FOUND) for i in range(1, 102)], attempt=2))
    assert found(verdict) == [("DRAFT_TOO_LARGE", "")]
    assert (verdict["attempt"], verdict["verdict"], verdict["fallback_report"]) == (
        2,
        "FALLBACK",
        FALLBACK_REPORT,
    )


def test_evidence_snapshot_is_distinct_in_first_cited_order_from_the_ledger_bytes() -> None:
    second_doc = rag_result("call-ref", "other#chunk-2", level="REFERENCE", truncated=True)
    ledger = ledger_with(
        *base_entries(), entry("call-ref", second_doc), entry("call-tampered", sha256="0" * 64)
    )
    analysis = [
        item("a1", NONE, "call-tampered", kind="NEGATIVE_OBSERVATION"),
        item("a2", "call-ref", FOUND),
        item("a3", FOUND, "call-ref"),
    ]
    verdict = check(draft(analysis, conclusion=None, action_plan=[]), ledger)
    assert found(verdict) == [("LEDGER_PAYLOAD_TAMPERED", at(0, 1))]
    snapshot = verdict["evidence_snapshot"]
    assert [s["tool_call_id"] for s in snapshot] == [NONE, "call-ref", FOUND]
    by_id = {
        e["tool_call_id"]: e
        for e in (entry(NONE, rag_result(NONE)), entry("call-ref", second_doc), entry(FOUND))
    }
    for shot in snapshot:
        stored = codec.loads(by_id[shot["tool_call_id"]]["projection"])
        assert list(shot) == [
            "tool_call_id",
            "evidence_status",
            "relevance_level",
            "truncated",
            "projection_sha256",
            "evidence",
        ]
        assert shot == {
            "tool_call_id": stored["tool_call_id"],
            "evidence_status": stored["evidence_status"],
            "relevance_level": stored["relevance_level"],
            "truncated": stored["truncated"],
            "projection_sha256": by_id[shot["tool_call_id"]]["projection_sha256"],
            "evidence": stored["evidence"],
        }


def test_verdict_keys_in_order_and_valid_against_the_contract() -> None:
    verdict = check(draft(limitations=[]), record=Record("diagnosis-drafts", 0, 7, 1700000000000, None, b""))
    assert list(verdict) == [
        "event_id",
        "origin",
        "run_id",
        "draft_id",
        "draft_sha256",
        "attempt",
        "verdict",
        "violation_count",
        "violations_truncated",
        "violations",
        "evidence_snapshot",
        "fallback_report",
        "source_timestamp",
    ]
    assert VERDICT_ADAPTER.validate_python(verdict) == verdict
    assert verdict["source_timestamp"] == 1700000000000
    assert verdict["event_id"] == "guard:diagnosis-drafts:0:7:1700000000000"
    assert verdict["origin"] == {
        "topic": "diagnosis-drafts",
        "partition": 0,
        "offset": 7,
        "timestamp": 1700000000000,
    }


def test_violation_events_ids_are_the_verdict_id_plus_the_index() -> None:
    origin = {"topic": "diagnosis-drafts", "partition": 1, "offset": 9, "timestamp": 5}
    verdict = check(
        _many_violations(),
        guard_settings=GuardSettings(max_violations=3),
        record=Record("diagnosis-drafts", 1, 9, 5, None, b""),
    )
    events = violation_events(verdict)
    base = "guard:diagnosis-drafts:1:9:5"
    assert verdict["event_id"] == base
    assert [e["event_id"] for e in events] == [f"{base}#0", f"{base}#1", f"{base}#2"]  # listed ones only
    for event, violation in zip(events, verdict["violations"], strict=True):
        assert event == {
            "event_id": event["event_id"],
            "origin": origin,
            "run_id": RUN,
            "draft_id": "d-1",
            "attempt": 1,
            "code": violation["code"],
            "path": violation["path"],
            "message": violation["message"],
            "source_timestamp": 5,
        }
    offline = violation_events(check(_many_violations()))
    assert [e["event_id"] for e in offline] == [None] * 5
    assert violation_events(check(draft())) == []
