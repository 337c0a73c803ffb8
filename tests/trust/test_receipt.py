"""A receipt verifies offline under trusted keys, and fails on any change to what it proves (SPEC 4.1)."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streams import codec
from streams.cli import main
from streams.trust import RECEIPT_KIND, Signer, TrustedKeys, build_receipt, generate_key_pair, verify_receipt
from tests.trust.support import draft, golden_entries, signed, trust_file, verdicts

# Not covered by any signature (SPEC 3.7, 4.1): where a record came from and when, and the texts that
# explain a violation to people. A receipt proves what was shown and judged, not these.
METADATA = re.compile(
    r"(^verdict\.(event_id|origin|source_timestamp)|\.violations\[\d+\]\.message$"
    r"|^entries\[\d+\]\.(event_id|origin|source_timestamp|written_at|expires_at))"
)


@pytest.fixture(scope="module")
def signers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Signer, Path, Path]]:
    folder = tmp_path_factory.mktemp("keys")
    roles = {"ledger": "ledger", "guard": "guard", "stranger": "ledger"}
    return {name: generate_key_pair(folder, name, role) for name, role in roles.items()}


def receipt_of(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]], draft_id: str
) -> dict[str, Any]:
    ledger, guard = signers["ledger"][0], signers["guard"][0]
    entries = [signed(e, ledger) for e in golden_entries()]
    for entry in entries:  # as the ledger topic carries them
        entry["origin"] = {"topic": "raw-hits", "partition": 1, "offset": 5, "timestamp": 1_700_000_000_000}
        entry["written_at"], entry["expires_at"] = 1_700_000_000_100, 1_700_604_800_100
    (verdict,) = verdicts(tmp_path, entries, [draft(draft_id)], signing_key_file=str(signers["guard"][1]))
    by_call = {e["tool_call_id"]: e for e in entries if e["run_id"] == verdict["run_id"]}
    return build_receipt(
        verdict, by_call, TrustedKeys.from_hex(ledger=[ledger.public_hex], guard=[guard.public_hex])
    )


def trusted(signers: dict[str, tuple[Signer, Path, Path]]) -> TrustedKeys:
    return TrustedKeys.from_hex(
        ledger=[signers["ledger"][0].public_hex], guard=[signers["guard"][0].public_hex]
    )


@pytest.mark.parametrize("draft_id", ["d-pass", "d-cite", "d-struct"])
def test_a_receipt_verifies(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]], draft_id: str
) -> None:
    receipt = receipt_of(tmp_path, signers, draft_id)
    assert receipt["receipt"] == RECEIPT_KIND
    assert list(receipt) == ["receipt", "verdict", "entries", "public_keys"]
    assert [e["tool_call_id"] for e in receipt["entries"]] == [
        s["tool_call_id"] for s in receipt["verdict"]["evidence_snapshot"]
    ]
    assert verify_receipt(receipt, trusted(signers)) == []


def test_a_receipt_needs_trusted_keys_not_the_ones_it_brings(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]]
) -> None:
    receipt = receipt_of(tmp_path, signers, "d-pass")
    assert receipt["public_keys"]  # a convenience for the reader ...
    stranger = signers["stranger"][0].public_hex
    only_stranger = TrustedKeys.from_hex(ledger=[stranger], guard=[stranger])
    failures = verify_receipt(receipt, only_stranger)  # ... that decides nothing
    assert failures and all("not trusted" in line for line in failures)
    assert len(failures) == 1 + len(receipt["entries"])


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from leaves(item, f"{path}.{name}" if path else name)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        if not value:
            return "x"
        swap = "0" if value[-1] != "0" else "1"
        return value[:-1] + swap
    return "x"  # null


def set_leaf(doc: Any, path: str, value: Any) -> None:
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    target = doc
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target[part]
    last = parts[-1]
    if last.startswith("["):
        target[int(last[1:-1])] = value
    else:
        target[last] = value


@pytest.mark.parametrize("draft_id", ["d-pass", "d-cite"])
def test_any_changed_value_it_proves_fails_verification(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]], draft_id: str
) -> None:
    receipt = receipt_of(tmp_path, signers, draft_id)
    keys = trusted(signers)
    undetected = []
    for path, value in leaves(receipt):
        doc = copy.deepcopy(receipt)
        set_leaf(doc, path, changed(value))
        if not verify_receipt(doc, keys):
            undetected.append(path)
    assert undetected and all(METADATA.search(path) for path in undetected), undetected


def test_every_character_of_the_shown_projection_is_bound(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]]
) -> None:
    receipt = receipt_of(tmp_path, signers, "d-pass")
    keys = trusted(signers)
    projection = receipt["entries"][0]["projection"]
    for index in range(0, len(projection), 7):
        doc = copy.deepcopy(receipt)
        char = projection[index]
        doc["entries"][0]["projection"] = (
            projection[:index] + ("_" if char != "_" else "-") + projection[index + 1 :]
        )
        assert verify_receipt(doc, keys), index
    excerpt = receipt["verdict"]["evidence_snapshot"][0]["evidence"][0]["excerpt"]
    doc = copy.deepcopy(receipt)
    doc["verdict"]["evidence_snapshot"][0]["evidence"][0]["excerpt"] = excerpt[:-1] + "!"
    assert any("evidence differs" in line for line in verify_receipt(doc, keys))


def test_entries_must_match_the_snapshot_in_order_and_count(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]]
) -> None:
    receipt = receipt_of(tmp_path, signers, "d-pass")
    keys = trusted(signers)
    swapped = copy.deepcopy(receipt)
    swapped["entries"].reverse()
    assert verify_receipt(swapped, keys)
    dropped = copy.deepcopy(receipt)
    dropped["entries"].pop()
    assert any("entries for" in line for line in verify_receipt(dropped, keys))
    extra = copy.deepcopy(receipt)
    extra["verdict"]["evidence_snapshot"][0]["note"] = "unsigned words"
    assert verify_receipt(extra, keys)


@pytest.mark.parametrize("doc", [None, [], {"receipt": RECEIPT_KIND}, {"receipt": "x", "verdict": {}}])
def test_a_malformed_receipt_fails_without_raising(doc: Any) -> None:
    assert verify_receipt(doc, TrustedKeys.from_hex()) != []


def test_receipt_verify_exit_codes(
    tmp_path: Path, signers: dict[str, tuple[Signer, Path, Path]], capsys: pytest.CaptureFixture[str]
) -> None:
    receipt = receipt_of(tmp_path, signers, "d-cite")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_bytes(codec.dumps(receipt))
    doc = copy.deepcopy(receipt)
    doc["verdict"]["verdict"] = "PASS"
    bad.write_bytes(codec.dumps(doc))
    keys = trust_file(tmp_path, ledger=[signers["ledger"][0]], guard=[signers["guard"][0]])
    assert main(["receipt", "verify", str(good), "--trusted-keys", keys]) == 0
    assert capsys.readouterr().out.startswith("OK receipt of FALLBACK")
    assert main(["receipt", "verify", str(bad), "--trusted-keys", keys]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err and all(line.startswith("FAIL ") for line in err)
    assert any("does not verify" in line for line in err)
    (tmp_path / "not.json").write_text("{")  # a file that is not a receipt: FAIL, exit 1
    assert main(["receipt", "verify", str(tmp_path / "not.json"), "--trusted-keys", keys]) == 1
    assert capsys.readouterr().err.startswith("FAIL receipt: not strict UTF-8 JSON")
    assert main(["receipt", "verify", str(tmp_path / "missing.json"), "--trusted-keys", keys]) == 2
    assert main(["receipt", "verify", str(good)]) == 2
    bare = tmp_path / "bare.keys"  # the old format: a bare key is a configuration error
    bare.write_text(signers["guard"][0].public_hex + "\n")
    assert main(["receipt", "verify", str(good), "--trusted-keys", str(bare)]) == 2
    assert "line 1" in capsys.readouterr().err
