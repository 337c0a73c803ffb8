"""The semantic review after the guard (SPEC 4.4, issue 41): the hand-over, the judge's case and its
answer as an event.

A draft that passes A-D is handed over on ``semantic-review`` (only when the review is on); the
semantic station asks a model about each claim and writes the judgement on ``judgements``. The
judgement is the record a replay, a rebuild or an auditor reads: it carries exactly what the model was
shown (``case``), its raw answer and the labels read from it.
"""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from pydantic import Field, TypeAdapter
from typing_extensions import TypedDict

from models.events import ChainOrigin, EventId, SourceTimestamp
from models.verdict import Report, Verdict, VerdictSignature
from models.vocab import ClaimLabel, JudgementStatus, ReportOutcome

Mode = Literal["advise", "enforce"]


class CitedProjection(TypedDict):
    """One cited tool call's projection as the ledger holds it (the exact bytes the agent was shown)."""

    tool_call_id: str
    projection: Annotated[str, Field(description="The ledger's canonical projection text.")]


class SemanticReviewEvent(TypedDict):
    """The ``semantic-review`` value: a draft that passed A-D, handed to the semantic review."""

    event_id: EventId
    origin: ChainOrigin
    run_id: str
    draft_id: str | None
    attempt: int
    mode: Annotated[Mode, Field(description="The guard's EC_SEMANTIC__MODE when it judged the draft.")]
    verdict: Annotated[
        Verdict,
        Field(
            description="The guard's PASS verdict as it would be emitted, without its signature: a verdict "
            "is signed only where it is final (the guard's in advise mode; the semantic station's in "
            "enforce)."
        ),
    ]
    report_claim: Annotated[
        ReportOutcome | None,
        Field(description="What the guard's claim on the draft's (run_id, draft_id, attempt) said."),
    ]
    draft: Annotated[Report, Field(description="The draft's reviewed fields: what its PASS publishes.")]
    projections: Annotated[
        list[CitedProjection], Field(description="Each cited tool call's projection, first cited first.")
    ]
    source_timestamp: SourceTimestamp
    signature: NotRequired[
        Annotated[
            VerdictSignature,
            Field(
                description="Signed by the guard's key under evidence-chain/handover/v1 (SPEC 4.4), never "
                "a verdict's message; absent unsigned. The semantic station signs nothing for a hand-over "
                "that does not verify."
            ),
        ]
    ]


class CaseEvidence(TypedDict):
    """One piece of evidence shown to the judge: an evidence item, or a search that found nothing."""

    ref: Annotated[str, Field(description="E1, E2, … in the order first cited.")]
    tool_call_id: str
    document_id: Annotated[str | None, Field(description="Null for a search that found nothing.")]
    title: str | None
    relevance: Annotated[
        str | None, Field(description="The projection's relevance_level: PRECISE, REFERENCE or null.")
    ]
    found: Annotated[bool, Field(description="False: the search found nothing (NO_EVIDENCE).")]
    text: Annotated[str, Field(description="The item's excerpt; for a search that found nothing, its query.")]


class CaseClaim(TypedDict):
    """One claim the judge labels: an analysis item's content or the conclusion's."""

    path: Annotated[str, Field(description="analysis[i].content or conclusion.content.")]
    kind: Annotated[
        Literal["NORMAL", "NEGATIVE_OBSERVATION", "CONCLUSION"],
        Field(description="An analysis item's kind, or CONCLUSION."),
    ]
    text: str
    evidence: Annotated[list[str], Field(description="The refs of the evidence this claim cites.")]


class JudgeCase(TypedDict):
    """Exactly what the judge is shown, besides the prompt's fixed text."""

    prompt_version: str
    language: Literal["zh", "en"]
    claims: list[CaseClaim]
    evidence: list[CaseEvidence]


class ClaimJudgement(TypedDict):
    """The judge's label of one claim, as read from its answer."""

    path: str
    label: ClaimLabel
    evidence: Annotated[list[str], Field(description="The refs the judge says it relied on.")]
    reason: Annotated[str, Field(description="The judge's short reason, as it wrote it.")]


class JudgementRecord(TypedDict):
    """What is kept per (run_id, digest): the answer a replay judges from instead of calling the model;
    ``answer`` null (and no claims) when the judge declined the case (400, 413, 422: NOT_ASKED)."""

    digest: str
    model: str
    answer: str | None
    claims: list[ClaimJudgement]


class JudgementEvent(TypedDict):
    """The ``judgements`` value, keys in this order: one per draft handed to the semantic review."""

    event_id: EventId
    origin: ChainOrigin
    run_id: str
    draft_id: str | None
    attempt: int
    draft_sha256: str
    verdict_event_id: Annotated[str | None, Field(description="The event_id of the draft's verdict.")]
    mode: Mode
    status: JudgementStatus
    digest: Annotated[
        str,
        Field(
            description="Lowercase hex SHA-256 of the compact JSON of {model, prompt_version, language, "
            "claims, evidence}: what was asked, of whom."
        ),
    ]
    model: str
    prompt_version: str
    case: JudgeCase
    answer: Annotated[str | None, Field(description="The model's raw answer; null when NOT_ASKED.")]
    claims: Annotated[list[ClaimJudgement], Field(description="One per case claim, in the case's order.")]
    source_timestamp: SourceTimestamp
    signature: NotRequired[
        Annotated[VerdictSignature, Field(description="Signed when the guard signs (SPEC 4.4).")]
    ]


SEMANTIC_REVIEW_ADAPTER: TypeAdapter[SemanticReviewEvent] = TypeAdapter(SemanticReviewEvent)
JUDGEMENT_ADAPTER: TypeAdapter[JudgementEvent] = TypeAdapter(JudgementEvent)
