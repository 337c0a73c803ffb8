"""A receipt (SPEC 4.1) from what the audit store holds: which verdict, which entries, which judgement.

The store keeps every verdict, ledger entry and judgement the sink read from the topics, so a receipt
outlives the Redis ledger. What is handed out holds (SPEC 4.3): with trusted keys only a verdict a trusted
guard key signed is chosen from, and a stored entry that is not its row's key's (SPEC 3.7) counts as
lacking. ``evidence-chain receipt`` writes one (:func:`write_receipt`, with Redis for the entries the store
lacks) and ``serve`` hands one out (:func:`receipt_parts`, :func:`receipt_judgement`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from models.audit import VerdictRow
from models.ledger import LedgerEntry, as_stored
from models.semantic import JudgementEvent
from models.verdict import Verdict
from models.vocab import Station
from streams.audit.factory import store_from_settings
from streams.audit.store import AuditStore, DraftRead
from streams.errors import ConfigurationError, RedisUnavailable, Refused, UnknownVerdict
from streams.printable import printable
from streams.settings import Settings
from streams.trust import EntryFault, TrustedKeys, build_receipt, check_entry, check_verdict, trusted_for
from streams.trust.integrity import judgement_for
from streams.trust.receipt import Receipt, choose_verdict, receipt_keys

OwnerRank = tuple[int, int, int, int, str] | tuple[int]
"""How early a verdict stands for its ``(run_id, draft_id, attempt)``: less is earlier."""


def owner_rank(verdict: Verdict, read: Mapping[str, DraftRead]) -> OwnerRank:
    """Where a verdict stands among the verdicts of its triple (SPEC 4.3: the first draft judged under a
    triple owns it), by nothing a writer of ``verdicts`` controls: the position at which the audit sink
    read, from ``diagnosis-drafts``, the draft whose bytes the verdict's *signed* ``draft_sha256`` names
    — the guard reads a run's drafts in that order (one partition, keyed by run), so it is the order its
    claim followed; a verdict's own ``origin`` and ``event_id`` are not signed, and the ``verdicts``
    topic's order is not the judging order (in enforce mode the semantic station's verdict comes after
    the judge answered). Of verdicts of the same bytes, the one whose ``event_id`` names that position
    (the original, not a copy re-sent under another id) comes first. A verdict whose draft the store does
    not hold comes after every one whose draft it holds (``(1,)``: as stored among themselves)."""
    at = read.get(str(verdict.get("draft_sha256")))
    if at is None:
        return (1,)
    event_id = str(verdict.get("event_id"))
    original = event_id.startswith(f"{Station.GUARD}:{at.topic}:{at.partition}:{at.offset}:")
    return (0, at.partition, at.offset, 0 if original else 1, event_id)


def owners_first(
    rows: Sequence[VerdictRow],
    verdicts: Sequence[Verdict],
    read: Mapping[str, DraftRead],
    trusted: TrustedKeys | None = None,
) -> list[VerdictRow]:
    """The run page's verdict rows with each triple's rows in :func:`owner_rank` order (the verdict of
    each row by its event id, among those that hold), so its first row — the one the page shows as the
    owner, with the receipt link, the others as conflicts — is the verdict :func:`receipt_parts` hands
    out. Rows of other triples keep their places; a row without a stored verdict that holds comes last
    among its triple's."""
    held: dict[str, Verdict] = {}
    for verdict in verdicts:
        if check_verdict(verdict, trusted).holds:
            held.setdefault(str(verdict.get("event_id")), verdict)
    places: dict[tuple[object, object], list[int]] = {}
    for index, row in enumerate(rows):
        places.setdefault((row.get("draft_id"), row.get("attempt")), []).append(index)
    out = list(rows)

    def rank(row: VerdictRow) -> tuple[int, OwnerRank]:
        verdict = held.get(str(row.get("event_id")))
        return (1, (1,)) if verdict is None else (0, owner_rank(verdict, read))

    for indexes in places.values():
        if len(indexes) > 1:
            for index, row in zip(indexes, sorted((rows[i] for i in indexes), key=rank), strict=True):
                out[index] = row
    return out


def receipt_parts(
    store: AuditStore, run_id: str, draft_id: str, attempt: int | None, trusted: TrustedKeys | None = None
) -> tuple[Verdict, dict[str, LedgerEntry], list[str]]:
    """(the verdict, the stored entries by tool call id, the snapshot's tool calls the store lacks).

    With ``trusted`` keys only verdicts a trusted guard key signed are chosen from (SPEC 4.3: nothing
    that fails is handed out); of an attempt's, the owner's (:func:`owner_rank`), never the first by an
    unsigned ``origin``. A stored entry that is not its row's key's (SPEC 3.7) counts as lacking.

    Raises:
        UnknownVerdict: the run or the draft (or its attempt) is unknown to the store.
    """
    stored = store.stored_verdicts(run_id, draft_id)
    verdicts = [v for v in stored if check_verdict(v, trusted).holds]
    if stored and not verdicts:
        raise UnknownVerdict(
            f"draft {printable(draft_id)} of run {printable(run_id)} has stored verdicts, and none is signed "
            "by a trusted guard key (EC_TRUSTED_KEYS_FILE): no receipt is handed out for them"
        )
    if not verdicts and not store.stored_verdicts(run_id):
        tool_calls, guard = store.run_trail(run_id)
        if not tool_calls and not guard:
            raise UnknownVerdict(f"run {printable(run_id)} is unknown to the audit store {store.where}")
    read = store.drafts_read(run_id)
    verdict = choose_verdict(sorted(verdicts, key=lambda v: owner_rank(v, read)), run_id, draft_id, attempt)
    entries = _stored_entries(store, run_id)
    cited = [i.get("tool_call_id") for i in verdict.get("evidence_snapshot") or [] if isinstance(i, dict)]
    missing = [t for t in cited if isinstance(t, str) and t not in entries]  # a stored verdict: as carried
    return verdict, entries, missing


def receipt_judgement(
    store: AuditStore,
    verdict: Verdict,
    trusted: TrustedKeys | None = None,
    entries: Mapping[str, LedgerEntry] | None = None,
) -> JudgementEvent | None:
    """The semantic review's judgement of the verdict's draft (SPEC 4.4), as the audit store holds it:
    the one :func:`streams.trust.integrity.judgement_for` picks — it names the verdict, its digest is
    that of its case, its evidence is what ``entries`` (by tool call; default: the store's) hold, and,
    with ``trusted`` keys, a trusted guard key signed it; of copies, the original whatever their
    ``origin``. None for a draft the review did not judge."""
    run_id, draft_id = verdict.get("run_id"), verdict.get("draft_id")
    if not isinstance(run_id, str) or not isinstance(draft_id, str):
        return None
    if entries is None:
        entries = _stored_entries(store, run_id)
    return judgement_for(verdict, store.stored_judgements(run_id, draft_id), trusted, list(entries.values()))


def _stored_entries(store: AuditStore, run_id: str) -> dict[str, LedgerEntry]:
    """The run's stored entries by tool call id; one that is not its row's key's (SPEC 3.7) is left out."""
    return {
        e.tool_call_id: e.entry
        for e in store.ledger_entries(run_id)
        if check_entry(e.entry, None, (run_id, e.tool_call_id)).fault is not EntryFault.KEY
    }


async def _from_redis(
    settings: Settings, run_id: str, tool_call_ids: Sequence[str]
) -> dict[str, LedgerEntry]:
    from streams.ledger.redis import RedisLedgerStore

    ledger = RedisLedgerStore.from_settings(settings)
    try:
        found = await ledger.read_entries([(run_id, t) for t in tool_call_ids])
    finally:
        await ledger.close()
    return {
        t: as_stored(e)
        for t, e in zip(tool_call_ids, found, strict=True)
        if e is not None and check_entry(e, None, (run_id, t)).fault is not EntryFault.KEY
    }


def write_receipt(settings: Settings, run_id: str, draft_id: str, attempt: int | None) -> Receipt:
    """The receipt of a draft's verdict (SPEC 4.1) from the audit store, and Redis for entries it lacks.

    Raises:
        ConfigurationError: the run, draft or attempt is unknown, or a cited entry is in neither place.
    """
    store = store_from_settings(settings, readonly=True)
    trusted = trusted_for(settings.trusted_keys_file)
    try:
        verdict, entries, missing = receipt_parts(store, run_id, draft_id, attempt, trusted)
        judgement = receipt_judgement(store, verdict, trusted, entries)
    finally:
        store.close()
    if missing:
        try:
            entries |= asyncio.run(_from_redis(settings, run_id, missing))
        except (RedisUnavailable, Refused) as exc:
            raise ConfigurationError(
                f"the audit store lacks the entries of {', '.join(map(printable, missing))} and the Redis "
                f"ledger could not be read ({type(exc).__name__}); run the audit sink, then try again"
            ) from None
        still = [t for t in missing if t not in entries]
        if still:
            raise ConfigurationError(
                f"no ledger entry of {', '.join(map(printable, still))} (run {printable(run_id)}) in the "
                "audit store or in Redis: the receipt would not verify"
            )
    keys = receipt_keys(settings.trusted_keys_file, settings.signing_key_file)
    return build_receipt(verdict, entries, keys, judgement)
