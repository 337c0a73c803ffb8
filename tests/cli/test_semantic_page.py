"""The run page shows each judged claim beside its evidence, with the semantic judge's label and reason
(SPEC 4.4, issue 41 item 3): the draft's view carries them, and the template renders them escaped."""

from __future__ import annotations

from typing import Any

from models.vocab import Topic
from streams import codec
from streams.pipeline import finish_judge
from streams.web.pages.render import templates
from streams.web.pages.run_evidence import draft_view, evidence_document
from tests.stations.test_semantic import _rules, draft, judged, semantic_step


def judged_run() -> tuple[dict[str, Any], dict[str, Any], bytes]:
    step, record = semantic_step(_rules())
    outcome = finish_judge(step, judged(step, {"conclusion.content": "unsupported"}), True, record)
    outputs = {o.topic: codec.loads(o.value) for o in outcome.outputs}
    return outputs[Topic.VERDICTS], outputs[Topic.JUDGEMENTS], draft("d-pass")


def test_each_judged_claim_has_the_judges_label_reason_and_evidence() -> None:
    verdict, judgement, raw = judged_run()
    view = draft_view(verdict, raw, {}, None, judgement=judgement)
    first, second = view["analysis"]
    assert first["judged"]["label"] == "supported" and first["judged"]["reason"] == "because"
    assert first["judged"]["evidence"] == [
        {"tool_call_id": "call_x1", "document_id": "e2e-gateway-b9c1fa12-md-34223174#chunk-1"}
    ]
    assert second["judged"]["evidence"] == [
        {"tool_call_id": "call_x2", "document_id": None}
    ]  # a search, no item
    assert view["conclusion"]["judged"]["label"] == "unsupported"
    assert view["judgement"]["model"] == "judge-m" and view["judgement"]["prompt_version"] == "semantic-v1"
    assert draft_view(verdict, raw, {}, None)["conclusion"]["judged"] is None  # not judged: nothing shown


def test_the_page_renders_the_judges_word_escaped() -> None:
    verdict, judgement, raw = judged_run()
    judgement["claims"][-1]["reason"] = "<script>alert(1)</script> overclaims"
    view = draft_view(verdict, raw, {}, None, judgement=judgement)
    html = str(templates().get_template("evidence.html").module.judged(view["conclusion"]))  # type: ignore[attr-defined]
    assert "semantic judge:" in html and "unsupported" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_run_document_pairs_each_verdict_with_its_judgement() -> None:
    verdict, judgement, raw = judged_run()
    row = {"event_id": verdict["event_id"], "draft_id": "d-pass"}
    document = evidence_document(
        [], [row], [], [], [verdict], {verdict["draft_sha256"]: raw}, None, 1200, judgements=[judgement]
    )
    view = document["drafts"][verdict["event_id"]]
    assert view["conclusion"]["judged"]["label"] == "unsupported"
