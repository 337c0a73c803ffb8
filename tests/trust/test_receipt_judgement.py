"""A receipt of a draft the semantic review judged (SPEC 4.4, issue 41 acceptance 4): it verifies offline
and shows what the model said under which prompt; changing any signed field of the judgement — the label,
the model, the prompt version, the reason, the evidence it relied on — or what it was shown fails it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from models.limits import SemanticSettings
from models.vocab import Station, Topic
from streams import codec
from streams.cli import main
from streams.messages import Record
from streams.pipeline import PendingJudge, PendingRead, StationRules, finish_judge, finish_read, run_station
from streams.settings import Settings
from streams.trust import SignedFault, Signer, build_receipt
from streams.trust.integrity import check_judgement, judgement_for
from streams.trust.keys import TrustedKeys
from streams.trust.messages import judgement_digest
from streams.trust.receipt import verify_receipt
from tests.stations.test_semantic import judged
from tests.support import memory_ledger
from tests.trust.support import draft, golden_entries, signed, trust_file

LEDGER = Signer.from_private_key(Ed25519PrivateKey.generate())
GUARD = Signer.from_private_key(Ed25519PrivateKey.generate())
TRUSTED = TrustedKeys.from_hex(ledger=[LEDGER.public_hex], guard=[GUARD.public_hex])


def judged_receipt(mode: str = "enforce", labels: dict[str, str] | None = None) -> dict[str, Any]:
    settings = Settings(semantic=SemanticSettings(mode=mode, judge_model="judge-m"))  # type: ignore[arg-type]
    rules = StationRules.with_keys(settings, GUARD, None)  # the guard signs its verdicts and judgements
    entries = [signed(e, LEDGER) for e in golden_entries()]
    ledger = memory_ledger(entries)
    record = Record("t.diagnosis-drafts", 0, 5, 1_700_000_000_005, b"run-g", draft("d-pass"))
    step = run_station(Station.GUARD, record, rules)
    assert isinstance(step, PendingRead)
    guarded = finish_read(step, ledger.read_now(list(step.keys)), record)
    (value,) = [o.value for o in guarded.outputs if o.topic == Topic.SEMANTIC_REVIEW]
    handed = Record("t.semantic-review", 0, 2, 1_700_000_000_006, b"run-g", value)
    judging = run_station(Station.SEMANTIC, handed, rules)
    assert isinstance(judging, PendingJudge)
    done = finish_judge(
        judging,
        judged(judging, {"conclusion.content": "unsupported"} if labels is None else labels),
        True,
        handed,
    )
    outputs = {o.topic: codec.loads(o.value) for o in done.outputs}
    judgement = outputs[Topic.JUDGEMENTS]
    verdict = outputs.get(Topic.VERDICTS) or next(
        codec.loads(o.value) for o in guarded.outputs if o.topic == Topic.VERDICTS
    )
    by_call = {e["tool_call_id"]: e for e in entries if e["run_id"] == "run-g"}
    return build_receipt(verdict, by_call, TRUSTED, judgement)


@pytest.mark.parametrize("mode", ["enforce", "advise"])
def test_a_judged_receipt_verifies(mode: str) -> None:
    receipt = judged_receipt(mode)
    assert verify_receipt(receipt, TRUSTED) == []
    assert receipt["judgement"]["mode"] == mode
    expected = "REJECT" if mode == "enforce" else "PASS"
    assert receipt["verdict"]["verdict"] == expected


def _claim(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(receipt: dict[str, Any]) -> None:
        receipt["judgement"]["claims"][-1][field] = value

    return change


def _set(*path: Any, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(receipt: dict[str, Any]) -> None:
        target = receipt["judgement"]
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value

    return change


MUTATIONS: dict[str, Callable[[dict[str, Any]], None]] = {
    "label": _claim("label", "supported"),
    "reason": _claim("reason", "the evidence says so"),
    "evidence relied on": _claim("evidence", ["E2"]),
    "path": _claim("path", "analysis[0].content"),
    "model": _set("model", value="a-bigger-model"),
    "prompt version": _set("prompt_version", value="semantic-v0"),
    "digest": _set("digest", value="0" * 64),
    "answer": _set("answer", value='{"claims": []}'),
    "mode": _set("mode", value="advise"),
    "status": _set("status", value="NOT_ASKED"),
    "claim shown": _set("case", "claims", 0, "text", value="something else"),
    "evidence shown": _set("case", "evidence", 0, "text", value="an excerpt nobody stored"),
    "another verdict": _set("verdict_event_id", value="guard:t.diagnosis-drafts:0:6:1"),
    "another draft": _set("draft_sha256", value="f" * 64),
    "unsigned": lambda r: r["judgement"].pop("signature"),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_changing_the_judgement_fails_verification(name: str) -> None:
    receipt = copy.deepcopy(judged_receipt())
    MUTATIONS[name](receipt)
    failures = verify_receipt(receipt, TRUSTED)
    assert failures and all(f.startswith("judgement:") for f in failures), failures


def test_a_verdict_that_does_not_follow_from_its_judgement_fails() -> None:
    """A PASS (signed, genuine) paired with a judgement that found a claim unsupported: not this verdict's."""
    rejecting = judged_receipt()
    passing = judged_receipt(labels={})
    passing["judgement"] = rejecting["judgement"]
    assert any(
        "not what the judgement says" in f or "another verdict" in f for f in verify_receipt(passing, TRUSTED)
    )


def test_receipt_verify_shows_what_the_model_said_and_under_which_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "receipt.json"
    path.write_bytes(codec.dumps(judged_receipt()))
    keys = trust_file(tmp_path, ledger=[LEDGER], guard=[GUARD])
    assert main(["receipt", "verify", str(path), "--trusted-keys", keys]) == 0
    out = capsys.readouterr().out
    assert "judged by judge-m under prompt semantic-v1 (enforce, JUDGED" in out
    assert "conclusion.content: unsupported" in out and "because" in out
    tampered = judged_receipt()
    tampered["judgement"]["claims"][-1]["label"] = "supported"
    path.write_bytes(codec.dumps(tampered))
    assert main(["receipt", "verify", str(path), "--trusted-keys", keys]) == 1
    assert "FAIL judgement:" in capsys.readouterr().err


def test_the_handover_of_a_rejected_draft_is_no_receipt_of_a_pass() -> None:
    """The red team's S1 (``pD.py``): in enforce mode the review rejected the draft, yet its hand-over's
    verdict, dropped into a receipt without the judgement, verified as "OK receipt of PASS". A hand-over
    carries no signed verdict now: the receipt fails, and the genuine receipt is of the REJECT."""
    settings = Settings(semantic=SemanticSettings(mode="enforce", judge_model="judge-m"))
    rules = StationRules.with_keys(settings, GUARD, None)
    entries = [signed(e, LEDGER) for e in golden_entries()]
    record = Record("t.diagnosis-drafts", 0, 5, 1_700_000_000_005, b"run-g", draft("d-pass"))
    step = run_station(Station.GUARD, record, rules)
    assert isinstance(step, PendingRead)
    guarded = finish_read(step, memory_ledger(entries).read_now(list(step.keys)), record)
    (value,) = [o.value for o in guarded.outputs if o.topic == Topic.SEMANTIC_REVIEW]
    handover = codec.loads(value)
    assert handover["verdict"]["verdict"] == "PASS"
    by_call = {e["tool_call_id"]: e for e in entries if e["run_id"] == "run-g"}
    failures = verify_receipt(build_receipt(handover["verdict"], by_call, TRUSTED), TRUSTED)
    assert failures and failures[0].startswith("verdict:"), failures
    genuine = judged_receipt()  # the same draft, judged: its receipt is of the REJECT, and verifies
    assert genuine["verdict"]["verdict"] == "REJECT" and verify_receipt(genuine, TRUSTED) == []


def test_one_answer_for_does_this_judgement_hold_and_which_copy_is_shown() -> None:
    """``check_judgement``: the page and the receipt builders ask what a receipt's verifier asks; and of
    copies that all hold, ``judgement_for`` shows the original whatever their ``origin``."""
    receipt = judged_receipt()
    verdict, genuine, entries = receipt["verdict"], receipt["judgement"], receipt["entries"]
    assert check_judgement(genuine, verdict, TRUSTED, entries).holds
    assert check_judgement(genuine, verdict, None).holds
    rewritten = copy.deepcopy(genuine)
    rewritten["case"]["evidence"][0]["text"] = "an excerpt nobody stored"
    for trusted in (TRUSTED, None):  # the signature holds; the case is not what the digest covers
        held = check_judgement(rewritten, verdict, trusted)
        assert held.fault is SignedFault.CONTENT and "digest" in held.detail
    other = {**verdict, "event_id": "guard:t.diagnosis-drafts:0:6:1"}
    assert check_judgement(genuine, other, TRUSTED).fault is SignedFault.KEY
    unsigned = {k: v for k, v in genuine.items() if k != "signature"}
    assert check_judgement(unsigned, verdict, TRUSTED).fault is SignedFault.SIGNATURE
    assert check_judgement(unsigned, verdict, None).holds
    # its digest made over the rewritten case (no key: nothing signed): the evidence is still checked
    elsewhere = copy.deepcopy(genuine)
    elsewhere["case"]["evidence"][0].update(tool_call_id="call_FORGED")
    elsewhere["digest"] = judgement_digest(elsewhere["model"], elsewhere["case"])
    assert check_judgement(elsewhere, verdict, None).fault is SignedFault.CONTENT  # not a call it cites
    reworded = copy.deepcopy(genuine)
    reworded["case"]["evidence"][0]["text"] = "an excerpt nobody stored"
    reworded["digest"] = judgement_digest(reworded["model"], reworded["case"])
    assert check_judgement(reworded, verdict, None).holds  # its entry is not at hand: not compared
    assert check_judgement(reworded, verdict, None, entries).fault is SignedFault.CONTENT
    copied = {**genuine, "event_id": "semantic:a-copy", "origin": None}
    assert judgement_for(verdict, [copied, rewritten, genuine], TRUSTED, entries) is genuine
    assert judgement_for(verdict, [copied], TRUSTED, entries) is copied  # the same signed judgement
    assert judgement_for(verdict, [rewritten], TRUSTED, entries) is None
