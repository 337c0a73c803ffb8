"""The run page's view of a draft marks each specific of a reviewed text (SPEC 4.2, issue 31 item 4):
``specifics`` on every analysis item, the conclusion and every action, from the stored entries."""

from __future__ import annotations

from typing import Any

from models.limits import GuardSettings
from streams import codec
from streams.audit.store import StoredEntry
from streams.web.pages.run_evidence import draft_view, entry_view
from tests import review_set
from tests.console import Command, Console, clean_env
from tests.golden import GOLDEN
from tests.support import memory_ledger, verdict_of

GUARD = GOLDEN / "guard"


def golden(draft_id: str) -> tuple[bytes, dict[str, Any], dict[str, dict[str, Any]]]:
    """A golden draft, its verdict, and its run's entries as the run page holds them."""
    ledger_lines = [codec.loads(line) for line in GUARD.joinpath("ledger.jsonl").read_bytes().splitlines()]
    (raw,) = [
        line
        for line in GUARD.joinpath("drafts.jsonl").read_bytes().splitlines()
        if f'"{draft_id}"'.encode() in line
    ]
    verdict = verdict_of(raw, memory_ledger(ledger_lines), GuardSettings())
    entries = {
        e["tool_call_id"]: entry_view(StoredEntry(e["tool_call_id"], e, False, "ledger[0]@0"), (), None, 1200)
        for e in ledger_lines
        if e["run_id"] == "run-g"
    }
    return raw, dict(verdict), entries


def marks(view_part: dict[str, Any]) -> list[tuple[str, str, bool, str | None, str | None]]:
    return [
        (s["kind"], s["value"], s["supported"], s["tool_call_id"], s["document_id"])
        for s in view_part["specifics"]
    ]


def test_each_reviewed_text_has_its_specifics_with_where_they_were_found() -> None:
    raw, verdict, entries = golden("d-review")
    view = draft_view(verdict, raw, entries, None)
    doc = "e2e-gateway-b9c1fa12-md-34223174#chunk-1"
    # each specific as the draft wrote it (docs/review-rules.md §9), its unit and marks included
    assert marks(view["analysis"][0]) == [
        ("identifier", "proxy_read_timeout", True, "call_x1", doc),
        ("number", "30s", False, None, None),
        ("number", "504", True, "call_x1", doc),
    ]
    assert marks(view["analysis"][1]) == [
        ("quote", "“证书过期”", True, None, None),
        ("number", "2025", False, None, None),
    ]
    assert marks(view["conclusion"]) == [
        ("identifier", "proxy_connect_timeout", False, None, None),
        ("number", "120s", False, None, None),
    ]
    assert marks(view["action_plan"][0]) == [("quote", "`systemctl restart nginx`", False, None, None)]
    # the page agrees with the verdict: what it marks unsupported is what the guard reported
    unsupported = {
        (p, s["value"]) for p, part in _parts(view) for s in part["specifics"] if not s["supported"]
    }
    reported = {
        (v["path"], named) for v in verdict["violations"] for named in review_set.named({"violations": [v]})
    }
    assert unsupported == reported


def _parts(view: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    parts = [(f"analysis[{i}].content", a) for i, a in enumerate(view["analysis"])]
    parts += [("conclusion.content", view["conclusion"])] if view["conclusion"] else []
    return parts + [(f"action_plan[{i}].content", a) for i, a in enumerate(view["action_plan"])]


def test_texts_that_were_not_reviewed_have_none() -> None:
    raw, verdict, entries = golden("d-skip")  # a1 cites a FAILED call; the conclusion builds on a1
    view = draft_view(verdict, raw, entries, None)
    assert view["analysis"][0]["specifics"] == []
    assert marks(view["analysis"][1]) == [("number", "45s", False, None, None)]
    assert view["conclusion"]["specifics"] == []
    assert marks(view["action_plan"][0]) == [("number", "90s", False, None, None)]


def test_review_off_shows_no_specifics() -> None:
    raw, verdict, entries = golden("d-review")
    view = draft_view(verdict, raw, entries, None, review=False)
    assert all(part["specifics"] == [] for _, part in _parts(view))


def test_verify_with_review_off_and_with_a_bad_review_setting(script: Console) -> None:
    """EC_GUARD__REVIEW=off gives the verdicts of A-C alone; any other value than enforce/off is a
    configuration error that names the variable (exit 2, no traceback)."""
    drafts = GUARD.joinpath("drafts.jsonl").read_bytes()
    args = ("verify", "--ledger", str(GUARD / "ledger.jsonl"))
    (off,) = script.run(Command(args, clean_env(EC_GUARD__REVIEW="off"), stdin=drafts, timeout=60))
    verdicts = [codec.loads(line) for line in off.stdout.splitlines()]
    assert off.returncode == 0 and len(verdicts) == len(drafts.splitlines())
    assert not [v for verdict in verdicts for v in verdict["violations"] if v["code"].startswith("CLAIM_")]
    assert {v["draft_id"]: v["verdict"] for v in verdicts}["d-review"] == "PASS"
    (bad,) = script.run(Command(args, clean_env(EC_GUARD__REVIEW="warn"), stdin=drafts, timeout=60))
    assert bad.returncode == 2 and bad.stdout == b""
    assert b"EC_GUARD__REVIEW" in bad.stderr and b"'enforce' or 'off'" in bad.stderr
    assert b"Traceback" not in bad.stderr
