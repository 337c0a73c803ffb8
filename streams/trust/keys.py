"""Ed25519 keys: a :class:`Signer` holds a private key, :class:`TrustedKeys` the public keys a reader accepts.

- ``key_id``: the first 16 lowercase hex digits of SHA-256 over the 32-byte raw public key (SPEC 3.7).
- A signature: 128 lowercase hex digits (the 64-byte Ed25519 signature).
- The signing key file (``EC_SIGNING_KEY_FILE``): a PEM PKCS#8 private key, as ``evidence-chain keys
  generate`` and ``openssl genpkey -algorithm ed25519`` write it, or the 32-byte seed as 64 hex digits.
- The trusted keys file (``EC_TRUSTED_KEYS_FILE``): one public key per line, 64 hex digits of the raw
  key; ``#`` starts a comment; blank lines are ignored.

Ed25519 is deterministic: the same message under the same key always signs to the same bytes, so a
re-delivered record produces byte-identical output.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from streams.errors import ConfigurationError
from streams.hashing import sha256_hex
from streams.trust.messages import entry_message, verdict_message

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")


def key_id_of(public_raw: bytes) -> str:
    """The ``key_id`` of a 32-byte raw public key."""
    return sha256_hex(public_raw)[:16]


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


@dataclass(frozen=True)
class Signer:
    """A private signing key and its ``key_id``."""

    private_key: Ed25519PrivateKey = field(repr=False)
    key_id: str
    public_hex: str

    @classmethod
    def from_private_key(cls, key: Ed25519PrivateKey) -> Signer:
        raw = _raw_public(key.public_key())
        return cls(key, key_id_of(raw), raw.hex())

    def sign(self, message: bytes) -> str:
        """The signature of ``message``: 128 lowercase hex digits."""
        return self.private_key.sign(message).hex()

    def sign_entry(self, entry: Mapping[str, Any]) -> dict[str, str]:
        """``{"key_id", "signature"}`` for a ledger entry (SPEC 3.7)."""
        return {"key_id": self.key_id, "signature": self.sign(entry_message(entry))}

    def sign_verdict(self, verdict: Mapping[str, Any]) -> dict[str, str]:
        """The verdict's ``signature`` field value, ``{"key_id", "value"}`` (SPEC 4.1)."""
        return {"key_id": self.key_id, "value": self.sign(verdict_message(verdict))}


@dataclass(frozen=True)
class TrustedKeys:
    """The public keys a reader accepts, by ``key_id`` (several at once: rotation)."""

    keys: Mapping[str, Ed25519PublicKey] = field(repr=False)

    @classmethod
    def from_hex(cls, keys: Iterable[str]) -> TrustedKeys:
        """Trusted keys from 64-hex raw public keys.

        Raises:
            ValueError: a key is not 64 hex digits of a valid Ed25519 public key.
        """
        out: dict[str, Ed25519PublicKey] = {}
        for text in keys:
            if not _HEX64.fullmatch(text):
                raise ValueError("a public key must be 64 hex digits (the raw 32-byte Ed25519 key)")
            raw = bytes.fromhex(text)
            out[key_id_of(raw)] = Ed25519PublicKey.from_public_bytes(raw)
        return cls(out)

    def __contains__(self, key_id: object) -> bool:
        return key_id in self.keys

    def public_hex(self, key_id: str) -> str | None:
        """The raw public key of a trusted ``key_id`` as hex, or None."""
        key = self.keys.get(key_id)
        return None if key is None else _raw_public(key).hex()

    def verify(self, key_id: Any, signature: Any, message: bytes) -> str | None:
        """None when ``signature`` by ``key_id`` verifies over ``message``; else why not (one phrase)."""
        if key_id is None and signature is None:
            return "unsigned"
        if not isinstance(key_id, str) or not isinstance(signature, str):
            return "key_id and signature must both be present and strings"
        key = self.keys.get(key_id)
        if key is None:
            shown = key_id if _KEY_ID.fullmatch(key_id) else repr(key_id[:20])
            return f"signed by key {shown}, which is not trusted"
        if not _SIGNATURE.fullmatch(signature):
            return "the signature is not 128 lowercase hex digits"
        try:
            key.verify(bytes.fromhex(signature), message)
        except InvalidSignature:
            return f"the signature by key {key_id} does not verify"
        return None

    def verify_entry(self, entry: Mapping[str, Any]) -> str | None:
        """None when a ledger entry's signature verifies over its stored fields (SPEC 3.7)."""
        return self.verify(entry.get("key_id"), entry.get("signature"), entry_message(entry))

    def verify_verdict(self, verdict: Mapping[str, Any]) -> str | None:
        """None when a verdict's ``signature`` verifies (SPEC 4.1)."""
        signature = verdict.get("signature")
        if signature is None:
            return "unsigned"
        if not isinstance(signature, Mapping):
            return "signature must be an object {key_id, value}"
        return self.verify(signature.get("key_id"), signature.get("value"), verdict_message(verdict))


def parse_trusted_keys(text: str, *, source: str = "trusted keys") -> TrustedKeys:
    """Parse a trusted keys file's text.

    Raises:
        ConfigurationError: a line is not a key; the message names the line, never its content beyond
            what is needed.
    """
    keys: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        try:
            TrustedKeys.from_hex([body])
        except ValueError as exc:
            raise ConfigurationError(f"{source}, line {number}: {exc}") from None
        keys.append(body)
    return TrustedKeys.from_hex(keys)


def load_trusted_keys(path: str | os.PathLike[str]) -> TrustedKeys:
    """Read a trusted keys file (``EC_TRUSTED_KEYS_FILE``).

    Raises:
        ConfigurationError: the file cannot be read, a line is not a key, or it holds no key.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"cannot read the trusted keys file {os.fspath(path)!r}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    trusted = parse_trusted_keys(text, source=f"trusted keys file {os.fspath(path)!r}")
    if not trusted.keys:
        raise ConfigurationError(
            f"the trusted keys file {os.fspath(path)!r} holds no key: one 64-hex public key per line"
        )
    return trusted


def load_signer(path: str | os.PathLike[str]) -> Signer:
    """Read a signing key file (``EC_SIGNING_KEY_FILE``): PEM PKCS#8 Ed25519, or a 64-hex seed.

    Raises:
        ConfigurationError: unreadable, or not an Ed25519 private key. The key is never quoted.
    """
    shown = os.fspath(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"cannot read the signing key file {shown!r}: {exc.strerror}") from None
    stripped = data.strip()
    key: Any
    try:
        if _HEX64.fullmatch(stripped.decode("ascii", "replace")):
            key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(stripped.decode("ascii")))
        else:
            key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, Ed25519PrivateKey):
        raise ConfigurationError(
            f"the signing key file {shown!r} is not an unencrypted Ed25519 private key "
            "(PEM PKCS#8, as `evidence-chain keys generate` writes it)"
        )
    return Signer.from_private_key(key)


@functools.lru_cache(maxsize=8)
def _cached_signer(path: str, stamp: tuple[int, int]) -> Signer:
    return load_signer(path)


@functools.lru_cache(maxsize=8)
def _cached_trusted(path: str, stamp: tuple[int, int]) -> TrustedKeys:
    return load_trusted_keys(path)


def _stamp(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0)  # the loader says what is wrong
    return (st.st_mtime_ns, st.st_size)


def signer_for(path: str | None) -> Signer | None:
    """The signer of a settings' ``signing_key_file`` (read once per file version), or None (unsigned)."""
    return None if not path else _cached_signer(path, _stamp(path))


def trusted_for(path: str | None) -> TrustedKeys | None:
    """The trusted keys of a settings' ``trusted_keys_file`` (read once per file version), or None."""
    return None if not path else _cached_trusted(path, _stamp(path))


def generate_key_pair(directory: str | os.PathLike[str], name: str) -> tuple[Signer, Path, Path]:
    """Write ``<name>.key`` (PEM PKCS#8, mode 0600) and ``<name>.pub`` (a trusted keys file) in ``directory``.

    Raises:
        ConfigurationError: a file already exists (never overwritten) or cannot be written.
    """
    folder = Path(directory)
    private_path, public_path = folder / f"{name}.key", folder / f"{name}.pub"
    for path in (private_path, public_path):
        if path.exists():
            raise ConfigurationError(f"{path} already exists; refusing to overwrite a key (remove it first)")
    signer = Signer.from_private_key(Ed25519PrivateKey.generate())
    pem = signer.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
        os.chmod(private_path, 0o600)  # whatever the umask
        public_path.write_text(
            f"# evidence-chain public key {name}, key_id {signer.key_id}\n{signer.public_hex}\n",
            encoding="utf-8",
        )
    except OSError as exc:
        raise ConfigurationError(f"cannot write the key pair in {folder}: {exc.strerror}") from None
    return signer, private_path, public_path


def signing_status(signing_key_file: str | None, trusted_keys_file: str | None) -> str:
    """One line for the log at start: what this process signs with and which keys it trusts.

    Raises:
        ConfigurationError: a key file is unusable, or the signing key is not among the trusted keys
            (this process's own entries and verdicts would not verify): the process must not start.
    """
    signer, trusted = signer_for(signing_key_file), trusted_for(trusted_keys_file)
    if signer is not None and trusted is not None and signer.key_id not in trusted:
        raise ConfigurationError(
            f"the signing key {signer.key_id} (EC_SIGNING_KEY_FILE) is not in EC_TRUSTED_KEYS_FILE: "
            "add its .pub line there, or its own entries and verdicts would not verify"
        )
    signing = (
        f"signing ledger entries and verdicts with key {signer.key_id}"
        if signer is not None
        else "unsigned: ledger entries and verdicts carry no signature (set EC_SIGNING_KEY_FILE to sign)"
    )
    checking = (
        f"trusting keys {', '.join(sorted(trusted.keys))}"
        if trusted is not None
        else "not checking entry signatures (set EC_TRUSTED_KEYS_FILE to check them)"
    )
    return f"{signing}; {checking}"
