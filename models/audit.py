"""The ``audit`` topic (SPEC 5): one record per station per consumed record, and each station's figures.

Every station's figures have a type here, and nowhere else: the pipeline builds them
(:mod:`streams.pipeline`), the audit record carries them as its ``fields``, the audit store keeps them
and its views read them (``tool_invocation``'s columns are these names; ``tests/streams/test_audit_views.py``
holds the two equal), and the pages and ``inspect`` read the views. The JSON Schema of the topic is
generated from these types, as a union by ``station``.

A station that refused its record before it could count anything writes its "refused" figures (every
figure null, or only a status and a reason); a figure JSON cannot hold turns the whole of ``fields``
into :class:`Unencodable` (the record is kept and says why). Figures are additive: a reader of the
store keeps reading records written before a figure existed (as null).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from models.events import ChainOrigin, SourceRef, SourceTimestamp
from models.semantic import Mode
from models.vocab import (
    ClaimLabel,
    DeadLetterReason,
    EvidenceStatus,
    JudgementStatus,
    LedgerOutcome,
    LedgerStatus,
    RecordStatus,
    RelevanceLevel,
    ReportOutcome,
    Station,
    VerdictKind,
    ViolationCode,
)

# --- each station's figures ---------------------------------------------------------------------------


class PostprocessFigures(TypedDict):
    """A raw-hits record the postprocess station accepted: what py-rag sent and what survived."""

    candidate_count: Annotated[int, Field(description="Hits with a usable score, before dedupe and caps.")]
    evidence_block_count: Annotated[int, Field(description="Blocks kept after dedupe and the caps.")]
    top_similarity: float | None
    relevance_level: Annotated[RelevanceLevel | None, Field(description="The best block's grade.")]
    low_quality: bool
    py_rag_relevance_level: Annotated[Any, Field(description="py-rag's own grade, as received.")]
    py_rag_evidence_status: Literal["supported", "no_evidence"]
    retrieval_trace: Annotated[Any, Field(description="py-rag's trace, as received (any JSON).")]
    pack_used_chars: int
    pack_included: int
    pack_omitted: int
    contract_anomaly: Annotated[
        Literal["hits_with_no_evidence"] | None, Field(description="A py-rag contract oddity, or null.")
    ]


class PostprocessFailed(TypedDict):
    """A raw-hits record the postprocess station refused (its dead letter says why)."""

    status: Literal[RecordStatus.FAILED]
    reason: NotRequired[
        Annotated[DeadLetterReason, Field(description="Absent when the station failed unexpectedly.")]
    ]


class ProjectFigures(TypedDict):
    """A lookup the project station projected: the shape and the digest of what the agent is shown."""

    evidence_status: EvidenceStatus
    returned_count: int
    relevance_level: RelevanceLevel | None
    truncated: bool
    projection_bytes: int
    projection_sha256: str


class ProjectFailed(TypedDict):
    """A lookup with no projection: FAILED upstream or refused here (null: no ``projected`` value)."""

    status: Literal[RecordStatus.FAILED] | None
    failure_reason: NotRequired[
        Annotated[DeadLetterReason | None, Field(description="Given with a FAILED projected value.")]
    ]


class LedgerFigures(TypedDict):
    """The ledger station's write (every figure null: refused before a write)."""

    status: LedgerStatus | None
    outcome: LedgerOutcome | None
    key: Annotated[str | None, Field(description="The Redis key written or found.")]


class ViolationLink(TypedDict):
    """One violation of a verdict with the tool calls it is about (the audit trail's links)."""

    code: ViolationCode
    path: str
    tool_call_ids: list[str]


class GuardFigures(TypedDict):
    """The guard's judgement of one draft: SPEC 5's figures first, then the trail's (additive)."""

    draft_id: str | None
    attempt: int
    verdict: Annotated[
        VerdictKind | None,
        Field(description="Null when the semantic review gives this draft's verdict (semantic: enforce)."),
    ]
    violation_codes: list[ViolationCode]
    cited_tool_call_ids: list[str]
    violations: Annotated[
        list[ViolationLink], Field(description="Which tool calls each violation is about (at most 200).")
    ]
    report_event_id: Annotated[str | None, Field(description="The report this verdict published, if any.")]
    report_claim: Annotated[
        ReportOutcome | None,
        Field(description="What the claim on the draft's (run_id, draft_id, attempt) said (SPEC 4.3)."),
    ]
    review_rules: Annotated[
        str | None,
        Field(description="The version of the review's rules (docs/review-rules.md); null with it off."),
    ]
    semantic: NotRequired[
        Annotated[Mode, Field(description="Handed to the semantic review in this mode (SPEC 4.4).")]
    ]


class GuardUnjudged(TypedDict):
    """A draft the guard could not judge (an INTERNAL_ERROR dead letter)."""

    draft_id: None
    attempt: None
    verdict: None
    violation_codes: list[ViolationCode]
    cited_tool_call_ids: list[str]


class SemanticFigures(TypedDict):
    """The semantic review of one handed-over draft (SPEC 4.4)."""

    draft_id: str | None
    attempt: int
    mode: Mode
    verdict: Annotated[VerdictKind | None, Field(description="The draft's one verdict (enforce); else null.")]
    violation_codes: list[ViolationCode]
    status: JudgementStatus
    digest: str
    model: str
    prompt_version: str
    language: Literal["zh", "en"]
    chars: Annotated[int, Field(description="Characters of the claims and the evidence they cite.")]
    claims: Annotated[int, Field(description="Claims in the case.")]
    labels: Annotated[dict[ClaimLabel, int], Field(description="How many claims got each label.")]
    called: Annotated[bool, Field(description="Whether the judge was called (else: recorded, or not asked).")]
    verdict_event_id: Annotated[str | None, Field(description="The guard's PASS verdict handed over.")]
    report_event_id: str | None
    report_claim: ReportOutcome | None


class SemanticUnjudged(TypedDict):
    """A hand-over the semantic station could not read, or failed on (its dead letter says why)."""

    draft_id: None
    attempt: None
    verdict: None
    status: None


class DeadLetterFigures(TypedDict):
    """A dead letter's record: why, and which station refused."""

    reason: DeadLetterReason
    error: str
    station: Station


class Unencodable(TypedDict):
    """Figures JSON could not hold, replaced by why (the record is kept)."""

    unencodable: str


PostprocessAudit = PostprocessFigures | PostprocessFailed
ProjectAudit = ProjectFigures | ProjectFailed
GuardAudit = GuardFigures | GuardUnjudged
SemanticAudit = SemanticFigures | SemanticUnjudged

ToolCallFigures = PostprocessAudit | ProjectAudit | LedgerFigures
"""The figures of a tool call's postprocess, project or ledger record."""

AuditFigures = (
    PostprocessAudit | ProjectAudit | LedgerFigures | GuardAudit | SemanticAudit | DeadLetterFigures
)
"""Any station's figures, as an outcome carries them (:class:`streams.envelope.Outcome`)."""

# --- the audit record ------------------------------------------------------------------------------------


class AuditEnvelope(TypedDict):
    """What every audit record carries besides its station and figures."""

    event_id: Annotated[
        str | None, Field(description="The event_id of what the station produced (or of the dead letter).")
    ]
    run_id: str | None
    tool_call_id: Annotated[str | None, Field(description="Null for the guard and the semantic review.")]
    origin: ChainOrigin
    source: Annotated[SourceRef, Field(description="The record this station consumed.")]
    source_timestamp: SourceTimestamp
    processed_at: Annotated[
        str, Field(description="Wall-clock time of processing: ISO 8601, UTC, milliseconds.")
    ]


class PostprocessRecord(AuditEnvelope):
    """The postprocess station's record of one raw-hits record."""

    station: Literal[Station.POSTPROCESS]
    fields: PostprocessFigures | PostprocessFailed | Unencodable


class ProjectRecord(AuditEnvelope):
    """The project station's record of one lookup."""

    station: Literal[Station.PROJECT]
    fields: ProjectFigures | ProjectFailed | Unencodable


class LedgerRecord(AuditEnvelope):
    """The ledger station's record of one write."""

    station: Literal[Station.LEDGER]
    fields: LedgerFigures | Unencodable


class GuardRecord(AuditEnvelope):
    """The guard's record of one draft."""

    station: Literal[Station.GUARD]
    fields: GuardFigures | GuardUnjudged | Unencodable


class SemanticRecord(AuditEnvelope):
    """The semantic review's record of one hand-over."""

    station: Literal[Station.SEMANTIC]
    fields: SemanticFigures | SemanticUnjudged | Unencodable


class DeadLetterRecord(AuditEnvelope):
    """The record of one dead letter (beside the refusing station's own)."""

    station: Literal[Station.DEAD_LETTER]
    fields: DeadLetterFigures | Unencodable


AuditRecord = Annotated[
    PostprocessRecord | ProjectRecord | LedgerRecord | GuardRecord | SemanticRecord | DeadLetterRecord,
    Field(discriminator="station"),
]
"""One audit record: processed_at is the only wall-clock field anywhere; ``station`` says which figures."""

AUDIT_ADAPTER: TypeAdapter[AuditRecord] = TypeAdapter(AuditRecord)


# --- what the audit store's views read back ----------------------------------------------------------


class ToolCallRow(TypedDict):
    """A ``tool_call`` row of the ``tool_invocation`` view (SPEC 5): one tool call of a run, each station's
    latest figures as a column (the view's names: a station's figure, prefixed where two stations share a
    name). Text as the database holds it; null where the station wrote no such figure."""

    run_id: str
    tool_call_id: str
    origin_partition: int | None
    origin_offset: int | None
    source_timestamp: int | None
    postprocess_status: str | None
    postprocess_failure_reason: str | None
    candidate_count: int | None
    evidence_block_count: int | None
    top_similarity: float | None
    relevance_level: str | None
    low_quality: bool | None
    py_rag_relevance_level: Any
    py_rag_evidence_status: str | None
    contract_anomaly: str | None
    retrieval_trace: Any
    pack_used_chars: int | None
    pack_included: int | None
    pack_omitted: int | None
    project_status: str | None
    project_failure_reason: str | None
    evidence_status: str | None
    returned_count: int | None
    projected_relevance_level: str | None
    truncated: bool | None
    projection_bytes: int | None
    projection_sha256: str | None
    ledger_status: str | None
    ledger_outcome: str | None
    ledger_key: str | None
    dead_letter_reason: str | None
    dead_letter_error: str | None
    dead_letter_station: str | None
    dead_letter_event_id: str | None
    updated_at: Annotated[str | None, Field(description="When the newest of its figures was stored.")]


class VerdictRow(TypedDict):
    """A ``verdict`` row of the ``tool_invocation`` view: one draft's verdict, the guard's figures (or the
    semantic review's, when it gave the verdict)."""

    run_id: str
    event_id: str
    draft_id: str | None
    attempt: int | None
    verdict: str | None
    violation_codes: list[str]
    cited_tool_call_ids: list[str]
    origin_partition: int | None
    origin_offset: int | None
    source_timestamp: int | None
    updated_at: str | None


class RunSummary(TypedDict):
    """One run of the ``run_summary`` view: its tool calls, dead letters and verdicts by outcome."""

    run_id: str
    tool_calls: int
    dead_letters: int
    verdicts: dict[str, int]
    verdict_count: int
    events: int
    first_source_timestamp: int | None
    last_source_timestamp: int | None
    last_applied_at: str | None


class RunOverview(TypedDict):
    """A page of the run list: the newest runs first."""

    runs: list[RunSummary]
    run_count: int
    offset: int
    verdicts_without_run_id: int


class StationRecord(TypedDict):
    """One postprocess, project or ledger record of a tool call, every one kept (not only the latest)."""

    tool_call_id: str
    station: str
    origin_topic: str | None
    origin_partition: int | None
    origin_offset: int | None
    fields: ToolCallFigures
