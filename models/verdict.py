"""The guard's output: violations, the evidence snapshot, verdicts (SPEC 4) and published reports (4.3)."""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from models.events import ChainOrigin, EventId, SourceTimestamp
from models.projection import EvidenceItem
from models.vocab import AnalysisKind, EvidenceStatus, RelevanceLevel, VerdictKind, ViolationCode


class Violation(TypedDict):
    """One broken rule, located by a path such as ``analysis[1].tool_call_ids[0]``."""

    code: ViolationCode
    path: Annotated[
        str,
        Field(description="Where in the draft, e.g. analysis[1].tool_call_ids[0]; '' for the whole draft."),
    ]
    message: Annotated[str, Field(description="Free text for people.")]


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


class VerdictSignature(TypedDict):
    """A signed verdict's ``signature`` (SPEC 4.1)."""

    key_id: Annotated[
        str, Field(description="First 16 hex digits of SHA-256 over the signer's raw Ed25519 public key.")
    ]
    value: Annotated[str, Field(description="The Ed25519 signature, 128 lowercase hex digits.")]


class Verdict(TypedDict):
    """The ``verdicts`` topic value, keys in this order."""

    event_id: EventId
    origin: ChainOrigin
    run_id: Annotated[str | None, Field(description="The draft's run_id when it is a string, else null.")]
    draft_id: Annotated[
        str | None, Field(description="The draft's draft_id when it could be read, else null.")
    ]
    draft_sha256: Annotated[
        str, Field(description="Lowercase hex SHA-256 of the draft record's exact bytes.")
    ]
    attempt: Annotated[int, Field(description="The draft's attempt, 1 to 1,000,000 (1 when unreadable).")]
    verdict: Annotated[
        VerdictKind,
        Field(description="PASS: no violations; REJECT: violations, attempt < max_attempts; FALLBACK: else."),
    ]
    violation_count: Annotated[int, Field(description="Every violation found.")]
    violations_truncated: Annotated[bool, Field(description="Whether violations leaves some out.")]
    violations: Annotated[
        list[Violation], Field(description="At most max_violations (default 200), in a deterministic order.")
    ]
    evidence_snapshot: Annotated[
        list[EvidenceSnapshot],
        Field(
            description="One per distinct cited tool call whose projection passed the re-read, "
            "first cited first."
        ),
    ]
    fallback_report: Annotated[FallbackReport | None, Field(description="Null unless FALLBACK.")]
    source_timestamp: SourceTimestamp
    signature: NotRequired[
        Annotated[VerdictSignature, Field(description="Signed verdicts only (SPEC 4.1); absent unsigned.")]
    ]


class ViolationEvent(TypedDict):
    """The ``violations`` topic value: one per listed violation."""

    event_id: EventId
    origin: ChainOrigin
    run_id: str | None
    draft_id: str | None
    attempt: int
    code: ViolationCode
    path: str
    message: str
    source_timestamp: SourceTimestamp


class ReportAnalysisItem(TypedDict):
    """An analysis item as published: only the fields the guard judged, in this order."""

    id: str
    kind: AnalysisKind
    content: str
    tool_call_ids: list[str]
    document_ids: Annotated[list[str], Field(description="[] when the draft gave none.")]


class ReportConclusion(TypedDict):
    """The conclusion as published."""

    content: str
    based_on_analysis_ids: list[str]


class ReportAction(TypedDict):
    """One action as published."""

    id: str
    content: str
    based_on_analysis_ids: list[str]


class Report(TypedDict):
    """A PASS draft's reviewed fields and nothing else (SPEC 4.3): what may leave the chain. Its
    ``limitations`` are the agent's own words, published as written: the review does not judge them."""

    analysis: list[ReportAnalysisItem]
    conclusion: Annotated[
        ReportConclusion | None, Field(description="Null: the evidence was insufficient for one.")
    ]
    action_plan: list[ReportAction]
    limitations: Annotated[
        list[str],
        Field(
            description="The agent's own words, as it wrote them: the review of claims (SPEC 4.2) does not "
            "judge them, so whoever shows them shows them as the agent's, never as checked (SPEC 4.3)."
        ),
    ]


class ReportEvent(TypedDict):
    """The ``reports`` topic value (SPEC 4.3): one per PASS or FALLBACK verdict, keys in this order."""

    event_id: EventId
    origin: ChainOrigin
    run_id: Annotated[str | None, Field(description="The verdict's run_id (null only on some FALLBACKs).")]
    draft_id: Annotated[str | None, Field(description="The verdict's draft_id.")]
    attempt: int
    verdict: Annotated[VerdictKind, Field(description="PASS or FALLBACK; a REJECT publishes nothing.")]
    verdict_event_id: Annotated[
        str | None, Field(description="The event_id of the verdict this report was published under.")
    ]
    draft_sha256: Annotated[str, Field(description="The verdict's draft_sha256: the draft judged.")]
    report: Annotated[
        Report | FallbackReport,
        Field(description="PASS: the draft's reviewed fields; FALLBACK: the verdict's fallback_report."),
    ]
    source_timestamp: SourceTimestamp
    signature: NotRequired[
        Annotated[
            VerdictSignature, Field(description="Signed by the guard's key (SPEC 4.3); absent unsigned.")
        ]
    ]


VERDICT_ADAPTER: TypeAdapter[Verdict] = TypeAdapter(Verdict)
