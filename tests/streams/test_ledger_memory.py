"""The in-memory ledger (``verify --ledger``, the fake of Redis) answers "another run owns this tool
call" from an index by tool call id, never by scanning every entry (issue 23, item 7: 100,000
entries × 5 drafts × 50 unknown citations took 51.6 s)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from models.ledger import LEDGER_ENTRY_FIELDS
from streams import codec
from streams.ledger.memory import MemoryLedgerStore
from streams.offline.verify import verdict_line
from streams.pipeline import StationRules
from streams.settings import Settings
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from tests.support import run_now


def entry(run_id: str, tool_call_id: str, status: str = "FAILED") -> dict[str, Any]:
    return {
        **dict.fromkeys(LEDGER_ENTRY_FIELDS),
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": status,
    }


def scanned(store: MemoryLedgerStore, keys: list[LedgerKey]) -> dict[LedgerKey, LedgerLookup]:
    """What the lookups must say, by the definition: a scan of every entry."""
    out = {}
    for run_id, tool_call_id in keys:
        found = store.entries.get((run_id, tool_call_id))
        foreign = found is None and any(t == tool_call_id and r != run_id for r, t in list(store.entries))
        out[(run_id, tool_call_id)] = LedgerLookup(found, foreign)
    return out


def test_the_store_keeps_the_runs_of_each_tool_call_id_as_its_entries_change() -> None:
    store = MemoryLedgerStore()
    store.load([entry("r1", "c1"), entry("r2", "c1"), entry("r1", "c2"), entry("r1", "c1", "READY")])
    assert store.entries.runs_holding("c1") == {"r1", "r2"}
    assert store.entries.runs_holding("c2") == {"r1"}
    assert store.entries.runs_holding("nope") == frozenset()

    del store.entries[("r2", "c1")]
    assert store.entries.runs_holding("c1") == {"r1"}
    store.entries.update({("r3", "c9"): store.entries[("r1", "c2")]})  # tests seed it like a dict
    assert store.entries.runs_holding("c9") == {"r3"}
    store.entries.pop(("r1", "c2"))
    assert store.entries.runs_holding("c2") == frozenset()
    assert set(store.entries) == {("r1", "c1"), ("r3", "c9")}
    assert store.entries == dict(store.entries.items())


async def test_writes_keep_the_index_too() -> None:
    store = MemoryLedgerStore()
    await store.write_many([entry("r1", "c1"), entry("r2", "c1")])  # type: ignore[list-item]
    lookups = store.read_now([("r3", "c1"), ("r1", "c1"), ("r1", "c2")])
    assert lookups[("r3", "c1")] == LedgerLookup(None, True)
    assert lookups[("r1", "c1")].entry is not None and not lookups[("r1", "c1")].foreign_owner
    assert lookups[("r1", "c2")] == LedgerLookup(None, False)


def test_a_missing_citation_never_walks_the_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    store = MemoryLedgerStore()
    store.load(entry(f"run-{i % 7}", f"call-{i}") for i in range(1000))

    def no_scan(self: object) -> Any:
        raise AssertionError("read_now walked every entry to find a tool call id's owners")

    monkeypatch.setattr(type(store.entries), "__iter__", no_scan)
    lookups = store.read_now([("run-1", "call-0"), ("run-0", "call-0"), ("run-0", "unknown")])
    assert lookups[("run-1", "call-0")].foreign_owner
    assert lookups[("run-0", "call-0")].entry is not None
    assert lookups[("run-0", "unknown")] == LedgerLookup(None, False)


def test_lookups_say_what_a_scan_says() -> None:
    rng = random.Random(23)
    store = MemoryLedgerStore()
    store.load(entry(f"run-{rng.randrange(5)}", f"call-{rng.randrange(40)}") for _ in range(120))
    for key in rng.sample(list(store.entries), 10):
        del store.entries[key]
    keys = [(f"run-{r}", f"call-{c}") for r in range(6) for c in range(45)]
    assert store.read_now(keys) == scanned(store, keys)


@pytest.mark.timeout(20)
def test_verify_with_100_000_entries_and_many_unknown_citations_takes_no_scan() -> None:
    """40 drafts × 50 unknown citations against 100,000 entries: about 30 s with one scan per citation."""
    store = MemoryLedgerStore()
    store.load(entry(f"run-{i % 1000}", f"call-{i}") for i in range(100_000))
    rules = StationRules.from_settings(Settings())
    for d in range(40):
        analysis = [
            {"id": f"a{j}", "kind": "NORMAL", "content": "x", "tool_call_ids": [f"unknown-{d}-{j}"]}
            for j in range(50)
        ]
        draft = {
            "run_id": "run-x",
            "draft_id": f"d{d}",
            "attempt": 1,
            "analysis": analysis,
            "conclusion": {"content": "c", "based_on_analysis_ids": ["a0"]},
            "action_plan": [],
            "limitations": ["l"],
        }
        verdict = codec.loads(run_now(verdict_line(codec.dumps(draft), rules, store.read_many)))
        assert verdict["verdict"] == "REJECT"
        assert verdict["violation_count"] >= 50
