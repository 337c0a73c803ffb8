"""``ledger check``: the Redis ledger against the ``ledger`` topic, key by key (SPEC 3.6, 7).

The topic is the durable record and Redis the index rebuilt from it, so after an incident the two
must agree. Per ``(run_id, tool_call_id)``:

- **missing**: on the topic, not in Redis, and its lifetime is not over (an expired entry is gone by
  design: the rebuild's own ``restorable`` decides, so the two commands cannot disagree);
- **extra**: in Redis, with no event on the topic;
- **different**: Redis holds an entry that none of the topic's values for the key is the same entry as;
- **conflicting**: the topic holds two different values for the key.

"The same entry" is the write-once rule, :func:`streams.ledger.store.write_outcome` (DUPLICATE), never a
second comparison. No Kafka here: the caller feeds the topic's records into a :class:`TopicLedger`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence, Set
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from typing_extensions import TypedDict

from models.vocab import LedgerOutcome
from streams.ledger.events import entry_of, expired, restorable
from streams.ledger.store import LedgerScan, WriteOnceFields, write_outcome
from streams.messages import Record
from streams.stations.ledger_view import LedgerKey

READ_CHUNK = 1000
"""Keys per Redis pipeline while comparing."""


class Finding(StrEnum):
    """What is wrong with one key, in the order a report lists them."""

    MISSING = "missing"
    EXTRA = "extra"
    DIFFERENT = "different"
    CONFLICTING = "conflicting"


Judgment = Finding | Literal["same", "expired"]
Value = WriteOnceFields
"""An entry reduced to what write-once compares: all a check needs to keep."""


@dataclass
class TopicLedger:
    """What the ``ledger`` topic says of each key: its distinct values and when the entry expires."""

    ttl_ms: int
    now_ms: int
    values: dict[LedgerKey, list[Value]] = field(default_factory=dict)
    expires_at: dict[LedgerKey, int] = field(default_factory=dict)
    events: int = 0
    malformed: int = 0

    def add(self, value: bytes, timestamp: int | None) -> bool:
        """Take one event (the record timestamp dates one without ``expires_at``); False if malformed."""
        entry = entry_of(value)
        if entry is None:
            self.malformed += 1
            return False
        self.events += 1
        entry = restorable(entry, timestamp, self.ttl_ms, self.now_ms)
        key = (entry["run_id"], entry["tool_call_id"])
        held = self.values.setdefault(key, [])
        if not any(write_outcome(seen, entry) == LedgerOutcome.DUPLICATE for seen in held):
            held.append({"projection_sha256": entry["projection_sha256"], "status": entry["status"]})
        self.expires_at[key] = max(self.expires_at.get(key, 0), entry.get("expires_at") or 0)
        return True

    def add_records(self, records: Iterable[Record]) -> Counter[str]:
        """Take a batch of ``ledger`` records; counts ``events`` and ``malformed`` (a progress handler)."""
        counts: Counter[str] = Counter()
        for record in records:
            counts["events" if self.add(record.value, record.timestamp) else "malformed"] += 1
        return counts

    def expired(self, key: LedgerKey) -> bool:
        """Whether the key's entry has outlived its lifetime (``ledger rebuild`` would skip it)."""
        return expired(self.expires_at.get(key), self.now_ms)


class KeyJson(TypedDict):
    run_id: str
    tool_call_id: str


class CheckJson(TypedDict):
    """``ledger check --json``: whether Redis and the topic agree, the counts, some keys of each finding."""

    clean: bool
    counts: dict[str, int]
    examples: dict[str, list[KeyJson]]
    ledger_events: int
    malformed_events: int
    topic_keys: int
    redis_keys: int


@dataclass
class CheckReport:
    """The keys of each finding (sorted), and how many keys agreed or had expired."""

    findings: dict[Finding, list[LedgerKey]] = field(default_factory=lambda: {f: [] for f in Finding})
    same: int = 0
    expired: int = 0
    events: int = 0
    malformed: int = 0
    topic_keys: int = 0
    redis_keys: int = 0

    @property
    def clean(self) -> bool:
        """No key missing, extra, different or conflicting."""
        return not any(self.findings.values())

    def counts(self) -> dict[str, int]:
        """Keys per outcome: the findings, then ``same`` and ``expired``."""
        return {
            **{finding.value: len(keys) for finding, keys in self.findings.items()},
            "same": self.same,
            "expired": self.expired,
        }

    def as_json(self, limit: int) -> CheckJson:
        """The report for ``--json``: counts, then up to ``limit`` keys per finding."""
        return {
            "clean": self.clean,
            "counts": self.counts(),
            "examples": {
                finding.value: [{"run_id": r, "tool_call_id": t} for r, t in keys[:limit]]
                for finding, keys in self.findings.items()
            },
            "ledger_events": self.events,
            "malformed_events": self.malformed,
            "topic_keys": self.topic_keys,
            "redis_keys": self.redis_keys,
        }


def judge(stored: Value | None, values: Sequence[Value], expired: bool) -> Judgment:
    """One key's Redis entry (None: absent) against the topic's values for it."""
    if stored is None:
        return "expired" if expired else Finding.MISSING
    if any(write_outcome(stored, value) == LedgerOutcome.DUPLICATE for value in values):
        return "same"
    return Finding.DIFFERENT


async def read_chunked(reader: LedgerScan, keys: Sequence[LedgerKey]) -> list[Value | None]:
    """Redis entries for ``keys``, a pipeline per :data:`READ_CHUNK` keys."""
    out: list[Value | None] = []
    for start in range(0, len(keys), READ_CHUNK):
        out += await reader.read_entries(keys[start : start + READ_CHUNK])
    return out


async def compare(topic: TopicLedger, reader: LedgerScan, redis_keys: Set[LedgerKey]) -> CheckReport:
    """Judge every key of the topic against Redis, then the keys only Redis holds.

    ``redis_keys`` was scanned before the topic was read: a key Redis gained since cannot count as extra,
    and one it lost since (expired) is read again before it does.

    Raises:
        RedisUnavailable, RedisRefused: Redis cannot be read.
    """
    report = CheckReport(
        events=topic.events,
        malformed=topic.malformed,
        topic_keys=len(topic.values),
        redis_keys=len(redis_keys),
    )
    keys = sorted(topic.values)
    for key, stored in zip(keys, await read_chunked(reader, keys), strict=True):
        judged = judge(stored, topic.values[key], topic.expired(key))
        if judged == "same":
            report.same += 1
        elif judged == "expired":
            report.expired += 1
        else:
            report.findings[judged].append(key)
        if len(topic.values[key]) > 1:
            report.findings[Finding.CONFLICTING].append(key)
    only_redis = sorted(redis_keys - topic.values.keys())
    still = await read_chunked(reader, only_redis)
    report.findings[Finding.EXTRA] = [k for k, e in zip(only_redis, still, strict=True) if e is not None]
    return report


async def check_ledger(
    reader: LedgerScan, read_topic: Callable[[TopicLedger], Awaitable[bool]], *, ttl_ms: int, now_ms: int
) -> CheckReport | None:
    """Scan Redis's keys, then read the topic into a :class:`TopicLedger` with ``read_topic``, then compare.

    ``read_topic`` says whether it read the whole topic; when it did not (interrupted), there is no
    report: every key not yet read would count as extra. Scanning first keeps an entry written while
    the topic is read from showing as extra: its event lands after the end offsets ``read_topic`` takes
    when it starts.

    Raises:
        RedisUnavailable, RedisRefused: Redis cannot be read (and whatever ``read_topic`` raises).
    """
    redis_keys = await reader.ledger_keys()
    topic = TopicLedger(ttl_ms, now_ms)
    if not await read_topic(topic):
        return None
    return await compare(topic, reader, redis_keys)
