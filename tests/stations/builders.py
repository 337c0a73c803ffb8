"""Builders for the station rule tests (SPEC sections 2-4), shared by ``test_adapt`` ... ``test_guard``.

``hit``, ``raw_record`` and ``seed_record`` build py-rag input; ``run``, ``accepted`` and ``rejected`` take it
through the pipeline under ``rules``: the stations' rules, of ``models.limits`` objects built directly with
the SPEC's defaults unless given. Each case then changes only the one thing it tests.
"""

from __future__ import annotations

from typing import Any

from models.events import Rejection
from models.limits import (
    DeadLetterSettings,
    GuardSettings,
    InputLimits,
    PostprocessSettings,
    ToolProjectionLimits,
)
from models.lookup import LookupResult
from streams import codec
from streams.pipeline import PostprocessOutcome, StationRules, process_raw_hits
from streams.settings import Settings

ABSENT: Any = object()
"""Leave the field out of the built value altogether."""


def rules(
    *,
    input_limits: InputLimits | None = None,
    postprocess: PostprocessSettings | None = None,
    projection: ToolProjectionLimits | None = None,
) -> StationRules:
    """The stations' rules with the SPEC's defaults unless given, and no keys (no EC_* variable leaks in)."""
    limits = Settings(
        input=input_limits or InputLimits(),
        postprocess=postprocess or PostprocessSettings(),
        projection=projection or ToolProjectionLimits(),
        guard=GuardSettings(),
        dead_letters=DeadLetterSettings(),
    )
    return StationRules.with_keys(limits, None, None)


def without_absent(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not ABSENT}


# =============================================================================================
# Builders: py-rag input and the pipeline
# =============================================================================================


def hit(
    key: str = "doc-a#chunk-0", score: Any = 0.9, *, doc: str | None = None, **fields: Any
) -> dict[str, Any]:
    """One py-rag hit; the document id is the key's part before ``#`` unless given."""
    document_id = doc if doc is not None else key.split("#", 1)[0]
    values = {
        "evidence_key": key,
        "document_id": document_id,
        "source": f"{document_id}-src",
        "title": f"{document_id} title",
        "breadcrumb": f"{document_id} > part",
        "excerpt": f"text of {key}",
        "quality_score": score,
        "relevance_level": "PRECISE",
    }
    values.update(fields)
    return without_absent(values)


def raw_record(
    *hits: dict[str, Any],
    run_id: Any = "run-1",
    tool_call_id: Any = "call-1",
    query: Any = "gateway timeout",
    status: Any = "supported",
    **response_fields: Any,
) -> dict[str, Any]:
    """A raw-hits record around some hits."""
    response = without_absent(
        {"query": query, "mode": "hybrid", "hits": list(hits), "evidence_status": status, **response_fields}
    )
    return without_absent({"run_id": run_id, "tool_call_id": tool_call_id, "response": response})


def run(record: dict[str, Any] | bytes, config: StationRules | None = None) -> PostprocessOutcome:
    raw = record if isinstance(record, bytes) else codec.dumps(record)
    return process_raw_hits(raw, config or rules())


def accepted(record: dict[str, Any] | bytes, config: StationRules | None = None) -> LookupResult:
    outcome = run(record, config)
    assert outcome.rejection is None, outcome.rejection
    assert outcome.lookup is not None
    assert outcome.lookup["status"] == "OK"
    return outcome.lookup


def rejected(record: dict[str, Any] | bytes, config: StationRules | None = None) -> Rejection:
    outcome = run(record, config)
    assert outcome.rejection is not None, "the record was accepted"
    return outcome.rejection


def keys(lookup: LookupResult) -> list[str]:
    return [b["evidence_key"] for b in lookup["evidence_blocks"]]


GATEWAY = "e2e-gateway-b9c1fa12-md-34223174"


def seed_record() -> dict[str, Any]:
    """The design note's seed: 7 hits, one repeated key, three chunks of one document."""
    return raw_record(
        hit(f"{GATEWAY}#chunk-1", 0.9147),
        hit(f"{GATEWAY}#chunk-2", 0.88),
        hit(f"{GATEWAY}#chunk-3", 0.8),
        hit("nginx-upstream-md-11#chunk-0", 0.71),
        hit(f"{GATEWAY}#chunk-1", 0.9, excerpt="a later copy"),
        hit("k8s-ingress-md-7#chunk-4", 0.55),
        hit("lb-health-md-3#chunk-2", 0.52),
    )
