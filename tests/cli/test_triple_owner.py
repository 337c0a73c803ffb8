"""The owner of a ``(run_id, draft_id, attempt)`` is chosen by nothing a writer of the topics controls, and
the page and the receipt agree on it (the red team's R1; SPEC 4.3: the first draft judged owns a triple).

A triple's receipt (``serve``'s download, ``receipt RUN DRAFT``) was "the first verdict" by the unsigned
``origin``: a genuine conflicting PASS re-sent with a new ``event_id`` and ``origin.offset`` -5 became the
receipt of a triple whose owner was a REJECT, and verified, while the page still showed the REJECT as the
owner. The owner is now the verdict of the draft the audit sink read first from ``diagnosis-drafts`` (by
the verdict's signed ``draft_sha256``), on the page and in the receipt alike (``owner_rank``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from streams import codec
from streams.audit.evidence import TopicValue
from streams.audit.factory import open_store
from streams.audit.receipts import owner_rank, owners_first, receipt_parts, write_receipt
from streams.audit.store import DraftRead
from streams.trust import load_trusted_keys
from streams.trust.receipt import verify_receipt
from streams.web.pages.site import build_app
from tests.integration.evidence_run import RUN, SignedRun, sample_lines, signed_run


def conflicting_draft() -> bytes:
    """The sample's d-ok under d-overclaim's triple: a PASS after the REJECT that owns the triple."""
    ok = next(codec.loads(line) for line in sample_lines("drafts.jsonl") if b'"d-ok"' in line)
    return codec.dumps({**ok, "draft_id": "d-overclaim"})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> SignedRun:
    return asyncio.run(signed_run(tmp_path_factory.mktemp("keys"), [conflicting_draft()]))


def triple(run: SignedRun) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the owner, the conflict) of ``(run-demo-1, d-overclaim, 1)``, as the guard gave them."""
    owner, conflict = [v for v in run.verdict_docs() if v["draft_id"] == "d-overclaim"]
    assert owner["verdict"] == "REJECT" and conflict["verdict"] == "PASS"
    assert owner["draft_sha256"] != conflict["draft_sha256"]
    return owner, conflict


@pytest.fixture
def database(tmp_path: Path, run: SignedRun) -> str:
    """The run as the sink stored it, and ``pG.py``'s re-send: the conflicting PASS again under a new
    event id, with an origin that sorts before every draft."""
    _, conflict = triple(run)
    resent = conflict | {
        "event_id": "guard:forged-r1",
        "origin": {"topic": "t.diagnosis-drafts", "partition": 0, "offset": -5, "timestamp": 0},
    }
    verdicts = [*run.verdicts, TopicValue("t.verdicts", 0, len(run.verdicts), codec.dumps(resent))]
    target = str(tmp_path / "audit.db")
    store = open_store(target)
    try:
        store.apply(run.audit, SignedRun(**{**run.__dict__, "verdicts": verdicts}).evidence())
    finally:
        store.close()
    return target


def settings_for(run: SignedRun, target: str) -> Any:
    return run.settings.model_copy(update={"audit_db": target, "audit_dsn": None})


def test_the_receipt_of_a_triple_is_its_owners_whatever_the_origin_of_a_resend(
    database: str, run: SignedRun
) -> None:
    owner, _ = triple(run)
    trusted = load_trusted_keys(run.trusted_keys_file)
    store = open_store(database, readonly=True)
    try:
        stored = store.stored_verdicts(RUN, "d-overclaim")
        assert stored[0]["event_id"] == "guard:forged-r1"  # the re-send sorts first by its origin
        verdict, _, missing = receipt_parts(store, RUN, "d-overclaim", None, trusted)
        assert receipt_parts(store, RUN, "d-overclaim", 1, trusted)[0] == verdict
    finally:
        store.close()
    assert verdict == owner and missing == []
    written = write_receipt(settings_for(run, database), RUN, "d-overclaim", None)  # receipt RUN DRAFT
    assert written["verdict"] == owner and verify_receipt(written, trusted) == []


async def test_the_page_and_the_download_agree_on_the_owner(database: str, run: SignedRun) -> None:
    owner, conflict = triple(run)
    client = TestClient(TestServer(build_app(settings_for(run, database))))
    await client.start_server()
    try:
        doc = await (await client.get(f"/runs/{RUN}?format=json")).json()
        answer = await client.get(f"/runs/{RUN}/drafts/d-overclaim/receipt.json")
        receipt = await answer.json()
    finally:
        await client.close()
    rows = [d for d in doc["drafts"] if d["draft_id"] == "d-overclaim"]
    assert [(r["event_id"], r.get("conflict_with")) for r in rows] == [
        (owner["event_id"], None),
        (conflict["event_id"], owner["event_id"]),  # more than one signed verdict: shown as a conflict
    ]
    assert rows[0]["receipt_href"].endswith("/drafts/d-overclaim/receipt.json")
    assert "receipt_href" not in rows[1]
    assert answer.status == 200 and receipt["verdict"] == owner
    assert verify_receipt(receipt, load_trusted_keys(run.trusted_keys_file)) == []


def test_owner_rank_reads_the_sinks_positions_and_prefers_the_original_of_copies() -> None:
    read = {
        "a" * 64: DraftRead("t.diagnosis-drafts", 0, 7),
        "b" * 64: DraftRead("t.diagnosis-drafts", 0, 3),
    }

    def verdict(sha: str, event_id: str) -> Any:
        return {"event_id": event_id, "draft_sha256": sha, "draft_id": "d", "attempt": 1}

    later = verdict("a" * 64, "guard:t.diagnosis-drafts:0:7:1")
    first = verdict("b" * 64, "guard:t.diagnosis-drafts:0:3:1")
    copy = verdict("b" * 64, "guard:aaa-a-copy")  # the same draft's verdict under another event id
    repeat = verdict("b" * 64, "guard:t.diagnosis-drafts:0:9:1")  # the same bytes sent again: REPEAT
    unknown = verdict("c" * 64, "guard:t.diagnosis-drafts:0:0:1")  # its draft is not in the store
    ordered = sorted([unknown, copy, later, repeat, first], key=lambda v: owner_rank(v, read))
    assert ordered == [first, copy, repeat, later, unknown]
    rows: Any = [
        {"event_id": e, "draft_id": d, "attempt": 1}
        for e, d in [(later["event_id"], "d"), ("guard:other", "d-2"), (first["event_id"], "d")]
    ]
    assert [r["event_id"] for r in owners_first(rows, [later, first], read)] == [
        first["event_id"],
        "guard:other",  # another triple keeps its place
        later["event_id"],
    ]
