"""The four stations, each one pure function from a consumed record to everything it makes happen.

A station returns an :class:`Outcome` (its outputs, a rejection or none, its audit figures), or, for
the two that touch the ledger, a pending step that names the Redis work it needs (an entry to
write once, or entries to read) and finishes into an :class:`Outcome` once the edge has the answer.
The agents, the offline CLI and ``replay`` all call these functions and nothing else, so a rule
lives in exactly one place; :func:`streams.envelope.emissions` turns an outcome into the messages to
produce (outputs, dead letter, audit records), again in one place.

A station reads its rules from one :class:`StationRules`, built once when a process starts (limits,
the signing key, the trusted keys, the guard): a key file replaced while a worker runs changes
nothing until the worker is restarted, and a key file that cannot be read stops it at start
(``ConfigurationError``) instead of turning every record into a dead letter.

Pure: no Kafka, no Redis, no clock (``processed_at`` comes from the caller). Nothing here raises on
input: bad input becomes a :class:`~models.events.Rejection`; an unexpected exception in a station,
or in encoding its outputs, becomes an ``INTERNAL_ERROR`` dead letter for that record alone, which
writes no FAILED entry (SPEC 1), so a replay after a fix can still succeed.
"""

from __future__ import annotations

import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from models.audit import (
    AuditFigures,
    GuardFigures,
    GuardUnjudged,
    LedgerFigures,
    PostprocessFailed,
    PostprocessFigures,
    ProjectFailed,
    ProjectFigures,
    SemanticFigures,
    SemanticUnjudged,
)
from models.draft import DiagnosisDraft
from models.events import Origin, Rejection
from models.ids import is_valid_id
from models.ledger import LedgerEntry, WriteResult, as_stored
from models.limits import (
    DeadLetterSettings,
    InputLimits,
    PostprocessSettings,
    SemanticSettings,
    ToolProjectionLimits,
)
from models.lookup import FailedLookup, LookupResult
from models.projection import ProjectedEvent
from models.semantic import JudgementRecord
from models.topology import TOPOLOGY
from models.verdict import Verdict
from models.vocab import (
    DeadLetterReason,
    LedgerOutcome,
    LedgerStatus,
    RecordStatus,
    ReportOutcome,
    Station,
    Topic,
    VerdictKind,
    parse_reason,
)
from streams import codec
from streams.codec import JSONObject
from streams.envelope import (
    Outcome,
    dead_letter_headers,
    emissions,
    encode_audit,
    event_id,
    key_for,
    read_origin,
    rejection,
)
from streams.errors import MalformedJson, RejectedInput
from streams.messages import Output, Record
from streams.settings import Settings
from streams.stations.adapt import adapt, contract_anomaly, parse_object, validate_raw_hits
from streams.stations.assemble import assemble, failed_lookup
from streams.stations.guard import EvidenceGuard, violation_events, violation_links
from streams.stations.ledger import conflict_error, ledger_entry
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from streams.stations.pack import pack
from streams.stations.postprocess import postprocess
from streams.stations.project import Projection, pick, project_lookup
from streams.stations.publish import (
    PUBLISH,
    ReportClaim,
    claim_outcome,
    report_claim,
    report_event,
    reviewed_report,
)
from streams.stations.review import RULES_VERSION
from streams.stations.semantic import SemanticPlan, final_verdict, judgement_event, semantic_violations
from streams.stations.semantic import plan as semantic_plan
from streams.stations.semantic.handoff import HANDOFF, cited_projections, handoff_event
from streams.stations.semantic.handoff import claimed as claimed_handoff
from streams.trust.keys import Signer, TrustedKeys, load_signer, load_trusted_keys, own_and_trusted

__all__ = [
    "OUTPUT_TOPIC",
    "STATIONS",
    "Outcome",
    "PendingJudge",
    "PendingRead",
    "PostprocessOutcome",
    "ProjectOutcome",
    "Projected",
    "ReadMany",
    "PendingWrite",
    "StationRules",
    "Step",
    "chain",
    "dead_letter_headers",
    "emissions",
    "encode_audit",
    "finish_judge",
    "finish_read",
    "finish_write",
    "internal_error",
    "ledger_event",
    "process_lookup",
    "process_raw_hits",
    "resolve_reads",
    "run_station",
]


# --- the rules a station reads --------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StationRules:
    """Everything the four stations read besides the record, built once when a process starts.

    The input, postprocess, projection and dead-letter limits, the key entries and verdicts are
    signed with (None: unsigned), the keys signatures are checked against (None: not checked), and
    the guard built from them. Frozen: a worker's stations obey the rules it started with; a key
    file changed on disk takes effect at the next start, never half-way through a run.
    """

    input: InputLimits
    postprocess: PostprocessSettings
    projection: ToolProjectionLimits
    dead_letters: DeadLetterSettings
    signer: Signer | None
    trusted: TrustedKeys | None
    guard: EvidenceGuard
    semantic: SemanticSettings = SemanticSettings()
    """The semantic review after the guard (SPEC 4.4): off by default."""
    handover_keys: TrustedKeys | None = None
    """The guard keys a hand-over must be signed by for the semantic station to act on it (the trusted
    ones and the station's own, which is the guard's: SPEC 4.4); None: nothing is signed or checked."""

    @classmethod
    def from_settings(cls, settings: Settings) -> StationRules:
        """The rules of ``settings``, the key files read now.

        Raises:
            ConfigurationError: ``EC_SIGNING_KEY_FILE`` or ``EC_TRUSTED_KEYS_FILE`` cannot be read or
                holds no usable key (the caller stops: a worker never starts on keys it cannot use).
        """
        signer = load_signer(settings.signing_key_file) if settings.signing_key_file else None
        trusted = load_trusted_keys(settings.trusted_keys_file) if settings.trusted_keys_file else None
        return cls.with_keys(settings, signer, trusted)

    @classmethod
    def without_keys(cls, settings: Settings) -> StationRules:
        """The rules of ``settings`` with no key read: nothing signed, no signature checked. For a caller
        that runs only the stations before the ledger (postprocess, project), which read no key: the
        client's intended entry, the demo's count."""
        return cls.with_keys(settings, None, None)

    @classmethod
    def with_keys(
        cls, settings: Settings, signer: Signer | None, trusted: TrustedKeys | None
    ) -> StationRules:
        """The limits of ``settings`` with these keys (a test's, or those read by :meth:`from_settings`)."""
        return cls(
            input=settings.input,
            postprocess=settings.postprocess,
            projection=settings.projection,
            dead_letters=settings.dead_letters,
            signer=signer,
            trusted=trusted,
            guard=EvidenceGuard(settings.guard, trusted=trusted, signer=signer),
            semantic=settings.semantic,
            handover_keys=own_and_trusted(signer, trusted, "guard"),
        )


# --- the outcome shape --------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class PendingJudge:
    """The semantic station's intent: the judgement of ``plan`` — recorded for ``(run_id, digest)``, or
    asked of the judge and recorded — then ``finish`` with it (None: the draft was not asked, over the
    cap) and whether the judge was called for it."""

    plan: SemanticPlan
    finish: Callable[[JudgementRecord | None, bool], Outcome[Any]]

    @property
    def key(self) -> tuple[str, str]:
        """``(run_id, digest)``: where the judgement of this draft's case is recorded."""
        return (self.plan.event["run_id"], self.plan.digest)


Step = Outcome[Any] | PendingWrite | PendingRead | PendingJudge
StationFn = Callable[[Record, StationRules], Step]


def internal_error(exc: BaseException) -> Rejection:
    """An unexpected exception: dead-lettered, never written FAILED (a fix can replay it)."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    return rejection(DeadLetterReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}{where}")


def refused_figures(station: Station) -> AuditFigures:
    """The figures of a record ``station`` refused before it could count anything (every figure null,
    or only the postprocess station's FAILED status)."""
    if station == Station.POSTPROCESS:
        return PostprocessFailed(status=RecordStatus.FAILED)
    if station == Station.PROJECT:
        return ProjectFailed(status=None)
    if station == Station.LEDGER:
        return LedgerFigures(status=None, outcome=None, key=None)
    if station == Station.GUARD:
        return GuardUnjudged(
            draft_id=None, attempt=None, verdict=None, violation_codes=[], cited_tool_call_ids=[]
        )
    return SemanticUnjudged(draft_id=None, attempt=None, verdict=None, status=None)


def _refused_unread(
    station: Station, origin: Origin | None, refused: Rejection, exception: str
) -> Outcome[None]:
    """The outcome of a record ``station`` refused before it could read its ids: one dead letter, no
    run or tool call, every figure refused (:func:`refused_figures`)."""
    return Outcome(
        station=station,
        origin=origin,
        event_id=event_id(station, origin),
        run_id=None,
        tool_call_id=None,
        rejection=refused,
        exception=exception,
        audit=refused_figures(station),
        detail=None,
    )


def failed(
    station: Station, record: Record, exc: BaseException, origin: Origin | None = None
) -> Outcome[None]:
    """The outcome of a record whose station raised unexpectedly: one INTERNAL_ERROR dead letter."""
    return _refused_unread(station, origin or record.coordinates, internal_error(exc), type(exc).__name__)


def run_station(station: Station, record: Record, rules: StationRules) -> Step:
    """One station on one record; whatever goes wrong stays that record's INTERNAL_ERROR."""
    try:
        return STATIONS[station](record, rules)
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
ClaimMany = Callable[[list[ReportClaim]], Awaitable[Sequence[str | None]]]
"""Takes the guard's write-once report claims (``LedgerStore.claim_reports``, perhaps in a retry)."""


async def resolve_reads(
    pending: Sequence[tuple[PendingRead, Record]],
    read: ReadMany,
    claim: ClaimMany | None = None,
    *,
    signer: Signer | None = None,
) -> list[Outcome[Any]]:
    """The guard's read → judge → claim for planned drafts: every cited entry read at once, each draft
    judged, then, with ``claim``, every judged draft's claim on its report taken at once
    (:func:`settle_claims`; ``signer``, the guard's, signs a hand-over again over what its claim said).

    The one sequence the guard agent (a batch), ``verify --ledger`` and ``verify --redis`` (a draft
    at a time, no claim: they publish nothing) all run: at most the two Redis round trips of one
    ``read_many`` however many drafts, and one of claims.
    """
    keys = list(dict.fromkeys(key for step, _ in pending for key in step.keys))
    lookups = await read(keys) if keys else {}
    judged = [finish_read(step, lookups, record) for step, record in pending]
    return judged if claim is None else await settle_claims(judged, claim, signer=signer)


async def settle_claims(
    outcomes: Sequence[Outcome[Any]], claim: ClaimMany, *, signer: Signer | None = None
) -> list[Outcome[Any]]:
    """One report per draft (SPEC 4.3): each judged draft claims its ``(run_id, draft_id, attempt)``
    (write-once, the first draft judged owns it), in batch order, in one call; a draft that does not own
    its triple keeps its verdict (emitted as ever, the same bytes) and loses its report
    (:func:`without_report`). A draft whose verdict names no triple claims nothing and publishes as
    before; a rejected record (INTERNAL_ERROR) has no verdict and claims nothing.
    """
    claims = [
        (index, made)
        for index, outcome in enumerate(outcomes)
        if outcome.station == Station.GUARD
        and outcome.rejection is None
        and outcome.detail is not None
        and (made := report_claim(outcome.detail)) is not None
    ]
    if not claims:
        return list(outcomes)
    held = await claim([made for _, made in claims])
    settled = list(outcomes)
    for (index, made), before in zip(claims, held, strict=True):
        settled[index] = without_report(settled[index], claim_outcome(made, before), signer)
    return settled


def without_report(
    outcome: Outcome[Any], claimed: ReportOutcome, signer: Signer | None = None
) -> Outcome[Any]:
    """The guard's outcome after its claim: unchanged but for ``fields.report_claim`` when it owns its triple;
    else without its ``reports`` message (``report_event_id`` null). Its verdict and violations are never
    touched; a hand-over says what the claim said, signed again by ``signer``."""
    outputs = tuple(_with_claim(o, claimed, signer) for o in outcome.outputs)
    judged = cast(GuardFigures, outcome.audit)  # settle_claims claims only for a draft the guard judged
    if claimed == ReportOutcome.OWNED:
        owned: GuardFigures = {**judged, "report_claim": claimed}
        return replace(outcome, outputs=outputs, audit=owned)
    kept = tuple(o for o in outputs if o.topic != Topic.REPORTS)
    lost: GuardFigures = {**judged, "report_claim": claimed, "report_event_id": None}
    return replace(outcome, outputs=kept, audit=lost)


def _with_claim(output: Output, claimed: ReportOutcome, signer: Signer | None) -> Output:
    """A hand-over to the semantic review carries what the guard's claim said (its report is the
    semantic station's to publish), signed over it; any other output is unchanged."""
    if output.topic != Topic.SEMANTIC_REVIEW:
        return output
    return replace(output, value=codec.dumps(claimed_handoff(codec.loads(output.value), claimed, signer)))


# --- postprocess ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PostprocessOutcome:
    """What the postprocess rules make of one raw-hits value.

    ``lookup`` travels on to ``postprocessed`` (a FailedLookup when a record with valid ids was
    rejected); ``rejection`` becomes the one dead letter; ``audit`` holds the station's figures.
    """

    lookup: LookupResult | FailedLookup | None
    rejection: Rejection | None
    audit: PostprocessFigures | PostprocessFailed
    exception: str | None = None
    event_id: str | None = None


def process_raw_hits(raw: bytes, rules: StationRules, origin: Origin | None = None) -> PostprocessOutcome:
    """The postprocess rules: validate → adapt → postprocess → pack → assemble."""
    eid = event_id(Station.POSTPROCESS, origin)
    try:
        record = validate_raw_hits(raw, rules.input)
        response = record["response"]
        result = postprocess(adapt(response), rules.postprocess)
        context = pack(result["evidence_blocks"], rules.postprocess.char_budget)
        lookup = assemble(record, result, context, event_id=eid, origin=origin)
    except RejectedInput as exc:
        refused = exc.as_rejection()
        failed_value = None
        if refused["run_id"] is not None and refused["tool_call_id"] is not None:
            failed_value = failed_lookup(
                refused["run_id"], refused["tool_call_id"], refused["reason"], event_id=eid, origin=origin
            )
        figures = PostprocessFailed(status=RecordStatus.FAILED, reason=exc.reason)
        return PostprocessOutcome(failed_value, refused, figures, type(exc).__name__, eid)
    except Exception as exc:  # noqa: BLE001 - any other failure is an INTERNAL_ERROR dead letter
        return PostprocessOutcome(
            None, internal_error(exc), PostprocessFailed(status=RecordStatus.FAILED), type(exc).__name__, eid
        )
    audit: PostprocessFigures = {
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
    return PostprocessOutcome(lookup, None, audit, None, eid)


def postprocess_station(record: Record, rules: StationRules) -> Outcome[LookupResult | FailedLookup | None]:
    """``raw-hits`` → ``postprocessed``: a raw-hits record starts its chain, so it is the origin."""
    origin = record.coordinates
    done = process_raw_hits(record.value, rules, origin)
    lookup = done.lookup
    ids = done.rejection if lookup is None else lookup
    run_id = ids["run_id"] if ids is not None else None
    tool_call_id = ids["tool_call_id"] if ids is not None else None
    outputs: tuple[Output, ...] = ()
    if lookup is not None:
        outputs = (Output(Topic.POSTPROCESSED, key_for(run_id, record), codec.dumps(lookup)),)
    return Outcome(
        station=Station.POSTPROCESS,
        origin=origin,
        event_id=done.event_id,
        run_id=run_id,
        tool_call_id=tool_call_id,
        outputs=outputs,
        rejection=done.rejection,
        exception=done.exception,
        audit=done.audit,
        detail=lookup,
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

    @property
    def event_id(self) -> str | None:
        """The project station's event id for this record (the ``projected`` value carries it)."""
        return event_id(Station.PROJECT, self.origin)


@dataclass(frozen=True, slots=True)
class Projected:
    """The project station's typed result (an :class:`Outcome`'s ``detail``): the ``projected``
    value, if any, and the projection, when one fits. Why a record was refused is the outcome's."""

    event: ProjectedEvent | None
    projection: Projection | None


def _projected(
    lookup: JSONObject,
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
    text: bytes | str, rules: StationRules, fallback_origin: Origin | None = None
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
        projection = project_lookup(lookup, rules.projection)
    except RejectedInput as exc:
        event = _projected(lookup, origin, RecordStatus.FAILED, exc.reason, None) if ids_valid else None
        return ProjectOutcome(event, None, exc.as_rejection(), origin, type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - any other failure is an INTERNAL_ERROR dead letter
        return ProjectOutcome(None, None, internal_error(exc), origin, type(exc).__name__)
    event = _projected(lookup, origin, RecordStatus.OK, None, projection)
    return ProjectOutcome(event, projection, None, origin)


def project_station(record: Record, rules: StationRules) -> Outcome[Projected]:
    """``postprocessed`` → ``projected``."""
    done = process_lookup(record.value, rules, fallback_origin=record.coordinates)
    event, projection = done.event, done.projection
    run_id = event["run_id"] if event else done.rejection["run_id"] if done.rejection else None
    tool_call_id = (
        event["tool_call_id"] if event else done.rejection["tool_call_id"] if done.rejection else None
    )
    outputs: tuple[Output, ...] = ()
    if event is not None:
        outputs = (Output(Topic.PROJECTED, key_for(run_id, record), codec.dumps(event)),)
    fields: ProjectFigures | ProjectFailed = {"status": None}  # no projected value: refused here
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
        fields = {"status": RecordStatus.FAILED, "failure_reason": event["failure_reason"]}  # FAILED upstream
    return Outcome(
        station=Station.PROJECT,
        origin=done.origin,
        event_id=event["event_id"] if event is not None else done.event_id,
        run_id=run_id,
        tool_call_id=tool_call_id,
        outputs=outputs,
        rejection=done.rejection,
        exception=done.exception,
        audit=fields,
        detail=Projected(event, projection),
    )


# --- ledger --------------------------------------------------------------------------------------


def ledger_station(record: Record, rules: StationRules) -> Outcome[None] | PendingWrite:
    """``projected`` → the entry to write once; finishing it gives the ``ledger`` event (as stored)."""
    try:
        value = parse_object(record.value)
    except MalformedJson as exc:
        return _refused_unread(Station.LEDGER, record.coordinates, exc.as_rejection(), "MalformedJson")
    origin = read_origin(value.get("origin")) or record.coordinates
    eid = event_id(Station.LEDGER, origin)
    try:
        entry = ledger_entry(value, origin=origin, event_id=eid, signer=rules.signer)
    except RejectedInput as exc:
        refused = exc.as_rejection()
        return Outcome(
            station=Station.LEDGER,
            origin=origin,
            event_id=eid,
            run_id=refused["run_id"],
            tool_call_id=refused["tool_call_id"],
            rejection=refused,
            exception=type(exc).__name__,
            audit=refused_figures(Station.LEDGER),
            detail=None,
        )

    def finish(result: WriteResult) -> Outcome[LedgerEntry]:
        return _after_write(record, entry, result)

    return PendingWrite(entry, finish)


def ledger_event(stored: LedgerEntry) -> bytes:
    """The ``ledger`` topic value: the entry as stored, in :data:`LEDGER_ENTRY_FIELDS` order."""
    return codec.dumps(as_stored(stored))


def _after_write(record: Record, entry: LedgerEntry, result: WriteResult) -> Outcome[LedgerEntry]:
    run_id, tool_call_id, origin = entry["run_id"], entry["tool_call_id"], entry["origin"]
    fields: LedgerFigures = {"status": entry["status"], "outcome": result.outcome, "key": result.key}
    outputs: tuple[Output, ...] = ()
    refused: Rejection | None = None
    if result.outcome in (LedgerOutcome.WRITTEN, LedgerOutcome.DUPLICATE):
        outputs = (Output(Topic.LEDGER, key_for(run_id, record), ledger_event(result.stored)),)
    elif entry["status"] == LedgerStatus.READY:  # a CONFLICT on a FAILED write is audited only
        error = conflict_error(result.key, result.stored, entry)
        refused = rejection(DeadLetterReason.LEDGER_CONFLICT, error, run_id, tool_call_id)
    return Outcome(
        station=Station.LEDGER,
        origin=origin,
        event_id=entry["event_id"],
        run_id=run_id,
        tool_call_id=tool_call_id,
        outputs=outputs,
        rejection=refused,
        audit=fields,
        detail=result.stored,
    )


# --- guard ---------------------------------------------------------------------------------------


def guard_station(record: Record, rules: StationRules) -> PendingRead:
    """``diagnosis-drafts`` → the entries to read; finishing gives the verdict and its violations (and,
    with the semantic review on, a PASS draft's hand-over: SPEC 4.4)."""
    guard, semantic = rules.guard, rules.semantic.mode
    plan = guard.plan(record.value)
    run_id = plan.run_id or ""
    keys = tuple((run_id, tool_call_id) for tool_call_id in plan.cited)
    origin = record.coordinates
    eid = event_id(Station.GUARD, origin)

    def finish(lookups: Mapping[LedgerKey, LedgerLookup]) -> Outcome[Verdict]:
        verdict = guard.judge(
            plan,
            {tool_call_id: lookups[(run_id, tool_call_id)] for tool_call_id in plan.cited},
            event_id=eid,
            origin=origin,
        )
        key = key_for(verdict["run_id"], record)
        outputs = [Output(Topic.VERDICTS, key, codec.dumps(verdict))]
        outputs += [Output(Topic.VIOLATIONS, key, codec.dumps(event)) for event in violation_events(verdict)]
        # SPEC 4.3: the report (PASS, FALLBACK) rides in the verdict's batch and is acknowledged with it
        report = report_event(verdict, plan.draft, event_id=event_id(PUBLISH, origin), signer=guard.signer)
        if report is not None:
            outputs.append(Output(Topic.REPORTS, key, codec.dumps(report)))
        handed = None
        if semantic != "off" and verdict["verdict"] == VerdictKind.PASS and plan.draft is not None:
            # SPEC 4.4: enforce — the semantic station emits this attempt's one verdict (and report);
            # advise — the guard's verdict stands and the judgement is only recorded beside it
            handed = handoff_event(
                verdict,
                reviewed_report(plan.draft),
                cited_projections(verdict, {c: lookups[(run_id, c)] for c in plan.cited}),
                mode=semantic,
                event_id=event_id(HANDOFF, origin),
                signer=guard.signer,
            )
            if semantic == "enforce":
                outputs, report = [], None
            outputs.append(Output(Topic.SEMANTIC_REVIEW, key, codec.dumps(handed)))
        fields: GuardFigures = {
            "draft_id": verdict["draft_id"],
            "attempt": verdict["attempt"],
            "verdict": verdict["verdict"],
            "violation_codes": [v["code"] for v in verdict["violations"]],
            "cited_tool_call_ids": list(plan.cited),
            # beyond SPEC 5's figures (additive): which tool call each violation is about, for the trail
            "violations": violation_links(plan, verdict["violations"]),
            "report_event_id": None if report is None else report["event_id"],
            "report_claim": None,  # what the claim on its (run_id, draft_id, attempt) said: settle_claims
            # the version of the review's rules (docs/review-rules.md) the verdict was judged by; null: off
            "review_rules": RULES_VERSION if guard.settings.review == "enforce" else None,
        }
        audited = eid
        if handed is not None:  # SPEC 4.4: handed to the semantic review (absent with it off)
            fields = {**fields, "semantic": handed["mode"]}
            if semantic == "enforce":  # the verdict is the semantic station's to give, and to audit:
                # the guard's record names what it produced (the hand-over), the station's the verdict
                fields, audited = {**fields, "verdict": None}, handed["event_id"]
        return Outcome(
            station=Station.GUARD,
            origin=origin,
            event_id=audited,
            run_id=verdict["run_id"],
            tool_call_id=None,
            outputs=tuple(outputs),
            audit=fields,
            detail=verdict,
        )

    return PendingRead(keys, finish)


# --- semantic review ------------------------------------------------------------------------------


def semantic_station(record: Record, rules: StationRules) -> Outcome[None] | PendingJudge:
    """``semantic-review`` → the judgement to find or ask for; finishing gives the ``judgements`` event
    and, in ``enforce`` mode, the draft's one verdict, its violations and its report (SPEC 4.4)."""
    try:
        planned = semantic_plan(record.value, rules.semantic, rules.handover_keys)
    except RejectedInput as exc:
        return _refused_unread(Station.SEMANTIC, record.coordinates, exc.as_rejection(), type(exc).__name__)
    handed = planned.event
    origin = read_origin(handed["origin"]) or record.coordinates
    eid = event_id(Station.SEMANTIC, origin)
    signer = rules.guard.signer

    def finish(recorded: JudgementRecord | None, called: bool) -> Outcome[Any]:
        judged = judgement_event(planned, recorded, event_id=eid, signer=signer)
        key = key_for(handed["run_id"], record)
        outputs = [Output(Topic.JUDGEMENTS, key, codec.dumps(judged))]
        final = None
        report = None
        if planned.enforced:
            final = final_verdict(planned, judged, rules.guard.settings, signer=signer)
            outputs.append(Output(Topic.VERDICTS, key, codec.dumps(final)))
            outputs += [Output(Topic.VIOLATIONS, key, codec.dumps(v)) for v in violation_events(final)]
            if handed["report_claim"] in (None, ReportOutcome.OWNED):  # SPEC 4.3, claimed by the guard
                report = report_event(
                    final,
                    cast(DiagnosisDraft, handed["draft"]),
                    event_id=event_id(PUBLISH, origin),
                    signer=signer,
                )
                if report is not None:
                    outputs.append(Output(Topic.REPORTS, key, codec.dumps(report)))
        labels = [claim["label"] for claim in judged["claims"]]
        fields: SemanticFigures = {
            "draft_id": handed["draft_id"],
            "attempt": handed["attempt"],
            "mode": handed["mode"],
            "verdict": None if final is None else final["verdict"],
            "violation_codes": [v["code"] for v in semantic_violations(planned, judged)],
            "status": judged["status"],
            "digest": judged["digest"],
            "model": judged["model"],
            "prompt_version": judged["prompt_version"],
            "language": planned.case["language"],
            "chars": planned.chars,
            "claims": len(planned.case["claims"]),
            "labels": {label: labels.count(label) for label in sorted(set(labels))},
            "called": called,
            "verdict_event_id": handed["verdict"]["event_id"],
            "report_event_id": None if report is None else report["event_id"],
            "report_claim": handed["report_claim"],
        }
        return Outcome(
            station=Station.SEMANTIC,
            origin=origin,
            # its audit record names what it produced: in enforce, the draft's verdict (the record the
            # audit trail counts as the verdict); in advise, the judgement
            event_id=eid if final is None else final["event_id"],
            run_id=handed["run_id"],
            tool_call_id=None,
            outputs=tuple(outputs),
            audit=fields,
            detail=judged,
        )

    return PendingJudge(planned, finish)


def finish_judge(
    step: PendingJudge, recorded: JudgementRecord | None, called: bool, record: Record
) -> Outcome[Any]:
    """The semantic station once its judgement is known; isolated like :func:`run_station`."""
    try:
        return step.finish(recorded, called)
    except Exception as exc:  # noqa: BLE001 - per-record isolation
        return failed(Station.SEMANTIC, record, exc)


STATIONS: dict[Station, StationFn] = {
    Station.POSTPROCESS: postprocess_station,
    Station.PROJECT: project_station,
    Station.LEDGER: ledger_station,
    Station.GUARD: guard_station,
    Station.SEMANTIC: semantic_station,
}
"""Every station by name: what the agent of that name runs on each record."""


# --- chains -------------------------------------------------------------------------------------

OUTPUT_TOPIC: dict[Station, Topic] = {station: wiring.output for station, wiring in TOPOLOGY.items()}
"""The topic on which each station's main output travels (from :data:`models.topology.TOPOLOGY`)."""


def chain(
    record: Record, rules: StationRules, stations: tuple[Station, ...], *, through_rejections: bool = True
) -> Step:
    """Run ``stations`` in order on one record, each consuming the previous one's main output.

    This is how ``pipe`` and ``replay`` run the chain without Kafka: the same station functions
    as the agents, the same bytes passed between them. Stops early at a rejection that carries
    nothing on, or at a pending step (the ledger's write, the guard's reads). A rejection that
    carries a value on (postprocess's FAILED LookupResult) goes on as it does between the agents,
    unless ``through_rejections`` is False (``pipe`` prints that rejection instead).
    """
    step = run_station(stations[0], record, rules)
    for previous, station in zip(stations, stations[1:], strict=False):
        if not isinstance(step, Outcome) or (step.rejection is not None and not through_rejections):
            return step
        value = next((o.value for o in step.outputs if o.topic == OUTPUT_TOPIC[previous]), None)
        if value is None:
            return step
        step = run_station(station, replace(record, value=value), rules)
    return step
