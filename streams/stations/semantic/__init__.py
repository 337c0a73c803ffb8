"""The semantic review (SPEC 4.4, issue 41): a model judges what the rules cannot, and its answer is an
event.

A pure station, in three steps the edge wires together:

1. :func:`plan` reads a ``semantic-review`` value (a draft that passed A-D, handed over by the guard)
   into the judge's case (:mod:`.case`), its digest and whether it may be sent at all (the
   characters-per-draft cap);
2. the edge finds the judgement recorded for ``(run_id, digest)`` (:func:`held_record`: read again
   from its raw answer, never taken at its word) or asks the judge (:func:`.prompt.messages`,
   :func:`.answer.read_answer`; :func:`declined` when the judge cannot judge the case) and records it,
   write-once;
3. :func:`judgement_event` and :func:`final_verdict` turn the recorded answer into the ``judgements``
   event and, in ``enforce`` mode, the draft's one verdict: the guard's PASS unchanged when every claim
   is supported (the same bytes as without the review), else a REJECT (or FALLBACK at the last attempt)
   naming each unsupported or contradicted claim.

Nothing here calls a model, reads a clock or touches Kafka or Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from models.limits import GuardSettings, SemanticSettings
from models.semantic import (
    SEMANTIC_REVIEW_ADAPTER,
    ClaimJudgement,
    JudgeCase,
    JudgementEvent,
    JudgementRecord,
    SemanticReviewEvent,
)
from models.validation import ContractError, validate
from models.verdict import FallbackReport, Verdict, Violation
from models.vocab import (
    FALLBACK_LIMITATION,
    ClaimLabel,
    JudgementStatus,
    VerdictKind,
    ViolationCode,
)
from streams import codec
from streams.errors import MalformedJson, SchemaViolation
from streams.stations.review import escaped
from streams.stations.semantic.answer import MAX_REASON_CHARS, AnswerInvalid, read_answer
from streams.stations.semantic.case import build_case, case_chars, case_digest, language_of
from streams.stations.semantic.prompt import PROMPT_VERSION, messages
from streams.trust.integrity import check_handover
from streams.trust.keys import Signer, TrustedKeys

__all__ = [
    "MAX_REASON_CHARS",
    "PROMPT_VERSION",
    "AnswerInvalid",
    "RecordInvalid",
    "SemanticPlan",
    "build_case",
    "case_chars",
    "case_digest",
    "declined",
    "final_verdict",
    "held_record",
    "judgement_event",
    "language_of",
    "messages",
    "plan",
    "read_answer",
    "recording",
    "semantic_violations",
]


@dataclass(frozen=True, slots=True)
class SemanticPlan:
    """One handed-over draft, read: its case, the digest a recorded judgement is found by, and whether
    the judge may be asked (its claims and evidence within the cap)."""

    event: SemanticReviewEvent
    case: JudgeCase
    model: str
    digest: str
    chars: int
    max_chars: int

    @property
    def asked(self) -> bool:
        """Whether the judge is asked at all (False: over ``EC_SEMANTIC__MAX_CHARS_PER_DRAFT``)."""
        return self.chars <= self.max_chars

    @property
    def enforced(self) -> bool:
        """Whether the judgement decides the draft's verdict (the guard's mode when it handed it over)."""
        return self.event["mode"] == "enforce"


def plan(value: bytes, settings: SemanticSettings, keys: TrustedKeys | None = None) -> SemanticPlan:
    """A ``semantic-review`` value, read into its case; with ``keys`` (the guard's, as
    :func:`streams.trust.keys.own_and_trusted` gives them), only a hand-over a guard key signed.

    Raises:
        MalformedJson: the value is not a JSON object.
        SchemaViolation: it is not a hand-over the guard writes (a field missing or of the wrong type,
            or, with ``keys``, not signed by one of them: the station signs nothing for it).
    """
    try:
        doc = codec.loads(value)
    except codec.JSONDecodeError as exc:
        raise MalformedJson(f"semantic-review value is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise MalformedJson("semantic-review value is not a JSON object")
    try:
        checked = validate(SEMANTIC_REVIEW_ADAPTER, doc)
    except ContractError as exc:
        raise SchemaViolation(f"semantic-review value: {exc}") from None
    held = check_handover(cast(SemanticReviewEvent, doc), keys)  # as carried: what the guard signed
    if not held.holds:
        raise SchemaViolation(f"semantic-review value: {held.detail}; nothing is judged or signed for it")
    case = build_case(checked["draft"], checked["projections"], prompt_version=PROMPT_VERSION)
    model = settings.judge_model
    return SemanticPlan(
        event=cast(SemanticReviewEvent, doc),  # as carried: the verdict's bytes are re-emitted unchanged
        case=case,
        model=model,
        digest=case_digest(model, case),
        chars=case_chars(case),
        max_chars=settings.max_chars_per_draft,
    )


def recording(planned: SemanticPlan, answer: str, claims: list[ClaimJudgement]) -> JudgementRecord:
    """What is kept for ``(run_id, digest)`` once the judge answered: a replay judges from it."""
    return {"digest": planned.digest, "model": planned.model, "answer": answer, "claims": claims}


def declined(planned: SemanticPlan) -> JudgementRecord:
    """What is kept for ``(run_id, digest)`` when the judge answered that it cannot judge the case (400,
    413, 422: over its model's context, too large a body, an input it rejects): no answer, no labels —
    the draft's judgement is ``NOT_ASKED``, as over the characters cap, and a replay reads it from the
    record instead of asking again (the judge's refusal is not a function of the case, so it is kept)."""
    return {"digest": planned.digest, "model": planned.model, "answer": None, "claims": []}


class RecordInvalid(ValueError):
    """A value stored for a plan's ``(run_id, digest)`` is not a judgement of its case; the message says
    why (the station asks the judge again, as if nothing were recorded)."""


def held_record(planned: SemanticPlan, value: bytes) -> JudgementRecord:
    """The judgement recorded for ``planned``'s ``(run_id, digest)``, rebuilt from what the judge said.

    The station signs what a record says as the guard, so a stored value is never taken at its word: its
    ``digest`` and ``model`` must be the plan's, and its labels are read again from its raw ``answer``
    against the plan's own case (:func:`read_answer`), never copied from its ``claims`` — a record whose
    labels say more than its answer, or that labels nothing, judges nothing. A genuine record gives the
    same record (and so the same bytes downstream) as when it was written. ``answer`` null is a case the
    judge declined (:func:`declined`).

    Raises:
        RecordInvalid: not JSON, not an object, another digest or model, no answer, or an answer that
            is not a judgement of this case.
    """
    try:
        doc = codec.loads(value)
    except codec.JSONDecodeError:
        raise RecordInvalid("it is not JSON") from None
    if not isinstance(doc, dict):
        raise RecordInvalid("it is not a JSON object")
    if doc.get("digest") != planned.digest:
        raise RecordInvalid("its digest is not the case's")
    if doc.get("model") != planned.model:
        raise RecordInvalid("its model is not the judge's")
    if "answer" not in doc:
        raise RecordInvalid("it holds no answer")
    answer = doc["answer"]
    if answer is None:
        return declined(planned)
    if not isinstance(answer, str):
        raise RecordInvalid("its answer is not a string")
    try:
        return read(planned, answer)
    except AnswerInvalid as exc:
        raise RecordInvalid(f"its answer is not a judgement of the case: {exc}") from None


def judgement_event(
    planned: SemanticPlan,
    recorded: JudgementRecord | None,
    *,
    event_id: str | None,
    signer: Signer | None,
) -> JudgementEvent:
    """The ``judgements`` event of one handed-over draft: what was asked (the case), the recorded answer
    and its labels (none when the draft was over the cap and not asked), signed when the guard signs."""
    handed = planned.event
    verdict = handed["verdict"]
    if recorded is not None and recorded["answer"] is None:
        recorded = None  # the judge declined the case: not asked, as over the cap
    status = JudgementStatus.NOT_ASKED if recorded is None else JudgementStatus.JUDGED
    event: JudgementEvent = {
        "event_id": event_id,
        "origin": handed["origin"],
        "run_id": handed["run_id"],
        "draft_id": handed["draft_id"],
        "attempt": handed["attempt"],
        "draft_sha256": verdict["draft_sha256"],
        "verdict_event_id": verdict["event_id"],
        "mode": handed["mode"],
        "status": status,
        "digest": planned.digest,
        "model": planned.model,
        "prompt_version": planned.case["prompt_version"],
        "case": planned.case,
        "answer": None if recorded is None else recorded["answer"],
        "claims": [] if recorded is None else recorded["claims"],
        "source_timestamp": handed["source_timestamp"],
    }
    if signer is not None:
        event["signature"] = signer.sign_judgement(event)
    return event


def semantic_violations(planned: SemanticPlan, event: JudgementEvent) -> list[Violation]:
    """The violations a judgement gives: one per claim labelled unsupported or contradicted, in the
    case's order; one ``SEMANTIC_INPUT_TOO_LARGE`` when the draft was not asked — over the cap, or (within
    it) declined by the judge, which its message says; both derived from the plan, so a replay repeats
    the bytes."""
    if event["status"] == JudgementStatus.NOT_ASKED:
        if planned.asked:
            said = (
                f"the semantic judge cannot judge the claims and the evidence they cite ({planned.chars} "
                "characters: more than its model takes, or an input it rejects)"
            )
        else:
            said = (
                f"the claims and the evidence they cite hold {planned.chars} characters, more than the "
                f"semantic judge is sent ({planned.max_chars})"
            )
        return [
            {
                "code": ViolationCode.SEMANTIC_INPUT_TOO_LARGE,
                "path": "",
                "message": f"{said}; cite fewer documents (document_ids) or shorter texts",
            }
        ]
    out: list[Violation] = []
    for claim in event["claims"]:
        if claim["label"] == ClaimLabel.UNSUPPORTED:
            code, said = ViolationCode.CLAIM_SEMANTIC_UNSUPPORTED, "is not supported by the evidence it cites"
        elif claim["label"] == ClaimLabel.CONTRADICTED:
            code, said = ViolationCode.CLAIM_SEMANTIC_CONTRADICTED, "is contradicted by the evidence it cites"
        else:
            continue
        out.append(
            {
                "code": code,
                "path": claim["path"],
                # the reason as the review quotes a specific (JSON-escaped, at most 80 characters): the
                # repair prompt names it, so a judge's words cannot carry an injection back to the agent
                "message": f"the semantic judge says this claim {said}: {escaped(claim['reason'])}",
            }
        )
    return out


def final_verdict(
    planned: SemanticPlan, event: JudgementEvent, guard: GuardSettings, *, signer: Signer | None
) -> Verdict:
    """The draft's one verdict in ``enforce`` mode, signed here (the hand-over's is not: SPEC 4.4): the
    guard's PASS as it was when the judge finds nothing — the same bytes and, signed with the guard's
    key, the same signature as with the review off (Ed25519 signs deterministically) — else REJECT, or
    FALLBACK from ``max_attempts``, with the judge's violations (the attempt is spent like any REJECT's)."""
    verdict = planned.event["verdict"]
    found = semantic_violations(planned, event)
    if not found:
        final = verdict.copy()
        final.pop("signature", None)
        if signer is not None:
            final["signature"] = signer.sign_verdict(final)
        return final
    kind = VerdictKind.REJECT if verdict["attempt"] < guard.max_attempts else VerdictKind.FALLBACK
    violations = list(verdict["violations"]) + found
    report: FallbackReport | None = None
    if kind is VerdictKind.FALLBACK:
        report = {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}
    final = verdict.copy()  # the guard's fields in their order; the signature is the final verdict's own
    final.pop("signature", None)
    final.update(
        {
            "verdict": kind,
            "violation_count": len(violations),
            "violations_truncated": len(violations) > guard.max_violations,
            "violations": violations[: guard.max_violations],
            "fallback_report": report,
        }
    )
    if signer is not None:
        final["signature"] = signer.sign_verdict(final)
    return final


def judge_messages(planned: SemanticPlan) -> list[dict[str, str]]:
    """The chat messages the judge is sent for this draft."""
    return messages(planned.case)


def read(planned: SemanticPlan, answer: str) -> JudgementRecord:
    """The judge's raw answer read into the record kept for the draft's digest.

    Raises:
        AnswerInvalid: the answer is not a judgement of this case (the edge asks again).
    """
    return recording(planned, answer, read_answer(answer, planned.case))
