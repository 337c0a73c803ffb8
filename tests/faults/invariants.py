"""What must hold at the end of every fault test, however the run was disturbed (issue 22, item 4).

``await check_invariants(settings, valid_inputs=..., rejected_inputs=...)`` reads one run's Redis ledger,
``ledger``, ``dead-letters``, ``verdicts`` and ``audit`` topics and asserts:

- every valid input ``(run_id, tool_call_id)`` has exactly one ledger value, the same in Redis and on
  the ledger topic, and no other key has one: the ledger-check core (``streams.ledger.check``), the
  comparison ``evidence-chain ledger check`` runs, with no key missing, extra, different or conflicting;
- every rejected input (its raw bytes) has exactly one dead letter, found by ``value_sha256`` (the dead
  letter's pointer to its original), and no dead letter belongs to nothing; a letter repeated after a
  crash is the same event (``event_id`` from its origin) with the same bytes;
- every verdict's evidence snapshot holds the ``projection_sha256`` the ledger holds for that key;
- no ``CONFLICT`` (``LEDGER_CONFLICT`` dead letter, or ledger audit outcome) unless ``expect_conflicts``.

The caller waits for its run to finish first (``Run.wait_entries``, its verdicts); topics are read until
what the inputs promise is there, then a settle.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from models.vocab import DeadLetterReason, LedgerOutcome, Station, Topic
from streams import codec
from streams.hashing import sha256_hex
from streams.kafka.ranges import Range, read_range, read_topic
from streams.ledger.check import CheckReport, TopicLedger, check_ledger
from streams.ledger.events import entry_of
from streams.ledger.redis import RedisLedgerStore
from streams.settings import Settings
from streams.stations.ledger_view import LedgerKey
from tests.faults.support import expected

WAIT_SECONDS = 120.0


@dataclass(frozen=True)
class Report:
    """What the invariants were checked on, for a test that asserts more."""

    ledger: CheckReport
    topic: TopicLedger
    dead_letters: list[dict[str, Any]]
    """One per event (repeats dropped)."""
    verdicts: list[dict[str, Any]]
    conflicts: int
    """``LEDGER_CONFLICT`` dead letters plus ledger audit records with outcome ``CONFLICT``."""


def rejected_inputs(records: Iterable[bytes], settings: Settings) -> list[bytes]:
    """The records the SPEC dead-letters (the fault suite's ``expected``, one record at a time)."""
    return [value for value in records if expected([value], settings).rejections]


async def check_invariants(
    settings: Settings,
    *,
    valid_inputs: Iterable[LedgerKey],
    rejected_inputs: Iterable[bytes],
    expect_conflicts: bool = False,
) -> Report:
    """Assert the invariants of the module docstring for one run; returns what was read."""
    valid, rejected = set(valid_inputs), list(rejected_inputs)
    ledger, topic = await _ledger(settings, valid)
    letters = await _dead_letters(settings, rejected, expect_conflicts)
    verdicts = await _verdicts(settings, topic)
    conflicts = sum(1 for d in letters if d["reason"] == DeadLetterReason.LEDGER_CONFLICT)
    conflicts += await _conflict_audits(settings)
    assert expect_conflicts or conflicts == 0, f"{conflicts} CONFLICT outcomes, none expected"
    return Report(ledger, topic, letters, verdicts, conflicts)


async def _ledger(settings: Settings, valid: set[LedgerKey]) -> tuple[CheckReport, TopicLedger]:
    """Redis against the ledger topic, by the ledger-check core; every valid input once, nothing else."""
    held: list[TopicLedger] = []

    async def fill(topic: TopicLedger) -> bool:
        values = await _read(settings, Topic.LEDGER, _holding(valid))
        for value in values:
            topic.add(value, None)
        held.append(topic)
        return True

    store = RedisLedgerStore.from_settings(settings)
    try:
        now_ms = int(time.time() * 1000)
        report = await check_ledger(store, fill, ttl_ms=settings.ledger_ttl_seconds * 1000, now_ms=now_ms)
    finally:
        await store.close()
    assert report is not None
    (topic,) = held
    on_topic = set(topic.values)
    assert valid <= on_topic, (
        f"{len(valid - on_topic)} valid inputs have no ledger event: {_some(valid - on_topic)}"
    )
    assert on_topic <= valid, (
        f"{len(on_topic - valid)} ledger events of no valid input: {_some(on_topic - valid)}"
    )
    wrong = {f.value: _some(keys) for f, keys in report.findings.items() if keys}
    assert report.clean, f"Redis and the ledger topic disagree: {wrong}"
    assert report.malformed == 0, f"{report.malformed} ledger events are not entries"
    return report, topic


async def _dead_letters(
    settings: Settings, rejected: list[bytes], expect_conflicts: bool
) -> list[dict[str, Any]]:
    """Exactly one dead letter per rejected input, none for anything else, repeats byte-identical."""
    wanted = Counter(sha256_hex(value) for value in rejected)
    values = await _read(settings, Topic.DEAD_LETTERS, _covering(wanted))
    by_event: dict[str, set[bytes]] = defaultdict(set)
    for value in values:
        by_event[codec.loads(value)["event_id"]].add(value)
    changed = [event for event, copies in by_event.items() if len(copies) > 1]
    assert not changed, f"{len(changed)} repeated dead letters differ in bytes: {changed[:5]}"
    letters = [codec.loads(next(iter(copies))) for copies in by_event.values()]
    conflict = DeadLetterReason.LEDGER_CONFLICT
    found = Counter(d["value_sha256"] for d in letters if not (expect_conflicts and d["reason"] == conflict))
    missing, stray = wanted - found, found - wanted
    assert not missing, (
        f"{missing.total()} rejected inputs have no dead letter (value_sha256 {_some(missing)})"
    )
    extra = [d for d in letters if d["value_sha256"] in stray]
    assert not stray, f"{stray.total()} dead letters more than rejected inputs: {_letters(extra)}"
    return letters


async def _verdicts(settings: Settings, topic: TopicLedger) -> list[dict[str, Any]]:
    """Every verdict's snapshot items carry the ledger's projection_sha256 for their key."""
    verdicts = [codec.loads(v) for v in await _read(settings, Topic.VERDICTS, None)]
    wrong = []
    for verdict in verdicts:
        for item in verdict["evidence_snapshot"]:
            key = (verdict["run_id"], item["tool_call_id"])
            held = [v.get("projection_sha256") for v in topic.values.get(key, [])]
            if held != [item["projection_sha256"]]:
                wrong.append((verdict["draft_id"], key, item["projection_sha256"], held))
    assert not wrong, f"{len(wrong)} snapshot items do not hash as their ledger entry: {wrong[:5]}"
    return verdicts


async def _conflict_audits(settings: Settings) -> int:
    """Ledger audit records whose write-once outcome was CONFLICT (a FAILED one has no dead letter)."""
    audits = map(codec.loads, await _read(settings, Topic.AUDIT, None))
    return sum(
        1
        for a in audits
        if a["station"] == Station.LEDGER and a["fields"]["outcome"] == LedgerOutcome.CONFLICT
    )


async def _read(settings: Settings, topic: Topic, until: Callable[[list[bytes]], bool] | None) -> list[bytes]:
    """A topic's values: once ``until`` holds, then a second's settle; without one, up to its end
    offsets now (exact, however long the topic)."""
    if until is not None:
        return await read_topic(
            settings, settings.topic(topic), until=until, wait_seconds=WAIT_SECONDS, settle=1.0
        )
    values: list[bytes] = []
    async for batch in read_range(settings, Range(topic), lambda _: None, asyncio.Event()):
        values += [record.value for record in batch]
    return values


def _holding(keys: set[LedgerKey]) -> Callable[[list[bytes]], bool]:
    """``until`` for the ledger topic: every key has an event (each value parsed once)."""
    seen: set[LedgerKey] = set()
    read = 0

    def until(values: list[bytes]) -> bool:
        nonlocal read
        for value in values[read:]:
            entry = entry_of(value)
            if entry is not None:
                seen.add((entry["run_id"], entry["tool_call_id"]))
        read = len(values)
        return keys <= seen

    return until


def _covering(shas: Counter[str]) -> Callable[[list[bytes]], bool]:
    """``until`` for the dead letters: one for every wanted ``value_sha256``."""
    seen: set[str] = set()
    read = 0

    def until(values: list[bytes]) -> bool:
        nonlocal read
        seen.update(codec.loads(value)["value_sha256"] for value in values[read:])
        read = len(values)
        return set(shas) <= seen

    return until


def _some(items: Iterable[Any], count: int = 5) -> list[Any]:
    return sorted(items)[:count]


def _letters(letters: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(d["reason"], d["station"], d["run_id"], d["tool_call_id"], d["source"]) for d in letters[:5]]
