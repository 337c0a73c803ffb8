"""``evidence-chain serve`` over an audit database filled by the real stations from the golden cases,
on SQLite and PostgreSQL: the JSON variants over plain HTTP, and the pages in a real headless Chromium
(Debian's ``chromium`` and ``chromium-driver``, installed by ``make browser``) as a person sees them.

The golden run is the guard's (``tests/data/golden/guard``, run ``run-g``): its ledger entries go through
the ledger station (the one whose projection was tampered with is refused there and dead-lettered, then
put into the ledger as Redis would hold it after tampering), then every golden draft through the guard,
plus two hostile ones: a draft whose ``draft_id`` is markup and one whose ``run_id`` is.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest

from models.vocab import Station
from streams import codec
from streams.audit.factory import open_store
from streams.envelope import audit_record, event_id
from streams.messages import Record
from streams.settings import Settings
from streams.worker.runner import wall_clock
from tests.integration.serving import Links, browser, get, serving  # noqa: F401 - browser: a fixture
from tests.streams.conftest import golden_lines, handle, origin_of, records, run_chain

pytestmark = pytest.mark.timeout(180)

RUN = "run-g"
HOSTILE_DRAFT_ID = "<script>alert(1)</script><img src=x onerror=alert(2)>"
HOSTILE_RUN_ID = '<i>run</i>"><b>x</b>'


@dataclass(frozen=True)
class Golden:
    """The audit topic's values after the golden run, and what a person should find on the pages."""

    values: list[bytes]
    orphans: int
    """Verdicts without a readable run id (unparsable drafts, the hostile-run draft)."""
    runs_by_recency: list[str]
    tool_calls: set[str]
    dead_letters: int
    drafts: Counter[tuple[str, str, tuple[str, ...]]]
    """(draft_id or "—", verdict, sorted violation codes) of each of run-g's drafts."""


def _hostile_drafts() -> list[bytes]:
    passing = codec.loads(golden_lines("guard", "drafts.jsonl")[0])  # the golden PASS draft
    return [
        codec.dumps({**passing, "draft_id": HOSTILE_DRAFT_ID}),
        codec.dumps({**passing, "run_id": HOSTILE_RUN_ID, "draft_id": "d-hostile-run"}),
    ]


async def _golden_run() -> Golden:
    settings = Settings(topic_prefix="t.")
    # The pipe cases: postprocess → project → ledger, runs run-golden-1 ... (no drafts).
    sink, ledger = await run_chain(settings, golden_lines("pipe", "input.jsonl"))
    # The guard's ledger, written by the ledger station as `projected` records of partition 1.
    entries = [codec.loads(line) for line in golden_lines("guard", "ledger.jsonl")]
    projected = [
        codec.dumps(
            {
                "run_id": e["run_id"],
                "tool_call_id": e["tool_call_id"],
                "status": "OK" if e["status"] == "READY" else "FAILED",
                "projection": e["projection"],
                "projection_sha256": e["projection_sha256"],
                "failure_reason": None,
                "origin": origin_of("t.raw-hits", 1, 500 + i, 1_700_000_500_000 + i),
            }
        )
        for i, e in enumerate(entries)
    ]
    await handle(
        Station.LEDGER, settings, sink, records("t.projected", projected, partition=1, start=500), ledger
    )
    refused = len(entries) - ledger.load(entries)  # the station refused some; Redis holds them anyway
    assert refused < len(entries)
    drafts = [*golden_lines("guard", "drafts.jsonl"), *_hostile_drafts()]
    await handle(Station.GUARD, settings, sink, records("t.diagnosis-drafts", drafts, start=1000), ledger)

    audits = [codec.loads(m.value) for m in sink.on("t.audit")]
    # The audit never names an invalid run id (the hostile-run draft is a verdict without one); a
    # record written by some other producer could, so one is added as it would arrive.
    foreign = dict(next(a for a in audits if a["station"] == "guard" and a["run_id"] == RUN))
    foreign.update(
        run_id=HOSTILE_RUN_ID, event_id="guard:foreign-producer", source_timestamp=1_600_000_000_000
    )
    audits.append(foreign)
    verdicts = sink.values("t.verdicts")
    # The set-up reproduces the golden verdicts (codes compared as the golden README says).
    expected = [codec.loads(line) for line in golden_lines("guard", "expected_verdicts.jsonl")]
    for got, want in zip(verdicts, expected, strict=False):
        assert (got["verdict"], sorted(v["code"] for v in got["violations"])) == (
            want["verdict"],
            sorted(v["code"] for v in want["violations"]),
        ), want["draft_id"]
    latest: dict[str, int] = {}
    for a in audits:
        if a["run_id"] is not None:
            latest[a["run_id"]] = max(latest.get(a["run_id"], 0), a["source_timestamp"] or 0)
    return Golden(
        values=[codec.dumps(a) for a in audits],
        orphans=sum(1 for a in audits if a["station"] == "guard" and a["run_id"] is None),
        runs_by_recency=sorted(latest, key=lambda run: (-latest[run], run)),
        tool_calls={a["tool_call_id"] for a in audits if a["run_id"] == RUN and a["tool_call_id"]},
        dead_letters=len(
            {a["event_id"] for a in audits if a["run_id"] == RUN and a["station"] == "dead-letter"}
        ),
        drafts=Counter(
            (
                v["draft_id"] if v["draft_id"] is not None else "—",
                v["verdict"],
                tuple(sorted(x["code"] for x in v["violations"])),
            )
            for v in verdicts
            if v["run_id"] == RUN
        ),
    )


@pytest.fixture(scope="module")
def golden() -> Golden:
    return asyncio.run(_golden_run())


@pytest.fixture
def database(target: str, golden: Golden) -> str:
    """A fresh audit database of each backend holding the golden run."""
    store = open_store(target)
    try:
        store.apply_values((f"t.audit[0]@{i}", v) for i, v in enumerate(golden.values))
    finally:
        store.close()
    return target


# --- JSON, plain HTTP --------------------------------------------------------------------------------


def test_the_json_variants_carry_the_runs_and_the_golden_trail(
    database: str, golden: Golden, tmp_path: Path
) -> None:
    with serving(database, tmp_path) as base:
        status, kind, body = get(f"{base}/runs?format=json")
        assert (status, kind) == (200, "application/json")
        runs = codec.loads(body)
        assert [r["run_id"] for r in runs["runs"]] == golden.runs_by_recency
        (run,) = [r for r in runs["runs"] if r["run_id"] == RUN]
        outcomes = Counter(verdict for _, verdict, _ in golden.drafts.elements())
        assert run["verdicts"] == {o: outcomes[o] for o in ("PASS", "REJECT", "FALLBACK")}
        assert (run["tool_calls"], run["dead_letters"]) == (len(golden.tool_calls), golden.dead_letters)
        assert run["href"] == f"/runs/{RUN}"
        (hostile,) = [r for r in runs["runs"] if r["run_id"] == HOSTILE_RUN_ID]
        assert hostile["href"] == "/runs/" + quote(HOSTILE_RUN_ID, safe="")
        assert runs["verdicts_without_run_id"] == golden.orphans >= 3

        status, kind, body = get(f"{base}/runs/{RUN}?format=json")
        assert (status, kind) == (200, "application/json")
        trail = codec.loads(body)
        assert {c["tool_call_id"] for c in trail["tool_calls"]} == golden.tool_calls
        assert all(c["anchor"] == f"call-{c['tool_call_id']}" for c in trail["tool_calls"])
        assert (
            Counter(
                (d["draft_id"] or "—", d["verdict"], tuple(sorted(v["code"] for v in d["violations"])))
                for d in trail["drafts"]
            )
            == golden.drafts
        )
        for draft in trail["drafts"]:
            assert [v["index"] for v in draft["violations"]] == list(range(len(draft["violations"])))
        tampered = [c for c in trail["tool_calls"] if c["dead_letter_reason"]]
        assert tampered and all(c["dead_letter_reason"] == "SCHEMA_VIOLATION" for c in tampered)

        status, kind, body = get(f"{base}/runs/{quote(HOSTILE_RUN_ID, safe='')}?format=json")
        assert status == 200 and codec.loads(body)["run_id"] == HOSTILE_RUN_ID

        status, kind, body = get(f"{base}/runs/run-nobody?format=json")
        assert (status, kind) == (404, "application/json")
        assert "no audit records for run run-nobody" in codec.loads(body)["error"]
        status, _, body = get(f"{base}/runs?format=json&limit=0")
        assert status == 400 and b"limit must be" in body
        assert [r["run_id"] for r in codec.loads(get(f"{base}/runs?format=json&limit=2")[2])["runs"]] == (
            golden.runs_by_recency[:2]
        )


def test_violations_that_name_their_tool_calls_link_to_them(database: str, tmp_path: Path) -> None:
    """A guard audit record with ``fields.violations`` (code, path, tool calls): each links to its row."""
    origin = origin_of("t.diagnosis-drafts", 0, 5000, 1_700_000_900_000)
    record = audit_record(
        station=Station.GUARD,
        event=event_id(Station.GUARD, origin),
        run_id=RUN,
        tool_call_id=None,
        origin=origin,
        record=Record("t.diagnosis-drafts", 0, 5000, None, None, b""),
        fields={
            "draft_id": "d-detailed",
            "attempt": 1,
            "verdict": "REJECT",
            "violation_codes": ["NORMAL_CITES_NO_EVIDENCE", "CITATION_NOT_FOUND", "LIMITATIONS_MISSING"],
            "cited_tool_call_ids": ["call_x2", "call_nope"],
            "violations": [
                {
                    "code": "NORMAL_CITES_NO_EVIDENCE",
                    "path": "analysis[0].tool_call_ids[0]",
                    "tool_call_ids": ["call_x2"],
                },
                {
                    "code": "CITATION_NOT_FOUND",
                    "path": "analysis[1].tool_call_ids[0]",
                    "tool_call_ids": ["<b>nope</b>"],
                },
                {"code": "LIMITATIONS_MISSING", "path": "limitations", "tool_call_ids": []},
            ],
        },
        processed_at=wall_clock(),
    )
    store = open_store(database)
    try:
        assert store.apply([record]) == 1
    finally:
        store.close()
    with serving(database, tmp_path) as base:
        status, kind, body = get(f"{base}/runs/{RUN}")
        assert (status, kind) == (200, "text/html")
        page = Links()
        page.feed(body.decode())
        assert ("NORMAL_CITES_NO_EVIDENCE", "#call-call_x2") in page.violation_links
        assert "call-call_x2" in page.ids
        assert page.fragment_links
        for href in page.fragment_links:
            assert unquote(href.removeprefix("#")) in page.ids  # no link points nowhere
        assert "&lt;b&gt;nope&lt;/b&gt;" in body.decode() and page.tags["b"] == 0  # text, not markup
        (detailed,) = [
            d
            for d in codec.loads(get(f"{base}/runs/{RUN}?format=json")[2])["drafts"]
            if d["draft_id"] == "d-detailed"
        ]
        assert [(v["code"], v["path"], v["tool_call_ids"]) for v in detailed["violations"]] == [
            ("NORMAL_CITES_NO_EVIDENCE", "analysis[0].tool_call_ids[0]", ["call_x2"]),
            ("CITATION_NOT_FOUND", "analysis[1].tool_call_ids[0]", ["<b>nope</b>"]),
            ("LIMITATIONS_MISSING", "limitations", []),
        ]


# --- a real browser ----------------------------------------------------------------------------------


def _no_alert(driver: Any) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        driver.switch_to.alert  # noqa: B018 - raises when there is none
    except NoAlertPresentException:
        return True
    return False


def test_a_person_sees_the_runs_and_the_golden_trail_in_a_browser(
    database: str,
    golden: Golden,
    tmp_path: Path,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    from selenium.webdriver.common.by import By

    with serving(database, tmp_path) as base:
        browser.get(f"{base}/")
        rows = browser.find_elements(By.CSS_SELECTOR, "#runs tr.run")
        assert [r.get_attribute("data-run-id") for r in rows] == golden.runs_by_recency  # newest first
        (row,) = [r for r in rows if r.get_attribute("data-run-id") == RUN]
        outcomes = Counter(verdict for _, verdict, _ in golden.drafts.elements())
        assert [
            row.find_element(By.CSS_SELECTOR, f"td.{c}").text
            for c in ("tool-calls", "dead-letters", "verdicts-PASS", "verdicts-REJECT", "verdicts-FALLBACK")
        ] == [
            str(n)
            for n in (
                len(golden.tool_calls),
                golden.dead_letters,
                outcomes["PASS"],
                outcomes["REJECT"],
                outcomes["FALLBACK"],
            )
        ]
        # The hostile run id is a row like any other, its markup shown as text.
        (hostile,) = [r for r in rows if r.get_attribute("data-run-id") == HOSTILE_RUN_ID]
        assert hostile.find_element(By.CSS_SELECTOR, "td.run-id a").text == HOSTILE_RUN_ID
        assert browser.find_elements(By.CSS_SELECTOR, "#runs i, #runs b") == []

        row.find_element(By.CSS_SELECTOR, "td.run-id a").click()  # to the golden run's page
        assert browser.current_url == f"{base}/runs/{RUN}"
        assert browser.find_element(By.ID, "run-id").text == RUN
        calls = browser.find_elements(By.CSS_SELECTOR, "#tool-calls tr.tool-call")
        assert {c.get_attribute("id") for c in calls} == {f"call-{t}" for t in golden.tool_calls}
        seen = Counter(
            (
                d.find_element(By.CSS_SELECTOR, ".draft-id").text,
                d.find_element(By.CSS_SELECTOR, ".verdict").text,
                tuple(sorted(c.text for c in d.find_elements(By.CSS_SELECTOR, "li.violation code.code"))),
            )
            for d in browser.find_elements(By.CSS_SELECTOR, "article.draft")
        )
        assert seen == golden.drafts  # every golden verdict, with its violation codes, as a person reads it

        # Every link to a tool call lands on a row that exists; following one goes there.
        links = browser.find_elements(By.CSS_SELECTOR, 'a[href^="#call-"]')
        assert links
        for link in links:
            anchor = unquote(link.get_attribute("href").split("#", 1)[1])
            assert browser.find_elements(By.ID, anchor), anchor
        (cite,) = [
            d
            for d in browser.find_elements(By.CSS_SELECTOR, "article.draft")
            if d.find_element(By.CSS_SELECTOR, ".draft-id").text == "d-cite"
        ]
        refs = cite.find_elements(By.CSS_SELECTOR, ".cites .call-ref")
        linked = {r.text for r in refs if r.tag_name == "a"}
        unrecorded = {r.text for r in refs if "unrecorded" in (r.get_attribute("class") or "")}
        assert linked == {"call_failed", "call_x2", "call_x1"}  # run-g's own tool calls
        assert unrecorded == {"call_nope", "call_foreign", "call_moved"}  # another run's, or nobody's
        # the guard records which tool call each violation is about: those violations link to it
        about = [
            v
            for v in cite.find_elements(By.CSS_SELECTOR, "li.violation")
            if v.find_elements(By.CSS_SELECTOR, 'a[href^="#call-"], .call-ref')
        ]
        assert len(about) >= 3, [v.text for v in cite.find_elements(By.CSS_SELECTOR, "li.violation")]
        failed = [r for r in refs if r.text == "call_failed"][0]
        failed.click()
        assert browser.current_url.endswith("#call-call_failed")
        assert browser.find_element(By.ID, "call-call_failed").is_displayed()

        # The hostile draft id is visible text; nothing it holds became an element or ran.
        (shown,) = [
            e for e in browser.find_elements(By.CSS_SELECTOR, ".draft-id") if e.text == HOSTILE_DRAFT_ID
        ]
        assert shown.is_displayed()
        assert browser.find_elements(By.CSS_SELECTOR, "script, img") == []
        assert _no_alert(browser)
        assert "<script>alert(1)" not in browser.page_source

        browser.get(f"{base}/runs/{quote(HOSTILE_RUN_ID, safe='')}")
        assert browser.find_element(By.ID, "run-id").text == HOSTILE_RUN_ID
        assert browser.find_elements(By.CSS_SELECTOR, "#run-id i, #run-id b") == []
        assert _no_alert(browser)
