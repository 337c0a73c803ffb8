"""The signed messages are the SPEC's bytes; a fixed key signs them to fixed signatures (3.7, 4.1)."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from streams.trust import Signer, TrustedKeys, entry_message, netstrings, verdict_message
from streams.trust.messages import FieldTypeError

# RFC 8032, section 7.1, TEST 1: a published key, so these vectors can be checked with any Ed25519 tool.
RFC8032_SECRET = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
RFC8032_PUBLIC = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"

ENTRY = {
    "run_id": "r1",
    "tool_call_id": "c1",
    "status": "READY",
    "projection_sha256": "ab" * 32,
    "evidence_status": "EVIDENCE_FOUND",
    "failure_reason": None,
}
ENTRY_SIGNATURE = (
    "41aa2f841177b760cc97358a893fc8afaa59670427d7a56c0af2310b5cb2b86e"
    "52d95b0d5e3427d39c83e1244539f07c1e1beeaa24b066ddf9aef4022264ea0c"
)
VERDICT = {
    "run_id": "r1",
    "draft_id": "d-1",
    "draft_sha256": "cd" * 32,
    "attempt": 2,
    "verdict": "REJECT",
    "violation_count": 3,
    "evidence_snapshot": [{"tool_call_id": "c1", "projection_sha256": "ab" * 32}],
    "violations": [{"code": "CITATION_NOT_FOUND", "path": "analysis[0].tool_call_ids[1]"}],
}
VERDICT_SIGNATURE = (
    "206f455ba71daebab9f3414a6f5341596a4de5f6ee6c550c06e62d43f4d9eb8e"
    "12981fddc914fb154f573c66dfec27b7f29e506ca495e4d3a85ec71b5a897308"
)


def rfc_signer() -> Signer:
    return Signer.from_private_key(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(RFC8032_SECRET)))


def test_the_entry_message_is_the_spec_example() -> None:
    assert entry_message(ENTRY) == (
        b"24:evidence-chain/ledger/v1,2:r1,2:c1,5:READY,64:" + b"ab" * 32 + b",14:EVIDENCE_FOUND,0:,"
    )


def test_absent_and_null_fields_are_empty_netstrings() -> None:
    failed = {"run_id": "r1", "tool_call_id": "c1", "status": "FAILED", "failure_reason": "OVERSIZED"}
    assert entry_message(failed) == b"24:evidence-chain/ledger/v1,2:r1,2:c1,6:FAILED,0:,0:,9:OVERSIZED,"


def test_netstring_lengths_count_utf8_bytes() -> None:
    assert netstrings(["é", "运行", ""]) == "2:é,6:运行,0:,".encode()


def test_the_verdict_message_lists_snapshot_and_violations_with_their_counts() -> None:
    assert verdict_message(VERDICT) == (
        b"25:evidence-chain/verdict/v1,2:r1,3:d-1,64:" + b"cd" * 32 + b",1:2,6:REJECT,1:3,"
        b"1:1,2:c1,64:" + b"ab" * 32 + b",1:1,18:CITATION_NOT_FOUND,28:analysis[0].tool_call_ids[1],"
    )


def test_a_null_run_and_draft_sign_as_empty_strings() -> None:
    verdict = dict(VERDICT, run_id=None, draft_id=None, evidence_snapshot=[], violations=[])
    assert verdict_message(verdict).startswith(b"25:evidence-chain/verdict/v1,0:,0:,64:")
    assert verdict_message(verdict).endswith(b",1:0,1:0,")


def test_key_id_is_the_first_16_hex_of_sha256_over_the_raw_public_key() -> None:
    signer = rfc_signer()
    assert signer.public_hex == RFC8032_PUBLIC
    assert signer.key_id == hashlib.sha256(bytes.fromhex(RFC8032_PUBLIC)).hexdigest()[:16]


def test_fixed_vectors_sign_to_fixed_bytes_and_verify() -> None:
    signer = rfc_signer()
    assert signer.sign_entry(ENTRY) == {"key_id": signer.key_id, "signature": ENTRY_SIGNATURE}
    assert signer.sign_verdict(VERDICT) == {"key_id": signer.key_id, "value": VERDICT_SIGNATURE}
    trusted = TrustedKeys.from_hex(ledger=[RFC8032_PUBLIC], guard=[RFC8032_PUBLIC])
    assert trusted.verify_entry({**ENTRY, "key_id": signer.key_id, "signature": ENTRY_SIGNATURE}) is None
    signed = {**VERDICT, "signature": {"key_id": signer.key_id, "value": VERDICT_SIGNATURE}}
    assert trusted.verify_verdict(signed) is None


def test_every_signed_field_matters() -> None:
    trusted = TrustedKeys.from_hex(ledger=[RFC8032_PUBLIC])
    signed = {**ENTRY, "key_id": rfc_signer().key_id, "signature": ENTRY_SIGNATURE}
    for name in ("run_id", "tool_call_id", "status", "projection_sha256", "evidence_status"):
        assert trusted.verify_entry({**signed, name: str(signed[name]) + "x"}) is not None, name
    assert trusted.verify_entry({**signed, "failure_reason": "OVERSIZED"}) is not None
    # a field moved across the boundary of the next one is a different message
    assert trusted.verify_entry({**signed, "run_id": "r1c", "tool_call_id": "1"}) is not None


def test_an_entry_verifies_only_under_a_ledger_key_and_a_verdict_only_under_a_guard_key() -> None:
    """SPEC 3.7: keys have roles; the same signature is refused under a key of the other role."""
    signer = rfc_signer()
    entry = {**ENTRY, "key_id": signer.key_id, "signature": ENTRY_SIGNATURE}
    verdict = {**VERDICT, "signature": {"key_id": signer.key_id, "value": VERDICT_SIGNATURE}}
    as_ledger = TrustedKeys.from_hex(ledger=[RFC8032_PUBLIC])
    as_guard = TrustedKeys.from_hex(guard=[RFC8032_PUBLIC])
    assert as_ledger.verify_entry(entry) is None
    assert as_guard.verify_verdict(verdict) is None
    assert as_ledger.verify_verdict(verdict) == (
        f"signed by key {signer.key_id}, a ledger key, which is not trusted as a guard key"
    )
    assert as_guard.verify_entry(entry) == (
        f"signed by key {signer.key_id}, a guard key, which is not trusted as a ledger key"
    )
    report = {"run_id": "r1", "draft_id": "d-1", "attempt": 1, "verdict": "PASS", "report": {}}
    signed_report = {**report, "signature": signer.sign_report(report)}
    assert as_guard.verify_report(signed_report) is None
    assert as_ledger.verify_report(signed_report) is not None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("attempt", "2"),
        ("attempt", 2.0),
        ("attempt", True),
        ("attempt", None),
        ("violation_count", "3"),
        ("violation_count", 3.0),
        ("run_id", ["r1"]),
        ("run_id", 1),
        ("draft_id", {"d-1": 1}),
        ("verdict", True),
        ("evidence_snapshot", {"tool_call_id": "c1", "projection_sha256": "ab" * 32}),
        ("evidence_snapshot", ["c1"]),
        ("violations", "CITATION_NOT_FOUND"),
    ],
)
def test_a_verdict_field_of_another_type_does_not_verify(name: str, value: object) -> None:
    """SPEC 3.7: signed fields are strings or null, attempt and the counts integers; ``"attempt": "2"``
    wrote the same netstring as ``2`` and verified."""
    signer = rfc_signer()
    trusted = TrustedKeys.from_hex(guard=[RFC8032_PUBLIC])
    signature = {"key_id": signer.key_id, "value": VERDICT_SIGNATURE}
    assert trusted.verify_verdict({**VERDICT, "signature": signature}) is None
    why = trusted.verify_verdict({**VERDICT, name: value, "signature": signature})
    assert why is not None and "does not verify" in why, (name, value)


def test_snapshot_and_violation_items_of_another_type_do_not_verify() -> None:
    signer = rfc_signer()
    trusted = TrustedKeys.from_hex(guard=[RFC8032_PUBLIC])
    signature = {"key_id": signer.key_id, "value": VERDICT_SIGNATURE}
    snapshot = [{"tool_call_id": ["c1"], "projection_sha256": "ab" * 32}]
    assert trusted.verify_verdict({**VERDICT, "evidence_snapshot": snapshot, "signature": signature})
    violations = [{"code": "CITATION_NOT_FOUND", "path": 1}]
    assert trusted.verify_verdict({**VERDICT, "violations": violations, "signature": signature})


@pytest.mark.parametrize("value", [1, True, ["READY"], {"s": "READY"}, 1.5, "READY\ud800"])
def test_an_entry_field_of_another_type_does_not_verify(value: object) -> None:
    signer = rfc_signer()
    trusted = TrustedKeys.from_hex(ledger=[RFC8032_PUBLIC])
    signed = {**ENTRY, "key_id": signer.key_id, "signature": ENTRY_SIGNATURE}
    assert trusted.verify_entry(signed) is None
    why = trusted.verify_entry({**signed, "status": value})
    assert why is not None and "does not verify" in why


def test_a_report_attempt_of_another_type_does_not_verify() -> None:
    signer = rfc_signer()
    trusted = TrustedKeys.from_hex(guard=[RFC8032_PUBLIC])
    report = {"run_id": "r1", "draft_id": "d-1", "attempt": 1, "verdict": "PASS", "report": {}}
    signed = {**report, "signature": signer.sign_report(report)}
    assert trusted.verify_report(signed) is None
    assert trusted.verify_report({**signed, "attempt": "1"}) is not None
    assert trusted.verify_report({**signed, "attempt": True}) is not None


def test_netstrings_refuse_values_that_are_not_strings_integers_or_null() -> None:
    assert netstrings(["ab", 12, None]) == b"2:ab,2:12,0:,"
    for bad in (True, 1.0, ["x"], {"x": 1}):
        with pytest.raises(FieldTypeError):
            netstrings([bad])  # type: ignore[list-item]
    with pytest.raises(FieldTypeError):
        netstrings([10**5000])  # over Python's digits limit: no message, never an exception elsewhere
