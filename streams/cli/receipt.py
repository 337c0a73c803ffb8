"""``receipt``: write a run's receipt, or check one offline (SPEC 4.1).

- ``receipt RUN_ID DRAFT_ID [--attempt N]`` — the verdict and every cited entry as stored, with their
  signatures and the public keys, as one JSON document.
- ``receipt verify FILE --trusted-keys FILE`` — no Kafka, Redis or database (``streams.cli.trust``).
"""

from __future__ import annotations

import argparse

from streams.cli.trust import run_receipt_verify
from streams.errors import ConfigurationError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``receipt``."""
    receipt = sub.add_parser(
        "receipt",
        help="write a verdict's receipt (RUN_ID DRAFT_ID), or check one offline (verify FILE)",
        description="`receipt RUN_ID DRAFT_ID [--attempt N]` writes the receipt of a verdict; "
        "`receipt verify FILE --trusted-keys FILE` checks one with no Kafka, Redis or database "
        "(exit 0 verified, 1 with one line per failure).",
    )
    receipt.add_argument("first", metavar="RUN_ID|verify")
    receipt.add_argument("second", metavar="DRAFT_ID|FILE")
    receipt.add_argument(
        "--attempt", type=int, default=None, help="the draft's attempt (default: the latest)"
    )
    receipt.add_argument(
        "--trusted-keys", metavar="FILE", help="(verify) trusted public keys, one 64-hex key per line"
    )
    receipt.set_defaults(handler=run_receipt)


def run_receipt(args: argparse.Namespace) -> int:
    """Dispatch ``receipt verify`` and ``receipt RUN_ID DRAFT_ID``."""
    if args.first == "verify":
        if not args.trusted_keys:
            raise ConfigurationError(
                "receipt verify needs --trusted-keys FILE (one 64-hex public key per line)"
            )
        return run_receipt_verify(args.second, args.trusted_keys)
    raise ConfigurationError("receipt RUN_ID DRAFT_ID is not built yet")
