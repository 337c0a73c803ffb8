"""The four stations, each one pure function from a consumed record to everything it makes happen.

A station returns an :class:`Outcome` (its outputs, a rejection or none, its audit figures), or, for
the two that touch the ledger, a pending step that names the Redis work it needs (an entry to
write once, or entries to read) and finishes into an :class:`Outcome` once the edge has the answer.
The agents, the offline CLI and ``replay`` all call these functions and nothing else, so a rule
lives in exactly one place; :func:`emissions` turns an outcome into the messages to produce
(outputs, dead letter, audit records), again in one place.

Pure: no Kafka, no Redis, no clock (``processed_at`` comes from the caller). Nothing here raises on
input: bad input becomes a :class:`~models.events.Rejection`; an unexpected exception in a station,
or in encoding its outputs, becomes an ``INTERNAL_ERROR`` dead letter for that record alone, which
writes no FAILED entry (SPEC 1), so a replay after a fix can still succeed.
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from models.events import Origin, Rejection
from models.ids import is_valid_id
from models.ledger import LedgerEntry, WriteResult, as_stored
from models.lookup import FailedLookup, LookupResult
from models.projection import ProjectedEvent
from models.topology import TOPOLOGY
from models.verdict import Verdict
from models.vocab import (
    DeadLetterReason,
    LedgerOutcome,
    LedgerStatus,
    RecordStatus,
    Station,
    Topic,
    parse_reason,
)
from streams import codec
from streams.envelope import (
    audit_record,
    dead_letter,
    event_id,
    key_for,
    read_origin,
    rejection,
)
from streams.errors import MalformedJson, RejectedInput
from streams.messages import Headers, Output, Record
from streams.settings import Settings
from streams.stations.adapt import adapt, contract_anomaly, parse_object, validate_raw_hits
from streams.stations.assemble import assemble, failed_lookup
from streams.stations.guard import EvidenceGuard, violation_events, violation_links
from streams.stations.ledger import conflict_error, ledger_entry
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from streams.stations.pack import pack
from streams.stations.postprocess import postprocess
from streams.stations.project import Projection, pick, project_lookup
from streams.trust.keys import signer_for, trusted_for

T = TypeVar("T")
A = TypeVar("A")


# --- the outcome shape --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    """Everything one consumed record makes happen at one station.

    ``outputs`` are the station's own encoded values (``postprocessed``, ``projected``, ``ledger``,
    ``verdicts`` + ``violations``); ``rejection`` becomes the one dead letter; ``audit`` holds the
    station's figures; ``detail`` is the station's typed result (a LookupResult, a projection, a
    stored entry, a verdict) for the offline CLI and ``replay``.
    """

    station: Station
    origin: Origin | None
    run_id: str | None
    tool_call_id: str | None
    outputs: tuple[Output, ...]
    rejection: Rejection | None
    audit: dict[str, Any]
    detail: T
    exception: str | None = None
    """The class of the exception behind the rejection, for the dead letter's headers."""


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """The ledger station's intent: write ``entry`` once, then ``finish`` with the store's answer."""

    entry: LedgerEntry
    finish: Callable[[WriteResult], Outcome[Any]]


@dataclass(frozen=True, slots=True)
class PendingRead:
    """The guard's intent: read these ledger entries, then ``finish`` with what was found."""

    keys: tuple[LedgerKey, ...]
    finish: Callable[[Mapping[LedgerKey, LedgerLookup]], Outcome[Any]]


Step = Outcome[Any] | PendingWrite | PendingRead
StationFn = Callable[[Record, Settings], Step]


def internal_error(exc: BaseException) -> Rejection:
    """An unexpected exception: dead-lettered, never written FAILED (a fix can replay it)."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    return rejection(DeadLetterReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}{where}")


_EMPTY_AUDIT: dict[Station, dict[str, Any]] = {
    Station.POSTPROCESS: {"status": RecordStatus.FAILED},
    Station.PROJECT: {"status": None},
    Station.LEDGER: {"status": None, "outcome": None, "key": None},
    Station.GUARD: {
        "draft_id": None,
        "attempt": None,
        "verdict": None,
        "violation_codes": [],
        "cited_tool_call_ids": [],
    },
}


def failed(
    station: Station, record: Record, exc: BaseException, origin: Origin | None = None
) -> Outcome[None]:
    """The outcome of a record whose station raised unexpectedly: one INTERNAL_ERROR dead letter."""
    return Outcome(
        station,
        origin or record.coordinates,
        None,
        None,
        (),
        internal_error(exc),
        dict(_EMPTY_AUDIT[station]),
        None,
        type(exc).__name__,
    )


def run_station(station: Station, record: Record, settings: Settings) -> Step:
    """One station on one record; whatever goes wrong stays that record's INTERNAL_ERROR."""
    try:
        return STATIONS[station](record, settings)
    except Exception as exc:  # noqa: BLE001 - per-record isolation: the batch goes on
        return failed(station, record, exc)


def finish_write(step: PendingWrite, result: WriteResult, record: Record) -> Outcome[Any]:
    """The ledger station after the store answered; isolated like :func:`run_station`."""
    try:
        return step.finish(result)
    except Exception as exc:  # noqa: BLE001 - per-record isolation
        return failed(Station.LEDGER, record, exc, step.entry["origin"])


def finish_read(step: PendingRead, lookups: Mapping[LedgerKey, LedgerLookup], record: Record) -> Outcome[Any]:
    """The guard after the store answered; isolated like :func:`run_station`."""
    try:
        return step.finish({key: lookups[key] for key in step.keys})
    except Exception as exc:  # noqa: BLE001 - per-record isolation
        return failed(Station.GUARD, record, exc)


ReadMany = Callable[[list[LedgerKey]], Awaitable[Mapping[LedgerKey, LedgerLookup]]]
"""Reads ledger entries for keys (``LedgerStore.read_many``, perhaps wrapped in a retry)."""


async def resolve_reads(pending: Sequence[tuple[PendingRead, Record]], read: ReadMany) -> list[Outcome[Any]]:
    """The guard's read → judge for planned drafts: every cited entry read at once, then each judged.

    The one sequence the guard agent (a batch), ``verify --ledger`` and ``verify --redis`` (a draft
    at a time) all run: at most the two Redis round trips of one ``read_many`` however many drafts.
    """
    keys = list(dict.fromkeys(key for step, _ in pending for key in step.keys))
    lookups = await read(keys) if keys else {}
    return [finish_read(step, lookups, record) for step, record in pending]


# --- postprocess ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PostprocessOutcome:
    """What the postprocess rules make of one raw-hits value.

    ``lookup`` travels on to ``postprocessed`` (a FailedLookup when a record with valid ids was
    rejected); ``rejection`` becomes the one dead letter; ``audit`` holds the station's figures.
    """

    lookup: LookupResult | FailedLookup | None
    rejection: Rejection | None
    audit: dict[str, Any]
    exception: str | None = None


def process_raw_hits(raw: bytes, settings: Settings, origin: Origin | None = None) -> PostprocessOutcome:
    """The postprocess rules: validate → adapt → postprocess → pack → assemble."""
    eid = event_id(Station.POSTPROCESS, origin)
    try:
        record = validate_raw_hits(raw, settings.input)
        response = record["response"]
        result = postprocess(adapt(response), settings.postprocess)
        context = pack(result["evidence_blocks"], settings.postprocess.char_budget)
        lookup = assemble(record, result, context, event_id=eid, origin=origin)
    except RejectedInput as exc:
        refused = exc.as_rejection()
        failed_value = None
        if refused["run_id"] is not None and refused["tool_call_id"] is not None:
            failed_value = failed_lookup(
                refused["run_id"], refused["tool_call_id"], refused["reason"], event_id=eid, origin=origin
            )
        figures: dict[str, Any] = {"status": RecordStatus.FAILED, "reason": exc.reason}
        return PostprocessOutcome(failed_value, refused, figures, type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - any other failure is an INTERNAL_ERROR dead letter
        return PostprocessOutcome(
            None, internal_error(exc), {"status": RecordStatus.FAILED}, type(exc).__name__
        )
    audit: dict[str, Any] = {
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


def postprocess_station(record: Record, settings: Settings) -> Outcome[LookupResult | FailedLookup | None]:
    """``raw-hits`` → ``postprocessed``: a raw-hits record starts its chain, so it is the origin."""
    origin = record.coordinates
    done = process_raw_hits(record.value, settings, origin)
    lookup = done.lookup
    ids = done.rejection if lookup is None else lookup
    run_id = ids["run_id"] if ids is not None else None
    tool_call_id = ids["tool_call_id"] if ids is not None else None
    outputs: tuple[Output, ...] = ()
    if lookup is not None:
        outputs = (Output(Topic.POSTPROCESSED, key_for(run_id, record), codec.dumps(lookup)),)
    return Outcome(
        Station.POSTPROCESS,
        origin,
        run_id,
        tool_call_id,
        outputs,
        done.rejection,
        done.audit,
        lookup,
        done.exception,
    )


# --- project -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ProjectOutcome:
    """What the project rules make of one LookupResult text.

    ``event`` is the ``projected`` value (None when nothing can be written to the ledger: the text
    was not an object, or the ids are not valid); ``projection`` is set when one fits.
    """

    event: ProjectedEvent | None
    projection: Projection | None
    rejection: Rejection | None
    origin: Origin | None
    exception: str | None = None


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
        "event_id": event_id(Station.PROJECT, origin),
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
    """The project rules: read (tolerant, as JSON text) → project → the ``projected`` value.

    The origin is the one the LookupResult carries; ``fallback_origin`` (the consumed record) is
    used when it carries none, so event ids stay deterministic for values fed in directly.
    """
    try:
        lookup = parse_object(text)
    except RejectedInput as exc:
        return ProjectOutcome(None, None, exc.as_rejection(), fallback_origin, type(exc).__name__)
    origin = read_origin(lookup.get("origin")) or fallback_origin
    ids_valid = is_valid_id(lookup.get("run_id")) and is_valid_id(pick(lookup, "tool_call_id", "toolCallId"))
    try:
        if lookup.get("status") == RecordStatus.FAILED:
            failure = parse_reason(lookup.get("failure_reason"))
            event = _projected(lookup, origin, RecordStatus.FAILED, failure, None) if ids_valid else None
            return ProjectOutcome(event, None, None, origin)
        projection = project_lookup(lookup, settings.projection)
    except RejectedInput as exc:
        event = _projected(lookup, origin, RecordStatus.FAILED, exc.reason, None) if ids_valid else None
        return ProjectOutcome(event, None, exc.as_rejection(), origin, type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - any other failure is an INTERNAL_ERROR dead letter
        return ProjectOutcome(None, None, internal_error(exc), origin, type(exc).__name__)
    event = _projected(lookup, origin, RecordStatus.OK, None, projection)
    return ProjectOutcome(event, projection, None, origin)


def project_station(record: Record, settings: Settings) -> Outcome[ProjectOutcome]:
    """``postprocessed`` → ``projected``."""
    done = process_lookup(record.value, settings, fallback_origin=record.coordinates)
    event, projection = done.event, done.projection
    run_id = event["run_id"] if event else done.rejection["run_id"] if done.rejection else None
    tool_call_id = (
        event["tool_call_id"] if event else done.rejection["tool_call_id"] if done.rejection else None
    )
    outputs: tuple[Output, ...] = ()
    if event is not None:
        outputs = (Output(Topic.PROJECTED, key_for(run_id, record), codec.dumps(event)),)
    fields: dict[str, Any] = {"status": event["status"] if event else None}
    if projection is not None:
        result = projection.result
        fields = {
            "evidence_status": result["evidence_status"],
            "returned_count": result["returned_count"],
            "relevance_level": result["relevance_level"],
            "truncated": result["truncated"],
            "projection_bytes": len(projection.canonical),
            "projection_sha256": projection.sha256,
        }
    elif event is not None:
        fields["failure_reason"] = event["failure_reason"]
    return Outcome(
        Station.PROJECT,
        done.origin,
        run_id,
        tool_call_id,
        outputs,
        done.rejection,
        fields,
        done,
        done.exception,
    )


# --- ledger --------------------------------------------------------------------------------------


def ledger_station(record: Record, settings: Settings) -> Outcome[None] | PendingWrite:
    """``projected`` → the entry to write once; finishing it gives the ``ledger`` event (as stored)."""
    empty = dict(_EMPTY_AUDIT[Station.LEDGER])
    try:
        value = parse_object(record.value)
    except MalformedJson as exc:
        return Outcome(
            Station.LEDGER,
            record.coordinates,
            None,
            None,
            (),
            exc.as_rejection(),
            empty,
            None,
            "MalformedJson",
        )
    origin = read_origin(value.get("origin")) or record.coordinates
    try:
        entry = ledger_entry(
            value,
            origin=origin,
            event_id=event_id(Station.LEDGER, origin),
            signer=signer_for(settings.signing_key_file),
        )
    except RejectedInput as exc:
        refused = exc.as_rejection()
        return Outcome(
            Station.LEDGER,
            origin,
            refused["run_id"],
            refused["tool_call_id"],
            (),
            refused,
            empty,
            None,
            type(exc).__name__,
        )

    def finish(result: WriteResult) -> Outcome[LedgerEntry]:
        return _after_write(record, entry, result)

    return PendingWrite(entry, finish)


def ledger_event(stored: LedgerEntry) -> bytes:
    """The ``ledger`` topic value: the entry as stored, in :data:`LEDGER_ENTRY_FIELDS` order."""
    return codec.dumps(as_stored(stored))


def _after_write(record: Record, entry: LedgerEntry, result: WriteResult) -> Outcome[LedgerEntry]:
    run_id, tool_call_id, origin = entry["run_id"], entry["tool_call_id"], entry["origin"]
    fields = {"status": entry["status"], "outcome": result.outcome, "key": result.key}
    outputs: tuple[Output, ...] = ()
    refused: Rejection | None = None
    if result.outcome in (LedgerOutcome.WRITTEN, LedgerOutcome.DUPLICATE):
        outputs = (Output(Topic.LEDGER, key_for(run_id, record), ledger_event(result.stored)),)
    elif entry["status"] == LedgerStatus.READY:  # a CONFLICT on a FAILED write is audited only
        error = conflict_error(result.key, result.stored, entry)
        refused = rejection(DeadLetterReason.LEDGER_CONFLICT, error, run_id, tool_call_id)
    return Outcome(Station.LEDGER, origin, run_id, tool_call_id, outputs, refused, fields, result.stored)


# --- guard ---------------------------------------------------------------------------------------


def guard_for(settings: Settings) -> EvidenceGuard:
    """The guard of these settings: its limits, the keys it trusts (3.7) and signs verdicts with (4.1)."""
    return EvidenceGuard(
        settings.guard,
        trusted=trusted_for(settings.trusted_keys_file),
        signer=signer_for(settings.signing_key_file),
    )


def guard_station(record: Record, settings: Settings) -> PendingRead:
    """``diagnosis-drafts`` → the entries to read; finishing gives the verdict and its violations."""
    guard = guard_for(settings)
    plan = guard.plan(record.value)
    run_id = plan.run_id or ""
    keys = tuple((run_id, tool_call_id) for tool_call_id in plan.cited)
    origin = record.coordinates

    def finish(lookups: Mapping[LedgerKey, LedgerLookup]) -> Outcome[Verdict]:
        verdict = guard.judge(
            plan,
            {tool_call_id: lookups[(run_id, tool_call_id)] for tool_call_id in plan.cited},
            event_id=event_id(Station.GUARD, origin),
            origin=origin,
        )
        key = key_for(verdict["run_id"], record)
        outputs = [Output(Topic.VERDICTS, key, codec.dumps(verdict))]
        outputs += [Output(Topic.VIOLATIONS, key, codec.dumps(event)) for event in violation_events(verdict)]
        fields: dict[str, Any] = {
            "draft_id": verdict["draft_id"],
            "attempt": verdict["attempt"],
            "verdict": verdict["verdict"],
            "violation_codes": [v["code"] for v in verdict["violations"]],
            "cited_tool_call_ids": plan.cited,
            # beyond SPEC 5's figures (additive): which tool call each violation is about, for the trail
            "violations": violation_links(plan, verdict["violations"]),
        }
        return Outcome(Station.GUARD, origin, verdict["run_id"], None, tuple(outputs), None, fields, verdict)

    return PendingRead(keys, finish)


STATIONS: dict[Station, StationFn] = {
    Station.POSTPROCESS: postprocess_station,
    Station.PROJECT: project_station,
    Station.LEDGER: ledger_station,
    Station.GUARD: guard_station,
}
"""Every station by name: what the agent of that name runs on each record."""


# --- messages ------------------------------------------------------------------------------------


def _be(value: int | None, size: int) -> bytes:
    return b"" if value is None else value.to_bytes(size, "big", signed=True)


def dead_letter_headers(letter: Mapping[str, Any], exception: str | None) -> Headers:
    """Kafka headers in the style redrive tools read (Spring Kafka's ``kafka_dlt-*``), plus ours.

    Partition is a 4-byte and offset/timestamp 8-byte big-endian integer, as Spring writes them;
    ``ec-reason`` and ``ec-station`` are UTF-8 text.
    """
    source = letter["source"]
    headers: list[tuple[str, bytes]] = []
    if source["topic"] is not None:
        headers += [
            ("kafka_dlt-original-topic", source["topic"].encode()),
            ("kafka_dlt-original-partition", _be(source["partition"], 4)),
            ("kafka_dlt-original-offset", _be(source["offset"], 8)),
        ]
        if source["timestamp"] is not None:
            headers.append(("kafka_dlt-original-timestamp", _be(source["timestamp"], 8)))
    headers += [
        ("kafka_dlt-exception-fqcn", (exception or letter["reason"]).encode()),
        ("kafka_dlt-exception-message", letter["error"].encode("utf-8", "replace")[:1024]),
        ("ec-reason", str(letter["reason"]).encode()),
        ("ec-station", str(letter["station"]).encode()),
    ]
    return tuple(headers)


def emissions(outcome: Outcome[Any], record: Record, settings: Settings, processed_at: str) -> list[Output]:
    """Every message one outcome produces: its outputs, its dead letter (and that letter's audit
    record) when it rejected the record, and the station's audit record — in that order."""
    station, origin = outcome.station, outcome.origin
    messages = list(outcome.outputs)
    if outcome.rejection is not None:
        refused = outcome.rejection
        letter = dead_letter(
            refused,
            station=station,
            origin=origin,
            record=record,
            max_value_bytes=settings.dead_letters.dead_letter_max_value_bytes,
        )
        key = key_for(refused["run_id"], record)
        messages.append(
            Output(
                Topic.DEAD_LETTERS, key, codec.dumps(letter), dead_letter_headers(letter, outcome.exception)
            )
        )
        fields = {"reason": refused["reason"], "error": refused["error"], "station": station}
        audit = audit_record(
            station=Station.DEAD_LETTER,
            event=letter["event_id"],
            run_id=refused["run_id"],
            tool_call_id=refused["tool_call_id"],
            origin=origin,
            record=record,
            fields=fields,
            processed_at=processed_at,
        )
        messages.append(Output(Topic.AUDIT, key, _encode_audit(audit)))
    audit = audit_record(
        station=station,
        event=event_id(station, origin or record.coordinates),
        run_id=outcome.run_id,
        tool_call_id=outcome.tool_call_id,
        origin=origin,
        record=record,
        fields=outcome.audit,
        processed_at=processed_at,
    )
    messages.append(Output(Topic.AUDIT, key_for(outcome.run_id, record), _encode_audit(audit)))
    return messages


def _encode_audit(audit: Mapping[str, Any]) -> bytes:
    try:
        return codec.dumps(audit)
    except codec.JSONEncodeError as exc:  # a figure JSON cannot hold: keep the record, say why
        return codec.dumps({**audit, "fields": {"unencodable": f"{type(exc).__name__}: {exc}"}})


# --- chains -------------------------------------------------------------------------------------

OUTPUT_TOPIC: dict[Station, Topic] = {station: wiring.output for station, wiring in TOPOLOGY.items()}
"""The topic on which each station's main output travels (from :data:`models.topology.TOPOLOGY`)."""


def chain(
    record: Record, settings: Settings, stations: tuple[Station, ...], *, through_rejections: bool = True
) -> Step:
    """Run ``stations`` in order on one record, each consuming the previous one's main output.

    This is how ``pipe`` and ``replay`` run the chain without Kafka: the same station functions
    as the agents, the same bytes passed between them. Stops early at a rejection that carries
    nothing on, or at a pending step (the ledger's write, the guard's reads). A rejection that
    carries a value on (postprocess's FAILED LookupResult) goes on as it does between the agents,
    unless ``through_rejections`` is False (``pipe`` prints that rejection instead).
    """
    step = run_station(stations[0], record, settings)
    for previous, station in zip(stations, stations[1:], strict=False):
        if not isinstance(step, Outcome) or (step.rejection is not None and not through_rejections):
            return step
        value = next((o.value for o in step.outputs if o.topic == OUTPUT_TOPIC[previous]), None)
        if value is None:
            return step
        step = run_station(station, replace(record, value=value), settings)
    return step
