"""Does this ledger entry hold? The one answer (SPEC 3.6, 3.7), pure, used wherever an entry is read:
the guard's re-read (C), the client and so the gateway and any tool server, ``receipt verify``, the
audit pages, and the ledger station before it writes.

An entry holds when its projection hashes to its ``projection_sha256`` and — with trusted keys — its
signature verifies under a trusted **ledger** key; the hash is checked first.

The hash is SHA-256 over the projection's UTF-8 bytes, strictly. The projection the ledger stores is
the canonical JSON text orjson writes, always valid UTF-8, so a string that cannot be encoded as UTF-8
(a lone surrogate: only a forger's or a lossy reader's string holds one) has no such bytes and does not
hold. Encoding it with ``surrogatepass`` instead would hash bytes that are not UTF-8 and that no writer
of the ledger produces: a second, looser answer to the same question. Bytes (a file or memory ledger
read without decoding) are hashed as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from streams.hashing import sha256_hex
from streams.trust.keys import TrustedKeys


class EntryFault(StrEnum):
    """Why an entry does not hold."""

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


def check_entry(entry: Mapping[str, Any], trusted: TrustedKeys | None) -> EntryCheck:
    """Whether a stored entry holds: its projection's hash first, then (with ``trusted``) its signature.

    A FAILED entry holds no projection: only its signature is checked (its status and reason are signed).
    """
    projection = entry.get("projection")
    data: bytes | None = None
    if projection is not None or entry.get("status") == "READY":
        if not isinstance(projection, str | bytes):
            return EntryCheck(EntryFault.NO_PROJECTION, "the entry holds no projection text")
        data = projection_bytes(projection)
        if data is None:
            return EntryCheck(
                EntryFault.HASH, "the projection is not UTF-8 text, so it has no SHA-256 to match"
            )
        if sha256_hex(data) != entry.get("projection_sha256"):
            return EntryCheck(EntryFault.HASH, "the projection's SHA-256 differs from the stored one")
    if trusted is not None:
        why = trusted.verify_entry(entry)
        if why is not None:
            return EntryCheck(EntryFault.SIGNATURE, f"the entry's signature: {why}", data)
    return EntryCheck(None, "", data)
