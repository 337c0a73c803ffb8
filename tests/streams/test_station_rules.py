"""The stations' rules are built once (issue 32 item 2b): a key file changed on disk while a worker
runs changes no record's outcome; one that cannot be read stops the worker at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.vocab import Station
from streams import codec
from streams.errors import ConfigurationError
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import Outcome, StationRules, chain
from streams.settings import Settings
from streams.trust.keys import load_signer
from streams.worker.runner import BatchRunner, RunnerConfig
from tests.streams.conftest import FakeSink, golden_lines

SEED = "5a" * 32
"""A signing key as the 64-hex seed ``load_signer`` reads."""
HALF_WRITTEN = b"-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2Vw"
"""A key file caught half-way through being replaced."""


def projected_records(count: int) -> list[Record]:
    """``projected`` records with coordinates, made by the stations from the golden raw hits."""
    out: list[Record] = []
    rules = StationRules.from_settings(Settings())
    for i, line in enumerate(golden_lines("pipe", "input.jsonl")):
        raw = Record("t.raw-hits", 0, i, 1_700_000_000_000 + i, None, line)
        step = chain(raw, rules, (Station.POSTPROCESS, Station.PROJECT))
        if isinstance(step, Outcome) and step.rejection is None and step.outputs:
            out.append(Record("t.projected", 0, len(out), 1_700_000_000_000 + i, None, step.outputs[0].value))
        if len(out) == count:
            return out
    raise AssertionError("the golden input has too few records that project")


def settings_with_key(path: Path) -> Settings:
    return Settings(
        topic_prefix="t.", signing_key_file=str(path), retry_initial_backoff_ms=1, retry_max_backoff_ms=5
    )


async def test_a_key_file_replaced_mid_run_does_not_change_the_next_record(tmp_path: Path) -> None:
    key = tmp_path / "ledger.key"
    key.write_text(SEED)
    signer = load_signer(key)
    sink, store = FakeSink(), MemoryLedgerStore()
    runner = BatchRunner(Station.LEDGER, RunnerConfig.from_settings(settings_with_key(key)), sink, store)
    first, second = projected_records(2)

    await runner.run([first])
    key.write_bytes(HALF_WRITTEN)  # replaced while the worker runs: a half-written file
    (outcome,) = await runner.run([second])

    assert outcome.rejection is None, outcome.rejection
    assert not sink.on("t.dead-letters")
    entries = sink.values("t.ledger")
    assert len(entries) == 2
    assert {entry["key_id"] for entry in entries} == {signer.key_id}  # still the key it started with


async def test_the_rules_a_worker_started_with_hold_when_the_key_file_is_replaced_by_another_key(
    tmp_path: Path,
) -> None:
    key = tmp_path / "ledger.key"
    key.write_text(SEED)
    started_with = load_signer(key).key_id
    sink, store = FakeSink(), MemoryLedgerStore()
    runner = BatchRunner(Station.LEDGER, RunnerConfig.from_settings(settings_with_key(key)), sink, store)
    key.write_text("a5" * 32)  # a whole other key: it takes effect at the next start, not mid-run

    await runner.run(projected_records(1))

    assert [entry["key_id"] for entry in sink.values("t.ledger")] == [started_with]
    assert StationRules.from_settings(settings_with_key(key)).signer.key_id != started_with  # type: ignore[union-attr]


@pytest.mark.parametrize("variable", ["signing_key_file", "trusted_keys_file"])
def test_a_key_file_that_cannot_be_read_stops_the_worker_at_start(tmp_path: Path, variable: str) -> None:
    bad = tmp_path / "half-written"
    bad.write_bytes(HALF_WRITTEN)
    settings = Settings(topic_prefix="t.", **{variable: str(bad)})  # type: ignore[arg-type]

    with pytest.raises(ConfigurationError, match="half-written"):
        StationRules.from_settings(settings)
    with pytest.raises(ConfigurationError, match="half-written"):
        RunnerConfig.from_settings(settings)  # what the worker builds first, once


def test_a_missing_key_file_stops_the_worker_at_start(tmp_path: Path) -> None:
    settings = settings_with_key(tmp_path / "nowhere.key")

    with pytest.raises(ConfigurationError, match="nowhere.key"):
        RunnerConfig.from_settings(settings)


def test_rules_are_frozen() -> None:
    rules = StationRules.from_settings(Settings())

    with pytest.raises(AttributeError):
        rules.signer = None  # type: ignore[misc]
    assert codec.dumps(rules.input.model_dump())  # the limits are the settings' own
