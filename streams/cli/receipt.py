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
import os
import sys
import tempfile
from pathlib import Path

from streams import codec
from streams.audit.receipts import write_receipt
from streams.cli.audit import settings_with_db
from streams.cli.display import printable
from streams.cli.trust import run_receipt_verify
from streams.errors import ConfigurationError


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
