"""Who signed what, and who can check it (SPEC 3.7, 4.1).

- :mod:`streams.trust.messages` — the canonical signed messages (netstrings), pure.
- :mod:`streams.trust.keys` — Ed25519 keys: :class:`Signer` (a private key), :class:`TrustedKeys`
  (public keys by ``key_id``), loading from the settings' files, generating a pair.
- :mod:`streams.trust.receipt` — a receipt: the verdict and the entries it rests on, verifiable offline.
"""

from streams.trust.keys import Signer, TrustedKeys, generate_key_pair, key_id_of, signer_for, trusted_for
from streams.trust.messages import entry_message, netstrings, verdict_message
from streams.trust.receipt import RECEIPT_KIND, build_receipt, verify_receipt

__all__ = [
    "RECEIPT_KIND",
    "Signer",
    "TrustedKeys",
    "build_receipt",
    "entry_message",
    "generate_key_pair",
    "key_id_of",
    "netstrings",
    "signer_for",
    "trusted_for",
    "verdict_message",
    "verify_receipt",
]
