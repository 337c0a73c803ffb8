"""``keys generate`` and ``receipt verify``: signing keys, and checking a receipt offline (SPEC 3.7, 4.1).

``receipt verify`` needs no Kafka, Redis or database: the receipt file and the trusted public keys
are all it reads. Exit 0 when the receipt verifies; 1 with one line per failure on stderr when not;
2 when a file cannot be read or is not JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from streams import codec
from streams.errors import ConfigurationError
from streams.trust import generate_key_pair, verify_receipt
from streams.trust.keys import load_trusted_keys

_MAX_RECEIPT_BYTES = 256 * 1024 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``keys``."""
    keys = sub.add_parser("keys", help="make Ed25519 signing keys", description="Signing keys (SPEC 3.7).")
    keys_sub = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    generate = keys_sub.add_parser(
        "generate",
        help="write a new key pair: DIR/NAME.key (private, mode 0600) and DIR/NAME.pub",
        description="Write DIR/NAME.key (PEM PKCS#8 private key, mode 0600, for EC_SIGNING_KEY_FILE) and "
        "DIR/NAME.pub (the public key as 64 hex digits: a trusted keys file for EC_TRUSTED_KEYS_FILE). "
        "Existing files are never overwritten; the private key is never printed.",
    )
    generate.add_argument("directory", metavar="DIR")
    generate.add_argument("--name", default="signing", help="file name stem (default: signing)")
    generate.set_defaults(handler=run_keys_generate)


def run_keys_generate(args: argparse.Namespace) -> int:
    """Write a key pair and say where, with its key_id."""
    name: str = args.name
    if not name or "/" in name or name.startswith("."):
        raise ConfigurationError(f"--name {name!r}: use a plain file name stem, e.g. ledger")
    signer, private_path, public_path = generate_key_pair(args.directory, name)
    print(f"key_id {signer.key_id}")
    print(f"private key: {private_path} (mode 0600; set EC_SIGNING_KEY_FILE to it)")
    print(f"public key:  {public_path} (a trusted keys file; append it to EC_TRUSTED_KEYS_FILE's)")
    return 0


def run_receipt_verify(path: str, trusted_keys: str) -> int:
    """Check one receipt file against the trusted keys; see the module docstring for exit codes."""
    trusted = load_trusted_keys(trusted_keys)
    file = Path(path)
    try:
        if file.stat().st_size > _MAX_RECEIPT_BYTES:
            raise ConfigurationError(f"{path}: over {_MAX_RECEIPT_BYTES:,} bytes; not a receipt")
        data = file.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"cannot read the receipt {path!r}: {exc.strerror}") from None
    try:
        doc = codec.loads_unique(data)
    except codec.JSONDecodeError as exc:
        raise ConfigurationError(f"{path}: not a JSON receipt ({str(exc)[:120]})") from None
    failures = verify_receipt(doc, trusted)
    if failures:
        for line in failures:
            print(f"FAIL {line}", file=sys.stderr)
        return 1
    verdict = doc["verdict"]
    print(
        f"OK receipt of {verdict.get('verdict')} for run {verdict.get('run_id')} draft "
        f"{verdict.get('draft_id')} attempt {verdict.get('attempt')}: the verdict and "
        f"{len(doc['entries'])} entries verify"
    )
    return 0
