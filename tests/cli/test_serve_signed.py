"""``serve`` and ``inspect`` show only what holds (issue 38 H1 and M3 at the pages; SPEC 3.7, 4.3).

A signed run (the real stations, in memory) is stored in the audit database, then someone with write
access to the topics or the database adds: run B's genuine signed entry under run A's row (a
transplant), an unsigned report "FORGED CONCLUSION" naming a REJECT verdict, a genuine report re-sent
under a new ``event_id`` that sorts before the original, and an unsigned PASS verdict in place of a
REJECT. With trusted keys the run page (HTML and JSON), its receipt and ``inspect --json`` show none of
them: the transplanted entry is shown as that fact only, the forged report is not shown, the copy
neither replaces nor repeats the original, and the forged verdict is withheld.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from models.events import Origin
from streams import codec
from streams.audit.evidence import TopicValue
from streams.audit.factory import open_store
from streams.cli import audit as audit_cli
from streams.hashing import sha256_hex
from streams.settings import Settings
from streams.stations.ledger import ledger_entry
from streams.web.pages.site import build_app
from tests.integration.evidence_run import RUN, SignedRun, signed_run

TRANSPLANTED = "TRANSPLANTED EXCERPT FROM ANOTHER RUN"
FORGED = "FORGED CONCLUSION"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SignedRun:
    return asyncio.run(signed_run(tmp_path_factory.mktemp("keys")))


def values(run: SignedRun) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [codec.loads(v.value or b"") for v in run.verdicts], [
        codec.loads(v.value or b"") for v in run.reports
    ]


def other_runs_entry(run: SignedRun) -> dict[str, Any]:
    """Run B's genuine entry for ``call_gw``, signed by the ledger key: it verifies, and is B's."""
    projection = codec.dumps(
        {
            "evidence_status": "EVIDENCE_FOUND",
            "tool_call_id": "call_gw",
            "query": "q",
            "evidence": [
                {
                    "document_id": "d#chunk-1",
                    "source": "s",
                    "title": None,
                    "breadcrumb": None,
                    "excerpt": TRANSPLANTED,
                }
            ],
            "returned_count": 1,
            "relevance_level": "PRECISE",
            "truncated": False,
        }
    ).decode()
    origin: Origin = {"topic": "t.raw-hits", "partition": 0, "offset": 9, "timestamp": 1_700_000_000_009}
    event = {
        "run_id": "run-B",
        "tool_call_id": "call_gw",
        "status": "OK",
        "projection": projection,
        "projection_sha256": sha256_hex(projection.encode()),
    }
    return dict(ledger_entry(event, origin=origin, event_id="ev-b", signer=run.signer))


@pytest.fixture
def database(tmp_path: Path, run: SignedRun) -> str:
    verdicts, reports = values(run)
    (ok,) = [v for v in verdicts if v["draft_id"] == "d-ok"]
    (overclaim,) = [v for v in verdicts if v["draft_id"] == "d-overclaim"]
    (published,) = [r for r in reports if r["draft_id"] == "d-ok"]
    assert ok["verdict"] == "PASS" and overclaim["verdict"] == "REJECT"
    # an unsigned PASS in place of the REJECT (same event id: the store keeps the first it gets)
    forged_verdict = {k: v for k, v in overclaim.items() if k != "signature"} | {
        "verdict": "PASS",
        "violation_count": 0,
        "violations": [],
    }
    forged_report = {k: v for k, v in published.items() if k != "signature"} | {
        "event_id": "publish:forged:0:1:1",
        "draft_id": "d-overclaim",
        "verdict_event_id": overclaim["event_id"],
        "draft_sha256": overclaim["draft_sha256"],
        "report": {**published["report"], "conclusion": {"content": FORGED, "based_on_analysis_ids": []}},
    }
    copy = published | {"event_id": "publish:a-copy:0:0:1"}  # sorts before the original in the store
    verdict_values = [
        TopicValue(v.topic, v.partition, v.offset, codec.dumps(forged_verdict))
        if codec.loads(v.value or b"")["event_id"] == overclaim["event_id"]
        else v
        for v in run.verdicts
    ]
    # and an unsigned verdict of an attempt 7 that never was: it must not show as an attempt
    phantom = forged_verdict | {"event_id": "guard:forged:0:2:1", "attempt": 7}
    verdict_values.append(TopicValue("t.verdicts", 0, 99, codec.dumps(phantom)))
    report_values = [
        *run.reports,
        TopicValue("t.reports", 0, 10, codec.dumps(forged_report)),
        TopicValue("t.reports", 0, 11, codec.dumps(copy)),
    ]
    target = str(tmp_path / "audit.db")
    store = open_store(target)
    try:
        tampered = SignedRun(**{**run.__dict__, "verdicts": verdict_values, "reports": report_values})
        store.apply(run.audit, tampered.evidence())
    finally:
        store.close()
    with sqlite3.connect(target) as db:  # a writer of the database: run B's entry under run A's row
        changed = db.execute(
            "UPDATE ledger_entry SET entry = ? WHERE run_id = ? AND tool_call_id = ?",
            (codec.dumps(other_runs_entry(run)).decode(), RUN, "call_gw"),
        ).rowcount
    assert changed == 1
    return target


def settings_for(run: SignedRun, target: str) -> Settings:
    return run.settings.model_copy(update={"audit_db": target, "audit_dsn": None})


async def test_the_run_page_shows_nothing_that_does_not_hold(database: str, run: SignedRun) -> None:
    verdicts, reports = values(run)
    (ok,) = [v for v in verdicts if v["draft_id"] == "d-ok"]
    (overclaim,) = [v for v in verdicts if v["draft_id"] == "d-overclaim"]
    (published,) = [r for r in reports if r["draft_id"] == "d-ok"]
    client = TestClient(TestServer(build_app(settings_for(run, database))))
    await client.start_server()
    try:
        page = await (await client.get(f"/runs/{RUN}")).text()
        doc = await (await client.get(f"/runs/{RUN}?format=json")).json()
        answer = await client.get(f"/runs/{RUN}/drafts/d-overclaim/receipt.json")
        receipt = (answer.status, await answer.json())
        answer = await client.get(f"/runs/{RUN}/drafts/d-ok/receipt.json")
        genuine_receipt = (answer.status, await answer.json())
    finally:
        await client.close()
    for shown in (page, codec.dumps(doc).decode()):
        assert TRANSPLANTED not in shown
        assert FORGED not in shown
        assert "publish:a-copy" not in shown
    # the transplanted entry: listed as what it is, cited by nothing
    (gw,) = [e for e in doc["entries"] if e["tool_call_id"] == "call_gw"]
    assert gw["key_mismatch"] is True and gw["items"] == [] and "LEDGER_INTEGRITY" in gw["unreadable"]
    assert "LEDGER_INTEGRITY" in page
    by_event = {d["event_id"]: d for d in doc["drafts"]}
    # the genuine report once, the original's event id, whatever sorted first
    assert by_event[ok["event_id"]]["evidence"]["report"]["event_id"] == published["event_id"]
    assert page.count(published["event_id"]) == 1
    # the forged verdict: withheld, its content not used, no receipt
    view = by_event[overclaim["event_id"]]["evidence"]
    assert view["stored_verdict"] is False and view["report"] is None
    assert "unsigned" in view["withheld"]
    assert 7 not in view.get("attempts", [])  # the phantom attempt's verdict does not hold
    assert view["signature"]["state"] == "not verified" and "unsigned" in view["signature"]["reason"]
    assert "verdict withheld" in page
    assert "receipt_href" not in by_event[overclaim["event_id"]]
    assert receipt[0] == 404 and "trusted guard key" in receipt[1]["error"]
    # d-ok cites call_gw, whose stored entry is another key's: no receipt is built on it
    assert genuine_receipt[0] == 409 and "call_gw" in genuine_receipt[1]["error"]


def test_inspect_shows_only_the_reports_that_hold_once_each(
    database: str, run: SignedRun, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _, reports = values(run)
    (published,) = [r for r in reports if r["draft_id"] == "d-ok"]
    # no Redis here (port 1): inspect says so and shows the audit store's trail
    settings = settings_for(run, database).model_copy(
        update={"redis_url": SecretStr("redis://127.0.0.1:1/0")}
    )
    monkeypatch.setattr(audit_cli, "get_settings", lambda: settings)
    assert audit_cli.run_inspect(argparse.Namespace(run_id=RUN, db=database, json=True)) == 0
    doc = codec.loads(capsys.readouterr().out)
    shown = {d["draft_id"]: d["report"] for d in doc["drafts"]}
    assert shown["d-ok"] == published  # the original, not the copy that sorts first
    assert shown["d-overclaim"] is None  # the forged report names it; it does not hold
    assert FORGED not in codec.dumps(doc).decode()
