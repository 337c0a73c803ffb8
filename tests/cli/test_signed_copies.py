"""A judgement re-sent by a writer of the topics changes nothing shown or handed out (the red team's J1,
issue 38's rule that every signed thing is checked where it is read).

A judgement was taken on its signature alone, the first by ``origin``: a genuine one re-sent with
``case.evidence`` rewritten (the case is covered only by ``digest``) made the page say the judge relied
on ``call_FORGED``, and broke the genuine receipt. A judgement now holds only when its digest is that of
its case (and its evidence is what the entries hold), wherever it is shown or put in a receipt
(``check_judgement``), and of copies the original is shown (``judgement_for``).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from streams import codec
from streams.audit.evidence import TopicValue, applied_at, evidence_of
from streams.audit.factory import open_store
from streams.audit.receipts import receipt_judgement, receipt_parts
from streams.trust import build_receipt
from streams.trust.receipt import verify_receipt
from streams.web.pages.run_evidence import evidence_document
from tests.trust.support import draft
from tests.trust.test_receipt_judgement import TRUSTED, judged_receipt


def judged_store(target: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[Any]]:
    """A judged REJECT as the sink stores it, and ``pQ``'s re-send: its genuine signed judgement again,
    under a new event id and an origin that sorts first, with the evidence it shows rewritten."""
    receipt = judged_receipt()
    verdict, genuine, entries = receipt["verdict"], receipt["judgement"], receipt["entries"]
    forged = copy.deepcopy(genuine)
    forged["event_id"] = "semantic:forged-j1"
    forged["origin"] = {"topic": "t.diagnosis-drafts", "partition": 0, "offset": -1, "timestamp": 0}
    forged["case"]["evidence"][0].update(tool_call_id="call_FORGED", document_id="FORGED-DOC")
    assert TRUSTED.verify_judgement(forged) is None  # the case is covered by the digest alone
    evidence = evidence_of(
        [TopicValue("t.ledger", 0, i, codec.dumps(e)) for i, e in enumerate(entries)],
        [TopicValue("t.verdicts", 0, 0, codec.dumps(verdict))],
        [TopicValue("t.diagnosis-drafts", 0, 5, draft("d-pass"))],
        applied_at(),
        256 * 1024,
        judgements=[
            TopicValue("t.judgements", 0, 0, codec.dumps(genuine)),
            TopicValue("t.judgements", 0, 1, codec.dumps(forged)),
        ],
    )
    store = open_store(target)
    try:
        store.apply([], evidence)
    finally:
        store.close()
    return verdict, genuine, forged, entries


@pytest.mark.parametrize("keys", ["trusted", "none"])
def test_a_resent_judgement_with_rewritten_evidence_is_not_shown(tmp_path: Path, keys: str) -> None:
    target = str(tmp_path / "audit.db")
    verdict, genuine, _, _ = judged_store(target)
    trusted = TRUSTED if keys == "trusted" else None
    store = open_store(target, readonly=True)
    try:
        judgements = store.stored_judgements("run-g")
        assert judgements[0]["event_id"] == "semantic:forged-j1"  # first by its origin
        document = evidence_document(
            [],
            [{"event_id": verdict["event_id"], "draft_id": verdict["draft_id"]}],  # type: ignore[list-item]
            store.ledger_entries("run-g"),
            [],
            store.stored_verdicts("run-g"),
            store.stored_drafts("run-g"),
            trusted,
            1200,
            judgements=judgements,
        )
    finally:
        store.close()
    view = document["drafts"][verdict["event_id"]]
    shown = codec.dumps(view).decode()
    assert "call_FORGED" not in shown and "FORGED-DOC" not in shown
    assert view["judgement"]["event_id"] == genuine["event_id"]  # type: ignore[index]
    assert view["conclusion"]["judged"]["label"] == "unsupported"  # type: ignore[index]


def test_a_resent_judgement_does_not_break_the_genuine_receipt(tmp_path: Path) -> None:
    target = str(tmp_path / "audit.db")
    verdict, genuine, _, entries = judged_store(target)
    store = open_store(target, readonly=True)
    try:
        chosen, stored, missing = receipt_parts(store, "run-g", "d-pass", None, TRUSTED)
        judgement = receipt_judgement(store, chosen, TRUSTED)
    finally:
        store.close()
    assert chosen == verdict and missing == [] and judgement == genuine
    receipt = build_receipt(chosen, stored, TRUSTED, judgement)
    assert verify_receipt(receipt, TRUSTED) == []
