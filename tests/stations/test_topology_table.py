"""The one topology table (``models.topology.TOPOLOGY``) says what the stations really do, and every
other wiring table is derived from it (STYLE: declare a wiring fact once)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import Any

from models.limits import SemanticSettings
from models.topology import COMMON_OUTPUTS, TOPOLOGY, chain_from, station_reading
from models.vocab import Station, Topic
from streams import codec
from streams.kafka.admin import WORKER_INPUTS
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import (
    OUTPUT_TOPIC,
    STATIONS,
    Outcome,
    PendingJudge,
    StationRules,
    emissions,
    finish_judge,
    run_station,
)
from streams.replay.compare import COMPARABLE_TOPICS
from streams.settings import Settings
from streams.worker.app import INPUT_TOPIC
from tests.stations.test_semantic import judged as judgement
from tests.support import memory_ledger, settle
from tests.trust.support import draft as golden_draft
from tests.trust.support import golden_entries

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_RAW = ROOT / "tests" / "data" / "golden" / "pipe" / "input.jsonl"
RULES = StationRules.from_settings(Settings())
AT = "2026-12-03T00:00:00.000+00:00"


def test_every_station_has_exactly_one_input_and_each_input_one_station() -> None:
    assert set(TOPOLOGY) == set(STATIONS), "every station the pipeline runs is in the table, and only those"
    inputs = [wiring.input for wiring in TOPOLOGY.values()]
    assert len(inputs) == len(set(inputs)), "two stations consume one topic"
    for station, wiring in TOPOLOGY.items():
        assert station_reading(wiring.input) == station
        assert wiring.outputs, station
        assert wiring.input not in wiring.outputs, station
        assert not set(wiring.outputs) & set(COMMON_OUTPUTS), station
    assert set(Topic) == {w.input for w in TOPOLOGY.values()} | {
        topic for w in TOPOLOGY.values() for topic in w.outputs
    } | set(COMMON_OUTPUTS), "every topic is read or written by some station"


def test_the_other_tables_are_derived_from_it() -> None:
    assert list(INPUT_TOPIC.items()) == [(s, w.input) for s, w in TOPOLOGY.items()]
    assert list(INPUT_TOPIC) == [
        Station.POSTPROCESS,
        Station.PROJECT,
        Station.LEDGER,
        Station.GUARD,
        Station.SEMANTIC,
    ]
    assert OUTPUT_TOPIC == {s: w.output for s, w in TOPOLOGY.items()}
    assert WORKER_INPUTS == (
        Topic.RAW_HITS,
        Topic.POSTPROCESSED,
        Topic.PROJECTED,
        Topic.DIAGNOSIS_DRAFTS,
        Topic.SEMANTIC_REVIEW,
    )
    assert COMPARABLE_TOPICS == {
        Topic.RAW_HITS: (Station.POSTPROCESS, Station.PROJECT, Station.LEDGER),
        Topic.POSTPROCESSED: (Station.PROJECT, Station.LEDGER),
    }
    assert chain_from(Topic.DIAGNOSIS_DRAFTS, through=Station.LEDGER) == ()
    assert chain_from(Topic.AUDIT, through=Station.LEDGER) == ()


def _observed() -> dict[Station, list[set[Topic]]]:
    """Per station, the topics of each record's emissions, over the golden raw hits run down the chain,
    a draft citing unknown tool calls on its last attempt (a FALLBACK: violations and a report), and
    malformed input to every station."""
    seen: dict[Station, list[set[Topic]]] = defaultdict(list)

    def run(station: Station, value: bytes) -> Outcome[Any]:
        record = Record(f"t.{TOPOLOGY[station].input}", 0, 0, 0, None, value)
        outcome = settle(station, record, RULES, MemoryLedgerStore())  # as a fresh ledger answers
        seen[station].append({Topic(m.topic) for m in emissions(outcome, record, RULES, AT)})
        return outcome

    for line in GOLDEN_RAW.read_bytes().splitlines():
        value: bytes | None = line
        for station in (Station.POSTPROCESS, Station.PROJECT, Station.LEDGER):
            if value is None:
                break
            outcome = run(station, value)
            value = next((o.value for o in outcome.outputs if o.topic == TOPOLOGY[station].output), None)
    draft = {
        "run_id": "run-1",
        "draft_id": "d-1",
        "attempt": 2,
        "analysis": [{"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": ["call-9"]}],
        "conclusion": None,
        "limitations": ["l"],
    }
    run(Station.GUARD, codec.dumps(draft))
    # the semantic review on (SPEC 4.4): the guard hands a PASS over; the judge finds a claim on the last
    # attempt (a FALLBACK: the verdict, its violations, the report and the judgement)
    enforce = StationRules.from_settings(Settings(semantic=SemanticSettings(mode="enforce", judge_model="m")))
    raw = codec.dumps({**codec.loads(golden_draft("d-pass")), "attempt": 2})
    record = Record(f"t.{Topic.DIAGNOSIS_DRAFTS}", 0, 1, 0, None, raw)
    guarded = settle(Station.GUARD, record, enforce, memory_ledger(golden_entries()))
    seen[Station.GUARD].append({Topic(m.topic) for m in emissions(guarded, record, enforce, AT)})
    handed = next(o.value for o in guarded.outputs if o.topic == Topic.SEMANTIC_REVIEW)
    record = Record(f"t.{Topic.SEMANTIC_REVIEW}", 0, 0, 0, None, handed)
    step = run_station(Station.SEMANTIC, record, enforce)
    assert isinstance(step, PendingJudge)
    judged = finish_judge(step, judgement(step, {"conclusion.content": "unsupported"}), True, record)
    seen[Station.SEMANTIC].append({Topic(m.topic) for m in emissions(judged, record, enforce, AT)})
    for station in TOPOLOGY:
        run(station, b"{not json")
    return seen


def test_the_outputs_are_what_each_station_emits() -> None:
    seen = _observed()
    assert set(seen) == set(TOPOLOGY)
    for station, wiring in TOPOLOGY.items():
        own = set().union(*seen[station]) - set(COMMON_OUTPUTS)
        assert own == set(wiring.outputs), station
        assert all(Topic.AUDIT in topics for topics in seen[station]), f"{station}: an audit record per input"
    assert set().union(*(t for runs in seen.values() for t in runs)) >= set(COMMON_OUTPUTS)


def test_no_string_topic_names_in_the_package() -> None:
    """``Settings.topic`` and ``Range`` take a ``Topic``; a string literal there is a second declaration."""
    found = []
    for path in sorted([*ROOT.joinpath("streams").rglob("*.py"), *ROOT.joinpath("models").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            first = node.args[0]
            literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
            if name in {"topic", "Range"} and literal:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found
