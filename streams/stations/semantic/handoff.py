"""The guard's side of the semantic review (SPEC 4.4): a draft that passed A-D, handed over.

Pure. With ``EC_SEMANTIC__MODE=enforce`` the hand-over replaces the guard's PASS verdict and report
(the semantic station emits the one final verdict); with ``advise`` it goes out beside them. It carries
everything the station needs, so the station reads no ledger entry: the guard's verdict, the draft's
reviewed fields (what a PASS publishes), and the exact projection text of each cited tool call (the
snapshot's, which passed C).
"""

from __future__ import annotations

from collections.abc import Mapping

from models.semantic import CitedProjection, Mode, SemanticReviewEvent
from models.verdict import Report, Verdict
from models.vocab import ReportOutcome
from streams.stations.ledger_view import LedgerLookup

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
) -> SemanticReviewEvent:
    """The ``semantic-review`` value of one PASS verdict (``report_claim`` is set once the guard's claim
    on the draft's triple has answered)."""
    return {
        "event_id": event_id,
        "origin": verdict["origin"],
        "run_id": verdict["run_id"] or "",
        "draft_id": verdict["draft_id"],
        "attempt": verdict["attempt"],
        "mode": mode,
        "verdict": verdict,
        "report_claim": report_claim,
        "draft": report,
        "projections": projections,
        "source_timestamp": verdict["source_timestamp"],
    }
