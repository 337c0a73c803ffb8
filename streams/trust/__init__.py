"""Who signed what, and who can check it (SPEC 3.7, 4.1, 4.3).

- :mod:`streams.trust.messages` — the canonical signed messages (netstrings), pure; typed fields.
- :mod:`streams.trust.keys` — Ed25519 keys: :class:`Signer` (a private key), :class:`TrustedKeys`
  (public keys by role, ``ledger`` or ``guard``, and ``key_id``), loading them once, generating a pair.
- :mod:`streams.trust.integrity` — does it hold? One check per kind: an entry (its key, its hash, then its
  signature), a verdict, a report; and a run's reports each once, by their signed fields.
- :mod:`streams.trust.receipt` — a receipt: the verdict and the entries it rests on, verifiable offline.
"""

from streams.trust.integrity import (
    EntryCheck,
    EntryFault,
    Published,
    SignedCheck,
    SignedFault,
    check_entry,
    check_report,
    check_verdict,
    distinct_reports,
    report_identity,
)
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
    "Published",
    "Role",
    "SignedCheck",
    "SignedFault",
    "Signer",
    "TrustedKeys",
    "build_receipt",
    "check_entry",
    "check_report",
    "check_verdict",
    "distinct_reports",
    "entry_message",
    "generate_key_pair",
    "key_id_of",
    "load_signer",
    "load_trusted_keys",
    "netstrings",
    "report_identity",
    "signer_for",
    "trusted_for",
    "verdict_message",
    "verify_receipt",
]
