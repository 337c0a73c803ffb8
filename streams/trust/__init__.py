"""Who signed what, and who can check it (SPEC 3.7, 4.1, 4.3).

- :mod:`streams.trust.messages` — the canonical signed messages (netstrings), pure; typed fields.
- :mod:`streams.trust.keys` — Ed25519 keys: :class:`Signer` (a private key), :class:`TrustedKeys`
  (public keys by role, ``ledger`` or ``guard``, and ``key_id``), loading them once, generating a pair.
- :mod:`streams.trust.integrity` — does a ledger entry hold? (hash, then signature): the one check.
- :mod:`streams.trust.receipt` — a receipt: the verdict and the entries it rests on, verifiable offline.
"""

from streams.trust.integrity import EntryCheck, EntryFault, check_entry
from streams.trust.keys import (
    ROLES,
    Role,
    Signer,
    TrustedKeys,
    generate_key_pair,
    key_id_of,
    load_signer,
    load_trusted_keys,
    signer_for,
    trusted_for,
)
from streams.trust.messages import entry_message, netstrings, verdict_message
from streams.trust.receipt import RECEIPT_KIND, build_receipt, verify_receipt

__all__ = [
    "RECEIPT_KIND",
    "ROLES",
    "EntryCheck",
    "EntryFault",
    "Role",
    "Signer",
    "TrustedKeys",
    "build_receipt",
    "check_entry",
    "entry_message",
    "generate_key_pair",
    "key_id_of",
    "load_signer",
    "load_trusted_keys",
    "netstrings",
    "signer_for",
    "trusted_for",
    "verdict_message",
    "verify_receipt",
]
