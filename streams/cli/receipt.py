"""``receipt``: write a run's receipt, or check one offline (SPEC 4.1).

- ``receipt RUN_ID DRAFT_ID [--attempt N] [-o FILE]`` — the verdict and every cited entry as stored,
  with their signatures and the public keys, as one JSON document (stdout by default). The verdict and
  the entries come from the audit store (``EC_AUDIT_DSN``, else ``EC_AUDIT_DB``, or ``--db``), which the
  audit sink fills from the ``verdicts`` and ``ledger`` topics; an entry the store lacks is read from the
  Redis ledger when it answers. ``public_keys`` lists the keys of ``EC_TRUSTED_KEYS_FILE`` (and the public
  half of ``EC_SIGNING_KEY_FILE``) that signed something in it; only the reader's trusted keys decide. A
  draft the semantic review judged (SPEC 4.4) gets its judgement too, from the store.
- ``receipt verify FILE --trusted-keys FILE`` — no Kafka, Redis or database (``streams.cli.trust``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from models.ledger import as_stored
from streams import codec
from streams.audit.factory import store_from_settings
from streams.audit.store import AuditStore
from streams.cli.audit import settings_with_db
from streams.cli.display import printable
from streams.cli.trust import run_receipt_verify
from streams.errors import ConfigurationError, RedisUnavailable, Refused, UnknownVerdict
from streams.settings import Settings
from streams.trust import (
    EntryFault,
    TrustedKeys,
    build_receipt,
    check_entry,
    check_verdict,
    signer_for,
    trusted_for,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``receipt``."""
    receipt = sub.add_parser(
        "receipt",
        help="write a verdict's receipt (RUN_ID DRAFT_ID), or check one offline (verify FILE)",
        description="`receipt RUN_ID DRAFT_ID [--attempt N] [-o FILE]` writes the receipt of a verdict "
        "from the audit store (entries it lacks from Redis); `receipt verify FILE --trusted-keys FILE` "
        "checks one with no Kafka, Redis or database (exit 0 verified, 1 with one line per failure).",
    )
    receipt.add_argument("first", metavar="RUN_ID|verify")
    receipt.add_argument("second", metavar="DRAFT_ID|FILE")
    receipt.add_argument(
        "--attempt", type=int, default=None, help="the draft's attempt (default: the latest)"
    )
    receipt.add_argument("-o", "--output", metavar="FILE", help="write the receipt here (default: stdout)")
    receipt.add_argument(
        "--db",
        metavar="PATH|DSN",
        help="the audit database: SQLite file or postgresql:// DSN (default: EC_AUDIT_DSN, else EC_AUDIT_DB)",
    )
    receipt.add_argument(
        "--trusted-keys",
        metavar="FILE",
        help="(verify) trusted public keys, one `ledger <64 hex>` or `guard <64 hex>` line per key",
    )
    receipt.set_defaults(handler=run_receipt)


def run_receipt(args: argparse.Namespace) -> int:
    """Dispatch ``receipt verify`` and ``receipt RUN_ID DRAFT_ID``."""
    if args.first == "verify":
        if not args.trusted_keys:
            raise ConfigurationError(
                "receipt verify needs --trusted-keys FILE (one `ledger <64 hex>` or `guard <64 hex>` line "
                "per key: the verdict verifies only under a guard key, the entries only under ledger keys)"
            )
        return run_receipt_verify(args.second, args.trusted_keys)
    if args.attempt is not None and args.attempt < 1:
        raise ConfigurationError(f"--attempt must be at least 1, not {args.attempt}")
    settings = settings_with_db(args.db)
    doc = write_receipt(settings, args.first, args.second, args.attempt)
    data = codec.dumps(doc) + b"\n"
    if args.output:
        _write_file(Path(args.output), data)
        verdict = doc["verdict"]
        print(
            f"receipt of {verdict.get('verdict')} for run {printable(args.first)} draft "
            f"{printable(args.second)} attempt {verdict.get('attempt')}: {len(doc['entries'])} entries, "
            f"{len(doc['public_keys'])} public keys → {printable(args.output)}",
            file=sys.stderr,
        )
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def _write_file(path: Path, data: bytes) -> None:
    """Write ``data`` whole or not at all (a temporary file renamed into place)."""
    try:
        with tempfile.NamedTemporaryFile(
            dir=path.parent or ".", prefix=f".{path.name}.", delete=False
        ) as out:
            out.write(data)
        os.replace(out.name, path)
    except OSError as exc:
        raise ConfigurationError(f"cannot write the receipt to {printable(path)}: {exc.strerror}") from None


def receipt_keys(settings: Settings) -> TrustedKeys | None:
    """The public keys a receipt may name: ``EC_TRUSTED_KEYS_FILE``'s and the signing key's public half."""
    trusted = trusted_for(settings.trusted_keys_file)
    signer = signer_for(settings.signing_key_file)
    if signer is None:
        return trusted
    # public_keys only lists keys for the reader's convenience: the role does not matter here
    mine = TrustedKeys.from_hex(ledger=[signer.public_hex])
    return mine if trusted is None else trusted.merged(mine)


def choose_verdict(
    verdicts: Sequence[Mapping[str, Any]], run_id: str, draft_id: str, attempt: int | None
) -> Mapping[str, Any]:
    """The verdict of ``attempt`` (default: the latest) among a draft's stored verdicts, oldest first;
    of several for one attempt, the first: a draft is write-once per ``(run_id, draft_id, attempt)``
    where people read it, so a later, different draft with that triple never replaces it.

    Raises:
        UnknownVerdict: no verdict of that draft, or none of that attempt (the message lists them).
    """
    if not verdicts:
        raise UnknownVerdict(
            f"run {printable(run_id)} has no stored verdict of draft {printable(draft_id)} in the audit store"
        )
    attempts = sorted({v["attempt"] for v in verdicts if isinstance(v.get("attempt"), int)})
    wanted = attempt if attempt is not None else max(attempts, default=None)
    chosen = [v for v in verdicts if v.get("attempt") == wanted]
    if not chosen:
        raise UnknownVerdict(
            f"draft {printable(draft_id)} of run {printable(run_id)} has no attempt {attempt}; "
            f"stored attempts: {', '.join(map(str, attempts)) or 'none'}"
        )
    return chosen[0]


def receipt_parts(
    store: AuditStore, run_id: str, draft_id: str, attempt: int | None, trusted: TrustedKeys | None = None
) -> tuple[Mapping[str, Any], dict[str, dict[str, Any]], list[str]]:
    """(the verdict, the stored entries by tool call id, the snapshot's tool calls the store lacks).

    With ``trusted`` keys only verdicts a trusted guard key signed are chosen from (SPEC 4.3: nothing
    that fails is handed out); a stored entry that is not its row's key's (SPEC 3.7) counts as lacking.

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
    verdict = choose_verdict(verdicts, run_id, draft_id, attempt)
    entries = {
        e.tool_call_id: e.entry
        for e in store.ledger_entries(run_id)
        if check_entry(e.entry, None, (run_id, e.tool_call_id)).fault is not EntryFault.KEY
    }
    cited = [i.get("tool_call_id") for i in verdict.get("evidence_snapshot") or [] if isinstance(i, dict)]
    missing = [t for t in cited if isinstance(t, str) and t not in entries]
    return verdict, entries, missing


def receipt_judgement(
    store: AuditStore, verdict: Mapping[str, Any], trusted: TrustedKeys | None = None
) -> dict[str, Any] | None:
    """The semantic review's judgement of the verdict's draft (SPEC 4.4), as the audit store holds it:
    the first whose ``verdict_event_id`` and ``draft_sha256`` are the verdict's (and, with ``trusted``
    keys, that a trusted guard key signed); None for a draft the review did not judge."""
    run_id, draft_id = verdict.get("run_id"), verdict.get("draft_id")
    if not isinstance(run_id, str) or not isinstance(draft_id, str):
        return None
    for judgement in store.stored_judgements(run_id, draft_id):
        if (
            judgement.get("verdict_event_id") == verdict.get("event_id")
            and judgement.get("draft_sha256") == verdict.get("draft_sha256")
            and (trusted is None or trusted.verify_judgement(judgement) is None)
        ):
            return judgement
    return None


async def _from_redis(
    settings: Settings, run_id: str, tool_call_ids: Sequence[str]
) -> dict[str, dict[str, Any]]:
    from streams.ledger.redis import RedisLedgerStore

    ledger = RedisLedgerStore.from_settings(settings)
    try:
        found = await ledger.read_entries([(run_id, t) for t in tool_call_ids])
    finally:
        await ledger.close()
    return {
        t: dict(as_stored(e))
        for t, e in zip(tool_call_ids, found, strict=True)
        if e is not None and check_entry(e, None, (run_id, t)).fault is not EntryFault.KEY
    }


def write_receipt(settings: Settings, run_id: str, draft_id: str, attempt: int | None) -> dict[str, Any]:
    """The receipt of a draft's verdict (SPEC 4.1) from the audit store, and Redis for entries it lacks.

    Raises:
        ConfigurationError: the run, draft or attempt is unknown, or a cited entry is in neither place.
    """
    store = store_from_settings(settings, readonly=True)
    trusted = trusted_for(settings.trusted_keys_file)
    try:
        verdict, entries, missing = receipt_parts(store, run_id, draft_id, attempt, trusted)
        judgement = receipt_judgement(store, verdict, trusted)
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
    return build_receipt(verdict, entries, receipt_keys(settings), judgement)
