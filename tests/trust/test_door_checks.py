"""The one answer per kind to "does this hold?" at the doors (issue 38 items 1 and 2; SPEC 3.7, 4.3).

- An entry is evidence for exactly one key: asked for ``(run_id, tool_call_id)``, an entry that is
  another key's fails first — run A's genuine signed entry copied under run B's key verifies, and is
  still not B's.
- A verdict or a report is handed out only when a trusted guard key signed it (with trusted keys).
- Readers keep a run's reports once by their signed fields, never by ``event_id`` alone, and one per
  ``(run_id, draft_id, attempt)``: a genuine copy re-sent under a new ``event_id`` neither replaces nor
  repeats the first.
"""

from __future__ import annotations

from typing import Any

from streams.hashing import sha256_hex
from streams.trust import (
    EntryFault,
    SignedFault,
    Signer,
    TrustedKeys,
    check_entry,
    check_report,
    check_verdict,
    distinct_reports,
    report_identity,
)
from streams.trust.keys import generate_key_pair
from tests.trust.support import report_event

PROJECTION = '{"evidence_status":"NO_EVIDENCE","tool_call_id":"c1","query":"q","evidence":[]}'


def keys(tmp_path: Any) -> tuple[Signer, Signer, TrustedKeys]:
    ledger, _, _ = generate_key_pair(tmp_path, "ledger", "ledger")
    guard, _, _ = generate_key_pair(tmp_path, "guard", "guard")
    return ledger, guard, TrustedKeys.from_hex(ledger=[ledger.public_hex], guard=[guard.public_hex])


def entry(run_id: str = "run-A", tool_call_id: str = "c1") -> dict[str, Any]:
    return {
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": "READY",
        "evidence_status": "NO_EVIDENCE",
        "projection": PROJECTION,
        "projection_sha256": sha256_hex(PROJECTION.encode()),
        "failure_reason": None,
    }


def test_a_transplanted_signed_entry_holds_alone_and_fails_first_for_another_key(tmp_path: Any) -> None:
    ledger, _, trusted = keys(tmp_path)
    genuine = entry() | ledger.sign_entry(entry())
    assert check_entry(genuine, trusted).holds  # the signature holds: nothing but the key tells
    assert check_entry(genuine, trusted, ("run-A", "c1")).holds
    for asked in (("run-B", "c1"), ("run-A", "c2")):
        held = check_entry(genuine, trusted, asked)
        assert held.fault is EntryFault.KEY
        assert "run-A" not in held.detail  # quotes nothing from the entry
    # signed or not, re-hashed or not: the key is checked before anything else
    unsigned = entry() | {"projection_sha256": "00" * 32}
    assert check_entry(unsigned, trusted, ("run-B", "c1")).fault is EntryFault.KEY
    assert check_entry(unsigned, trusted, ("run-A", "c1")).fault is EntryFault.HASH
    assert check_entry(entry(), trusted, ("run-A", "c1")).fault is EntryFault.SIGNATURE
    assert check_entry(entry(), None, ("run-A", "c1")).holds


def test_a_verdict_holds_only_for_its_draft_and_under_a_guard_key(tmp_path: Any) -> None:
    ledger, guard, trusted = keys(tmp_path)
    verdict = {
        "run_id": "r",
        "draft_id": "d",
        "draft_sha256": "cd" * 32,
        "attempt": 1,
        "verdict": "PASS",
        "violation_count": 0,
        "evidence_snapshot": [],
        "violations": [],
    }
    signed = verdict | {"signature": guard.sign_verdict(verdict)}
    assert check_verdict(signed, trusted, draft_sha256="cd" * 32).holds
    assert check_verdict(signed, trusted, draft_sha256="ef" * 32).fault is SignedFault.KEY
    unsigned = check_verdict(verdict, trusted)
    assert unsigned.fault is SignedFault.SIGNATURE and "unsigned" in unsigned.detail
    by_ledger = verdict | {"signature": ledger.sign_verdict(verdict)}
    assert check_verdict(by_ledger, trusted).fault is SignedFault.SIGNATURE  # a ledger key mints no verdict
    assert check_verdict({**signed, "verdict": "REJECT"}, trusted).fault is SignedFault.SIGNATURE
    assert check_verdict(verdict, None).holds  # without trusted keys nothing is checked but the draft


def test_a_report_holds_only_for_its_run_and_under_a_guard_key(tmp_path: Any) -> None:
    ledger, guard, trusted = keys(tmp_path)
    genuine = report_event(guard)
    assert check_report(genuine, trusted, run_id="run-A").holds
    assert check_report(genuine, trusted, run_id="run-B").fault is SignedFault.KEY
    forged = report_event(
        None,
        report={
            **genuine["report"],
            "conclusion": {"content": "FORGED CONCLUSION", "based_on_analysis_ids": []},
        },
    )
    assert check_report(forged, trusted).fault is SignedFault.SIGNATURE
    altered = {**genuine, "report": forged["report"]}  # a genuine signature over other words
    assert check_report(altered, trusted).fault is SignedFault.SIGNATURE
    assert check_report(report_event(ledger), trusted).fault is SignedFault.SIGNATURE


def test_readers_drop_repeats_by_the_signed_fields_and_keep_the_first_report_of_a_draft(
    tmp_path: Any,
) -> None:
    _, guard, trusted = keys(tmp_path)
    first = report_event(guard)
    # the same signed bytes under a new event_id (not signed): the same report
    resent = {
        **first,
        "event_id": "publish:t.diagnosis-drafts:0:99:5",
        "origin": {**first["origin"], "offset": 99},
    }
    assert report_identity(resent) == report_identity(first)
    forged = report_event(None, report={**first["report"], "limitations": ["FORGED"]})
    other_run = report_event(guard, run_id="run-B")
    # another draft's genuine report under the same (run, draft_id, attempt): the first owns the triple
    second_draft = report_event(
        guard, draft_sha256="ef" * 32, verdict_event_id="guard:t.diagnosis-drafts:0:8:1"
    )
    next_attempt = report_event(guard, attempt=2, verdict_event_id="guard:t.diagnosis-drafts:0:9:1")
    kept = distinct_reports(
        [resent, first, forged, other_run, second_draft, next_attempt], trusted, run_id="run-A"
    )
    # the copy sorted first; the original is shown in its place (its event_id has its verdict's coordinates)
    assert [r["event_id"] for r in kept.reports] == [first["event_id"], next_attempt["event_id"]]
    assert (kept.repeats, kept.conflicts, len(kept.refused)) == (1, 1, 2)
    # in the other order the first one stays: a copy never replaces the report it copies
    kept = distinct_reports([first, resent], trusted, run_id="run-A")
    assert [r["event_id"] for r in kept.reports] == [first["event_id"]]
    # without trusted keys: nothing is verified, repeats are still dropped by the signed fields
    unchecked = distinct_reports([first, resent, forged], None, run_id="run-A")
    assert [r["event_id"] for r in unchecked.reports] == [first["event_id"]]
    assert unchecked.conflicts == 1  # the unsigned copy with other words is another report of the triple
    # a redelivered copy of a report that lost its triple is a conflict again, and takes no one's place
    # (its identity once pointed at a slot of kept: an IndexError, or another draft's report dropped)
    third_draft = report_event(
        guard, draft_id="d2", draft_sha256="12" * 32, verdict_event_id="guard:t.diagnosis-drafts:0:10:1"
    )
    third_copy = {**third_draft, "event_id": "publish:t.diagnosis-drafts:0:98:5"}
    kept = distinct_reports([first, second_draft, second_draft], trusted, run_id="run-A")
    assert [r["event_id"] for r in kept.reports] == [first["event_id"]]
    assert (kept.repeats, kept.conflicts) == (0, 2)
    kept = distinct_reports([first, second_draft, third_copy, second_draft], trusted, run_id="run-A")
    assert [r["event_id"] for r in kept.reports] == [first["event_id"], third_copy["event_id"]]
    assert (kept.repeats, kept.conflicts) == (0, 2)
    # a report whose signed fields have the wrong types has no message: identified by its whole JSON
    odd = {**first, "attempt": "1"}
    assert report_identity(odd) != report_identity(first)
    assert report_identity(odd).startswith(b"unsigned-shape:")
    assert check_report(odd, trusted).fault is SignedFault.SIGNATURE
