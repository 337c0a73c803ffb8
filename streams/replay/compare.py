"""``replay --mode compare``: what the stations make of a topic range today, against what the ledger holds.

SPEC 7: the ledger is history. To try a changed station or setting on past traffic, compare runs
the very station functions the agents run (postprocess → project → the ledger station's own
decision) in-process over the range and compares the entry the ledger station would write with
the one stored, writing nothing to Kafka or Redis.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import IO, Any

from models.ledger import LedgerEntry
from models.topology import chain_from
from models.vocab import DeadLetterReason, LedgerOutcome, Station, Topic
from streams import codec
from streams.ledger.store import LedgerStore, WriteOnceFields, write_outcome
from streams.messages import Record
from streams.pipeline import Outcome, PendingWrite, StationRules, chain

COMPARABLE_TOPICS: dict[Topic, tuple[Station, ...]] = {
    topic: chain_from(topic, through=Station.LEDGER) for topic in (Topic.RAW_HITS, Topic.POSTPROCESSED)
}
"""The topics compare can start from, and the stations a record of each goes through (from
:data:`models.topology.TOPOLOGY`, up to the ledger station's decision)."""

OUTCOMES = ("same", "differs", "missing", "failed")


@dataclass(frozen=True, slots=True)
class Expected:
    """The entry the ledger station would write for one record today, or why there is none."""

    run_id: str | None
    tool_call_id: str | None
    status: str | None
    sha256: str | None
    projection: str | None
    reason: str | None


def expected_entry(record: Record, rules: StationRules, topic: Topic) -> Expected:
    """Run the stations up to the ledger station's decision on one record (nothing is written)."""
    step = chain(record, rules, COMPARABLE_TOPICS[topic])
    if isinstance(step, PendingWrite):
        entry = step.entry
        return Expected(
            entry["run_id"],
            entry["tool_call_id"],
            entry["status"],
            entry["projection_sha256"],
            entry["projection"],
            entry["failure_reason"],
        )
    reason: Any = DeadLetterReason.INTERNAL_ERROR
    if isinstance(step, Outcome) and step.rejection is not None:
        reason = step.rejection["reason"]
    return Expected(None, None, None, None, None, reason)


async def compare_batch(
    records: list[Record], rules: StationRules, topic: Topic, store: LedgerStore, diffs: IO[bytes] | None
) -> Counter[str]:
    """Classify each record of a batch as same / differs / missing / failed; write the non-same ones."""
    expectations = [(record, expected_entry(record, rules, topic)) for record in records]
    keys = [(e.run_id, e.tool_call_id) for _, e in expectations if e.run_id and e.tool_call_id]
    lookups = await store.read_many(keys) if keys else {}
    counts: Counter[str] = Counter()
    for record, expected in expectations:
        stored: LedgerEntry | None = None
        if expected.run_id is None or expected.tool_call_id is None:
            outcome = "failed"
        else:
            lookup = lookups[(expected.run_id, expected.tool_call_id)]
            stored = lookup.entry
            written: WriteOnceFields = {"status": expected.status, "projection_sha256": expected.sha256}
            if stored is None:
                outcome = "missing"
            # Two questions. write_outcome: would the ledger take today's entry as the one it holds
            # (the write-once rule, SPEC 3.6)? The projection text: is what Redis holds what the stations
            # make now? A stored text that no longer matches its hash answers the first yes and the
            # second no; compare reports it as differs, as it always has.
            elif (
                write_outcome(stored, written) == LedgerOutcome.DUPLICATE
                and stored.get("projection") == expected.projection
            ):
                outcome = "same"
            else:
                outcome = "differs"
        counts[outcome] += 1
        if diffs is not None and outcome != "same":
            diffs.write(codec.dumps_line(_difference(record, expected, outcome, stored)))
    return counts


def _difference(
    record: Record, expected: Expected, outcome: str, stored: LedgerEntry | None
) -> dict[str, object]:
    return {
        "outcome": outcome,
        "source": {"topic": record.topic, "partition": record.partition, "offset": record.offset},
        "run_id": expected.run_id,
        "tool_call_id": expected.tool_call_id,
        "expected": {
            "status": expected.status,
            "projection_sha256": expected.sha256,
            "projection": expected.projection,
            "reason": expected.reason,
        },
        "stored": None
        if stored is None
        else {
            "status": stored.get("status"),
            "projection_sha256": stored.get("projection_sha256"),
            "projection": stored.get("projection"),
            "failure_reason": stored.get("failure_reason"),
        },
    }
