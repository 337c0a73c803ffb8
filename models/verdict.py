"""The guard's output: violations, the evidence snapshot, verdicts (SPEC 4)."""

from __future__ import annotations

from pydantic import TypeAdapter
from typing_extensions import TypedDict

from models.events import Origin
from models.projection import EvidenceItem
from models.vocab import EvidenceStatus, RelevanceLevel, VerdictKind, ViolationCode


class Violation(TypedDict):
    """One broken rule, located by a path such as ``analysis[1].tool_call_ids[0]``."""

    code: ViolationCode
    path: str
    message: str


class EvidenceSnapshot(TypedDict):
    """What one cited tool call showed the agent, rebuilt from the ledger bytes."""

    tool_call_id: str
    evidence_status: EvidenceStatus
    relevance_level: RelevanceLevel | None
    truncated: bool
    projection_sha256: str
    evidence: list[EvidenceItem]


class FallbackReport(TypedDict):
    """The fixed report that replaces a draft that failed its last attempt."""

    conclusion: None
    limitations: list[str]


class Verdict(TypedDict):
    """The ``verdicts`` topic value, keys in this order."""

    event_id: str | None
    origin: Origin | None
    run_id: str | None
    draft_id: str | None
    draft_sha256: str
    attempt: int
    verdict: VerdictKind
    violation_count: int
    violations_truncated: bool
    violations: list[Violation]
    evidence_snapshot: list[EvidenceSnapshot]
    fallback_report: FallbackReport | None
    source_timestamp: int | None


class ViolationEvent(TypedDict):
    """The ``violations`` topic value: one per listed violation."""

    event_id: str | None
    origin: Origin | None
    run_id: str | None
    draft_id: str | None
    attempt: int
    code: ViolationCode
    path: str
    message: str
    source_timestamp: int | None


VERDICT_ADAPTER: TypeAdapter[Verdict] = TypeAdapter(Verdict)
