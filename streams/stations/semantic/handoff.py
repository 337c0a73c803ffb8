"""The guard's side of the semantic review (SPEC 4.4): a draft that passed A-D, handed over.

Pure. With ``EC_SEMANTIC__MODE=enforce`` the hand-over replaces the guard's PASS verdict and report
(the semantic station emits the one final verdict); with ``advise`` it goes out beside them. It carries
everything the station needs, so the station reads no ledger entry: the guard's verdict, the draft's
reviewed fields (what a PASS publishes), and the exact projection text of each cited tool call (the
snapshot's, which passed C).

A signature exists only on a final verdict: the hand-over's verdict goes without its own (a PASS the
review may yet reject is no verdict anyone may hand out), and the hand-over is signed as a whole under
its own message (``evidence-chain/handover/v1``), which the station checks before it signs anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from models.semantic import CitedProjection, Mode, SemanticReviewEvent
from models.verdict import Report, Verdict
from models.vocab import ReportOutcome
from streams.stations.ledger_view import LedgerLookup
from streams.trust.keys import Signer

HANDOFF = "semantic-review"
"""The station part of a hand-over's ``event_id``: ``semantic-review:<the draft record's coordinates>``."""


def cited_projections(verdict: Verdict, lookups: Mapping[str, LedgerLookup]) -> list[CitedProjection]:
    """The projection text of each tool call in the verdict's snapshot, as the ledger holds it."""
    out: list[CitedProjection] = []
    for item in verdict["evidence_snapshot"]:
        entry = lookups[item["tool_call_id"]].entry
        text: object = None if entry is None else entry.get("projection")
        if isinstance(text, bytes | bytearray):
            text = bytes(text).decode("utf-8")
        out.append({"tool_call_id": item["tool_call_id"], "projection": str(text)})
    return out


def handoff_event(
    verdict: Verdict,
    report: Report,
    projections: list[CitedProjection],
    *,
    mode: Mode,
    event_id: str | None,
    report_claim: ReportOutcome | None = None,
    signer: Signer | None = None,
) -> SemanticReviewEvent:
    """The ``semantic-review`` value of one PASS verdict, signed when the guard signs (``report_claim``
    is set once the guard's claim on the draft's triple has answered: :func:`claimed`)."""
    unsigned = verdict.copy()
    unsigned.pop("signature", None)  # SPEC 4.4: signed only where it is final
    event: SemanticReviewEvent = {
        "event_id": event_id,
        "origin": verdict["origin"],
        "run_id": verdict["run_id"] or "",
        "draft_id": verdict["draft_id"],
        "attempt": verdict["attempt"],
        "mode": mode,
        "verdict": unsigned,
        "report_claim": report_claim,
        "draft": report,
        "projections": projections,
        "source_timestamp": verdict["source_timestamp"],
    }
    return signed(event, signer)


def claimed(
    event: SemanticReviewEvent, report_claim: ReportOutcome, signer: Signer | None
) -> SemanticReviewEvent:
    """The hand-over once the guard's claim answered: it says what the claim said, signed again over it."""
    return signed({**event, "report_claim": report_claim}, signer)


def signed(event: SemanticReviewEvent, signer: Signer | None) -> SemanticReviewEvent:
    """``event`` with its ``signature`` (last) made by ``signer``; without a signer, none."""
    out: SemanticReviewEvent = {k: v for k, v in event.items() if k != "signature"}  # type: ignore[assignment]
    if signer is not None:
        out["signature"] = signer.sign_handover(out)
    return out
