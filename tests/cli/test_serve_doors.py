"""``serve`` hardened (issue 32 items 5 and 6): only a loopback ``Host`` (or an allowed name) is
answered, the run list comes a page at a time, and a draft is write-once per ``(run_id, draft_id,
attempt)`` on the page and in its receipt: a later, different draft of a triple is shown as a conflict
beside the first, never in its place.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from streams.audit.factory import open_store
from streams.trust.receipt import choose_verdict
from streams.web.pages import render as pages
from tests.cli.conftest import Serve
from tests.streams.audit_records import chain, guard

Make = Callable[..., Any]


@pytest.fixture
async def make(tmp_path: Path, serve_app: Serve) -> AsyncIterator[Make]:
    target = str(tmp_path / "audit.db")
    store = open_store(target)
    try:
        records = [r for n in range(5) for r in chain(f"run-{n}", f"call_{n}", n * 3)]
        assert store.apply(records) == len(records)
    finally:
        store.close()

    async def start(*allowed: str) -> TestClient[Any, Any]:
        return await serve_app(target, *allowed)

    yield start


async def test_a_foreign_host_is_403_and_an_unreadable_one_400(make: Make) -> None:
    client = await make("audit.internal")
    for host in ("evil.example", "localhost.", "127.1", "2130706433", "rebound.attacker.test:8088"):
        answer = await client.get("/runs", headers={"Host": host})
        assert answer.status == 403, host
        assert "run-0" not in await answer.text()
        answer = await client.get("/runs/run-0", headers={"Host": host})
        assert answer.status == 403, host
    for host in ("::1", "[::1", "a b"):
        answer = await client.get("/runs", headers={"Host": host})
        assert answer.status == 400, host
    for host in ("localhost:8088", "127.0.0.1", "[::1]:8088", "audit.internal", "AUDIT.internal:80"):
        answer = await client.get("/runs", headers={"Host": host})
        assert answer.status == 200, host


async def test_the_run_list_comes_a_page_at_a_time(make: Make) -> None:
    client = await make()
    answer = await client.get("/runs?limit=2&format=json")
    first = await answer.json()
    assert [run["run_id"] for run in first["runs"]] == ["run-4", "run-3"]
    assert (first["run_count"], first["offset"]) == (5, 0)
    page = await (await client.get("/runs?limit=2")).text()
    assert 'rel="next" href="/runs?limit=2&amp;offset=2"' in page and 'rel="prev"' not in page
    last = await (await client.get("/runs?limit=2&offset=4&format=json")).json()
    assert [run["run_id"] for run in last["runs"]] == ["run-0"]
    page = await (await client.get("/runs?limit=2&offset=4")).text()
    assert 'rel="prev" href="/runs?limit=2&amp;offset=2"' in page and 'rel="next"' not in page
    assert (await client.get("/runs")).status == 200  # the default page
    for bad in ("-1", "x", "1" * 10):
        assert (await client.get(f"/runs?offset={bad}")).status == 400, bad


def _view(sha: str) -> dict[str, Any]:
    return {
        "stored_draft": False,
        "stored_verdict": True,
        "attempts": [1],
        "draft_sha256": sha,
        "analysis": [],
        "conclusion": None,
        "action_plan": [],
        "limitations": [],
        "limitation_violations": [],
        "other_violations": [],
        "signature": None,
    }


def test_a_second_draft_for_one_triple_is_shown_as_a_conflict_beside_the_first() -> None:
    first = guard("run-d", 20, 1, "PASS", []) | {"event_id": "ev-first"}
    second = guard("run-d", 21, 1, "REJECT", ["CITATION_NOT_FOUND"]) | {"event_id": "ev-second"}
    rows = [
        {
            "event_id": r["event_id"],
            "verdict": r["fields"]["verdict"],
            "draft_id": "d-1",
            "attempt": 1,
            "violation_codes": r["fields"]["violation_codes"],
            "cited_tool_call_ids": [],
        }
        for r in (first, second)
    ]
    evidence = {
        "chain": [],
        "entries": {},
        "signatures_checked": False,
        "drafts": {"ev-first": _view("a" * 64), "ev-second": _view("b" * 64)},
    }
    document = pages.run_document("run-d", [], rows, {}, evidence)
    shown, later = document["drafts"]
    assert shown["event_id"] == "ev-first" and "conflict_with" not in shown
    assert shown["receipt_href"] == "/runs/run-d/drafts/d-1/receipt.json"
    assert later["event_id"] == "ev-second" and later["conflict_with"] == "ev-first"
    assert "receipt_href" not in later
    page = pages.run_page(document)
    assert page.index('data-event-id="ev-first"') < page.index('data-conflict-with="ev-first"')
    assert "CONFLICT" in page
    # the same draft sent again (the same bytes) adds nothing: its first verdict stands for it
    evidence["drafts"]["ev-second"] = _view("a" * 64)
    assert [d["event_id"] for d in pages.run_document("run-d", [], rows, {}, evidence)["drafts"]] == [
        "ev-first"
    ]


def test_the_receipt_holds_the_first_verdict_of_a_triple() -> None:
    first = {"draft_id": "d-1", "attempt": 1, "verdict": "PASS", "draft_sha256": "a" * 64}
    later = {"draft_id": "d-1", "attempt": 1, "verdict": "REJECT", "draft_sha256": "b" * 64}
    assert choose_verdict([first, later], "run-d", "d-1", 1) is first
    assert choose_verdict([first, later], "run-d", "d-1", None) is first


def test_serve_bound_to_an_ipv6_address_answers_requests_to_that_address() -> None:
    """A Host header writes an IPv6 address in brackets; ``serve --host fd00::5`` must allow ``[fd00::5]``."""
    from multidict import CIMultiDict

    from streams.web.hosts import host_name, loopback_or_allowed
    from streams.web.pages.site import allowed_host_names

    allowed = allowed_host_names("fd00::5")
    assert loopback_or_allowed(host_name(CIMultiDict(Host="[fd00::5]:8088")), allowed)
    assert not loopback_or_allowed(host_name(CIMultiDict(Host="evil.example")), allowed)
    assert allowed_host_names("audit.example") == ("audit.example",) and allowed_host_names("::") == ()
