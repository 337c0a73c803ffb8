"""SPEC 3.2 (postprocess): one table or test per rule, with the SPEC's own numbers.

Where the code disagrees with the SPEC the test says what the SPEC wants; the cases that once disagreed
keep the SPEC's words in their docstring.
"""

from __future__ import annotations

import pytest

from models.limits import PostprocessSettings
from models.vocab import (
    ATTEMPT_REASON,
    COMPLETENESS_HINTS,
    FALLBACK_MESSAGE,
)
from tests.stations.builders import (
    GATEWAY,
    accepted,
    hit,
    keys,
    raw_record,
    rules,
    run,
    seed_record,
)

# =============================================================================================
# SPEC 3.2: postprocess
# =============================================================================================


def test_seed_example_7_in_5_out() -> None:
    lookup = accepted(seed_record())
    assert lookup["candidate_count"] == 7
    assert lookup["evidence_block_count"] == 5
    assert keys(lookup) == [
        f"{GATEWAY}#chunk-1",
        f"{GATEWAY}#chunk-2",
        "nginx-upstream-md-11#chunk-0",
        "k8s-ingress-md-7#chunk-4",
        "lb-health-md-3#chunk-2",
    ]
    first = lookup["evidence_blocks"][0]
    # The merge: the first occurrence keeps its place, content and score; reasons are the union.
    assert first["hit_reasons"] == ["semantic_rank:1", ATTEMPT_REASON, "semantic_rank:5"]
    assert (first["content"], first["quality_score"], first["original_rank"]) == (
        f"text of {GATEWAY}#chunk-1",
        0.9147,
        1,
    )
    # The per-document cap drops chunk-3 (the third distinct block of the gateway document).
    assert [b["original_rank"] for b in lookup["evidence_blocks"]] == [1, 2, 4, 6, 7]
    assert (lookup["top_similarity"], lookup["relevance_level"], lookup["low_quality"]) == (
        0.9147,
        "PRECISE",
        False,
    )
    assert lookup["completeness_hint"] == COMPLETENESS_HINTS["PRECISE"]
    assert (lookup["found"], lookup["fallback_message"]) == (True, None)
    assert lookup["rerank_trace"] == [
        {"final_rank": rank, "source": b["source"], "score": b["quality_score"], "reasons": b["hit_reasons"]}
        for rank, b in enumerate(lookup["evidence_blocks"], start=1)
    ]


def test_total_cap_keeps_the_best_ranked() -> None:
    lookup = accepted(raw_record(*[hit(f"doc-{i}#chunk-0", 0.9) for i in range(7)]))
    assert keys(lookup) == [f"doc-{i}#chunk-0" for i in range(5)]
    tight = rules(postprocess=PostprocessSettings(return_n=2, max_chunks_per_doc=1))
    lookup = accepted(
        raw_record(hit("a#1", doc="a"), hit("a#2", doc="a"), hit("b#1", doc="b"), hit("c#1", doc="c")), tight
    )
    assert keys(lookup) == ["a#1", "b#1"]


def test_dedupe_runs_before_the_document_cap() -> None:
    # Repeats of a key are one block: three hits of a#1 plus a#2 fit the cap of 2 per document.
    record = raw_record(hit("a#1", doc="a"), hit("a#1", doc="a"), hit("a#1", doc="a"), hit("a#2", doc="a"))
    lookup = accepted(record)
    assert keys(lookup) == ["a#1", "a#2"]
    assert lookup["evidence_blocks"][0]["hit_reasons"] == [
        "semantic_rank:1",
        ATTEMPT_REASON,
        "semantic_rank:2",
        "semantic_rank:3",
    ]


def test_rank_not_score_orders_the_blocks() -> None:
    lookup = accepted(raw_record(hit("low", 0.1), hit("mid", 0.6), hit("top", 0.99)))
    assert keys(lookup) == ["low", "mid", "top"]
    assert [b["original_rank"] for b in lookup["evidence_blocks"]] == [1, 2, 3]
    # top_similarity is the best-ranked block's score, not the maximum.
    assert (lookup["top_similarity"], lookup["relevance_level"], lookup["low_quality"]) == (0.1, None, True)


@pytest.mark.parametrize(
    ("score", "level", "low_quality"),
    [
        (1.0, "PRECISE", False),
        (0.75, "PRECISE", False),
        (0.7499, "REFERENCE", False),
        (0.5, "REFERENCE", False),
        (0.4999, None, True),
        (0.0, None, True),
    ],
)
def test_threshold_edges(score: float, level: str | None, low_quality: bool) -> None:
    lookup = accepted(raw_record(hit(score=score), hit("b", 0.99)))
    assert lookup["top_similarity"] == score
    assert lookup["relevance_level"] == level
    assert lookup["low_quality"] is low_quality
    assert lookup["completeness_hint"] == COMPLETENESS_HINTS[level]


def test_thresholds_are_settings() -> None:
    strict = rules(postprocess=PostprocessSettings(precise_threshold=0.95, reference_threshold=0.8))
    assert accepted(raw_record(hit(score=0.9)), strict)["relevance_level"] == "REFERENCE"
    lookup = accepted(raw_record(hit(score=0.79)), strict)
    assert (lookup["relevance_level"], lookup["low_quality"]) == (None, True)


@pytest.mark.parametrize(
    ("score", "clamped"),
    [(1.7, 1.0), (2, 1.0), (-0.3, 0.0), (-1, 0.0), (1, 1.0), (0, 0.0), (0.42, 0.42)],
    ids=["above-1", "int-above-1", "below-0", "int-below-0", "int-1", "int-0", "inside"],
)
def test_clamp(score: float, clamped: float) -> None:
    lookup = accepted(raw_record(hit(score=score)))
    block = lookup["evidence_blocks"][0]
    assert block["quality_score"] == clamped
    assert type(block["quality_score"]) is float
    assert lookup["rerank_trace"][0]["score"] == clamped
    assert lookup["top_similarity"] == clamped


def test_no_evidence_without_hits() -> None:
    outcome = run(raw_record(status="no_evidence"))
    lookup = outcome.lookup
    assert lookup is not None and outcome.rejection is None
    assert (lookup["candidate_count"], lookup["evidence_block_count"], lookup["found"]) == (0, 0, False)
    assert lookup["fallback_message"] == FALLBACK_MESSAGE
    assert outcome.audit["contract_anomaly"] is None


def test_no_evidence_with_hits_means_no_candidates() -> None:
    outcome = run(raw_record(hit("a"), hit("b"), status="no_evidence"))
    lookup = outcome.lookup
    assert lookup is not None and outcome.rejection is None
    assert lookup["candidate_count"] == 0
    assert lookup["evidence_blocks"] == []
    assert (lookup["top_similarity"], lookup["relevance_level"], lookup["low_quality"]) == (None, None, True)
    assert lookup["completeness_hint"] == COMPLETENESS_HINTS[None]
    assert outcome.audit["contract_anomaly"] == "hits_with_no_evidence"
    assert outcome.audit["py_rag_evidence_status"] == "no_evidence"


def test_py_rag_levels_are_read_for_the_audit_only() -> None:
    outcome = run(raw_record(hit(score=0.1, relevance_level="PRECISE"), relevance_level="PRECISE"))
    assert outcome.lookup is not None
    assert outcome.lookup["relevance_level"] is None
    assert outcome.audit["py_rag_relevance_level"] == "PRECISE"
    assert outcome.audit["contract_anomaly"] is None
