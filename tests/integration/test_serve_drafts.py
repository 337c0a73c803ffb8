"""A second draft for one ``(run_id, draft_id, attempt)`` (issue 32 item 5), through the real stations
and the audit store: the receipt and the run page keep the first verdict; the later draft is shown as
a conflict beside it, never in its place. Today's code handed out the later draft's receipt.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from models.vocab import Station
from streams import codec
from streams.audit.evidence import TopicValue
from streams.audit.factory import open_store
from streams.audit.store import check_record
from streams.cli.audit import settings_with_db
from streams.hashing import sha256_hex
from streams.settings import Settings
from streams.trust import generate_key_pair
from streams.web.pages.site import build_app
from tests.integration.evidence_run import RUN, SignedRun, sample_lines
from tests.streams.conftest import handle, records, run_chain


def second_of(draft: bytes) -> bytes:
    """The same run, draft id and attempt, other bytes (another limitation)."""
    value = codec.loads(draft)
    value["limitations"] = [*(value.get("limitations") or []), "a second sender's words"]
    return codec.dumps(value)


async def run_with_a_second_draft(keys_dir: Path) -> tuple[SignedRun, bytes, bytes]:
    signer, private, public = generate_key_pair(keys_dir, "ledger", "ledger")
    public.write_text(f"{signer.trusted_line('ledger')}\n{signer.trusted_line('guard')}\n", encoding="utf-8")
    settings = Settings(topic_prefix="t.", signing_key_file=str(private), trusted_keys_file=str(public))
    sink, ledger = await run_chain(settings, sample_lines("raw-hits.jsonl"))
    drafts = sample_lines("drafts.jsonl")
    first = next(d for d in drafts if codec.loads(d)["run_id"] == RUN)
    drafts = [*drafts, second_of(first)]
    await handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", drafts), ledger)

    def values(topic: str) -> list[TopicValue]:
        return [TopicValue(topic, 0, i, m.value) for i, m in enumerate(sink.on(topic))]

    run = SignedRun(
        settings=settings,
        signer=signer,
        trusted_keys_file=public,
        audit=[check_record(codec.loads(m.value)) for m in sink.on("t.audit")],
        ledger=values("t.ledger"),
        verdicts=values("t.verdicts"),
        drafts=[TopicValue("t.diagnosis-drafts", 0, i, value) for i, value in enumerate(drafts)],
        reports=values("t.reports"),
    )
    return run, first, drafts[-1]


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[TestClient[Any, Any], bytes, bytes]]:
    run, first, second = await run_with_a_second_draft(tmp_path / "keys")
    target = str(tmp_path / "audit.db")
    store = open_store(target)
    try:
        store.apply(run.audit, run.evidence())
    finally:
        store.close()
    client: TestClient[Any, Any] = TestClient(TestServer(build_app(settings_with_db(target))))
    await client.start_server()
    yield client, first, second
    await client.close()


async def test_the_receipt_and_the_page_keep_the_first_draft_of_a_triple(
    served: tuple[TestClient[Any, Any], bytes, bytes],
) -> None:
    client, first, second = served
    draft_id = codec.loads(first)["draft_id"]
    answer = await client.get(f"/runs/{RUN}/drafts/{draft_id}/receipt.json?attempt=1")
    assert answer.status == 200
    receipt = await answer.json()
    assert receipt["verdict"]["draft_sha256"] == sha256_hex(first)
    document = await (await client.get(f"/runs/{RUN}?format=json")).json()
    mine = [d for d in document["drafts"] if d["draft_id"] == draft_id and d["attempt"] == 1]
    assert len(mine) == 2
    assert "conflict_with" not in mine[0] and mine[0]["evidence"]["draft_sha256"] == sha256_hex(first)
    assert mine[1]["conflict_with"] == mine[0]["event_id"]
    assert mine[1]["evidence"]["draft_sha256"] == sha256_hex(second)
    page = await (await client.get(f"/runs/{RUN}")).text()
    assert page.index(f'data-event-id="{mine[0]["event_id"]}"') < page.index(
        f'data-conflict-with="{mine[0]["event_id"]}"'
    )
    assert (
        "a second sender&#39;s words" not in page
    )  # the later draft is named, its claims not shown as the draft


def test_the_two_drafts_share_a_triple_and_differ() -> None:
    first = next(d for d in sample_lines("drafts.jsonl") if codec.loads(d)["run_id"] == RUN)
    second = codec.loads(second_of(first))
    assert (second["run_id"], second["draft_id"], second.get("attempt", 1)) == (
        RUN,
        codec.loads(first)["draft_id"],
        codec.loads(first).get("attempt", 1),
    )
    assert second_of(first) != first
