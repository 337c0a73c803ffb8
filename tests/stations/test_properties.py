"""Hypothesis properties of the pure rules (SPEC 3 and 4), over generated py-rag answers and drafts.

Doc ids come from a small pool and keys repeat, so dedupe and both caps trigger often; texts mix
in characters beyond the BMP and are sometimes long enough to be cut. Each property stays within
200 examples and no deadline, so the file runs in seconds.
"""

from __future__ import annotations

import hashlib
import json as stdlib_json  # an independent parser: the oracle for repeated names
import sys
import unicodedata
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.limits import (
    DeadLetterSettings,
    GuardSettings,
    InputLimits,
    PostprocessSettings,
    ToolProjectionLimits,
)
from models.projection import EVIDENCE_ITEM_FIELDS, RAG_TOOL_RESULT_ADAPTER, RAG_TOOL_RESULT_FIELDS
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.pipeline import StationRules, process_lookup, process_raw_hits
from streams.settings import Settings
from streams.stations.blank import is_blank
from streams.stations.project import canonical_projection
from tests.stations.builders import rules
from tests.support import memory_ledger, verdict_of

PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DOCS = ("doc-a", "doc-b", "doc-c", "doc-d")
ASTRAL = "😀𝄞𠀀🀄🧪"

# -- strategies ---------------------------------------------------------------------------------

chars = st.one_of(st.characters(codec="utf-8"), st.sampled_from(ASTRAL))
short_text = st.text(chars, max_size=12)


def long_text(max_repeat: int) -> st.SearchStrategy[str]:
    """A short random text repeated: long strings (past the cuts) without generating each char."""
    return st.builds(lambda base, times: base * times, short_text, st.integers(0, max_repeat))


@st.composite
def hits(draw: st.DrawFn) -> dict[str, Any]:
    doc = draw(st.sampled_from(DOCS))
    chunk = draw(st.one_of(st.none(), st.integers(0, 3)))
    hit = {
        "evidence_key": doc if chunk is None else f"{doc}#chunk-{chunk}",
        "document_id": doc,
        "source": draw(short_text),
        "excerpt": draw(long_text(150)),
        "quality_score": draw(st.one_of(st.floats(-1, 2), st.integers(-1, 2))),
    }
    for name in ("title", "breadcrumb"):
        value = draw(st.one_of(st.just(...), st.none(), short_text))
        if value is not ...:
            hit[name] = value
    return hit


@st.composite
def raw_records(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "run_id": "run-1",
        "tool_call_id": draw(st.sampled_from(["call-1", "c" * 128])),
        "response": {
            "query": draw(long_text(60)),
            "evidence_status": draw(st.sampled_from(["supported"] * 5 + ["no_evidence"])),
            "hits": draw(st.lists(hits(), max_size=12)),
            "relevance_level": draw(st.sampled_from(["PRECISE", "REFERENCE", None])),
        },
    }


@st.composite
def chain_rules(draw: st.DrawFn) -> StationRules:
    limits = Settings(
        input=InputLimits(),
        postprocess=PostprocessSettings(
            max_chunks_per_doc=draw(st.integers(1, 3)),
            return_n=draw(st.integers(0, 10)),
            char_budget=draw(st.integers(0, 3000)),
        ),
        projection=ToolProjectionLimits(
            max_query_chars=draw(st.sampled_from([0, 10, 500])),
            max_items=draw(st.integers(0, 10)),
            max_excerpt_chars=draw(st.sampled_from([0, 50, 1200])),
            max_bytes=draw(st.one_of(st.integers(300, 4000), st.just(16384))),
        ),
        guard=GuardSettings(),
        dead_letters=DeadLetterSettings(),
    )
    return StationRules.with_keys(limits, None, None)


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    short_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(short_text, children, max_size=4)
    ),
    max_leaves=20,
)


def shaped(
    names: list[str], values: st.SearchStrategy[Any] = json_values
) -> st.SearchStrategy[dict[str, Any]]:
    """Objects that use the contract's own field names, with arbitrary values."""
    return st.dictionaries(st.sampled_from(names), values, max_size=len(names))


LOOKUP_NAMES = [
    "run_id", "tool_call_id", "toolCallId", "query", "relevance_level", "relevanceLevel", "status",
    "evidence_blocks", "evidenceBlocks", "origin",
]  # fmt: skip
BLOCK_NAMES = [
    "evidence_key", "evidenceKey", "document_id", "documentId", "doc_id", "docId", "chunk_index",
    "chunkIndex", "content", "excerpt", "source", "title", "breadcrumb",
]  # fmt: skip
HIT_NAMES = [
    "evidence_key", "document_id", "source", "title", "breadcrumb", "excerpt", "quality_score",
    "relevance_level",
]  # fmt: skip
DRAFT_NAMES = ["run_id", "draft_id", "attempt", "analysis", "conclusion", "action_plan", "limitations"]
ITEM_NAMES = ["id", "kind", "content", "tool_call_ids", "document_ids", "based_on_analysis_ids"]

lookups = st.one_of(
    shaped(LOOKUP_NAMES),
    st.builds(
        lambda base, blocks: {**base, "evidence_blocks": blocks},
        shaped(LOOKUP_NAMES),
        st.lists(st.one_of(shaped(BLOCK_NAMES), json_values), max_size=10),
    ),
)


def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually a value of the right type, sometimes any JSON value at all."""
    return st.one_of(valid, valid, valid, json_values)


@st.composite
def drafts(draw: st.DrawFn) -> dict[str, Any]:
    """Drafts of the right shape with random content; now and then one field of any JSON type."""
    odd_field = draw(st.one_of(st.none(), st.sampled_from([*DRAFT_NAMES, "item"])))
    ids = st.sampled_from(["a1", "a2", "p1"])
    cited = st.lists(st.one_of(st.sampled_from([f"call-{i}" for i in range(6)]), short_text), max_size=3)

    def item(refs: bool) -> dict[str, Any]:
        value = {
            "id": draw(ids),
            "kind": draw(st.sampled_from(["NORMAL", "NEGATIVE_OBSERVATION", "GUESS"])),
            "content": draw(st.one_of(short_text, st.none())),
            "tool_call_ids": draw(cited),
            "document_ids": draw(
                st.lists(st.sampled_from(["doc-x#chunk-1", "doc-y", "made-up"]), max_size=2)
            ),
        }
        if refs:
            value = {
                "id": value["id"],
                "content": value["content"],
                "based_on_analysis_ids": draw(st.lists(ids)),
            }
        if odd_field == "item":
            value[draw(st.sampled_from(ITEM_NAMES))] = draw(json_values)
        return value

    value: dict[str, Any] = {
        "run_id": draw(st.sampled_from(["run-1", "run-2", " ", "bad:id", None])),
        "draft_id": "d-1",
        "attempt": draw(st.integers(-1, 3)),
        "analysis": [item(False) for _ in range(draw(st.integers(0, 3)))],
        "conclusion": item(True) if draw(st.booleans()) else None,
        "action_plan": [item(True) for _ in range(draw(st.integers(0, 2)))],
        "limitations": draw(st.lists(short_text, max_size=2)),
    }
    if odd_field in DRAFT_NAMES:
        value[odd_field] = draw(json_values)
    return value


raw_shaped = st.builds(
    lambda response, hits_: {"run_id": "r", "tool_call_id": "c", "response": {**response, "hits": hits_}},
    st.fixed_dictionaries(
        {
            "query": mostly(short_text),
            "evidence_status": mostly(st.sampled_from(["supported", "no_evidence"])),
            "relevance_level": json_values,
            "retrieval_trace": json_values,
        }
    ),
    mostly(st.lists(st.one_of(hits(), hits(), shaped(HIT_NAMES), json_values), max_size=4)),
)

# -- the chain: raw-hits → blocks → projection -------------------------------------------------


def expected_cut(lookup: dict[str, Any], result: dict[str, Any], limits: ToolProjectionLimits) -> bool:
    """Whether a query, an excerpt or an item was cut, judged from the input and the output."""
    blocks = lookup["evidence_blocks"]
    gated = blocks[: limits.max_items]
    return (
        len(lookup["query"]) > limits.max_query_chars
        or len(blocks) > limits.max_items
        or any(len(b["content"]) > limits.max_excerpt_chars for b in gated)
        or result["returned_count"] < len(gated)
    )


@PROPERTY
@given(record=raw_records(), config=chain_rules())
def test_chain_invariants(record: dict[str, Any], config: StationRules) -> None:
    outcome = process_raw_hits(codec.dumps(record), config)
    assert outcome.rejection is None, outcome.rejection
    lookup: dict[str, Any] = dict(outcome.lookup or {})
    blocks = lookup["evidence_blocks"]
    hits_in = record["response"]["hits"] if record["response"]["evidence_status"] == "supported" else []

    # Caps: never more than max_chunks_per_doc blocks of one document, nor return_n in all.
    per_doc = [b["doc_id"] for b in blocks]
    assert all(per_doc.count(doc) <= config.postprocess.max_chunks_per_doc for doc in per_doc)
    assert len(blocks) <= config.postprocess.return_n
    # Rank, not score: blocks keep their original order; every key appears once.
    ranks = [b["original_rank"] for b in blocks]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert len({b["evidence_key"] for b in blocks}) == len(blocks)
    # Each block is the first occurrence of its key, scored in [0, 1].
    for b in blocks:
        first = next(h for h in hits_in if h["evidence_key"] == b["evidence_key"])
        assert hits_in.index(first) + 1 == b["original_rank"]
        assert b["content"] == first["excerpt"]
        assert 0.0 <= b["quality_score"] <= 1.0
    assert lookup["candidate_count"] == len(hits_in)
    assert lookup["top_similarity"] == (blocks[0]["quality_score"] if blocks else None)
    # The pack never exceeds its budget and accounts for every block.
    pack = lookup["context_pack"]
    assert pack["used_chars"] == len(pack["packed_text"]) <= config.postprocess.char_budget
    assert len(pack["included_sources"]) + len(pack["omitted_sources"]) == len(blocks)

    limits = config.projection
    projected = process_lookup(codec.dumps(lookup), config)
    if projected.projection is None:
        # Fail closed only when even the honest empty projection is over the budget.
        assert (
            projected.rejection is not None and projected.rejection["reason"] == "PROJECTION_BUDGET_EXCEEDED"
        )
        empty = {
            "evidence_status": "NO_EVIDENCE", "tool_call_id": lookup["tool_call_id"],
            "query": lookup["query"][: limits.max_query_chars], "evidence": [], "returned_count": 0,
            "relevance_level": None, "truncated": True,
        }  # fmt: skip
        assert len(codec.dumps(empty)) > limits.max_bytes
        return
    canonical = projected.projection.canonical
    assert len(canonical) <= limits.max_bytes
    RAG_TOOL_RESULT_ADAPTER.validate_json(canonical, strict=True)
    result = codec.loads(canonical)
    assert tuple(result) == RAG_TOOL_RESULT_FIELDS
    assert all(tuple(item) == EVIDENCE_ITEM_FIELDS for item in result["evidence"])
    assert canonical == canonical_projection(result)
    assert projected.projection.sha256 == hashlib.sha256(canonical).hexdigest()
    assert result["returned_count"] == len(result["evidence"])
    assert result["returned_count"] <= limits.max_items
    # The items are the first blocks in rank order, each excerpt a prefix of the block's content.
    assert [item["document_id"] for item in result["evidence"]] == [
        b["evidence_key"] for b in blocks[: result["returned_count"]]
    ]
    for item, b in zip(result["evidence"], blocks, strict=False):
        assert item["excerpt"] == b["content"][: limits.max_excerpt_chars]
    assert result["query"] == lookup["query"][: limits.max_query_chars]
    assert result["truncated"] == expected_cut(lookup, result, limits)
    assert (result["evidence_status"] == "EVIDENCE_FOUND") == bool(result["evidence"])
    if not result["evidence"]:
        assert result["relevance_level"] is None


# -- never raise --------------------------------------------------------------------------------

DEFAULTS = rules()
INPUT_REASONS = {"MALFORMED_JSON", "OVERSIZED", "INVALID_ID", "SCHEMA_VIOLATION"}


def check_raw_hits(raw: bytes) -> None:
    outcome = process_raw_hits(raw, DEFAULTS)
    if outcome.rejection is None:
        assert outcome.lookup is not None and outcome.lookup["status"] == "OK"
        assert process_lookup(codec.dumps(outcome.lookup), DEFAULTS).projection is not None
    else:
        # Bad input is rejected with an input reason; INTERNAL_ERROR would be a bug in a station.
        assert outcome.rejection["reason"] in INPUT_REASONS, outcome.rejection


def check_lookup(raw: bytes) -> None:
    outcome = process_lookup(raw, DEFAULTS)
    if outcome.projection is not None:
        assert outcome.rejection is None
        assert len(outcome.projection.canonical) <= DEFAULTS.projection.max_bytes
        RAG_TOOL_RESULT_ADAPTER.validate_json(outcome.projection.canonical, strict=True)
        assert tuple(codec.loads(outcome.projection.canonical)) == RAG_TOOL_RESULT_FIELDS


@FUZZ
@given(raw=st.binary(max_size=300))
def test_stations_never_raise_on_arbitrary_bytes(raw: bytes) -> None:
    check_raw_hits(raw)
    check_lookup(raw)


@FUZZ
@given(value=st.one_of(json_values, raw_shaped))
def test_raw_hits_never_raises_on_arbitrary_json(value: Any) -> None:
    check_raw_hits(codec.dumps(value))


@FUZZ
@given(value=st.one_of(json_values, lookups))
def test_projector_never_raises_on_arbitrary_json(value: Any) -> None:
    check_lookup(codec.dumps(value))


# -- the guard ----------------------------------------------------------------------------------

RUN = "run-1"
POOL = tuple(f"call-{i}" for i in range(6))
PASSING = ("found", "none")
STATES = (*PASSING, "missing", "foreign", "failed", "tampered", "unknown_field", "wrong_call_id", "not_json")
DOC_POOL = ("doc-x#chunk-1", "doc-y", "made-up")


def projection_for(tool_call_id: str, state: str) -> dict[str, Any]:
    docs = ["doc-x#chunk-1", "doc-y"] if state != "none" else []
    evidence = [
        {"document_id": d, "source": "s", "title": None, "breadcrumb": "b", "excerpt": "e😀"} for d in docs
    ]
    return {
        "evidence_status": "EVIDENCE_FOUND" if docs else "NO_EVIDENCE",
        "tool_call_id": tool_call_id if state != "wrong_call_id" else "call-other",
        "query": "q",
        "evidence": evidence,
        "returned_count": len(evidence),
        "relevance_level": "PRECISE" if docs else None,
        "truncated": False,
    }


def ledger_for(states: dict[str, str]) -> MemoryLedgerStore:
    ledger = MemoryLedgerStore()
    for tool_call_id, state in states.items():
        if state == "missing":
            continue
        projection = projection_for(tool_call_id, state)
        if state == "unknown_field":
            projection["score"] = 0.9
        data = b"{" if state == "not_json" else canonical_projection(projection)
        digest = hashlib.sha256(data).hexdigest()
        ledger.load(
            [
                {
                    "run_id": "run-2" if state == "foreign" else RUN,
                    "tool_call_id": tool_call_id,
                    "status": "FAILED" if state == "failed" else "READY",
                    "evidence_status": projection["evidence_status"],
                    "projection": data.decode(),
                    "projection_sha256": "0" * 64 if state == "tampered" else digest,
                }
            ]
        )
    return ledger


analysis_items = st.lists(
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["NORMAL", "NEGATIVE_OBSERVATION"]),
            "tool_call_ids": st.lists(st.sampled_from(POOL), min_size=1, max_size=3),
            "document_ids": st.lists(st.sampled_from(DOC_POOL), max_size=2),
        }
    ),
    min_size=1,
    max_size=3,
)


@PROPERTY
@given(
    states=st.fixed_dictionaries({tcid: st.sampled_from(STATES + PASSING * 3) for tcid in POOL}),
    items=analysis_items,
)
def test_guard_passes_exactly_the_drafts_whose_every_citation_holds(
    states: dict[str, str], items: list[dict[str, Any]]
) -> None:
    analysis = [{"id": f"a{i}", "content": "finding", **it} for i, it in enumerate(items, start=1)]
    draft = {
        "run_id": RUN,
        "draft_id": "d-1",
        "analysis": analysis,
        "conclusion": {"content": "c", "based_on_analysis_ids": ["a1"]},
        "limitations": ["only the knowledge base"],
    }
    verdict = verdict_of(codec.dumps(draft), ledger_for(states), GuardSettings())

    bad_citation = False
    unknown_document = False
    for it in items:
        passed = [tcid for tcid in it["tool_call_ids"] if states[tcid] in PASSING]
        for tcid in it["tool_call_ids"]:
            state = states[tcid]
            bad_citation |= state not in PASSING
            bad_citation |= it["kind"] == "NORMAL" and state == "none"
            bad_citation |= it["kind"] == "NEGATIVE_OBSERVATION" and state == "found"
        known = {d for tcid in passed if states[tcid] == "found" for d in ("doc-x#chunk-1", "doc-y")}
        unknown_document |= bool(passed) and not set(it["document_ids"]) <= known

    if bad_citation:  # missing, foreign, not READY, tampered, malformed or of the wrong kind
        assert verdict["verdict"] != "PASS"
    assert (verdict["verdict"] == "PASS") == (not bad_citation and not unknown_document)
    first_cited = dict.fromkeys(
        tcid for it in items for tcid in it["tool_call_ids"] if states[tcid] in PASSING
    )
    assert [s["tool_call_id"] for s in verdict["evidence_snapshot"]] == list(first_cited)
    assert verdict["violation_count"] == len(verdict["violations"])


def check_guard(raw: bytes, ledger: MemoryLedgerStore) -> None:
    verdict = verdict_of(raw, ledger, GuardSettings())
    assert verdict["draft_sha256"] == hashlib.sha256(raw).hexdigest()
    assert verdict["verdict"] in {"PASS", "REJECT", "FALLBACK"}
    assert (verdict["verdict"] == "PASS") == (verdict["violation_count"] == 0)
    assert isinstance(verdict["attempt"], int) and verdict["attempt"] >= 1
    codec.dumps(verdict)


FUZZ_LEDGER = ledger_for(dict(zip(POOL, STATES, strict=False)))


@FUZZ
@given(raw=st.binary(max_size=300))
def test_guard_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    check_guard(raw, FUZZ_LEDGER)


@FUZZ
@given(value=st.one_of(json_values, shaped(DRAFT_NAMES), drafts()))
def test_guard_never_raises_on_arbitrary_json(value: Any) -> None:
    check_guard(codec.dumps(value), FUZZ_LEDGER)


# A stored projection: a well-formed one, then perhaps one mutation. evidence_status and relevance_level
# stay hashable here: a list or object there makes the guard raise (the unhashable-enum cases in
# test_guard.py).
enum_like = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),  # what JSON (orjson) can carry
    short_text,
    st.sampled_from(["EVIDENCE_FOUND", "NO_EVIDENCE", "PRECISE"]),
)
stored_evidence = st.lists(
    st.fixed_dictionaries(
        {
            "document_id": short_text,
            "source": st.one_of(st.none(), short_text),
            "title": st.one_of(st.none(), short_text),
            "breadcrumb": st.one_of(st.none(), short_text),
            "excerpt": short_text,
        }
    ),
    max_size=3,
)


@st.composite
def stored_projections(draw: st.DrawFn) -> dict[str, Any]:
    evidence = draw(stored_evidence)
    projection: dict[str, Any] = {
        "evidence_status": "EVIDENCE_FOUND" if evidence else "NO_EVIDENCE",
        "tool_call_id": "call-0",
        "query": draw(short_text),
        "evidence": evidence,
        "returned_count": len(evidence),
        "relevance_level": draw(st.sampled_from(["PRECISE", "REFERENCE", None])),
        "truncated": draw(st.booleans()),
    }
    mutation = draw(
        st.sampled_from(
            ["none", "none", "set", "drop", "extra", "count", "call", "item-set", "item-drop", "item-extra"]
        )
    )
    name = draw(st.sampled_from(RAG_TOOL_RESULT_FIELDS))
    item_name = draw(st.sampled_from(EVIDENCE_ITEM_FIELDS))
    odd = draw(enum_like if name in ("evidence_status", "relevance_level") else json_values)
    if mutation == "set":
        projection[name] = odd
    elif mutation == "drop":
        del projection[name]
    elif mutation == "count":
        projection["returned_count"] = len(evidence) + 1
    elif mutation == "call":
        projection["tool_call_id"] = "call-other"
    elif mutation == "extra":
        projection[draw(st.sampled_from(["score", "trace", "Evidence"]))] = odd
    elif evidence and mutation == "item-set":
        evidence[0][item_name] = draw(json_values)
    elif evidence and mutation == "item-drop":
        del evidence[0][item_name]
    elif evidence and mutation == "item-extra":
        evidence[-1]["score"] = odd
    return projection


@FUZZ
@given(projection=stored_projections())
def test_guard_rereads_a_projection_exactly_when_it_meets_the_frozen_contract(
    projection: dict[str, Any],
) -> None:
    data = codec.dumps(projection)
    entry = {"run_id": RUN, "tool_call_id": "call-0", "status": "READY", "projection": data.decode(),
             "projection_sha256": hashlib.sha256(data).hexdigest()}  # fmt: skip
    draft = {"run_id": RUN, "draft_id": "d", "analysis": [{"id": "a1", "kind": "NORMAL", "content": "x",
             "tool_call_ids": ["call-0"]}], "limitations": ["l"]}  # fmt: skip
    verdict = verdict_of(codec.dumps(draft), memory_ledger([entry]), GuardSettings())
    try:
        RAG_TOOL_RESULT_ADAPTER.validate_json(data, strict=True)
        meets_contract = (
            projection["returned_count"] == len(projection["evidence"])
            and projection["tool_call_id"] == "call-0"
        )
    except ValueError:
        meets_contract = False
    reread_passed = bool(verdict["evidence_snapshot"])
    assert reread_passed == meets_contract, verdict["violations"]
    if not meets_contract:
        codes = {v["code"] for v in verdict["violations"]}
        assert codes <= {"LEDGER_PAYLOAD_INVALID", "LEDGER_PAYLOAD_UNKNOWN_FIELD"}


# -- SPEC 4 A.1 and A.6: repeated names and blank texts -----------------------------------------

NAME_CHARS = 'a:"\\\u00e9\u200b😀'
WHITE_SPACE_PROPERTY = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""Unicode's PropList.txt White_Space, copied here rather than imported: the test's own oracle."""


def _json_string(draw: st.DrawFn, text: str) -> str:
    """``text`` as a JSON string token, each character written plainly or as ``\\u`` escapes."""
    out = []
    for ch in text:
        if draw(st.booleans()):
            units = ch.encode("utf-16-be")
            out.append("".join(f"\\u{units[i : i + 2].hex()}" for i in range(0, len(units), 2)))
        else:
            out.append(codec.dumps(ch).decode()[1:-1])
    return f'"{"".join(out)}"'


@st.composite
def json_texts(draw: st.DrawFn, depth: int = 0) -> str:
    """JSON text whose objects draw names from a tiny pool, so names often repeat (or only look alike:
    ``a`` and ``a:``), written with random escapes and spaces."""
    space = draw(st.sampled_from(["", " ", "\n"]))
    kind = draw(st.sampled_from(["scalar", "array", "object"] if depth < 4 else ["scalar"]))
    if kind == "scalar" and draw(st.booleans()):
        return draw(st.sampled_from(["1", "-2.5e3", "true", "null"]))
    if kind == "scalar":
        return _json_string(draw, draw(st.text(NAME_CHARS, max_size=4)))
    items = draw(st.lists(json_texts(depth + 1), max_size=4))
    if kind == "array":
        return f"[{space}{','.join(items)}]"
    names = [_json_string(draw, draw(st.text(NAME_CHARS, max_size=2))) for _ in items]
    return "{" + ",".join(f"{space}{n}{space}:{space}{v}" for n, v in zip(names, items, strict=True)) + "}"


def _repeats_a_name(text: str) -> bool:
    """The oracle: the standard library's parser, told to refuse a repeated name."""

    def pairs(found: list[tuple[str, Any]]) -> dict[str, Any]:
        if len({name for name, _ in found}) != len(found):
            raise KeyError("repeated")
        return dict(found)

    try:
        stdlib_json.loads(text, object_pairs_hook=pairs)
    except KeyError:
        return True
    return False


@PROPERTY
@given(text=json_texts())
def test_loads_unique_refuses_exactly_the_texts_that_repeat_a_name(text: str) -> None:
    raw = text.encode()
    repeats = _repeats_a_name(text)
    try:
        value = codec.loads_unique(raw)
    except codec.JSONDecodeError as exc:
        assert repeats and "repeats the name" in str(exc)
    else:
        assert not repeats
        assert value == codec.loads(raw)


def _blank_by_the_spec(ch: str) -> bool:
    return ch in WHITE_SPACE_PROPERTY or ch in "\u115f\u1160\u3164\uffa0" or unicodedata.category(ch) == "Cf"


def test_is_blank_for_every_code_point() -> None:
    """SPEC 4 A.6, one character at a time over all of Unicode, then in runs with a space around."""
    wrong = [
        hex(code)
        for code in range(sys.maxunicode + 1)
        if is_blank(chr(code)) != _blank_by_the_spec(chr(code))
    ]
    assert wrong == []
    assert [hex(c) for c in range(0x20) if is_blank(chr(c))] == ["0x9", "0xa", "0xb", "0xc", "0xd"]


@PROPERTY
@given(text=st.text(st.one_of(st.sampled_from(" \x1c\u200b\u3164\u180e\u0600\U000e0041\ufeffa"), chars)))
def test_is_blank_is_every_character_blank(text: str) -> None:
    assert is_blank(text) == all(_blank_by_the_spec(ch) for ch in text)


def _depth(value: Any) -> int:
    """The oracle: how many arrays/objects deep a parsed value nests (the top level is 1)."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


@PROPERTY
@given(text=json_texts(), limit=st.integers(min_value=0, max_value=6), as_text=st.booleans())
def test_nested_deeper_than_answers_as_the_depth_does_with_brackets_in_strings_or_not(
    text: str, limit: int, as_text: bool
) -> None:
    # small limits put both sides of the bracket pre-check to work: few brackets answer without a walk
    value = stdlib_json.loads(text)
    raw: bytes | str = text if as_text else text.encode()
    assert codec.nested_deeper_than(raw, value, limit) == (_depth(value) > limit)


@pytest.mark.parametrize("brackets", ["[", "{", "[{"])
def test_the_bracket_pre_check_counts_brackets_inside_strings_too(brackets: str) -> None:
    # 65 brackets, all inside one string: not deep, and the value is walked to say so
    text = '["' + brackets * 65 + '"]'
    assert codec.nested_deeper_than(text, stdlib_json.loads(text)) is False
    deep = "[" * 65 + "]" * 65
    assert codec.nested_deeper_than(deep.encode(), stdlib_json.loads(deep)) is True
    assert (
        codec.nested_deeper_than(("[" * 64 + "]" * 64).encode(), stdlib_json.loads("[" * 64 + "]" * 64))
        is False
    )
