"""The station chains, composed once and used by both the agents and the offline CLI.

Pure: no Kafka, no Redis, no clock. Each function takes one input value and never raises on it:
bad input becomes a :class:`~models.events.Rejection`, an unexpected exception ``INTERNAL_ERROR``.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from models.events import Origin, Rejection
from models.ids import is_valid_id
from models.lookup import FailedLookup, LookupResult
from models.projection import ProjectedEvent
from models.vocab import DeadLetterReason, RecordStatus, Station, parse_reason
from streams.envelope import event_id, read_origin
from streams.errors import RejectedInput, rejection
from streams.settings import Settings
from streams.stations.adapt import adapt, contract_anomaly, validate_raw_hits
from streams.stations.assemble import assemble, failed_lookup
from streams.stations.pack import pack
from streams.stations.postprocess import postprocess
from streams.stations.project import Projection, pick, project_lookup, read_lookup


def internal_error(exc: BaseException) -> Rejection:
    """An unexpected exception in a station: dead-lettered, never written FAILED (a fix can replay it)."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    return rejection(DeadLetterReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}{where}")


@dataclass(frozen=True, slots=True)
class PostprocessOutcome:
    """What the postprocess station makes of one raw-hits value.

    ``lookup`` travels on to ``postprocessed`` (a FailedLookup when a record with valid ids was
    rejected); ``rejection`` becomes the one dead letter; ``audit`` holds the station's figures.
    """

    lookup: LookupResult | FailedLookup | None
    rejection: Rejection | None
    audit: dict[str, Any]


def process_raw_hits(raw: bytes, settings: Settings, origin: Origin | None = None) -> PostprocessOutcome:
    """validate → adapt → postprocess → pack → assemble."""
    eid = event_id(Station.POSTPROCESS, origin) if origin is not None else None
    try:
        record = validate_raw_hits(raw, settings.input)
        response = record["response"]
        result = postprocess(adapt(response), settings.postprocess)
        context = pack(result["evidence_blocks"], settings.postprocess.char_budget)
        lookup = assemble(record, result, context, event_id=eid, origin=origin)
    except RejectedInput as exc:
        refused = exc.as_rejection()
        failed = None
        if refused["run_id"] is not None and refused["tool_call_id"] is not None:
            failed = failed_lookup(
                refused["run_id"],
                refused["tool_call_id"],
                refused["reason"],
                event_id=eid,
                origin=origin,
            )
        return PostprocessOutcome(failed, refused, {"status": RecordStatus.FAILED, "reason": exc.reason})
    except Exception as exc:  # noqa: BLE001 - any other failure is an INTERNAL_ERROR dead letter
        return PostprocessOutcome(None, internal_error(exc), {"status": RecordStatus.FAILED})
    audit = {
        "candidate_count": result["candidate_count"],
        "evidence_block_count": result["evidence_block_count"],
        "top_similarity": result["top_similarity"],
        "relevance_level": result["relevance_level"],
        "low_quality": result["low_quality"],
        "py_rag_relevance_level": response.get("relevance_level"),
        "py_rag_evidence_status": response["evidence_status"],
        "retrieval_trace": response.get("retrieval_trace"),
        "pack_used_chars": context["used_chars"],
        "pack_included": len(context["included_sources"]),
        "pack_omitted": len(context["omitted_sources"]),
        "contract_anomaly": contract_anomaly(response),
    }
    return PostprocessOutcome(lookup, None, audit)


@dataclass(frozen=True, slots=True)
class ProjectOutcome:
    """What the project station makes of one LookupResult text.

    ``event`` is the ``projected`` value (None when nothing can be written to the ledger: the text
    was not an object, or the ids are not valid); ``projection`` is set when one fits.
    """

    event: ProjectedEvent | None
    projection: Projection | None
    rejection: Rejection | None
    origin: Origin | None


def _projected(
    lookup: dict[str, Any],
    origin: Origin | None,
    status: RecordStatus,
    failure: DeadLetterReason | None,
    projection: Projection | None,
) -> ProjectedEvent:
    run_id = lookup.get("run_id")
    tool_call_id = pick(lookup, "tool_call_id", "toolCallId")
    return {
        "run_id": run_id if isinstance(run_id, str) else None,
        "tool_call_id": tool_call_id if isinstance(tool_call_id, str) else None,
        "event_id": event_id(Station.PROJECT, origin) if origin is not None else None,
        "origin": origin,
        "source_timestamp": origin["timestamp"] if origin is not None else None,
        "status": status,
        "failure_reason": failure,
        "projection": projection.canonical.decode("utf-8") if projection is not None else None,
        "projection_sha256": projection.sha256 if projection is not None else None,
    }


def process_lookup(
    text: bytes | str, settings: Settings, fallback_origin: Origin | None = None
) -> ProjectOutcome:
    """read (tolerant) → project → the ``projected`` value.

    The origin is the one the LookupResult carries; ``fallback_origin`` (the consumed record) is
    used when it carries none, so event ids stay deterministic for values fed in directly.
    """
    try:
        lookup = read_lookup(text)
    except RejectedInput as exc:
        return ProjectOutcome(None, None, exc.as_rejection(), fallback_origin)
    origin = read_origin(lookup.get("origin")) or fallback_origin
    ids_valid = is_valid_id(lookup.get("run_id")) and is_valid_id(pick(lookup, "tool_call_id", "toolCallId"))
    try:
        if lookup.get("status") == RecordStatus.FAILED:
            reason = lookup.get("failure_reason")
            failure = parse_reason(reason)
            event = _projected(lookup, origin, RecordStatus.FAILED, failure, None) if ids_valid else None
            return ProjectOutcome(event, None, None, origin)
        projection = project_lookup(lookup, settings.projection)
    except RejectedInput as exc:
        event = _projected(lookup, origin, RecordStatus.FAILED, exc.reason, None) if ids_valid else None
        return ProjectOutcome(event, None, exc.as_rejection(), origin)
    except Exception as exc:  # noqa: BLE001 - any other failure is an INTERNAL_ERROR dead letter
        return ProjectOutcome(None, None, internal_error(exc), origin)
    event = _projected(lookup, origin, RecordStatus.OK, None, projection)
    return ProjectOutcome(event, projection, None, origin)
