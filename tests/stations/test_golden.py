"""Every golden case (``tests/data/golden``) through the station chains, one test per case name.

Compared as ``golden/README.md`` says: projections byte for byte, LookupResults and verdicts as
parsed JSON (a violation's ``message`` is free text; violations are compared sorted by code and
path), dead letters by ``reason``, ``run_id`` and ``tool_call_id``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from models.limits import GuardSettings
from streams import codec
from streams.hashing import sha256_hex
from streams.ledger.memory import MemoryLedgerStore
from streams.offline.pipe import _OFFLINE_LOOKUP_OMITS
from streams.pipeline import process_lookup, process_raw_hits
from tests.golden import GOLDEN, dead_letter_core, normalized_verdict
from tests.stations.builders import rules
from tests.support import memory_ledger, verdict_of

# The SPEC's defaults, spelled out so no EC_* variable in the environment can change a golden case.
RULES = rules()


def lines(path: Path) -> list[bytes]:
    """The lines of a JSON-lines file as exact bytes, without their ``\\n``."""
    data = path.read_bytes()
    return data.removesuffix(b"\n").split(b"\n") if data else []


def cases(folder: str, *files: str) -> list[Any]:
    """One pytest param per case name of ``folder/cases.txt``, holding that line of every file."""
    names = (GOLDEN / folder / "cases.txt").read_text(encoding="utf-8").split()
    columns = [lines(GOLDEN / folder / name) for name in files]
    for name, column in zip(files, columns, strict=True):
        assert len(column) == len(names), f"{folder}/{name} has {len(column)} lines for {len(names)} cases"
    return [pytest.param(*row, id=name) for name, *row in zip(names, *columns, strict=True)]


def as_json(value: Any) -> Any:
    """A station result as a consumer parses it (StrEnums become plain strings)."""
    return codec.loads(codec.dumps(value))


# -- pipe: raw-hits → projection / LookupResult -------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), cases("pipe", "input.jsonl", "expected_projection.jsonl"))
def test_pipe_projection(raw: bytes, expected: bytes) -> None:
    outcome = process_raw_hits(raw, RULES)
    wanted = codec.loads(expected)
    if "dead_letter" in wanted:
        assert outcome.rejection is not None
        assert dead_letter_core(as_json(outcome.rejection)) == dead_letter_core(wanted["dead_letter"])
        return
    assert outcome.rejection is None
    projected = process_lookup(codec.dumps(outcome.lookup), RULES)
    assert projected.rejection is None
    assert projected.projection is not None
    assert projected.projection.canonical == expected
    assert projected.projection.sha256 == sha256_hex(expected)


@pytest.mark.parametrize(("raw", "expected"), cases("pipe", "input.jsonl", "expected_lookup.jsonl"))
def test_pipe_lookup(raw: bytes, expected: bytes) -> None:
    outcome = process_raw_hits(raw, RULES)
    wanted = codec.loads(expected)
    if "dead_letter" in wanted:
        assert outcome.rejection is not None
        assert dead_letter_core(as_json(outcome.rejection)) == dead_letter_core(wanted["dead_letter"])
        return
    assert outcome.rejection is None
    assert outcome.lookup is not None
    assert outcome.lookup["status"] == "OK"
    assert outcome.lookup["failure_reason"] is None
    shown = {key: value for key, value in outcome.lookup.items() if key not in _OFFLINE_LOOKUP_OMITS}
    assert as_json(shown) == wanted


# -- project: LookupResult text → projection ----------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), cases("project", "input.jsonl", "expected.jsonl"))
def test_project(text: bytes, expected: bytes) -> None:
    outcome = process_lookup(text, RULES)
    wanted = codec.loads(expected)
    if "dead_letter" in wanted:
        assert outcome.projection is None
        assert outcome.rejection is not None
        assert dead_letter_core(as_json(outcome.rejection)) == dead_letter_core(wanted["dead_letter"])
        return
    assert outcome.rejection is None
    assert outcome.projection is not None
    assert outcome.projection.canonical == expected


# -- guard: drafts against the ledger file ------------------------------------------------------


@pytest.fixture(scope="module")
def golden_ledger() -> MemoryLedgerStore:
    """The ledger file loaded as ``verify --ledger`` does: the first line for a key wins."""
    return memory_ledger(
        codec.loads(line) for line in lines(GOLDEN / "guard" / "ledger.jsonl") if line.strip()
    )


@pytest.mark.parametrize(("draft", "expected"), cases("guard", "drafts.jsonl", "expected_verdicts.jsonl"))
def test_guard(draft: bytes, expected: bytes, golden_ledger: MemoryLedgerStore) -> None:
    verdict = verdict_of(draft, golden_ledger, GuardSettings())
    assert verdict["draft_sha256"] == sha256_hex(draft)
    assert normalized_verdict(as_json(verdict)) == normalized_verdict(codec.loads(expected))
