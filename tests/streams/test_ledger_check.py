"""``ledger check``'s comparison (streams.ledger.check) on the memory ledger: missing, extra, different,
conflicting, and an expired entry that is gone by design, not missing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from models.ledger import LEDGER_ENTRY_FIELDS, LedgerEntry, as_stored
from streams import codec
from streams.ledger.check import CheckReport, Finding, TopicLedger, check_ledger, compare
from streams.ledger.keys import ledger_key, ledger_pattern, parse_ledger_key
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record

NOW = 1_800_000_000_000
TTL = 7 * 24 * 3600 * 1000
SHA_A, SHA_B = "a" * 64, "b" * 64


def entry(run_id: str, tool_call_id: str, sha: str | None = SHA_A, **fields: Any) -> LedgerEntry:
    """A stored entry (READY with ``sha``, FAILED without), alive for a day from NOW."""
    status = "READY" if sha else "FAILED"
    base = {
        **dict.fromkeys(LEDGER_ENTRY_FIELDS),
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": status,
        "projection_sha256": sha,
        "projection": f"shown {sha}" if sha else None,
        "written_at": NOW - 1000,
        "expires_at": NOW + 24 * 3600 * 1000,
    }
    return as_stored({**base, **fields})


def event(e: LedgerEntry) -> bytes:
    return codec.dumps(dict(e))


def redis_holding(*entries: LedgerEntry) -> MemoryLedgerStore:
    store = MemoryLedgerStore()
    for e in entries:
        store.entries[(e["run_id"], e["tool_call_id"])] = e
    return store


def topic_of(*events: bytes | tuple[bytes, int | None]) -> TopicLedger:
    topic = TopicLedger(TTL, NOW)
    for item in events:
        value, timestamp = item if isinstance(item, tuple) else (item, NOW - 5000)
        topic.add(value, timestamp)
    return topic


async def judged(store: MemoryLedgerStore, topic: TopicLedger) -> CheckReport:
    return await compare(topic, store, await store.ledger_keys())


def found(report: CheckReport) -> dict[str, list[tuple[str, str]]]:
    return {f.value: keys for f, keys in report.findings.items() if keys}


async def test_a_ledger_that_agrees_is_clean() -> None:
    entries = [entry("r1", "c1"), entry("r1", "c2", sha=None, failure_reason="SCHEMA_VIOLATION")]
    # the same entry again from another origin and under another signature: a DUPLICATE, not a conflict
    repeat = entry("r1", "c1", event_id="other", key_id="k" * 16, signature="s" * 128)
    report = await judged(redis_holding(*entries), topic_of(*map(event, entries), event(repeat)))
    assert report.clean and found(report) == {}
    assert (report.same, report.expired, report.events, report.topic_keys, report.redis_keys) == (
        2,
        0,
        3,
        2,
        2,
    )


async def test_missing_extra_different_and_conflicting() -> None:
    store = redis_holding(
        entry("r1", "kept"),
        entry("r1", "changed", sha=SHA_B),  # the topic says SHA_A
        entry("r1", "failed-now", sha=None),  # the topic says READY
        entry("r2", "only-in-redis"),
        entry("r3", "twice"),
    )
    topic = topic_of(
        event(entry("r1", "kept")),
        event(entry("r1", "changed")),
        event(entry("r1", "failed-now")),
        event(entry("r1", "lost")),
        event(entry("r3", "twice")),
        event(entry("r3", "twice", sha=SHA_B)),
    )
    report = await judged(store, topic)
    assert found(report) == {
        "missing": [("r1", "lost")],
        "extra": [("r2", "only-in-redis")],
        "different": [("r1", "changed"), ("r1", "failed-now")],
        "conflicting": [("r3", "twice")],
    }
    assert not report.clean and report.same == 2  # kept, and twice (Redis holds one of its values)


async def test_an_expired_entry_is_not_missing() -> None:
    gone = entry("r1", "old", written_at=NOW - TTL - 10, expires_at=NOW - 10)
    report = await judged(redis_holding(), topic_of(event(gone)))
    assert report.clean and report.expired == 1


async def test_an_event_without_expires_at_lives_a_ttl_from_its_record_timestamp() -> None:
    """Events written before ``expires_at`` existed: the rebuild's ``restorable`` dates them."""
    old = entry("r1", "before-stamps", written_at=None, expires_at=None)
    fresh = entry("r1", "fresh", written_at=None, expires_at=None)
    topic = topic_of((event(old), NOW - TTL - 1), (event(fresh), NOW - TTL + 60_000))
    report = await judged(redis_holding(), topic)
    assert report.expired == 1 and found(report) == {"missing": [("r1", "fresh")]}


async def test_an_extra_key_that_expired_after_the_scan_is_not_extra() -> None:
    store = redis_holding(entry("r1", "c1"), entry("r2", "leaving"))
    keys = await store.ledger_keys()
    del store.entries[("r2", "leaving")]  # Redis expired it while the topic was read
    report = await compare(topic_of(event(entry("r1", "c1"))), store, keys)
    assert report.clean and report.redis_keys == 2


async def test_malformed_events_are_counted_and_skipped() -> None:
    topic = TopicLedger(TTL, NOW)
    counts = topic.add_records(
        [
            Record("ledger", 0, 0, NOW, None, b"not json"),
            Record("ledger", 0, 1, NOW, None, codec.dumps({"run_id": "bad:id", "tool_call_id": "c"})),
            Record("ledger", 0, 2, NOW, None, event(entry("r1", "c1"))),
        ]
    )
    assert counts == {"events": 1, "malformed": 2}
    report = await judged(redis_holding(entry("r1", "c1")), topic)
    assert report.clean and (report.events, report.malformed) == (1, 2)


async def test_check_scans_redis_before_reading_the_topic_and_gives_no_report_when_interrupted() -> None:
    store = redis_holding(entry("r1", "c1"))

    async def read_topic(topic: TopicLedger) -> bool:
        store.entries[("r9", "written-meanwhile")] = entry("r9", "written-meanwhile")  # its event comes later
        topic.add(event(entry("r1", "c1")), NOW)
        return True

    report = await check_ledger(store, read_topic, ttl_ms=TTL, now_ms=NOW)
    assert report is not None and report.clean

    async def interrupted(topic: TopicLedger) -> bool:
        return False

    assert await check_ledger(store, interrupted, ttl_ms=TTL, now_ms=NOW) is None


async def test_the_json_report_holds_counts_and_at_most_limit_examples() -> None:
    topic = topic_of(*(event(entry("r1", f"c{i}")) for i in range(5)))
    report = await judged(redis_holding(), topic)
    doc = report.as_json(limit=2)
    assert doc["clean"] is False
    assert doc["counts"] == {
        "missing": 5,
        "extra": 0,
        "different": 0,
        "conflicting": 0,
        "same": 0,
        "expired": 0,
    }
    assert doc["examples"]["missing"] == [
        {"run_id": "r1", "tool_call_id": "c0"},
        {"run_id": "r1", "tool_call_id": "c1"},
    ]


def keys_of(values: Iterable[str]) -> list[tuple[str, str] | None]:
    return [parse_ledger_key("ec", v) for v in values]


def test_ledger_keys_parse_back_and_the_scan_pattern_is_literal() -> None:
    assert keys_of(
        [ledger_key("ec", "run-1", "call.1"), "ec:owners:{call.1}", "ec2:ledger:{c}:r", "ec:ledger:{c}"]
    ) == [
        ("run-1", "call.1"),
        None,
        None,
        None,
    ]
    assert ledger_pattern("ec") == "ec:ledger:*"
    assert ledger_pattern("a*b?[c]") == r"a\*b\?\[c\]:ledger:*"


@pytest.mark.parametrize("finding", list(Finding))
def test_every_finding_is_listed_in_the_report(finding: Finding) -> None:
    assert finding.value in CheckReport().counts()
