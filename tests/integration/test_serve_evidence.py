"""The auditor's page (issue 19, item 7) over an audit store that a signed run filled, on SQLite and
PostgreSQL, in a real headless Chromium: the excerpts exactly as the agent saw them, each signature's
state, a CONFLICT beside the entry the agent was shown (never in its place), each claim beside the
evidence it cites with its violations, the chain as a picture, and a receipt download that verifies."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from streams import codec
from streams.audit.evidence import TopicValue, applied_at, evidence_of
from streams.audit.factory import open_store
from streams.hashing import sha256_hex
from streams.trust import TrustedKeys, verify_receipt
from tests.integration.evidence_run import CONFLICTED, RUN, SignedRun, signed_run
from tests.integration.serving import browser, get, serving  # noqa: F401 - browser: a fixture

pytestmark = pytest.mark.timeout(180)

FORGED = "call_forged"
LATER_EXCERPT = "a later, different excerpt the agent never saw"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SignedRun:
    return asyncio.run(signed_run(tmp_path_factory.mktemp("keys")))


def forged_entry(run: SignedRun) -> bytes:
    """An entry someone wrote without the key: a projection with its hash recomputed, a copied signature."""
    entry = codec.loads(run.ledger[0].value or b"")
    projection = codec.loads(entry["projection"])
    projection["tool_call_id"] = FORGED
    text = codec.dumps(projection).decode()
    entry.update(tool_call_id=FORGED, projection=text, projection_sha256=sha256_hex(text.encode()))
    return codec.dumps(entry)


@pytest.fixture
def database(target: str, run: SignedRun) -> str:
    """A fresh audit database of each backend holding the signed run and one forged entry."""
    store = open_store(target)
    try:
        store.apply(run.audit, run.evidence())
        forged = TopicValue("t.ledger", 2, 0, forged_entry(run))
        store.apply([], evidence_of([forged], [], [], applied_at(), 1 << 18))
    finally:
        store.close()
    return target


def projections(run: SignedRun) -> dict[str, dict[str, Any]]:
    """What each of the run's READY entries showed the agent, by tool call."""
    out = {}
    for value in run.ledger:
        entry = codec.loads(value.value or b"")
        if entry["run_id"] == RUN and entry["status"] == "READY":
            out[entry["tool_call_id"]] = codec.loads(entry["projection"])
    return out


def test_an_auditor_sees_what_the_agent_saw_and_can_check_it(
    database: str,
    run: SignedRun,
    tmp_path: Path,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    from selenium.webdriver.common.by import By

    trusted = TrustedKeys.from_hex(ledger=[run.signer.public_hex], guard=[run.signer.public_hex])
    env = {"EC_TRUSTED_KEYS_FILE": str(run.trusted_keys_file)}
    with serving(database, tmp_path, env=env) as base:
        browser.get(f"{base}/runs/{RUN}")
        # The chain at a glance: one box per step, with its count.
        steps = browser.find_elements(By.CSS_SELECTOR, "svg#chain g.step")
        counts = {
            s.get_attribute("class").split()[1]: s.find_element(By.CSS_SELECTOR, "text.count").text
            for s in steps
        }
        shown = projections(run)
        assert list(counts) == [
            f"step-{n}" for n in ("hits", "blocks", "shown", "ledger", "cited", "verdict")
        ]
        forged_items = len(codec.loads(codec.loads(forged_entry(run))["projection"])["evidence"])
        assert counts["step-shown"] == str(sum(len(p["evidence"]) for p in shown.values()) + forged_items)
        assert (counts["step-ledger"], counts["step-cited"], counts["step-verdict"]) == ("4", "3", "2")

        # Per tool call, the items exactly as the agent saw them, and a verified signature.
        for tool_call_id, projection in shown.items():
            article = browser.find_element(By.ID, f"shown-{tool_call_id}")
            items = article.find_elements(By.CSS_SELECTOR, ".seen li.item")
            assert [i.find_element(By.CSS_SELECTOR, ".excerpt").text for i in items] == [
                e["excerpt"] for e in projection["evidence"]
            ]
            assert [i.find_element(By.CSS_SELECTOR, ".document-id").text for i in items] == [
                e["document_id"] for e in projection["evidence"]
            ]
            assert [i.find_element(By.CSS_SELECTOR, ".title").text for i in items] == [
                e["title"] for e in projection["evidence"]
            ]
            badge = article.find_element(By.CSS_SELECTOR, ".sig").text
            assert badge == f"signature verified (key {run.signer.key_id})"
        forged = browser.find_element(By.ID, f"shown-{FORGED}").find_element(By.CSS_SELECTOR, ".sig")
        assert forged.text.startswith("signature not verified: ") and "does not verify" in forged.text

        # The CONFLICT is beside the entry the agent was shown, never in its place.
        gw = browser.find_element(By.ID, f"shown-{CONFLICTED}")
        conflict = gw.find_element(By.CSS_SELECTOR, ".pair > aside.conflict")
        assert conflict.text.startswith("CONFLICT") and conflict.is_displayed()
        seen = gw.find_element(By.CSS_SELECTOR, ".pair > .seen")
        assert [e.text for e in seen.find_elements(By.CSS_SELECTOR, ".excerpt")] == [
            e["excerpt"] for e in shown[CONFLICTED]["evidence"]
        ]
        assert conflict.location["x"] > seen.location["x"]  # beside it, to the right
        assert LATER_EXCERPT not in browser.page_source
        row = browser.find_element(By.ID, f"call-{CONFLICTED}")
        assert (
            f"{len(shown[CONFLICTED]['evidence'])} returned"
            in row.find_element(By.CSS_SELECTOR, ".projection").text
        )

        # Each claim beside what it cites, with the violations inside it.
        drafts = {
            d.find_element(By.CSS_SELECTOR, ".draft-id").text: d
            for d in browser.find_elements(By.CSS_SELECTOR, "article.draft")
        }
        overclaim = drafts["d-overclaim"]
        codes = {
            c.get_attribute("data-item-id"): [
                x.text for x in c.find_elements(By.CSS_SELECTOR, "li.violation code")
            ]
            for c in overclaim.find_elements(By.CSS_SELECTOR, ".claim")
        }
        assert codes == {"a1": ["NORMAL_CITES_NO_EVIDENCE"], "a2": ["CITATION_DOCUMENT_UNKNOWN"]}
        (a1,) = drafts["d-ok"].find_elements(By.CSS_SELECTOR, '.claim[data-item-id="a1"]')
        cited = [e.text for e in a1.find_elements(By.CSS_SELECTOR, ".cited .document-id")]
        assert cited == ["gw-timeout-md#chunk-1"]  # the document the item names, from call_gw
        assert "signature verified" in drafts["d-ok"].find_element(By.CSS_SELECTOR, ".proof").text

        # The receipt download verifies offline with the trusted key.
        href = drafts["d-ok"].find_element(By.CSS_SELECTOR, "a.receipt").get_attribute("href")
        assert href == f"{base}/runs/{RUN}/drafts/d-ok/receipt.json"
        status, kind, body = get(href)
        assert (status, kind) == (200, "application/json")
        receipt = codec.loads(body)
        assert verify_receipt(receipt, trusted) == []
        assert receipt["verdict"] == next(v for v in run.verdict_docs() if v["draft_id"] == "d-ok")
        assert receipt["public_keys"] == {run.signer.key_id: run.signer.public_hex}
        assert browser.find_elements(By.CSS_SELECTOR, "script, img") == []


def test_without_trusted_keys_signatures_are_not_checked(
    database: str, run: SignedRun, tmp_path: Path
) -> None:
    with serving(database, tmp_path) as base:
        status, _, body = get(f"{base}/runs/{RUN}?format=json")
        assert status == 200
        document = codec.loads(body)
        assert document["signatures_checked"] is False
        states = {e["tool_call_id"]: e["signature"] for e in document["entries"]}
        assert all(s["state"] == "not checked" and s["signed"] for s in states.values())
        status, _, page = get(f"{base}/runs/{RUN}")
        assert b"signature not checked" in page and b"signature verified" not in page


def test_receipt_addresses_that_name_nothing_say_so(database: str, tmp_path: Path) -> None:
    with serving(database, tmp_path) as base:
        for path, status, words in (
            (f"/runs/{RUN}/drafts/d-none/receipt.json", 404, "no stored verdict of draft d-none"),
            (f"/runs/{RUN}/drafts/d-ok/receipt.json?attempt=2", 404, "has no attempt 2; stored attempts: 1"),
            ("/runs/run-nobody/drafts/d-ok/receipt.json", 404, "run run-nobody is unknown"),
            (f"/runs/{RUN}/drafts/d-ok/receipt.json?attempt=x", 400, "attempt must be a whole number"),
            (f"/runs/{RUN}/drafts/{quote('<b>', safe='')}/receipt.json", 404, "no stored verdict"),
        ):
            got, kind, body = get(base + path)
            assert (got, kind) == (status, "application/json"), path
            assert words in codec.loads(body)["error"], path
        status, _, body = get(f"{base}/runs/{RUN}/drafts/d-ok/receipt.json?attempt=1")
        assert status == 200 and codec.loads(body)["verdict"]["attempt"] == 1
