"""Does this hold? The one answer per kind of signed thing (SPEC 3.6, 3.7, 4.1, 4.3), pure.

- :func:`check_entry`, wherever a ledger entry is read: the guard's re-read (C), the client and so the
  gateway and any tool server, the ledger-topic waiter, ``receipt verify``, the audit pages, and the
  ledger station before it writes. An entry holds when — asked for a key — it is that key's entry
  (its stored ``run_id`` and ``tool_call_id``, signed or not: SPEC 3.7's last rule), its projection
  hashes to its ``projection_sha256``, and — with trusted keys — its signature verifies under a
  trusted **ledger** key; in that order.
- :func:`check_verdict` and :func:`check_report`, wherever a verdict or a ``reports`` event is handed
  out or shown (the client, the gateway, the MCP tools, ``serve``, ``inspect``): with trusted keys it
  holds only when signed by a trusted **guard** key; asked for a draft or a run, only when it is that
  draft's or that run's.
- :func:`check_judgement` and :func:`judgement_for`, wherever a judgement of the semantic review is shown
  or put in a receipt (``serve``, ``receipt RUN DRAFT``): it is the verdict's, signed (with trusted
  keys), its digest is that of its case, and its evidence is the entries'; of copies, the original.
  ``ledger rebuild-judgements`` asks it too, without a verdict, before it records one for the station.
- :func:`check_handover`, where the semantic station reads a hand-over, before it signs anything.
- :func:`report_identity` and :func:`distinct_reports`: readers drop repeats of a report by its
  signed fields, never by ``event_id`` alone (it is not signed), and keep one report per
  ``(run_id, draft_id, attempt)``, the first (SPEC 4.3).

The hash is SHA-256 over the projection's UTF-8 bytes, strictly. The projection the ledger stores is
the canonical JSON text orjson writes, always valid UTF-8, so a string that cannot be encoded as UTF-8
(a lone surrogate: only a forger's or a lossy reader's string holds one) has no such bytes and does not
hold. Encoding it with ``surrogatepass`` instead would hash bytes that are not UTF-8 and that no writer
of the ledger produces: a second, looser answer to the same question. Bytes (a file or memory ledger
read without decoding) are hashed as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from models.ledger import LedgerEntry
from models.semantic import JudgementEvent, SemanticReviewEvent
from models.verdict import ReportEvent, Verdict
from streams import codec
from streams.hashing import sha256_hex
from streams.trust.judgement import judgement_failures, names_failures
from streams.trust.keys import TrustedKeys
from streams.trust.messages import FieldTypeError, judgement_message, report_message


class EntryFault(StrEnum):
    """Why an entry does not hold."""

    KEY = "key"
    """Asked for a key: the entry's stored ``run_id`` or ``tool_call_id`` is not that key's (SPEC 3.7)."""
    NO_PROJECTION = "no projection"
    """A READY entry without a projection, or one that is not text."""
    HASH = "hash"
    """The projection does not hash to ``projection_sha256`` (or is not UTF-8 text)."""
    SIGNATURE = "signature"
    """With trusted keys: unsigned, not signed by a trusted ledger key, or the signature does not verify."""


@dataclass(frozen=True, slots=True)
class EntryCheck:
    """The answer for one entry: holds (``fault`` None) or why not, and the projection's exact bytes."""

    fault: EntryFault | None
    detail: str = ""
    """One phrase saying why not, quoting nothing from the entry but a well-formed ``key_id``."""
    data: bytes | None = None
    """The projection's bytes, as hashed (None when the entry has none, or they are not UTF-8)."""

    @property
    def holds(self) -> bool:
        return self.fault is None


def projection_bytes(projection: Any) -> bytes | None:
    """The bytes a projection's hash is computed over: a string's UTF-8 (strict), bytes as they are;
    None for anything else, or a string that is not Unicode text."""
    if isinstance(projection, bytes):
        return projection
    if isinstance(projection, str):
        try:
            return projection.encode("utf-8")
        except UnicodeEncodeError:
            return None
    return None


def check_entry(
    entry: LedgerEntry, trusted: TrustedKeys | None, key: tuple[str, str] | None = None
) -> EntryCheck:
    """Whether a stored entry holds: with ``key`` (the ``(run_id, tool_call_id)`` it was read for) first
    that it is that key's entry, then its projection's hash, then (with ``trusted``) its signature.

    An entry is evidence for exactly one key (SPEC 3.7): run A's genuine signed entry copied under run
    B's Redis key, or produced on the ``ledger`` topic under B's record key, verifies, and is still not
    B's. Every door passes the key; the guard does not (what SPEC 4's B and C say decides there, so
    its verdict bytes stay what they were). A FAILED entry holds no projection: only its signature is
    checked (its status and reason are signed).
    """
    if key is not None and (entry.get("run_id"), entry.get("tool_call_id")) != tuple(key):
        return EntryCheck(
            EntryFault.KEY, "its stored run_id and tool_call_id are not the key it was read under"
        )
    held = check_projection(entry.get("status"), entry.get("projection"), entry.get("projection_sha256"))
    if held.fault is None and trusted is not None:
        why = trusted.verify_entry(entry)
        if why is not None:
            return EntryCheck(EntryFault.SIGNATURE, f"the entry's signature: {why}", held.data)
    return held


def check_projection(status: object, projection: object, projection_sha256: object) -> EntryCheck:
    """Whether an entry's projection hashes to its ``projection_sha256`` (a READY one must hold one; a
    FAILED one holds none, and nothing is checked)."""
    data: bytes | None = None
    if projection is not None or status == "READY":
        if not isinstance(projection, str | bytes):
            return EntryCheck(EntryFault.NO_PROJECTION, "the entry holds no projection text")
        data = projection_bytes(projection)
        if data is None:
            return EntryCheck(
                EntryFault.HASH, "the projection is not UTF-8 text, so it has no SHA-256 to match"
            )
        if sha256_hex(data) != projection_sha256:
            return EntryCheck(EntryFault.HASH, "the projection's SHA-256 differs from the stored one")
    return EntryCheck(None, "", data)


class SignedFault(StrEnum):
    """Why a verdict or a report does not hold."""

    KEY = "key"
    """It is not the one asked for: another draft's verdict, another run's report."""
    SIGNATURE = "signature"
    """With trusted keys: unsigned, not signed by a trusted guard key, or the signature does not verify."""
    CONTENT = "content"
    """A judgement whose unsigned parts do not hold with its signed ones: its case is not what its digest
    covers, its evidence is not the entries', or the verdict does not follow from its labels."""


@dataclass(frozen=True, slots=True)
class SignedCheck:
    """The answer for one verdict or report: holds (``fault`` None) or why not."""

    fault: SignedFault | None
    detail: str = ""
    """One phrase saying why not, quoting nothing from the value but a well-formed ``key_id``."""

    @property
    def holds(self) -> bool:
        return self.fault is None


_HOLDS = SignedCheck(None)


def check_verdict(
    verdict: Verdict, trusted: TrustedKeys | None, *, draft_sha256: str | None = None
) -> SignedCheck:
    """Whether a verdict may be handed out or shown (SPEC 4.1, 4.3): with ``draft_sha256`` (the hash of
    the draft it was asked for) first that it judged those bytes, then, with ``trusted``, that a
    trusted **guard** key signed it. Without trusted keys only the first is checked."""
    if draft_sha256 is not None and verdict.get("draft_sha256") != draft_sha256:
        return SignedCheck(SignedFault.KEY, "it judged other draft bytes than the ones asked for")
    return _HOLDS if trusted is None else _signature(trusted.verify_verdict(verdict), "verdict")


def check_report(
    event: ReportEvent, trusted: TrustedKeys | None, *, run_id: str | None = None
) -> SignedCheck:
    """Whether a ``reports`` event may be handed out or shown (SPEC 4.3): with ``run_id`` (the run it was
    read for) first that it is that run's, then, with ``trusted``, that a trusted **guard** key signed
    it over its ids and its report's exact JSON. Without trusted keys only the first is checked."""
    if run_id is not None and event.get("run_id") != run_id:
        return SignedCheck(SignedFault.KEY, "it is another run's report")
    return _HOLDS if trusted is None else _signature(trusted.verify_report(event), "report")


def check_handover(event: SemanticReviewEvent, trusted: TrustedKeys | None) -> SignedCheck:
    """Whether the semantic station may act on a ``semantic-review`` hand-over (SPEC 4.4): with
    ``trusted`` keys (the trusted guard keys and the station's own), only when a guard key signed it
    under ``evidence-chain/handover/v1``. The station signs the final verdict, the report and the
    judgement with the guard's key, so a hand-over it did not check would make it sign whatever a writer
    of the topic hands it."""
    return _HOLDS if trusted is None else _signature(trusted.verify_handover(event), "hand-over")


def _signature(why: str | None, what: str) -> SignedCheck:
    """Holds when the signature verified (``why`` None), else says so, naming ``what`` was signed."""
    return _HOLDS if why is None else SignedCheck(SignedFault.SIGNATURE, f"the {what}'s signature: {why}")


def check_judgement(
    judgement: JudgementEvent,
    verdict: Verdict | None,
    trusted: TrustedKeys | None,
    entries: Sequence[LedgerEntry] = (),
) -> SignedCheck:
    """Whether a ``judgements`` event may be shown beside ``verdict`` or put in its receipt (SPEC 4.4):
    it names that verdict (run, draft, attempt, draft hash, verdict event id); with ``trusted``, a trusted
    **guard** key signed it; its ``digest`` is that of its own model and ``case`` — the case is covered
    by nothing else, so a signed judgement re-sent with the evidence it shows rewritten verifies and is
    still not the judge's; each evidence item of a tool call ``entries`` hold is what that entry holds;
    and the verdict's semantic violations are what its labels say. The same checks as a receipt's
    (:func:`streams.trust.judgement.judgement_failures`), one answer.

    Without a ``verdict`` (``ledger rebuild-judgements``, which records a judgement for the semantic
    station to judge from again), whether it holds on its own: the signature, the digest, and the
    evidence of the tool calls ``entries`` hold."""
    if not isinstance(judgement, Mapping):
        return SignedCheck(SignedFault.KEY, "not a JSON object")
    named = [] if verdict is None else names_failures(judgement, verdict)
    if named:
        return SignedCheck(SignedFault.KEY, named[0].removeprefix("judgement: "))
    failures = judgement_failures(judgement, verdict, entries, trusted, every_item=False)
    if failures:
        signed = trusted is not None and trusted.verify_judgement(judgement) is not None
        fault = SignedFault.SIGNATURE if signed else SignedFault.CONTENT
        return SignedCheck(fault, failures[0].removeprefix("judgement: "))
    return _HOLDS


def judgement_for(
    verdict: Verdict,
    judgements: Iterable[JudgementEvent],
    trusted: TrustedKeys | None,
    entries: Sequence[LedgerEntry] = (),
) -> JudgementEvent | None:
    """The judgement to show beside ``verdict`` or put in its receipt: of those that hold
    (:func:`check_judgement`), the original — its ``event_id`` has its verdict's coordinates, as the
    station writes both from one draft record — then the least by its signed message; never chosen by
    ``event_id`` alone or ``origin`` (not signed: a copy may carry any). None when none holds."""
    snapshot = verdict.get("evidence_snapshot") or []
    cited = {item.get("tool_call_id") for item in snapshot if isinstance(item, Mapping)}
    entries = [e for e in entries if isinstance(e, Mapping) and e.get("tool_call_id") in cited]  # its own
    held = [j for j in judgements if check_judgement(j, verdict, trusted, entries).holds]
    if not held:
        return None
    return min(held, key=lambda j: (not _judged_at(j, verdict), _judgement_identity(j)))


def _judged_at(judgement: JudgementEvent, verdict: Verdict) -> bool:
    """Whether a judgement's ``event_id`` has its verdict's coordinates (``semantic:<coordinates>``
    beside ``guard:<coordinates>``, SPEC 4.4): the original, not a copy under another ``event_id``."""
    return _same_coordinates(judgement.get("event_id"), verdict.get("event_id"))


def _same_coordinates(event_id: object, other: object) -> bool:
    """Whether two event ids name one record's coordinates (``<station>:<coordinates>``)."""
    if not isinstance(event_id, str) or not isinstance(other, str):
        return False
    return ":" in event_id and event_id.split(":", 1)[1] == other.split(":", 1)[-1]


def _judgement_identity(judgement: JudgementEvent) -> bytes:
    """What makes two judgements the same: the signed message (an unsigned shape: its whole JSON)."""
    try:
        return judgement_message(judgement)
    except FieldTypeError:
        return b"unsigned-shape:" + _sorted_json(judgement)


def _sorted_json(doc: Mapping[str, Any]) -> bytes:
    try:
        return codec.dumps_sorted(dict(doc))
    except codec.JSONEncodeError:
        return repr(sorted(doc.items(), key=lambda kv: str(kv[0]))).encode()


def report_identity(event: ReportEvent) -> bytes:
    """What makes two ``reports`` events the same report: the signed message (SPEC 4.3: its ids, the
    verdict's event id, the draft's hash and the report's JSON), never ``event_id``, ``origin`` or
    ``source_timestamp`` (not signed, so a copy may carry any). An event whose signed fields have the
    wrong types has no message; it is identified by its whole JSON (it verifies under no key)."""
    try:
        return report_message(event)
    except FieldTypeError:
        return b"unsigned-shape:" + _sorted_json(event)


def report_triple(event: ReportEvent) -> tuple[str, str, int] | None:
    """``(run_id, draft_id, attempt)``: the draft a report publishes, of which there is one report; None
    when the event names no such draft (a FALLBACK of a draft whose ids could not be read)."""
    run_id, draft_id, attempt = event.get("run_id"), event.get("draft_id"), event.get("attempt")
    if isinstance(run_id, str) and isinstance(draft_id, str) and type(attempt) is int:
        return (run_id, draft_id, attempt)
    return None


@dataclass(frozen=True, slots=True)
class Published:
    """The reports a reader may show, and why the others were dropped (one phrase each)."""

    reports: list[ReportEvent]
    refused: list[str]
    """Reports that do not hold (:func:`check_report`): never shown."""
    repeats: int = 0
    """Copies of a kept report (the same signed fields), whatever their ``event_id``."""
    conflicts: int = 0
    """Other reports of a ``(run_id, draft_id, attempt)`` already kept: the first one owns it."""


def distinct_reports(
    events: Iterable[ReportEvent], trusted: TrustedKeys | None, *, run_id: str | None = None
) -> Published:
    """The reports a reader may show, in the order given (the topic's, or the store's): those that hold
    (:func:`check_report`), each once by its signed fields (:func:`report_identity`), and one per
    ``(run_id, draft_id, attempt)`` — the first (SPEC 4.3: the first draft judged under a triple owns
    it; a re-sent copy under a new ``event_id`` neither replaces nor repeats it). Of copies of one
    report, the one shown is the original — its ``event_id`` has its verdict's coordinates — wherever
    a copy sorts."""
    kept: list[ReportEvent] = []
    refused: list[str] = []
    seen: dict[bytes, int] = {}
    """Each kept report's identity: its place in ``kept``."""
    lost: set[bytes] = set()
    """The identities of reports not kept because another owns their triple: a copy is a conflict too."""
    owners: set[tuple[str, str, int]] = set()
    repeats = conflicts = 0
    for event in events:
        if not isinstance(event, Mapping):
            refused.append("not a JSON object")
            continue
        held = check_report(event, trusted, run_id=run_id)
        if not held.holds:
            refused.append(held.detail)
            continue
        identity = report_identity(event)
        if identity in seen:
            repeats += 1
            at = seen[identity]
            if _at_its_verdict(event) and not _at_its_verdict(kept[at]):
                kept[at] = event  # the copy came first (its origin is anyone's): show the original
            continue
        triple = report_triple(event)
        if identity in lost or (triple is not None and triple in owners):
            lost.add(identity)
            conflicts += 1
            continue
        if triple is not None:
            owners.add(triple)
        seen[identity] = len(kept)
        kept.append(event)
    return Published(kept, refused, repeats, conflicts)


def _at_its_verdict(event: ReportEvent) -> bool:
    """Whether a report's ``event_id`` has its verdict's coordinates, as the guard writes both from one
    draft record (``publish:<coordinates>`` beside ``guard:<coordinates>``, SPEC 1): the original, not a
    copy re-sent under another ``event_id`` (which is not signed)."""
    return _same_coordinates(event.get("event_id"), event.get("verdict_event_id"))
