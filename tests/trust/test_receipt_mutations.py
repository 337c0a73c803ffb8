"""``receipt verify`` on receipts someone made to break it (issue 32 items 8, 10): whatever the file holds,
the answer is ``FAIL`` lines and exit 1 — never a traceback — and every value it prints is escaped as
``inspect`` escapes it, so a forged receipt cannot repaint its own FAIL lines.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from streams import codec
from streams.cli import main
from streams.trust import Signer, generate_key_pair
from tests.trust.support import golden_entries, signed, trust_file
from tests.trust.test_receipt import receipt_of

ESCAPE = "\x1b]0;owned\x07\x1b[2J\x1b[32mOK receipt of PASS\x1b[0m\u202e"
Receipt = dict[str, Any]


@pytest.fixture(scope="module")
def signers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Signer, Path, Path]]:
    folder = tmp_path_factory.mktemp("keys")
    roles = {"ledger": "ledger", "guard": "guard", "stranger": "ledger"}
    return {name: generate_key_pair(folder, name, role) for name, role in roles.items()}


@pytest.fixture(scope="module")
def receipt(
    tmp_path_factory: pytest.TempPathFactory, signers: dict[str, tuple[Signer, Path, Path]]
) -> Receipt:
    return receipt_of(tmp_path_factory.mktemp("receipt"), signers, "d-pass")


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory: pytest.TempPathFactory, signers: dict[str, tuple[Signer, Path, Path]]) -> str:
    return trust_file(
        tmp_path_factory.mktemp("trusted"), ledger=[signers["ledger"][0]], guard=[signers["guard"][0]]
    )


@dataclass
class Checker:
    """``receipt verify`` on bytes, with the module's receipt and keys at hand."""

    receipt: Receipt
    ledger: Signer
    guard: Signer
    keys_file: str
    tmp_path: Path
    capsys: pytest.CaptureFixture[str]

    def copy(self) -> Receipt:
        return copy.deepcopy(self.receipt)

    def run(self, data: bytes | Receipt) -> tuple[int, str]:
        path = self.tmp_path / "receipt.json"
        path.write_bytes(data if isinstance(data, bytes) else codec.dumps(data))
        code = main(["receipt", "verify", str(path), "--trusted-keys", self.keys_file])
        out = self.capsys.readouterr()
        return code, out.out + out.err

    def failures(self, data: bytes | Receipt) -> list[str]:
        return failed(*self.run(data))


@pytest.fixture
def check(
    receipt: Receipt,
    signers: dict[str, tuple[Signer, Path, Path]],
    keys_file: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> Checker:
    return Checker(receipt, signers["ledger"][0], signers["guard"][0], keys_file, tmp_path, capsys)


def failed(code: int, printed: str) -> list[str]:
    """The FAIL lines, after checking the answer is exit 1, FAIL lines only, no traceback, no raw control."""
    lines = printed.splitlines()
    assert code == 1, printed[-3000:]
    assert lines and all(line.startswith("FAIL ") for line in lines), printed[-3000:]
    assert "Traceback" not in printed
    assert not any(ch in printed for ch in "\x1b\x07\u202e"), "a control character reached the terminal"
    return lines


def resigned(verdict: dict[str, Any], signer: Signer) -> dict[str, Any]:
    """The verdict signed again (after a change) by ``signer``."""
    plain = {k: v for k, v in verdict.items() if k != "signature"}
    return {**plain, "signature": signer.sign_verdict(plain)}


def _extra(doc: Receipt) -> None:
    doc["entries"].append(copy.deepcopy(doc["entries"][0]))


def _duplicate(doc: Receipt) -> None:
    doc["entries"][1] = copy.deepcopy(doc["entries"][0])


def _odd_key_ids(doc: Receipt) -> None:
    doc["public_keys"] = {"abc": "abc", **doc["public_keys"]}
    doc["entries"][0]["key_id"] = "abc"
    doc["verdict"]["signature"]["key_id"] = "a" * 15


def _unknown_field(doc: Receipt) -> None:
    doc["note"] = {"deep": [1, 2, 3]}


def _attempt_as_text(doc: Receipt) -> None:
    doc["verdict"]["attempt"] = str(doc["verdict"]["attempt"])  # "1" signed like 1 before


def _attempt_as_bool(doc: Receipt) -> None:
    doc["verdict"]["attempt"] = True


MUTATIONS: dict[str, Callable[[Receipt], None]] = {
    "extra entry": _extra,
    "duplicate entry": _duplicate,
    "key ids of odd length": _odd_key_ids,
    "unknown top-level field": _unknown_field,
    "attempt as text": _attempt_as_text,
    "attempt as a boolean": _attempt_as_bool,
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_a_mutated_receipt_fails(name: str, check: Checker) -> None:
    doc = check.copy()
    MUTATIONS[name](doc)
    check.failures(doc)


def test_a_foreign_entry_signed_by_the_ledger_fails(check: Checker) -> None:
    """An honest entry of another run in place of one the verdict cites."""
    doc = check.copy()
    run_id = doc["verdict"]["run_id"]
    foreign = next(e for e in golden_entries() if e["run_id"] != run_id and e["status"] == "READY")
    doc["entries"][0] = signed(foreign, check.ledger)
    assert any("is not the verdict's" in line for line in check.failures(doc))


def test_a_verdict_resigned_with_the_ledger_key_fails(check: Checker) -> None:
    """SPEC 3.7: the ledger key is trusted, but not for verdicts. It passed when one set verified both."""
    doc = check.copy()
    doc["verdict"] = resigned(doc["verdict"], check.ledger)
    key_id = check.ledger.key_id
    assert check.failures(doc) == [
        f"FAIL verdict: signed by key {key_id}, a ledger key, which is not trusted as a guard key"
    ]


def test_an_entry_signed_with_the_guard_key_fails(check: Checker) -> None:
    doc = check.copy()
    entry = {k: v for k, v in doc["entries"][0].items() if k not in ("key_id", "signature")}
    doc["entries"][0] = {**entry, **check.guard.sign_entry(entry)}
    lines = check.failures(doc)
    assert len(lines) == 1 and "a guard key, which is not trusted as a ledger key" in lines[0]


EDITS: dict[str, Callable[[bytes], bytes]] = {
    "non-UTF-8 bytes": lambda text: text.replace(b'"d-pass"', b'"d-\xff\xfepass"', 1),
    "NaN": lambda text: text.replace(b'"attempt":1', b'"attempt":NaN', 1),
    "a huge integer": lambda text: text.replace(b'"attempt":1', b'"attempt":' + b"9" * 40, 1),
    "an integer of 5,000 digits": lambda text: text.replace(b'"attempt":1', b'"attempt":' + b"9" * 5000, 1),
    "a repeated name": lambda text: text.replace(b'"attempt":1', b'"attempt":1,"attempt":1', 1),
    "not JSON at all": lambda text: text[: len(text) // 2],
    "a bare list": lambda text: b"[" + text + b"]",
}


@pytest.mark.parametrize("name", list(EDITS))
def test_bytes_no_receipt_may_hold_fail(name: str, check: Checker) -> None:
    data = codec.dumps(check.receipt)
    assert b'"attempt":1' in data and b'"d-pass"' in data
    changed = EDITS[name](data)
    assert changed != data, name
    check.failures(changed)


@pytest.mark.parametrize("where", ["run_id", "draft_id", "origin"])
def test_a_value_nested_1000_deep_fails_without_recursion(where: str, check: Checker) -> None:
    """orjson reads 1,024 levels and writes about 254; ``str()`` of the value raised RecursionError."""
    doc = check.copy()
    doc["verdict"][where] = "PLACEHOLDER"
    data = codec.dumps(doc).replace(b'"PLACEHOLDER"', b"[" * 1000 + b"]" * 1000, 1)
    assert any("nested more than" in line for line in check.failures(data))


def test_200000_violations_fail_with_a_bounded_answer(check: Checker) -> None:
    doc = check.copy()
    doc["verdict"]["violations"] = [{"code": "CITATION_NOT_FOUND", "path": f"analysis[{i}]", "message": "x"}
                                    for i in range(200_000)]  # fmt: skip
    assert len(check.failures(doc)) <= 51
    many = check.copy()  # as many entries, each failing: at most 50 lines and a count
    many["entries"] = [{"key_id": ESCAPE}] * 200_000
    many["verdict"]["evidence_snapshot"] = [{"tool_call_id": ESCAPE}] * 200_000
    many["verdict"] = resigned(many["verdict"], check.guard)
    lines = check.failures(many)
    assert len(lines) == 51 and lines[-1].startswith("FAIL … and ") and lines[-1].endswith(" more failures")


def test_ids_with_terminal_escapes_are_printed_escaped(check: Checker) -> None:
    """A verified receipt's draft_id (any string of at most 128 characters) and a forged one's ids."""
    doc = check.copy()
    doc["verdict"]["draft_id"] = ESCAPE
    doc["verdict"] = resigned(doc["verdict"], check.guard)
    code, printed = check.run(doc)
    assert code == 0, printed
    assert printed.startswith("OK receipt of PASS") and "\\x1b]0;owned\\x07" in printed
    assert not any(ch in printed for ch in "\x1b\x07\u202e")
    forged = check.copy()
    forged["verdict"]["run_id"] = ESCAPE
    forged["entries"][0]["tool_call_id"] = ESCAPE
    forged["entries"][0]["status"] = ESCAPE
    forged["public_keys"] = {ESCAPE: ESCAPE}
    assert any("\\x1b" in line for line in check.failures(forged))
