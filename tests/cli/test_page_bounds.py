"""The run page stays under 5 MB, and so does its JSON (issue 38 item 5, M7: one 42 KB draft citing 50
lookups from each of 100 items made a 39.7 MB page and 33 MB of JSON). Each cited projection is drawn
once, in the entries, and the items that cite it link to it; a page at its cap says what it left out and
links to the rest.

The runs go through the real stations in memory (postprocess → project → ledger → guard, with the review
on), into a SQLite audit store, and are read back through ``serve``'s own application.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from models.vocab import Station
from streams import codec
from streams.audit.evidence import TopicValue, applied_at, evidence_of
from streams.audit.factory import open_store
from streams.audit.store import check_record
from streams.settings import Settings
from streams.web.pages import render as pages
from streams.web.pages.window import MAX_PAGE_BYTES, Starts
from tests.cli.conftest import Serve
from tests.streams.conftest import FakeSink, handle, records, run_chain

RUN = "run-m7"
LOOKUPS = 50
ITEMS = 100
HOSTS = ("127.0.0.1",)


def raw_hits(index: int) -> bytes:
    """A lookup that shows five evidence items, each with an excerpt near the packing budget's share."""
    hits = [
        {
            "evidence_key": f"doc-{index:02d}-{n}#chunk-0",
            "document_id": f"doc-{index:02d}-{n}",
            "source": f"runbooks/doc-{index:02d}-{n}.md",
            "title": f"Runbook {index} part {n}",
            "breadcrumb": f"Runbook {index} > part {n}",
            "excerpt": f"marker-{index:02d}-{n} " + "upstream read timeout, keepalive and pool sizing. " * 15,
            "quality_score": 0.9 - n / 100,
            "relevance_level": "PRECISE",
        }
        for n in range(5)
    ]
    response = {
        "query": f"question {index}",
        "mode": "hybrid",
        "hits": hits,
        "relevance_level": "PRECISE",
        "evidence_status": "supported",
        "retrieval_trace": {"mode": "hybrid", "recall_count": 20, "no_evidence_basis": None},
    }
    return codec.dumps({"run_id": RUN, "tool_call_id": f"call-{index:02d}", "response": response})


def draft(draft_id: str) -> bytes:
    """~42 KB: 100 analysis items, each citing all 50 lookups (and naming no document)."""
    calls = [f"call-{index:02d}" for index in range(LOOKUPS)]
    analysis = [
        {
            "id": f"a{n}",
            "kind": "NORMAL",
            "content": f"item {n}: the upstream read timeout and keepalive explain the errors seen. "
            + "See the runbooks cited. " * 8,
            "tool_call_ids": calls,
        }
        for n in range(ITEMS)
    ]
    body = {
        "run_id": RUN,
        "draft_id": draft_id,
        "attempt": 1,
        "analysis": analysis,
        "conclusion": {"content": "the upstream is slow", "based_on_analysis_ids": ["a0"]},
        "action_plan": [],
        "limitations": ["no live metrics were read"],
    }
    return codec.dumps(body)


def values(sink: FakeSink, topic: str) -> list[TopicValue]:
    return [TopicValue(topic, 0, i, m.value) for i, m in enumerate(sink.on(topic))]


async def stored_run(path: Path, drafts: int) -> str:
    """The run with ``drafts`` such drafts, in a SQLite audit store at ``path``."""
    settings = Settings(topic_prefix="t.")
    sink, ledger = await run_chain(settings, [raw_hits(index) for index in range(LOOKUPS)])
    sent = [draft(f"d-{n}") for n in range(drafts)]
    await handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", sent), ledger)
    store = open_store(str(path))
    try:
        evidence = evidence_of(
            values(sink, "t.ledger"),
            values(sink, "t.verdicts"),
            [TopicValue("t.diagnosis-drafts", 0, i, value) for i, value in enumerate(sent)],
            applied_at(),
            256 * 1024,
            values(sink, "t.reports"),
        )
        store.apply([check_record(codec.loads(m.value)) for m in sink.on("t.audit")], evidence)
    finally:
        store.close()
    return str(path)


async def fetch(client: TestClient[Any, Any], address: str) -> bytes:
    answer = await client.get(address)
    body = await answer.read()
    assert answer.status == 200, body[:300]
    return body


async def test_the_m7_run_is_one_page_under_5_mb_with_each_projection_once(
    tmp_path: Path, serve_app: Serve
) -> None:
    client = await serve_app(await stored_run(tmp_path / "audit.db", drafts=1))
    html = await fetch(client, f"/runs/{RUN}")
    document = codec.loads(await fetch(client, f"/runs/{RUN}?format=json"))
    assert len(html) < MAX_PAGE_BYTES and len(codec.dumps(document)) < MAX_PAGE_BYTES
    page = html.decode()
    for index in range(LOOKUPS):  # each projection drawn once, in the entries
        for n in range(5):
            assert page.count(f"marker-{index:02d}-{n} ") == 1, (index, n)
    # every item links to each of the 50 projections it cites, on this page
    links = re.findall(r'<div class="cite"><h4 class="mono"><a href="#shown-call-(\d\d)">', page)
    assert len(links) == ITEMS * LOOKUPS and set(links) == {f"{i:02d}" for i in range(LOOKUPS)}
    assert page.count('class="cited-all dim">all 5 of its evidence items') == ITEMS * LOOKUPS
    # nothing was left out: no window has a next page
    assert {name: w["next"] for name, w in document["left_out"].items()} == dict.fromkeys(
        ("tool_calls", "entries", "drafts")
    )
    (view,) = [d["evidence"] for d in document["drafts"]]
    assert view["analysis"][0]["cites"][0] == {
        "tool_call_id": "call-00",
        "stored": True,
        "evidence_status": "EVIDENCE_FOUND",
        "item_count": 5,
        "items": None,
    }


async def test_a_run_over_the_cap_is_paged_and_each_page_says_what_it_left_out(
    tmp_path: Path, serve_app: Serve
) -> None:
    client = await serve_app(await stored_run(tmp_path / "audit.db", drafts=4))
    seen: list[str] = []
    address: str | None = f"/runs/{RUN}?format=json"
    pages_read = 0
    while address is not None:
        body = await fetch(client, address)
        assert len(body) < MAX_PAGE_BYTES
        document = codec.loads(body)
        window = document["left_out"]["drafts"]
        assert window["total"] == 4 and window["from"] == len(seen) and window["shown"] >= 1
        seen += [d["draft_id"] for d in document["drafts"]]
        html = await fetch(client, address.replace("format=json&", "").replace("?format=json", ""))
        assert len(html) < MAX_PAGE_BYTES
        if window["next"] is not None:  # the page says what it left out and links to the rest
            assert b'class="left-out"' in html and b"the next ones (" in html
        address = window["next"]
        pages_read += 1
    assert sorted(seen) == sorted(f"d-{n}" for n in range(4)) and pages_read > 1


def test_a_page_whose_html_grows_past_its_json_is_drawn_again_smaller() -> None:
    """Excerpts of markup characters take 4 to 5 times their JSON bytes as HTML: the page is drawn with
    smaller windows until it is under the cap, and says what it left out."""
    excerpt = '<&">' * 300
    entries = [
        {
            "tool_call_id": f"call-{n}",
            "status": "READY",
            "evidence_status": "EVIDENCE_FOUND",
            "items": [{"document_id": f"doc-{n}-{i}", "excerpt": excerpt} for i in range(8)],
            "refused": [],
            "signature": None,
        }
        for n in range(1500)
    ]
    evidence = {
        "chain": [],
        "entries": {e["tool_call_id"]: e for e in entries},
        "signatures_checked": False,
        "drafts": {},
    }
    document = pages.run_document("run-x", [], [], {}, evidence)
    html = pages.run_page(document)
    assert len(html.encode()) < MAX_PAGE_BYTES
    shown = html.count('<article class="shown"')
    assert 0 < shown < 1500
    assert f"Entries 1–{shown} of 1500 are on this page" in html
    later = pages.run_page(document, Starts(entries=shown))
    assert f"Entries {shown + 1}–" in later and 'class="previous"' in later


def test_a_text_lists_at_most_50_specifics_and_counts_the_rest() -> None:
    from streams.web.pages.run_evidence import MAX_SPECIFICS_SHOWN, _some_specifics

    found = [
        {
            "kind": "number",
            "value": str(100 + n),
            "supported": n % 3 == 0,
            "tool_call_id": None,
            "document_id": None,
        }
        for n in range(80)
    ]
    listed = _some_specifics(found)
    assert listed["specifics"] == found[:MAX_SPECIFICS_SHOWN] == found[:50]
    assert listed["specifics_left_out"] == {
        "count": 30,
        "unsupported": sum(1 for s in found[50:] if not s["supported"]),
    }
    assert _some_specifics(found[:3]) == {"specifics": found[:3], "specifics_left_out": None}
