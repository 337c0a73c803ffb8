"""Publish (SPEC 4.3): what may leave the chain, as one ``reports`` event per PASS or FALLBACK verdict.

A PASS publishes the draft's reviewed fields and nothing else, rebuilt field by field, so a field
the guard never judged (an extra key anywhere in the draft) cannot ride along; a FALLBACK publishes
the verdict's fixed ``fallback_report``; a REJECT publishes nothing (the harness repairs). The event
is a function of the verdict and the parsed draft alone, so a re-delivered draft gives the same bytes,
and its signature (when the guard signs) covers the report's exact JSON.

Downstream systems read ``reports``, never ``diagnosis-drafts``.

One report per draft (SPEC 4.3): the first draft judged under a ``(run_id, draft_id, attempt)`` owns
that triple, through a write-once claim the guard keeps beside the ledger (:class:`ReportClaim`, held
by the edge: ``streams.ledger.redis``, ``streams.ledger.memory``). :func:`claim_outcome` is the one
rule for what a claim's answer means: the owner (or the owner's own record re-delivered) publishes;
the same bytes from another record and another draft publish nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from models.draft import DiagnosisDraft
from models.ids import is_valid_id
from models.verdict import (
    FallbackReport,
    Report,
    ReportAction,
    ReportAnalysisItem,
    ReportConclusion,
    ReportEvent,
    Verdict,
)
from models.vocab import AnalysisKind, ReportOutcome, VerdictKind
from streams.trust.keys import Signer

PUBLISH = "publish"
"""The station part of a report's ``event_id``: ``publish:<topic>:<partition>:<offset>:<timestamp>`` of
the draft record, as ``streams.envelope.event_id`` writes ids, next to the verdict's ``guard:…``."""


def reviewed_report(draft: DiagnosisDraft) -> Report:
    """The fields of a draft the guard judged, in the SPEC's order; missing or null lists as ``[]``.

    Only a PASS draft is published, so every text is a string and every kind a legal one there.
    """
    conclusion = draft.get("conclusion")
    published: ReportConclusion | None = None
    if conclusion is not None:
        published = {
            "content": conclusion.get("content") or "",
            "based_on_analysis_ids": list(conclusion.get("based_on_analysis_ids") or []),
        }
    analysis: list[ReportAnalysisItem] = [
        {
            "id": item["id"],
            "kind": cast(AnalysisKind, item.get("kind")),
            "content": item.get("content") or "",
            "tool_call_ids": list(item.get("tool_call_ids") or []),
            "document_ids": list(item.get("document_ids") or []),
        }
        for item in draft.get("analysis") or []
    ]
    actions: list[ReportAction] = [
        {
            "id": action["id"],
            "content": action.get("content") or "",
            "based_on_analysis_ids": list(action.get("based_on_analysis_ids") or []),
        }
        for action in draft.get("action_plan") or []
    ]
    return {
        "analysis": analysis,
        "conclusion": published,
        "action_plan": actions,
        "limitations": list(draft.get("limitations") or []),
    }


def report_event(
    verdict: Verdict,
    draft: DiagnosisDraft | None,
    *,
    event_id: str | None = None,
    signer: Signer | None = None,
) -> ReportEvent | None:
    """The ``reports`` event of one verdict, or None for a REJECT.

    ``draft`` is the draft the verdict judged, as the guard parsed it (only a PASS needs it);
    ``event_id`` is the report's own id (None offline); ``signer`` signs it when given.

    Raises:
        ValueError: a PASS verdict without its parsed draft, or a FALLBACK without its fallback_report
            (a caller's bug: the guard never makes either).
    """
    kind = verdict["verdict"]
    report: Report | FallbackReport
    if kind == VerdictKind.PASS:
        if draft is None:
            raise ValueError("a PASS verdict is published from its parsed draft; none was given")
        report = reviewed_report(draft)
    elif kind == VerdictKind.FALLBACK:
        if verdict["fallback_report"] is None:
            raise ValueError("a FALLBACK verdict carries its fallback_report; this one has none")
        report = verdict["fallback_report"]
    else:
        return None
    event: ReportEvent = {
        "event_id": event_id,
        "origin": verdict["origin"],
        "run_id": verdict["run_id"],
        "draft_id": verdict["draft_id"],
        "attempt": verdict["attempt"],
        "verdict": kind,
        "verdict_event_id": verdict["event_id"],
        "draft_sha256": verdict["draft_sha256"],
        "report": report,
        "source_timestamp": verdict["source_timestamp"],
    }
    if signer is not None:
        event["signature"] = signer.sign_report(event)
    return event


@dataclass(frozen=True, slots=True)
class ReportClaim:
    """One judged draft's claim on its ``(run_id, draft_id, attempt)``: write-once, the first one wins.

    ``owner`` names the draft record that judged it — its bytes' SHA-256 and the verdict's ``event_id``
    (a function of the record's coordinates) — so the owner's own record re-delivered is told apart from
    the same bytes sent again as another record.
    """

    run_id: str
    draft_id: str
    attempt: int
    draft_sha256: str
    verdict_event_id: str

    @property
    def owner(self) -> str:
        """What the claim stores: ``<draft_sha256> <verdict event_id>``."""
        return f"{self.draft_sha256} {self.verdict_event_id}"


def report_claim(verdict: Verdict) -> ReportClaim | None:
    """The claim a judged draft makes, or None when its verdict names no triple a key can hold: no
    valid ``run_id`` (the draft names no run), no ``draft_id``, or no ``event_id`` (judged offline)."""
    run_id, draft_id, event_id = verdict["run_id"], verdict["draft_id"], verdict["event_id"]
    if run_id is None or not is_valid_id(run_id) or draft_id is None or event_id is None:
        return None
    return ReportClaim(run_id, draft_id, verdict["attempt"], verdict["draft_sha256"], event_id)


def claim_outcome(claim: ReportClaim, held: Any) -> ReportOutcome:
    """What the claim's answer means: ``held`` is what the triple's claim held before this one (None:
    nothing, so this draft took it). The owner, or its own record again, owns it (its report is
    published); the same bytes from another record repeat what the owner published; anything else is a
    conflict, and so is an answer that is not a claim (nothing says it is this draft's)."""
    if held is None or held == claim.owner:
        return ReportOutcome.OWNED
    if isinstance(held, str) and held.split(" ", 1)[0] == claim.draft_sha256:
        return ReportOutcome.REPEAT
    return ReportOutcome.CONFLICT
