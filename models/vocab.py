"""Fixed vocabularies, each defined once (SPEC sections 2-5)."""

from __future__ import annotations

from enum import StrEnum


class Topic(StrEnum):
    """The topics of SPEC 1 (and the semantic review's two, issue 41), without the optional prefix; all
    are keyed by ``run_id``."""

    RAW_HITS = "raw-hits"
    POSTPROCESSED = "postprocessed"
    PROJECTED = "projected"
    LEDGER = "ledger"
    DIAGNOSIS_DRAFTS = "diagnosis-drafts"
    VERDICTS = "verdicts"
    VIOLATIONS = "violations"
    REPORTS = "reports"
    SEMANTIC_REVIEW = "semantic-review"
    """Drafts that passed the guard's A-D, handed to the semantic review (only when it is on)."""
    JUDGEMENTS = "judgements"
    """The semantic judge's answers, one event per judged draft: the record a replay judges from."""
    AUDIT = "audit"
    DEAD_LETTERS = "dead-letters"


class EvidenceStatus(StrEnum):
    """What a projection says about its evidence list."""

    EVIDENCE_FOUND = "EVIDENCE_FOUND"
    NO_EVIDENCE = "NO_EVIDENCE"


class RelevanceLevel(StrEnum):
    """Grade of the best-ranked block; absent (null) below the reference threshold."""

    PRECISE = "PRECISE"
    REFERENCE = "REFERENCE"


class PyRagEvidenceStatus(StrEnum):
    """py-rag's own business status."""

    SUPPORTED = "supported"
    NO_EVIDENCE = "no_evidence"


class RecordStatus(StrEnum):
    """Status of a postprocessed / projected value: rejected inputs travel on as FAILED."""

    OK = "OK"
    FAILED = "FAILED"


class LedgerStatus(StrEnum):
    """Status of a ledger entry."""

    READY = "READY"
    FAILED = "FAILED"


class LedgerOutcome(StrEnum):
    """Result of one write-once attempt."""

    WRITTEN = "WRITTEN"
    DUPLICATE = "DUPLICATE"
    CONFLICT = "CONFLICT"
    EXPIRED = "EXPIRED"
    """Only when restoring (``ledger rebuild``): the entry's lifetime is over, nothing was written."""


class ReportOutcome(StrEnum):
    """What the guard's write-once claim on a ``(run_id, draft_id, attempt)`` made of one judged draft
    (SPEC 4.3): the first draft judged under a triple owns it, and only the owner's report (a PASS or
    FALLBACK) is published. The guard audits it as ``fields.report_claim``.
    """

    OWNED = "OWNED"
    """This draft record owns the triple (it judged first, or it is the owner's record re-delivered): its
    report, if its verdict has one, is published — a re-delivery repeats the same bytes and ``event_id``."""
    REPEAT = "REPEAT"
    """The same draft bytes sent again as another record: the triple's report is the first record's;
    nothing new is published."""
    CONFLICT = "CONFLICT"
    """Another draft (other bytes) under a triple a draft already owns: judged (its verdict is emitted),
    never published."""


class Station(StrEnum):
    """The station that emitted an audit record or a dead letter."""

    POSTPROCESS = "postprocess"
    PROJECT = "project"
    LEDGER = "ledger"
    GUARD = "guard"
    SEMANTIC = "semantic"
    """The semantic review after the guard (issue 41): a model judges what the rules cannot."""
    DEAD_LETTER = "dead-letter"


class DeadLetterReason(StrEnum):
    """Why a record could not be processed (SPEC section 5)."""

    MALFORMED_JSON = "MALFORMED_JSON"
    OVERSIZED = "OVERSIZED"
    INVALID_ID = "INVALID_ID"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    SCHEMA_VIOLATION = "SCHEMA_VIOLATION"
    PROJECTION_BUDGET_EXCEEDED = "PROJECTION_BUDGET_EXCEEDED"
    LEDGER_CONFLICT = "LEDGER_CONFLICT"


def parse_reason(value: object) -> DeadLetterReason | None:
    """A dead-letter reason read from upstream JSON, or None when it is not one of the seven."""
    if isinstance(value, str) and value in DeadLetterReason.__members__:
        return DeadLetterReason(value)
    return None


class AnalysisKind(StrEnum):
    """The two legal kinds of an analysis item."""

    NORMAL = "NORMAL"
    NEGATIVE_OBSERVATION = "NEGATIVE_OBSERVATION"


class VerdictKind(StrEnum):
    """The guard's decision on one draft."""

    PASS = "PASS"  # noqa: S105 - a verdict, not a password
    REJECT = "REJECT"
    FALLBACK = "FALLBACK"


class ViolationCode(StrEnum):
    """The violation codes of the evidence guard (SPEC 4: A-C, 1-20; 4.2: D, 21-23) and of the semantic
    review after it (SPEC 4.4: 24-26)."""

    # A. Structure
    DRAFT_UNPARSABLE = "DRAFT_UNPARSABLE"
    DRAFT_TOO_LARGE = "DRAFT_TOO_LARGE"
    RUN_ID_MISSING = "RUN_ID_MISSING"
    ANALYSIS_EMPTY = "ANALYSIS_EMPTY"
    ID_DUPLICATE = "ID_DUPLICATE"
    CONTENT_EMPTY = "CONTENT_EMPTY"
    ANALYSIS_KIND_INVALID = "ANALYSIS_KIND_INVALID"
    ANALYSIS_CITATION_MISSING = "ANALYSIS_CITATION_MISSING"
    REFERENCE_MISSING = "REFERENCE_MISSING"
    REFERENCE_UNKNOWN_ANALYSIS = "REFERENCE_UNKNOWN_ANALYSIS"
    LIMITATIONS_MISSING = "LIMITATIONS_MISSING"
    # B. Citation
    CITATION_NOT_FOUND = "CITATION_NOT_FOUND"
    CITATION_NOT_READY = "CITATION_NOT_READY"
    CITATION_CROSS_RUN = "CITATION_CROSS_RUN"
    NORMAL_CITES_NO_EVIDENCE = "NORMAL_CITES_NO_EVIDENCE"
    NEGATIVE_CITES_EVIDENCE = "NEGATIVE_CITES_EVIDENCE"
    CITATION_DOCUMENT_UNKNOWN = "CITATION_DOCUMENT_UNKNOWN"
    # C. Re-read
    LEDGER_PAYLOAD_INVALID = "LEDGER_PAYLOAD_INVALID"
    LEDGER_PAYLOAD_UNKNOWN_FIELD = "LEDGER_PAYLOAD_UNKNOWN_FIELD"
    LEDGER_PAYLOAD_TAMPERED = "LEDGER_PAYLOAD_TAMPERED"
    # D. Review of claims against the evidence they cite (SPEC 4.2)
    CLAIM_NUMBER_UNSUPPORTED = "CLAIM_NUMBER_UNSUPPORTED"
    CLAIM_IDENTIFIER_UNSUPPORTED = "CLAIM_IDENTIFIER_UNSUPPORTED"
    CLAIM_QUOTE_UNSUPPORTED = "CLAIM_QUOTE_UNSUPPORTED"
    # Semantic review: a model's judgement of each claim against its evidence (SPEC 4.4)
    CLAIM_SEMANTIC_UNSUPPORTED = "CLAIM_SEMANTIC_UNSUPPORTED"
    CLAIM_SEMANTIC_CONTRADICTED = "CLAIM_SEMANTIC_CONTRADICTED"
    SEMANTIC_INPUT_TOO_LARGE = "SEMANTIC_INPUT_TOO_LARGE"


class SemanticMode(StrEnum):
    """``EC_SEMANTIC__MODE``: whether the semantic review runs, and whether its judgement decides."""

    OFF = "off"
    """No semantic review: the guard publishes exactly as without it."""
    ADVISE = "advise"
    """The judgement is recorded and shown; the verdict is the guard's."""
    ENFORCE = "enforce"
    """A draft that passes A-D gets its one verdict from the judgement."""


class ClaimLabel(StrEnum):
    """The semantic judge's label of one claim against the evidence it was shown."""

    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class JudgementStatus(StrEnum):
    """Whether the judge was asked about a draft."""

    JUDGED = "JUDGED"
    """The judge answered; ``claims`` holds its labels."""
    NOT_ASKED = "NOT_ASKED"
    """The claims and their evidence exceed ``EC_SEMANTIC__MAX_CHARS_PER_DRAFT``: no call was made."""


COMPLETENESS_HINTS: dict[RelevanceLevel | None, str] = {
    RelevanceLevel.PRECISE: "知识库中不存在比上述结果更精准的文档",
    RelevanceLevel.REFERENCE: "以上结果仅供参考，知识库中可能没有与问题完全匹配的文档",
    None: "知识库中没有与问题足够相关的文档",
}
"""The ceiling hint bound to each level (SPEC 3.2)."""

FALLBACK_MESSAGE = "知识库未检索到可用证据，请结合日志、指标、告警继续排查"
"""LookupResult.fallback_message when nothing was found (SPEC 3.4)."""

FALLBACK_LIMITATION = "自动诊断未通过证据校验，请结合日志、指标、告警人工排查"
"""The one limitation of a FALLBACK verdict's report (SPEC 4)."""

SCORE_LABEL = "rerank"
"""KnowledgeSearchHit.score_label: the rerank score passes straight through."""

ATTEMPT_REASON = "attempt:UNFILTERED_VECTOR"
"""The only recall attempt that still exists; its label is part of every hit's reasons."""

PACK_STRATEGY = "ranked_evidence_char_budget"
"""ContextPack.strategy: rank is priority, first come first served."""
