"""The ledger signs entries deterministically; with trusted keys the guard accepts only what verifies.

Run through the very code ``verify --ledger`` and the agents run (``streams.pipeline``), on the golden
ledger signed here with keys made for the test.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from models.vocab import LedgerOutcome, Station
from streams import codec
from streams.hashing import sha256_hex
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import PendingWrite, StationRules, ledger_event, run_station
from streams.settings import Settings
from streams.trust import Signer, TrustedKeys, generate_key_pair
from tests.golden import GOLDEN
from tests.trust.support import draft, drafts, golden_entries, signed, trust_file, verdicts


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Signer, Path, Path]]:
    folder = tmp_path_factory.mktemp("keys")
    return {name: generate_key_pair(folder, name, "ledger") for name in ("old", "new", "stranger")}


def codes(verdict: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v["code"], v["path"]) for v in verdict["violations"]]


def expected() -> list[dict[str, Any]]:
    lines = (GOLDEN / "guard" / "expected_verdicts.jsonl").read_bytes().splitlines()
    return [codec.loads(line) for line in lines if line]


def judged(tmp_path: Path, entries: list[dict[str, Any]], *trusted: Signer) -> dict[str, Any]:
    """The verdict on the golden draft ``d-pass`` over ``entries``, signatures checked against the
    ``trusted`` signers' keys (none: not checked)."""
    keys = {"trusted_keys_file": trust_file(tmp_path, ledger=trusted)} if trusted else {}
    (verdict,) = verdicts(tmp_path, entries, [draft("d-pass")], **keys)
    return verdict


def signed_golden(signer: Signer) -> list[dict[str, Any]]:
    return [signed(e, signer) for e in golden_entries()]


def test_a_signed_ledger_under_trusted_keys_judges_every_golden_draft_as_unsigned_did(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    old = keys["old"][0]
    got = verdicts(
        tmp_path,
        signed_golden(old),
        drafts(),
        trusted_keys_file=trust_file(tmp_path, ledger=[old]),
    )
    assert [(v["verdict"], codes(v)) for v in got] == [(v["verdict"], codes(v)) for v in expected()]


def test_unsigned_entries_under_trusted_keys_are_tampered(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    verdict = judged(tmp_path, golden_entries(), keys["old"][0])
    assert verdict["verdict"] == "REJECT"
    assert {code for code, _ in codes(verdict)} == {"LEDGER_PAYLOAD_TAMPERED"}
    assert all("unsigned" in v["message"] for v in verdict["violations"])
    assert verdict["evidence_snapshot"] == []


def test_an_untrusted_signer_is_tampered(tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]) -> None:
    verdict = judged(tmp_path, signed_golden(keys["stranger"][0]), keys["old"][0])
    assert {code for code, _ in codes(verdict)} == {"LEDGER_PAYLOAD_TAMPERED"}
    assert all("not trusted" in v["message"] for v in verdict["violations"])


def test_entries_signed_by_a_guard_key_are_tampered(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    """SPEC 3.7: the guard's key cannot mint evidence. One trusted set used to verify both, so a draft
    citing entries signed with the guard key passed."""
    guard = keys["new"][0]
    entries = signed_golden(guard)
    as_guard = trust_file(tmp_path, guard=[guard])  # trusted, but as a guard key
    (verdict,) = verdicts(tmp_path, entries, [draft("d-pass")], trusted_keys_file=as_guard)
    assert verdict["verdict"] == "REJECT"
    assert {code for code, _ in codes(verdict)} == {"LEDGER_PAYLOAD_TAMPERED"}
    assert all("not trusted as a ledger key" in v["message"] for v in verdict["violations"])
    assert judged(tmp_path, entries, guard)["verdict"] == "PASS"  # the same entries under it as a ledger key


def test_a_forged_projection_with_a_recomputed_hash_is_tampered(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    old = keys["old"][0]
    entries = signed_golden(old)
    x1 = next(e for e in entries if e["tool_call_id"] == "call_x1")
    forged = x1["projection"].replace('"excerpt":"', '"excerpt":"FORGED ', 1)
    assert forged != x1["projection"]
    x1["projection"], x1["projection_sha256"] = forged, sha256_hex(forged.encode())
    verdict = judged(tmp_path, entries, old)
    assert verdict["verdict"] == "REJECT"
    tampered = [v for v in verdict["violations"] if v["code"] == "LEDGER_PAYLOAD_TAMPERED"]
    assert tampered and all("does not verify" in v["message"] for v in tampered)
    assert all("call_x1" in v["message"] for v in tampered)
    # without trusted keys the same forgery passes: exactly the hole signatures close
    assert judged(tmp_path, entries)["verdict"] == "PASS"


def test_a_changed_index_field_breaks_the_signature(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    old = keys["old"][0]
    entries = signed_golden(old)
    x2 = next(e for e in entries if e["tool_call_id"] == "call_x2")
    x2["evidence_status"] = "EVIDENCE_FOUND"  # the projection still says NO_EVIDENCE; the hash still holds
    # The kind is judged on the projection, so nothing else notices.
    assert judged(tmp_path, entries)["verdict"] == "PASS"
    verdict = judged(tmp_path, entries, old)
    tampered = [v for v in verdict["violations"] if v["code"] == "LEDGER_PAYLOAD_TAMPERED"]
    assert tampered and all("call_x2" in v["message"] for v in tampered)


def test_rotation_old_entries_keep_verifying_under_the_old_key(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    old, new = keys["old"][0], keys["new"][0]
    entries = [signed(e, old if e["tool_call_id"] == "call_x1" else new) for e in golden_entries()]
    assert judged(tmp_path, entries, old, new)["verdict"] == "PASS"
    only_new = judged(tmp_path, entries, new)
    assert {code for code, _ in codes(only_new)} == {"LEDGER_PAYLOAD_TAMPERED"}
    assert all("call_x1" in v["message"] for v in only_new["violations"])


def test_verdicts_are_signed_last_and_verify(
    tmp_path: Path, keys: dict[str, tuple[Signer, Path, Path]]
) -> None:
    signer, private, _ = keys["new"]
    got = verdicts(tmp_path, golden_entries(), drafts(), signing_key_file=str(private))
    trusted = TrustedKeys.from_hex(guard=[signer.public_hex])
    for verdict in got:
        assert list(verdict)[-1] == "signature"
        assert verdict["signature"]["key_id"] == signer.key_id
        assert trusted.verify_verdict(verdict) is None
        assert trusted.verify_verdict({**verdict, "attempt": verdict["attempt"] + 1}) is not None
    plain = verdicts(tmp_path, golden_entries(), drafts())
    assert all("signature" not in v for v in plain)
    assert [dict(v, signature=None) for v in plain] == [dict(v, signature=None) for v in got]


def projected_record(offset: int) -> Record:
    entry = next(e for e in golden_entries() if e["tool_call_id"] == "call_x1")
    value = {
        "run_id": entry["run_id"],
        "tool_call_id": entry["tool_call_id"],
        "status": "OK",
        "projection": entry["projection"],
        "projection_sha256": entry["projection_sha256"],
        "origin": {"topic": "raw-hits", "partition": 0, "offset": offset, "timestamp": 1_700_000_000_000},
    }
    return Record("projected", 0, offset, 1_700_000_000_500, b"run-g", codec.dumps(value))


def written(store: MemoryLedgerStore, record: Record, rules: StationRules) -> tuple[LedgerOutcome, bytes]:
    step = run_station(Station.LEDGER, record, rules)
    assert isinstance(step, PendingWrite)
    (result,) = asyncio.run(store.write_many([step.entry]))
    return result.outcome, ledger_event(result.stored)


def test_a_redelivered_record_writes_byte_identical_signed_output(
    keys: dict[str, tuple[Signer, Path, Path]],
) -> None:
    signer, private, _ = keys["old"]
    config = StationRules.from_settings(Settings(signing_key_file=str(private)))
    record = projected_record(7)
    first = run_station(Station.LEDGER, record, config)
    again = run_station(Station.LEDGER, record, config)
    assert isinstance(first, PendingWrite) and isinstance(again, PendingWrite)
    assert codec.dumps(first.entry) == codec.dumps(again.entry)
    store = MemoryLedgerStore()
    outcome, event = written(store, record, config)
    assert outcome is LedgerOutcome.WRITTEN
    assert written(store, record, config) == (LedgerOutcome.DUPLICATE, event)
    doc = codec.loads(event)
    names = list(doc)
    assert names[names.index("failure_reason") + 1 : names.index("failure_reason") + 3] == [
        "key_id",
        "signature",
    ]
    assert TrustedKeys.from_hex(ledger=[signer.public_hex]).verify_entry(doc) is None
    # the same bytes under another key are a DUPLICATE, and the event repeats the first signature
    other = StationRules.from_settings(Settings(signing_key_file=str(keys["new"][1])))
    assert written(store, projected_record(8), other) == (LedgerOutcome.DUPLICATE, event)


def test_unsigned_ledger_events_carry_no_signature_fields() -> None:
    store = MemoryLedgerStore()
    _, event = written(store, projected_record(9), StationRules.from_settings(Settings()))
    assert "key_id" not in codec.loads(event) and b"signature" not in event


def test_export_and_rebuild_keep_the_signature(keys: dict[str, tuple[Signer, Path, Path]]) -> None:
    from streams.ledger.events import entry_of
    from streams.ledger.redis import from_hash, to_hash

    signer = keys["old"][0]
    store = MemoryLedgerStore()
    rules = StationRules.from_settings(Settings(signing_key_file=str(keys["old"][1])))
    _, event = written(store, projected_record(11), rules)
    rebuilt = entry_of(event)  # ledger rebuild reads the topic's events
    assert rebuilt is not None and codec.dumps(rebuilt) == event
    hashed = to_hash(rebuilt)  # what Redis holds ...
    assert hashed["key_id"] == signer.key_id
    stamps = {"written_at": str(rebuilt["written_at"]), "expires_at": str(rebuilt["expires_at"])}
    exported = from_hash({**hashed, **stamps})  # ... and what ledger export prints
    assert codec.dumps(exported) == event
    assert TrustedKeys.from_hex(ledger=[signer.public_hex]).verify_entry(exported) is None
