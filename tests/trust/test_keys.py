"""Key files: generated 0600 and never printed, read strictly (role-named lines, SPEC 3.7), and a
worker's own key must be trusted in the role of what it signs."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from streams.cli import main
from streams.errors import ConfigurationError
from streams.trust import TrustedKeys, generate_key_pair
from streams.trust.keys import (
    load_signer,
    load_trusted_keys,
    parse_trusted_keys,
    roles_signed_by,
    signer_for,
    signing_status,
    trusted_for,
)


def test_generate_writes_a_private_key_only_its_owner_reads_and_a_trusted_keys_file(tmp_path: Path) -> None:
    signer, private, public = generate_key_pair(tmp_path / "keys", "ledger", "ledger")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert load_signer(private).key_id == signer.key_id
    trusted = load_trusted_keys(public)
    assert signer.key_id in trusted.ledger and signer.key_id not in trusted.guard
    assert signer.key_id in public.read_text()
    assert f"ledger {signer.public_hex}" in public.read_text().splitlines()


def test_generate_never_overwrites(tmp_path: Path) -> None:
    generate_key_pair(tmp_path, "k", "guard")
    before = (tmp_path / "k.key").read_bytes()
    with pytest.raises(ConfigurationError, match="refusing to overwrite"):
        generate_key_pair(tmp_path, "k", "guard")
    assert (tmp_path / "k.key").read_bytes() == before


def test_keys_generate_prints_paths_and_key_id_never_the_private_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "generate", str(tmp_path), "--role", "guard"]) == 0
    out = capsys.readouterr()
    pem = (tmp_path / "guard.key").read_text()
    secret_lines = [line for line in pem.splitlines() if not line.startswith("-----")]
    assert secret_lines and not any(line in out.out + out.err for line in secret_lines)
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    raw_seed = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    ).hex()
    assert raw_seed not in out.out + out.err
    assert load_signer(tmp_path / "guard.key").key_id in out.out
    assert load_trusted_keys(tmp_path / "guard.pub").guard  # the .pub names its role
    assert main(["keys", "generate", str(tmp_path), "--role", "guard"]) == 2  # exists: refused


def test_keys_generate_needs_a_role(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["keys", "generate", str(tmp_path), "--name", "x"])
    assert "--role" in capsys.readouterr().err
    assert main(["keys", "generate", str(tmp_path), "--role", "ledger", "--name", "chain"]) == 0
    assert load_trusted_keys(tmp_path / "chain.pub").ledger


def test_a_hex_seed_signing_key_is_accepted(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    seed = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    (tmp_path / "seed").write_text(seed.hex() + "\n")
    assert load_signer(tmp_path / "seed").sign(b"m") == key.sign(b"m").hex()


@pytest.mark.parametrize("content", [b"", b"not a key", b"-----BEGIN PRIVATE KEY-----\nAAAA\n", b"\xff" * 40])
def test_a_bad_signing_key_file_is_a_configuration_error_that_quotes_nothing(
    tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "bad.key"
    path.write_bytes(content)
    with pytest.raises(ConfigurationError) as caught:
        load_signer(path)
    assert "not an unencrypted Ed25519 private key" in str(caught.value)
    if content.strip():
        assert content.decode("latin-1").strip() not in str(caught.value)


def test_a_missing_key_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the signing key file"):
        load_signer(tmp_path / "nope")
    with pytest.raises(ConfigurationError, match="cannot read the trusted keys file"):
        load_trusted_keys(tmp_path / "nope")


def _raw_keys(count: int) -> list[str]:
    keys = (Ed25519PrivateKey.generate().public_key() for _ in range(count))
    return [k.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex() for k in keys]


def test_trusted_keys_file_takes_roles_comments_blank_lines_and_several_keys() -> None:
    raw = _raw_keys(3)
    text = f"# rotation\n\nledger {raw[0]}  # old\nledger\t\t{raw[1].upper()}\nguard \t {raw[2]}\r\n"
    trusted = parse_trusted_keys(text)
    assert len(trusted.keys) == 3
    expected = TrustedKeys.from_hex(ledger=raw[:2], guard=raw[2:])
    assert trusted.ledger.keys() == expected.ledger.keys() and len(trusted.ledger) == 2
    assert trusted.guard.keys() == expected.guard.keys() and len(trusted.guard) == 1


@pytest.mark.parametrize(
    "line",
    [
        "abc",
        "ledger " + "zz" * 32,
        "guard " + "ab" * 33,
        "ledger " + "ab" * 32 + " cd",
        "LEDGER " + "ab" * 32,
    ],
)
def test_a_bad_trusted_key_line_names_its_line(line: str) -> None:
    with pytest.raises(ConfigurationError, match="line 2"):
        parse_trusted_keys(f"# keys\n{line}\n")


@pytest.mark.parametrize("role", ["ledger", "guard", "reader", "ledger,guard", ""])
def test_a_line_without_a_known_role_names_its_line_and_quotes_nothing(role: str) -> None:
    key = _raw_keys(1)[0]
    with pytest.raises(ConfigurationError, match="line 3") as caught:
        parse_trusted_keys(f"# keys\nledger {_raw_keys(1)[0]}\n{role}{':' if role else ''}{key}\n")
    assert key not in str(caught.value)


def test_a_bare_key_line_is_refused_with_how_to_fix_it() -> None:
    """SPEC 3.7: a bare key (the old format) is a configuration error naming the line."""
    raw = _raw_keys(2)
    with pytest.raises(ConfigurationError, match="line 2") as caught:
        parse_trusted_keys(f"ledger {raw[0]}\n{raw[1]}\n")
    assert "`ledger <key>`" in str(caught.value) and "`guard <key>`" in str(caught.value)


def test_an_empty_trusted_keys_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("# nothing yet\n")
    with pytest.raises(ConfigurationError, match="holds no key"):
        load_trusted_keys(tmp_path / "t")


def test_a_process_whose_own_key_is_not_trusted_refuses_to_start(tmp_path: Path) -> None:
    _, own, _ = generate_key_pair(tmp_path, "own", "ledger")
    _, _, other = generate_key_pair(tmp_path, "other", "ledger")
    with pytest.raises(ConfigurationError, match="is not in EC_TRUSTED_KEYS_FILE"):
        signing_status(str(own), str(other))
    (tmp_path / "both.pub").write_text((tmp_path / "own.pub").read_text() + other.read_text())
    assert "signing ledger entries and verdicts with key" in signing_status(
        str(own), str(tmp_path / "both.pub")
    )
    assert signing_status(None, None).startswith("unsigned")


def test_a_signing_key_must_be_trusted_in_the_role_it_signs_in(tmp_path: Path) -> None:
    """A ledger key cannot run the guard (its verdicts would not verify), nor a guard key the ledger."""
    ledger, ledger_key, ledger_pub = generate_key_pair(tmp_path, "ledger", "ledger")
    guard, guard_key, guard_pub = generate_key_pair(tmp_path, "guard", "guard")
    trusted = tmp_path / "trusted.keys"
    trusted.write_text(ledger_pub.read_text() + guard_pub.read_text())
    assert roles_signed_by(["postprocess", "project", "ledger"]) == ("ledger",)
    assert roles_signed_by(["guard"]) == ("guard",)
    assert signing_status(str(ledger_key), str(trusted), signs=("ledger",))
    assert signing_status(str(guard_key), str(trusted), signs=("guard",))
    with pytest.raises(ConfigurationError, match="does not trust it as a guard key") as caught:
        signing_status(str(ledger_key), str(trusted), signs=("guard",))
    assert f"guard {ledger.public_hex}" in str(caught.value)  # the line to add
    with pytest.raises(ConfigurationError, match="does not trust it as a ledger key"):
        signing_status(str(guard_key), str(trusted), signs=("ledger", "guard"))
    both = tmp_path / "both.keys"  # one process running every agent: its key listed in both roles
    both.write_text(f"ledger {guard.public_hex}\nguard {guard.public_hex}\n")
    assert signing_status(str(guard_key), str(both), signs=("ledger", "guard"))


def test_key_files_are_read_again_when_they_change(tmp_path: Path) -> None:
    first, path, _ = generate_key_pair(tmp_path, "a", "ledger")
    assert signer_for(str(path)) == signer_for(str(path))
    assert signer_for(str(path)).key_id == first.key_id  # type: ignore[union-attr]
    second, _, pub = generate_key_pair(tmp_path, "b", "ledger")
    path.write_bytes((tmp_path / "b.key").read_bytes() + b"\n")
    assert signer_for(str(path)).key_id == second.key_id  # type: ignore[union-attr]
    assert signer_for(None) is None and trusted_for(None) is None
    assert second.key_id in trusted_for(str(pub))  # type: ignore[operator]
