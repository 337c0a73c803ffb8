"""``keys generate`` and ``receipt verify``: signing keys, and checking a receipt offline (SPEC 3.7, 4.1).

``receipt verify`` needs no Kafka, Redis or database: the receipt file and the trusted public keys
are all it reads. Exit 0 when the receipt verifies; 1 with one ``FAIL`` line per failure on stderr
when not — whatever the file holds (not JSON, nested too deep, values of the wrong type); 2 when a
file cannot be read or the trusted keys file is unusable. Every value printed is escaped as
``inspect`` escapes it (:func:`streams.cli.display.printable`): a receipt cannot repaint the terminal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streams import codec
from streams.cli.display import printable
from streams.errors import ConfigurationError
from streams.trust import ROLES, generate_key_pair
from streams.trust.keys import load_trusted_keys
from streams.trust.receipt import receipt_failures

_MAX_RECEIPT_BYTES = 256 * 1024 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``keys``."""
    keys = sub.add_parser("keys", help="make Ed25519 signing keys", description="Signing keys (SPEC 3.7).")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    generate = keys_sub.add_parser(
        "generate",
        help="write a new key pair: DIR/NAME.key (private, mode 0600) and DIR/NAME.pub",
        description="Write DIR/NAME.key (PEM PKCS#8 private key, mode 0600, for EC_SIGNING_KEY_FILE) and "
        "DIR/NAME.pub (one line `ROLE <64 hex>`: a trusted keys file for EC_TRUSTED_KEYS_FILE). The role "
        "is what the key may sign: `ledger` entries (the ledger agent's key) or `guard` verdicts and "
        "reports (the guard's key). Existing files are never overwritten; the private key is never printed.",
    )
    generate.add_argument("directory", metavar="DIR")
    generate.add_argument(
        "--role", required=True, choices=ROLES, help="what the key signs: ledger entries, or guard verdicts"
    )
    generate.add_argument("--name", default=None, help="file name stem (default: the role)")
    generate.set_defaults(handler=run_keys_generate)


def run_keys_generate(args: argparse.Namespace) -> int:
    """Write a key pair and say where, with its key_id and role."""
    name: str = args.role if args.name is None else args.name
    if not name or "/" in name or name.startswith("."):
        raise ConfigurationError(f"--name {printable(name)!r}: use a plain file name stem, e.g. ledger")
    signer, private_path, public_path = generate_key_pair(args.directory, name, args.role)
    print(f"key_id {signer.key_id} (role {args.role})")
    print(f"private key: {printable(private_path)} (mode 0600; set EC_SIGNING_KEY_FILE to it)")
    print(
        f"public key:  {printable(public_path)} (a trusted keys file, one `{args.role} <hex>` line; "
        "append it to EC_TRUSTED_KEYS_FILE's)"
    )
    return 0


def run_receipt_verify(path: str, trusted_keys: str) -> int:
    """Check one receipt file against the trusted keys; see the module docstring for exit codes."""
    trusted = load_trusted_keys(trusted_keys)
    file = Path(path)
    try:
        if file.stat().st_size > _MAX_RECEIPT_BYTES:
            raise ConfigurationError(f"{printable(path)}: over {_MAX_RECEIPT_BYTES:,} bytes; not a receipt")
        data = file.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"cannot read the receipt {printable(path)!r}: {exc.strerror}") from None
    failures = receipt_failures(data, trusted)
    if failures:
        for line in failures:
            print(f"FAIL {printable(line)}", file=sys.stderr)
        return 1
    doc = codec.loads(data)  # it verified: an object with a verdict and a list of entries
    verdict = doc["verdict"]
    print(
        f"OK receipt of {printable(verdict.get('verdict'))} for run {printable(verdict.get('run_id'))} "
        f"draft {printable(verdict.get('draft_id'))} attempt {printable(verdict.get('attempt'))}: the "
        f"verdict and {len(doc['entries'])} entries verify"
    )
    judgement = doc.get("judgement")
    if isinstance(judgement, dict):  # it verified: what the semantic judge said, and under which prompt
        print(
            f"  judged by {printable(judgement.get('model'))} under prompt "
            f"{printable(judgement.get('prompt_version'))} ({printable(judgement.get('mode'))}, "
            f"{printable(judgement.get('status'))}; digest {printable(judgement.get('digest'))[:16]}…)"
        )
        for claim in judgement.get("claims") or []:
            evidence = ", ".join(printable(ref) for ref in claim.get("evidence") or []) or "none"
            print(
                f"  {printable(claim.get('path'))}: {printable(claim.get('label'))} (evidence {evidence}) — "
                f"{printable(claim.get('reason'))}"
            )
    return 0
