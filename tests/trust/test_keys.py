"""Key files: generated 0600 and never printed, read strictly, and a worker's own key must be trusted."""

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
    signer_for,
    signing_status,
    trusted_for,
)


def test_generate_writes_a_private_key_only_its_owner_reads_and_a_trusted_keys_file(tmp_path: Path) -> None:
    signer, private, public = generate_key_pair(tmp_path / "keys", "ledger")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert load_signer(private).key_id == signer.key_id
    trusted = load_trusted_keys(public)
    assert signer.key_id in trusted
    assert signer.key_id in public.read_text()


def test_generate_never_overwrites(tmp_path: Path) -> None:
    generate_key_pair(tmp_path, "k")
    before = (tmp_path / "k.key").read_bytes()
    with pytest.raises(ConfigurationError, match="refusing to overwrite"):
        generate_key_pair(tmp_path, "k")
    assert (tmp_path / "k.key").read_bytes() == before


def test_keys_generate_prints_paths_and_key_id_never_the_private_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "generate", str(tmp_path), "--name", "guard"]) == 0
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
    assert main(["keys", "generate", str(tmp_path), "--name", "guard"]) == 2  # exists: refused


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


def test_trusted_keys_file_takes_comments_blank_lines_and_several_keys() -> None:
    a, b = (Ed25519PrivateKey.generate().public_key() for _ in range(2))
    raw = [k.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex() for k in (a, b)]
    trusted = parse_trusted_keys(f"# rotation\n\n{raw[0]}  # old\n{raw[1].upper()}\n")
    assert len(trusted.keys) == 2
    assert TrustedKeys.from_hex(raw).keys.keys() == trusted.keys.keys()


@pytest.mark.parametrize("line", ["abc", "zz" * 32, "ab" * 33, "ab" * 32 + " cd"])
def test_a_bad_trusted_key_line_names_its_line(line: str) -> None:
    with pytest.raises(ConfigurationError, match="line 2"):
        parse_trusted_keys(f"# keys\n{line}\n")


def test_an_empty_trusted_keys_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("# nothing yet\n")
    with pytest.raises(ConfigurationError, match="holds no key"):
        load_trusted_keys(tmp_path / "t")


def test_a_process_whose_own_key_is_not_trusted_refuses_to_start(tmp_path: Path) -> None:
    _, own, _ = generate_key_pair(tmp_path, "own")
    _, _, other = generate_key_pair(tmp_path, "other")
    with pytest.raises(ConfigurationError, match="is not in EC_TRUSTED_KEYS_FILE"):
        signing_status(str(own), str(other))
    (tmp_path / "both.pub").write_text((tmp_path / "own.pub").read_text() + other.read_text())
    assert "signing ledger entries and verdicts with key" in signing_status(
        str(own), str(tmp_path / "both.pub")
    )
    assert signing_status(None, None).startswith("unsigned")


def test_key_files_are_read_again_when_they_change(tmp_path: Path) -> None:
    first, path, _ = generate_key_pair(tmp_path, "a")
    assert signer_for(str(path)) == signer_for(str(path))
    assert signer_for(str(path)).key_id == first.key_id  # type: ignore[union-attr]
    second, _, pub = generate_key_pair(tmp_path, "b")
    path.write_bytes((tmp_path / "b.key").read_bytes() + b"\n")
    assert signer_for(str(path)).key_id == second.key_id  # type: ignore[union-attr]
    assert signer_for(None) is None and trusted_for(None) is None
    assert second.key_id in trusted_for(str(pub))  # type: ignore[operator]
