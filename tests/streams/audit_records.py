"""Audit records as the agents write them, for the audit store's tests in every tier.

``chain`` is the three records of one raw-hits record that goes through; ``guard`` and ``dead_letter`` one
record each; ``one_run`` a run that mixes them; ``tool_call`` reads one tool call's row back.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from models.audit import AuditRecord
from models.vocab import Station
from streams.audit.store import AuditStore
from streams.envelope import audit_record, event_id
from streams.messages import Record
from tests.streams.conftest import origin_of


def consumed(topic: str, partition: int, offset: int) -> Record:
    return Record(topic, partition, offset, None, None, b"")


def at(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds")


T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
RAW_TOPIC = "t.raw-hits"


def chain(
    run_id: str,
    tool_call_id: str,
    offset: int,
    *,
    partition: int = 0,
    candidates: int = 3,
    truncated: bool = False,
    outcome: str = "WRITTEN",
    now: datetime = T0,
) -> list[AuditRecord]:
    """The three audit records the agents write for one raw-hits record that goes through."""
    origin = origin_of(RAW_TOPIC, partition, offset, 1_700_000_000_000 + offset)
    hop = {"postprocess": "t.raw-hits", "project": "t.postprocessed", "ledger": "t.projected"}
    figures: dict[Station, dict[str, Any]] = {
        Station.POSTPROCESS: {
            "candidate_count": candidates,
            "evidence_block_count": 2,
            "top_similarity": 0.91,
            "relevance_level": "PRECISE",
            "low_quality": False,
            "py_rag_relevance_level": "PRECISE",
            "py_rag_evidence_status": "supported",
            "retrieval_trace": {"mode": "hybrid"},
            "pack_used_chars": 321,
            "pack_included": 2,
            "pack_omitted": 0,
            "contract_anomaly": None,
        },
        Station.PROJECT: {
            "evidence_status": "EVIDENCE_FOUND",
            "returned_count": 2,
            "relevance_level": "PRECISE",
            "truncated": truncated,
            "projection_bytes": 400,
            "projection_sha256": f"{offset:064x}",
        },
        Station.LEDGER: {
            "status": "READY",
            "outcome": outcome,
            "key": f"ec:ledger:{{{tool_call_id}}}:{run_id}",
        },
    }
    return [
        audit_record(
            station=station,
            event=event_id(station, origin),
            run_id=run_id,
            tool_call_id=tool_call_id,
            origin=origin,
            record=consumed(hop[station], partition, offset),
            fields=fields,
            processed_at=at(now),
        )
        for station, fields in figures.items()
    ]


def guard(
    run_id: str, offset: int, attempt: int, verdict: str, codes: list[str], *, draft_id: str = "d-1"
) -> AuditRecord:
    origin = origin_of("t.diagnosis-drafts", 0, offset, 1_700_000_100_000 + offset)
    return audit_record(
        station=Station.GUARD,
        event=event_id(Station.GUARD, origin),
        run_id=run_id,
        tool_call_id=None,
        origin=origin,
        record=consumed("t.diagnosis-drafts", 0, offset),
        fields={
            "draft_id": draft_id,
            "attempt": attempt,
            "verdict": verdict,
            "violation_codes": codes,
            "cited_tool_call_ids": ["call_a", "call_b"],
        },
        processed_at=at(T0),
    )


def dead_letter(run_id: str, tool_call_id: str, offset: int, station: Station, reason: str) -> AuditRecord:
    origin = origin_of(RAW_TOPIC, 0, offset, 1_700_000_000_000 + offset)
    return audit_record(
        station=Station.DEAD_LETTER,
        event=event_id(f"{Station.DEAD_LETTER}.{station}", origin),
        run_id=run_id,
        tool_call_id=tool_call_id,
        origin=origin,
        record=consumed(RAW_TOPIC, 0, offset),
        fields={"reason": reason, "error": f"{reason} at {station}", "station": station},
        processed_at=at(T0),
    )


def one_run() -> list[AuditRecord]:
    return [
        *chain("run-1", "call_a", 0),
        *chain("run-1", "call_b", 1),
        *chain("run-1", "call_c", 2),
        dead_letter("run-1", "call_c", 2, Station.LEDGER, "LEDGER_CONFLICT"),
        guard("run-1", 0, 1, "REJECT", ["CITATION_NOT_FOUND", "LIMITATIONS_MISSING"]),
        guard("run-1", 1, 2, "PASS", []),
    ]


def tool_call(store: AuditStore, run_id: str, tool_call_id: str) -> dict[str, Any]:
    calls, _ = store.run_trail(run_id)
    (call,) = [c for c in calls if c["tool_call_id"] == tool_call_id]
    return call
