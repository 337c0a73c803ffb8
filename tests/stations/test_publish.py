"""SPEC 4.3 (publish): one ``reports`` event per PASS or FALLBACK verdict, holding only the reviewed fields.

The drafts are the golden guard cases (``tests/data/golden/guard``), judged by the guard against the
golden ledger, so the verdicts are the real ones; ``d-pass`` and ``d-null`` pass, ``d-cite`` (attempt 2)
falls back and ``d-struct`` is rejected.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from models.draft import DiagnosisDraft
from models.events import Origin
from models.limits import GuardSettings
from models.verdict import Verdict
from models.vocab import FALLBACK_LIMITATION, Station, Topic
from streams import codec
from streams.envelope import event_id
from streams.messages import Record
from streams.pipeline import StationRules
from streams.settings import Settings
from streams.stations.guard import EvidenceGuard
from streams.stations.publish import PUBLISH, report_event, reviewed_report
from streams.trust import Signer
from streams.trust.keys import TrustedKeys
from streams.trust.messages import report_message
from tests.golden import GOLDEN
from tests.support import memory_ledger, settle

ORIGIN: Origin = {"topic": "diagnosis-drafts", "partition": 2, "offset": 41, "timestamp": 1_767_000_000_000}
SIGNER = Signer.from_private_key(Ed25519PrivateKey.from_private_bytes(bytes(range(32))))
RULES = StationRules.from_settings(Settings(guard=GuardSettings()))


def golden_drafts() -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for line in (GOLDEN / "guard" / "drafts.jsonl").read_bytes().splitlines():
        try:
            value = codec.loads(line)
        except codec.JSONDecodeError:
            continue
        if isinstance(value, dict) and isinstance(value.get("draft_id"), str):
            out.setdefault(value["draft_id"], line)
    return out


def golden_ledger() -> Any:
    lines = (GOLDEN / "guard" / "ledger.jsonl").read_bytes().splitlines()
    return memory_ledger(codec.loads(line) for line in lines if line)


def judged(raw: bytes, signer: Signer | None = None) -> tuple[Verdict, DiagnosisDraft | None]:
    """The guard's verdict on one draft at :data:`ORIGIN`, and the draft as the guard parsed it."""
    guard = EvidenceGuard(GuardSettings(), signer=signer)
    plan = guard.plan(raw)
    run_id = plan.run_id or ""
    found = golden_ledger().read_now([(run_id, t) for t in plan.cited])
    lookups = {t: found[(run_id, t)] for t in plan.cited}
    verdict = guard.judge(plan, lookups, event_id=event_id(Station.GUARD, ORIGIN), origin=ORIGIN)
    return verdict, plan.draft


def published(raw: bytes, signer: Signer | None = None) -> Any:
    verdict, draft = judged(raw, signer)
    return report_event(verdict, draft, event_id=event_id(PUBLISH, ORIGIN), signer=signer)


def with_extras(raw: bytes) -> bytes:
    """The draft with a field the guard never judges at every level it has objects."""
    value = codec.loads(raw)
    value["secret"] = "top"
    for item in value["analysis"]:
        item["note"] = "analysis extra"
    if value.get("conclusion"):
        value["conclusion"]["confidence"] = 0.99
    for action in value.get("action_plan") or []:
        action["owner"] = "someone"
    return codec.dumps(value)


def test_a_pass_publishes_the_reviewed_fields_in_order() -> None:
    raw = golden_drafts()["d-pass"]
    verdict, _ = judged(raw)
    event = published(raw)
    assert verdict["verdict"] == "PASS"
    assert list(event) == [
        "event_id", "origin", "run_id", "draft_id", "attempt", "verdict", "verdict_event_id",
        "draft_sha256", "report", "source_timestamp",
    ]  # fmt: skip
    assert event["event_id"] == "publish:diagnosis-drafts:2:41:1767000000000"
    assert event["verdict_event_id"] == verdict["event_id"] == "guard:diagnosis-drafts:2:41:1767000000000"
    assert (event["run_id"], event["draft_id"], event["attempt"]) == ("run-g", "d-pass", 1)
    assert event["draft_sha256"] == hashlib.sha256(raw).hexdigest()
    assert event["source_timestamp"] == ORIGIN["timestamp"] and event["origin"] == ORIGIN
    draft = codec.loads(raw)
    report = event["report"]
    assert list(report) == ["analysis", "conclusion", "action_plan", "limitations"]
    assert [list(item) for item in report["analysis"]] == [
        ["id", "kind", "content", "tool_call_ids", "document_ids"]
    ] * 2
    # a2 gives no document_ids: published as [], the rest exactly as the draft wrote it
    assert report["analysis"][1]["document_ids"] == []
    assert report["analysis"][0] == draft["analysis"][0]
    assert report["conclusion"] == draft["conclusion"]
    assert report["action_plan"] == draft["action_plan"]
    assert report["limitations"] == draft["limitations"]


def test_an_unknown_field_of_a_draft_never_rides_along() -> None:
    raw = golden_drafts()["d-pass"]
    extra = with_extras(raw)
    event = published(extra)
    assert event["verdict"] == "PASS"
    assert event["report"] == published(raw)["report"]
    text = codec.dumps(event["report"])
    for name in (b"secret", b"note", b"confidence", b"owner", b"someone"):
        assert name not in text
    assert event["draft_sha256"] == hashlib.sha256(extra).hexdigest()  # tied to what was judged


def test_missing_or_null_lists_publish_as_empty_lists() -> None:
    value = codec.loads(golden_drafts()["d-null"])  # conclusion null, action_plan []
    value.pop("action_plan")
    value["analysis"][1]["document_ids"] = None
    event = published(codec.dumps(value))
    assert event["verdict"] == "PASS"
    assert event["report"]["conclusion"] is None
    assert event["report"]["action_plan"] == []
    assert event["report"]["analysis"][1]["document_ids"] == []


def test_a_fallback_publishes_the_fixed_report() -> None:
    verdict, draft = judged(golden_drafts()["d-cite"])
    assert verdict["verdict"] == "FALLBACK"
    event = report_event(verdict, draft, event_id="publish:x")
    assert event is not None
    assert event["report"] == {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}
    assert event["report"] == verdict["fallback_report"]
    assert (event["verdict"], event["attempt"], event["verdict_event_id"]) == (
        "FALLBACK",
        2,
        verdict["event_id"],
    )


def test_a_reject_publishes_nothing() -> None:
    verdict, draft = judged(golden_drafts()["d-struct"])
    assert verdict["verdict"] == "REJECT"
    assert report_event(verdict, draft, event_id="publish:x", signer=SIGNER) is None


def test_a_pass_without_its_draft_is_a_callers_bug() -> None:
    verdict, _ = judged(golden_drafts()["d-pass"])
    with pytest.raises(ValueError, match="parsed draft"):
        report_event(verdict, None)


def test_offline_the_report_has_no_event_id() -> None:
    guard = EvidenceGuard(GuardSettings())
    raw = golden_drafts()["d-pass"]
    plan = guard.plan(raw)
    found = golden_ledger().read_now([("run-g", t) for t in plan.cited])
    verdict = guard.judge(plan, {t: found[("run-g", t)] for t in plan.cited})
    event = report_event(verdict, plan.draft)
    assert event is not None
    assert (event["event_id"], event["verdict_event_id"], event["origin"], event["source_timestamp"]) == (
        None, None, None, None,
    )  # fmt: skip


def test_the_same_draft_publishes_the_same_bytes() -> None:
    raw = golden_drafts()["d-pass"]
    assert codec.dumps(published(raw, SIGNER)) == codec.dumps(published(raw, SIGNER))
    fallback = golden_drafts()["d-cite"]
    assert codec.dumps(published(fallback, SIGNER)) == codec.dumps(published(fallback, SIGNER))


def test_the_signed_message_is_the_spec_netstrings() -> None:
    event = published(golden_drafts()["d-pass"])
    digest = hashlib.sha256(codec.dumps(event["report"])).hexdigest()
    fields = [
        "evidence-chain/report/v1", "run-g", "d-pass", "1", "PASS",
        "guard:diagnosis-drafts:2:41:1767000000000", event["draft_sha256"], digest,
    ]  # fmt: skip
    expected = b"".join(b"%d:%s," % (len(f.encode()), f.encode()) for f in fields)
    assert report_message(event) == expected
    # non-ASCII is hashed as UTF-8, as the event carries it, never as \\u escapes
    assert "超时".encode() in codec.dumps(event["report"])


def test_a_signed_report_verifies_and_a_tampered_one_does_not() -> None:
    trusted = TrustedKeys.from_hex(guard=[SIGNER.public_hex])
    event = published(golden_drafts()["d-pass"], SIGNER)
    assert list(event)[-1] == "signature"
    assert event["signature"]["key_id"] == SIGNER.key_id
    assert trusted.verify_report(event) is None
    # the signature rides in the event as JSON: it still verifies once read back
    assert trusted.verify_report(codec.loads(codec.dumps(event))) is None

    content = codec.loads(codec.dumps(event))
    content["report"]["analysis"][0]["content"] += " (edited)"
    assert trusted.verify_report(content) == f"the signature by key {SIGNER.key_id} does not verify"
    smuggled = codec.loads(codec.dumps(event))
    smuggled["report"]["analysis"][0]["note"] = "added after signing"
    assert trusted.verify_report(smuggled) is not None
    reordered = codec.loads(codec.dumps(event))
    reordered["report"] = dict(reversed(list(reordered["report"].items())))
    assert trusted.verify_report(reordered) is not None
    other_verdict = {**event, "verdict_event_id": "guard:diagnosis-drafts:2:42:1767000000000"}
    assert trusted.verify_report(other_verdict) is not None
    unsigned = {k: v for k, v in event.items() if k != "signature"}
    assert trusted.verify_report(unsigned) == "unsigned"


def test_a_fallback_report_is_signed_too() -> None:
    trusted = TrustedKeys.from_hex(guard=[SIGNER.public_hex])
    event = published(golden_drafts()["d-cite"], SIGNER)
    assert event["verdict"] == "FALLBACK"
    assert trusted.verify_report(event) is None


def test_reviewed_report_reads_only_the_listed_fields() -> None:
    draft: Any = {
        "draft_id": "d",
        "analysis": [{"id": "a1", "kind": "NORMAL", "content": "c", "tool_call_ids": None, "x": 1}],
    }
    assert reviewed_report(draft) == {
        "analysis": [{"id": "a1", "kind": "NORMAL", "content": "c", "tool_call_ids": [], "document_ids": []}],
        "conclusion": None,
        "action_plan": [],
        "limitations": [],
    }


def test_the_guard_station_emits_the_report_with_its_verdict() -> None:
    """The agent's outcome: the report is among the guard's outputs, under the verdict's key, so the
    batch that produces the verdict produces the report and one commit acknowledges both."""
    raw = golden_drafts()["d-pass"]
    record = Record(
        ORIGIN["topic"], ORIGIN["partition"], ORIGIN["offset"], ORIGIN["timestamp"], b"run-g", raw
    )
    outcome = settle(Station.GUARD, record, RULES, golden_ledger())
    topics = [output.topic for output in outcome.outputs]
    assert topics == [Topic.VERDICTS, Topic.REPORTS]
    verdict_out, report_out = outcome.outputs
    assert report_out.key == verdict_out.key == b"run-g"
    assert codec.loads(report_out.value) == published(raw)
    assert outcome.audit["report_event_id"] == "publish:diagnosis-drafts:2:41:1767000000000"

    rejected = Record(ORIGIN["topic"], 0, 1, 5, b"run-g", golden_drafts()["d-struct"])
    outcome = settle(Station.GUARD, rejected, RULES, golden_ledger())
    assert Topic.REPORTS not in [output.topic for output in outcome.outputs]
    assert outcome.audit["report_event_id"] is None


_KNOWN = {"run_id", "draft_id", "attempt", "analysis", "conclusion", "action_plan", "limitations"}
_KNOWN |= {"id", "kind", "content", "tool_call_ids", "document_ids", "based_on_analysis_ids"}
_EXTRA_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_EXTRAS = st.dictionaries(
    st.text(min_size=1, max_size=12).filter(lambda name: name not in _KNOWN), _EXTRA_VALUES, max_size=3
)


@settings(max_examples=100, deadline=None)
@given(top=_EXTRAS, item=_EXTRAS, conclusion=_EXTRAS, action=_EXTRAS)
def test_no_extra_field_anywhere_changes_the_published_report(
    top: dict[str, Any], item: dict[str, Any], conclusion: dict[str, Any], action: dict[str, Any]
) -> None:
    raw = golden_drafts()["d-pass"]
    draft = codec.loads(raw)
    draft.update(top)
    draft["analysis"][1].update(item)
    draft["conclusion"].update(conclusion)
    draft["action_plan"][0].update(action)
    event = published(codec.dumps(draft))
    assert event["verdict"] == "PASS"
    assert codec.dumps(event["report"]) == codec.dumps(published(raw)["report"])
