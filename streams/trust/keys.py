"""Ed25519 keys: a :class:`Signer` holds a private key, :class:`TrustedKeys` the public keys a reader accepts.

- ``key_id``: the first 16 lowercase hex digits of SHA-256 over the 32-byte raw public key (SPEC 3.7).
- A signature: 128 lowercase hex digits (the 64-byte Ed25519 signature).
- The signing key file (``EC_SIGNING_KEY_FILE``): a PEM PKCS#8 private key, as ``evidence-chain keys
  generate`` and ``openssl genpkey -algorithm ed25519`` write it, or the 32-byte seed as 64 hex digits.
- The trusted keys file (``EC_TRUSTED_KEYS_FILE``): one key per line, its role, one or more spaces or
  tabs, and 64 hex digits of the raw public key — ``ledger <hex>`` or ``guard <hex>``; ``#`` starts a
  comment; blank lines are ignored; anything else (a bare key included) is a configuration error.

Keys have roles (SPEC 3.7): an entry verifies only under a trusted **ledger** key, a verdict (4.1) and
a report (4.3) only under a trusted **guard** key — so the process that parses py-rag's input cannot
mint a verdict, and the guard cannot mint evidence.

Load once at start: :func:`load_signer` and :func:`load_trusted_keys` read and check a file and raise
:class:`ConfigurationError` when it is unusable; :func:`require_trusted_signer` refuses a signing key
the trusted keys do not hold in the role it signs for.

Ed25519 is deterministic: the same message under the same key always signs to the same bytes, so a
re-delivered record produces byte-identical output.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from models.ledger import LedgerEntry
from models.semantic import JudgementEvent, SemanticReviewEvent
from models.verdict import ReportEvent, Verdict, VerdictSignature
from streams.errors import ConfigurationError
from streams.hashing import sha256_hex
from streams.trust.messages import (
    FieldTypeError,
    entry_message,
    handover_message,
    judgement_message,
    report_message,
    verdict_message,
)

Role = Literal["ledger", "guard"]
"""What a key may sign: ``ledger`` entries (SPEC 3.7), or ``guard`` verdicts and reports (4.1, 4.3)."""

ROLES: tuple[Role, ...] = ("ledger", "guard")

_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_SIGNATURE = re.compile(r"[0-9a-f]{128}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")
_LINE = re.compile(r"(?P<role>\S+)[ \t]+(?P<key>\S+)")
_SIGNS: dict[Role, str] = {"ledger": "ledger entries", "guard": "verdicts and reports"}


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

    def trusted_line(self, role: Role) -> str:
        """This key's line in a trusted keys file: ``<role> <64 hex>``."""
        return f"{role} {self.public_hex}"

    def sign_entry(self, entry: LedgerEntry) -> dict[str, str]:
        """``{"key_id", "signature"}`` for a ledger entry (SPEC 3.7)."""
        return {"key_id": self.key_id, "signature": self.sign(entry_message(entry))}

    def sign_verdict(self, verdict: Verdict) -> VerdictSignature:
        """The verdict's ``signature`` field value, ``{"key_id", "value"}`` (SPEC 4.1)."""
        return {"key_id": self.key_id, "value": self.sign(verdict_message(verdict))}

    def sign_report(self, event: ReportEvent) -> VerdictSignature:
        """A ``reports`` event's ``signature`` field value, ``{"key_id", "value"}`` (SPEC 4.3)."""
        return {"key_id": self.key_id, "value": self.sign(report_message(event))}

    def sign_judgement(self, event: JudgementEvent) -> VerdictSignature:
        """A ``judgements`` event's ``signature`` field value, ``{"key_id", "value"}`` (SPEC 4.4)."""
        return {"key_id": self.key_id, "value": self.sign(judgement_message(event))}

    def sign_handover(self, event: SemanticReviewEvent) -> VerdictSignature:
        """A ``semantic-review`` hand-over's ``signature`` field value, ``{"key_id", "value"}`` (SPEC 4.4):
        under its own message, so it never verifies as a verdict."""
        return {"key_id": self.key_id, "value": self.sign(handover_message(event))}


def _public_keys(keys: Iterable[str]) -> dict[str, Ed25519PublicKey]:
    out: dict[str, Ed25519PublicKey] = {}
    for text in keys:
        if not _HEX64.fullmatch(text):
            raise ValueError("a public key must be 64 hex digits (the raw 32-byte Ed25519 key)")
        raw = bytes.fromhex(text)
        out[key_id_of(raw)] = Ed25519PublicKey.from_public_bytes(raw)
    return out


@dataclass(frozen=True)
class TrustedKeys:
    """The public keys a reader accepts, by role and ``key_id`` (several per role at once: rotation)."""

    ledger: Mapping[str, Ed25519PublicKey] = field(default_factory=dict, repr=False)
    guard: Mapping[str, Ed25519PublicKey] = field(default_factory=dict, repr=False)

    @classmethod
    def from_hex(cls, *, ledger: Iterable[str] = (), guard: Iterable[str] = ()) -> TrustedKeys:
        """Trusted keys from 64-hex raw public keys, by role.

        Raises:
            ValueError: a key is not 64 hex digits of a valid Ed25519 public key.
        """
        return cls(_public_keys(ledger), _public_keys(guard))

    def role(self, role: Role) -> Mapping[str, Ed25519PublicKey]:
        """The keys trusted in ``role``, by ``key_id``."""
        return self.ledger if role == "ledger" else self.guard

    @property
    def keys(self) -> Mapping[str, Ed25519PublicKey]:
        """Every trusted key, whatever its role, by ``key_id`` (to list them; never to verify)."""
        return {**self.ledger, **self.guard}

    def roles_of(self, key_id: object) -> tuple[Role, ...]:
        """The roles ``key_id`` is trusted in (none, one, or both when a file lists it twice)."""
        return tuple(role for role in ROLES if key_id in self.role(role))

    def __contains__(self, key_id: object) -> bool:
        return bool(self.roles_of(key_id))

    def merged(self, other: TrustedKeys) -> TrustedKeys:
        """These keys and ``other``'s, role by role."""
        return TrustedKeys({**self.ledger, **other.ledger}, {**self.guard, **other.guard})

    def public_hex(self, key_id: str) -> str | None:
        """The raw public key of a trusted ``key_id`` (any role) as hex, or None."""
        key = self.keys.get(key_id)
        return None if key is None else _raw_public(key).hex()

    def verify(self, role: Role, key_id: Any, signature: Any, message: Callable[[], bytes]) -> str | None:
        """None when ``signature`` by ``key_id``, a trusted ``role`` key, verifies over ``message()``;
        else why not (one phrase, printable: it quotes nothing but a well-formed ``key_id``)."""
        if key_id is None and signature is None:
            return "unsigned"
        if not isinstance(key_id, str) or not isinstance(signature, str):
            return "key_id and signature must both be present and strings"
        shown = key_id if _KEY_ID.fullmatch(key_id) else "(not a key_id: 16 lowercase hex digits)"
        key = self.role(role).get(key_id)
        if key is None:
            others = [r for r in self.roles_of(key_id) if r != role]
            if others:
                return f"signed by key {shown}, a {others[0]} key, which is not trusted as a {role} key"
            return f"signed by key {shown}, which is not trusted as a {role} key"
        if not _SIGNATURE.fullmatch(signature):
            return "the signature is not 128 lowercase hex digits"
        try:
            signed = message()
        except FieldTypeError as exc:
            return f"the signature by key {shown} does not verify: {exc}"
        try:
            key.verify(bytes.fromhex(signature), signed)
        except InvalidSignature:
            return f"the signature by key {shown} does not verify"
        return None

    def verify_entry(self, entry: LedgerEntry) -> str | None:
        """None when a ledger entry's signature verifies under a trusted ledger key (SPEC 3.7)."""
        return self.verify(
            "ledger", entry.get("key_id"), entry.get("signature"), lambda: entry_message(entry)
        )

    def verify_verdict(self, verdict: Verdict) -> str | None:
        """None when a verdict's ``signature`` verifies under a trusted guard key (SPEC 4.1)."""
        return self._verify_object("guard", verdict.get("signature"), lambda: verdict_message(verdict))

    def verify_report(self, event: ReportEvent) -> str | None:
        """None when a ``reports`` event's ``signature`` verifies under a trusted guard key (SPEC 4.3)."""
        return self._verify_object("guard", event.get("signature"), lambda: report_message(event))

    def verify_judgement(self, event: JudgementEvent) -> str | None:
        """None when a ``judgements`` event's ``signature`` verifies under a trusted guard key (SPEC 4.4)."""
        return self._verify_object("guard", event.get("signature"), lambda: judgement_message(event))

    def verify_handover(self, event: SemanticReviewEvent) -> str | None:
        """None when a ``semantic-review`` hand-over's ``signature`` verifies under a trusted guard key
        (SPEC 4.4)."""
        return self._verify_object("guard", event.get("signature"), lambda: handover_message(event))

    def _verify_object(self, role: Role, signature: Any, message: Callable[[], bytes]) -> str | None:
        """A ``{"key_id", "value"}`` signature field (verdicts, reports)."""
        if signature is None:
            return "unsigned"
        if not isinstance(signature, Mapping):
            return "signature must be an object {key_id, value}"
        return self.verify(role, signature.get("key_id"), signature.get("value"), message)


def parse_trusted_keys(text: str, *, source: str = "trusted keys") -> TrustedKeys:
    """Parse a trusted keys file's text: ``<role> <64 hex>`` lines (SPEC 3.7).

    Raises:
        ConfigurationError: a line is not a role and a key; the message names the line number and
            what to write instead, never the line's content.
    """
    keys: dict[Role, list[str]] = {role: [] for role in ROLES}
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip(" \t\r")
        if not body:
            continue
        where = f"{source}, line {number}"
        if _HEX64.fullmatch(body):
            raise ConfigurationError(
                f"{where}: a key without its role; write `ledger <key>` for a key that signs ledger "
                "entries or `guard <key>` for one that signs verdicts and reports (SPEC 3.7)"
            )
        found = _LINE.fullmatch(body)
        if found is None:
            raise ConfigurationError(f"{where}: not `<role> <key>` (`ledger <64 hex>` or `guard <64 hex>`)")
        role, key = found["role"], found["key"]
        if role not in ROLES:
            raise ConfigurationError(f"{where}: the role must be `ledger` or `guard` (lowercase)")
        try:
            _public_keys([key])
        except ValueError as exc:
            raise ConfigurationError(f"{where}: {exc}") from None
        keys[role].append(key)
    return TrustedKeys.from_hex(ledger=keys["ledger"], guard=keys["guard"])


def load_trusted_keys(path: str | os.PathLike[str]) -> TrustedKeys:
    """Read a trusted keys file (``EC_TRUSTED_KEYS_FILE``) once; keep the value, do not read it again.

    Raises:
        ConfigurationError: the file cannot be read, a line is not a role and a key, or it holds no key.
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
            f"the trusted keys file {os.fspath(path)!r} holds no key: one `ledger <64 hex>` or "
            "`guard <64 hex>` line per key"
        )
    return trusted


def load_signer(path: str | os.PathLike[str]) -> Signer:
    """Read a signing key file (``EC_SIGNING_KEY_FILE``) once: PEM PKCS#8 Ed25519, or a 64-hex seed.

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
    """The signer of a settings' ``signing_key_file`` (read once per file version), or None (unsigned).

    Prefer :func:`load_signer` once at start: this re-reads a file that changed.
    """
    return None if not path else _cached_signer(path, _stamp(path))


def trusted_for(path: str | None) -> TrustedKeys | None:
    """The trusted keys of a settings' ``trusted_keys_file`` (read once per file version), or None.

    Prefer :func:`load_trusted_keys` once at start: this re-reads a file that changed.
    """
    return None if not path else _cached_trusted(path, _stamp(path))


def own_and_trusted(signer: Signer | None, trusted: TrustedKeys | None, role: Role) -> TrustedKeys | None:
    """The keys a station that signs in ``role`` accepts its input from: the trusted keys and its own
    public key in ``role``; None when it has neither (nothing is signed, nothing checked)."""
    if signer is None:
        return trusted
    mine = TrustedKeys.from_hex(**{role: [signer.public_hex]})
    return mine if trusted is None else trusted.merged(mine)


def roles_signed_by(stations: Iterable[str]) -> tuple[Role, ...]:
    """The roles a process running ``stations`` signs in: ``ledger`` for the ledger agent, ``guard`` for
    the guard (its verdicts and reports) and the semantic review (the verdicts and judgements it signs with
    the guard's key, SPEC 4.4)."""
    running = {str(station) for station in stations}
    if "semantic" in running:
        running.add("guard")
    return tuple(role for role in ROLES if role in running)


def require_trusted_signer(signer: Signer, trusted: TrustedKeys, roles: Iterable[Role]) -> None:
    """Refuse a signing key the trusted keys do not hold in a role it signs for here.

    Raises:
        ConfigurationError: the process's own entries (ledger) or verdicts and reports (guard) would
            not verify; the message gives the line to add.
    """
    for role in roles:
        if signer.key_id not in trusted.role(role):
            raise ConfigurationError(
                f"the signing key {signer.key_id} (EC_SIGNING_KEY_FILE) signs {_SIGNS[role]} here, but "
                f"EC_TRUSTED_KEYS_FILE does not trust it as a {role} key: add the line "
                f"`{signer.trusted_line(role)}` there (its .pub file), or what it signs would not verify"
            )


def generate_key_pair(directory: str | os.PathLike[str], name: str, role: Role) -> tuple[Signer, Path, Path]:
    """Write ``<name>.key`` (PEM PKCS#8, mode 0600) and ``<name>.pub`` (a trusted keys file with one
    ``<role> <hex>`` line) in ``directory``.

    Raises:
        ConfigurationError: a file already exists (never overwritten) or cannot be written.
    """
    if role not in ROLES:
        raise ConfigurationError(f"the role must be `ledger` or `guard`, not {role!r}")
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
            f"# evidence-chain public key {name}, key_id {signer.key_id}\n{signer.trusted_line(role)}\n",
            encoding="utf-8",
        )
    except OSError as exc:
        raise ConfigurationError(f"cannot write the key pair in {folder}: {exc.strerror}") from None
    return signer, private_path, public_path


def signing_status(
    signing_key_file: str | None, trusted_keys_file: str | None, *, signs: Iterable[Role] | None = None
) -> str:
    """One line for the log at start: what this process signs with and which keys it trusts.

    ``signs``: the roles this process signs in (:func:`roles_signed_by` of its agents); None when it
    cannot tell, and then the signing key must be trusted in some role.

    Raises:
        ConfigurationError: a key file is unusable, or the signing key is not trusted in a role it
            signs for (this process's own entries, verdicts or reports would not verify): the process
            must not start.
    """
    signer, trusted = signer_for(signing_key_file), trusted_for(trusted_keys_file)
    roles = None if signs is None else tuple(signs)
    if signer is not None and trusted is not None:
        if roles is None:
            if signer.key_id not in trusted:
                raise ConfigurationError(
                    f"the signing key {signer.key_id} (EC_SIGNING_KEY_FILE) is not in EC_TRUSTED_KEYS_FILE: "
                    f"add its .pub line there (`ledger {signer.public_hex}` or `guard …`), or what it "
                    "signs would not verify"
                )
        else:
            require_trusted_signer(signer, trusted, roles)
    what = " and ".join(_SIGNS[role] for role in roles or ())
    signing = (
        f"signing {what or 'ledger entries and verdicts'} with key {signer.key_id}"
        if signer is not None
        else "unsigned: ledger entries and verdicts carry no signature (set EC_SIGNING_KEY_FILE to sign)"
    )
    checking = (
        "trusting "
        + "; ".join(f"{role} keys {', '.join(sorted(trusted.role(role))) or 'none'}" for role in ROLES)
        if trusted is not None
        else "not checking entry signatures (set EC_TRUSTED_KEYS_FILE to check them)"
    )
    return f"{signing}; {checking}"
