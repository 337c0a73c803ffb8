"""The Redis index rebuilt from the topics that are its durable record (SPEC 7): write-once, by batches.

- :class:`EntryRestore` (``ledger rebuild``): each ``ledger`` event's entry with the lifetime it has left
  (:func:`streams.ledger.events.restorable`: the same reading ``ledger check`` uses).
- :class:`JudgementRestore` (``ledger rebuild-judgements``): the semantic review's record of each judged
  ``judgements`` event, under ``(run_id, digest)``. The semantic station judges a draft from the record it
  finds there and calls no model (SPEC 4.4), then signs what it says as the guard: so a record is written
  only from a judgement that holds (:func:`streams.trust.integrity.check_judgement`) — with trusted keys,
  signed by a trusted guard key (the signature covers the answer and every label); always, its digest that
  of its own model and case. Anyone who can write the topic could otherwise choose what the station says
  of any case it can name. A ``NOT_ASKED`` event within the characters cap is a case the judge declined
  (400, 413, 422): its record (no answer) is restored too, so a replay does not ask the judge again; one
  over the cap has no record (the station never looks it up).

No Kafka here: the caller reads the topic and hands each batch over (the commands read it under a
progress bar, :mod:`streams.cli.progress`); each batch answers its counts by outcome.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from models.ledger import LedgerEntry
from models.semantic import JudgementEvent, JudgementRecord
from models.vocab import JudgementStatus
from streams import codec
from streams.ledger.events import entry_of, restorable
from streams.ledger.store import LedgerStore
from streams.messages import Record
from streams.stations.semantic.case import case_chars
from streams.trust.integrity import check_judgement
from streams.trust.keys import TrustedKeys

REFUSED_SHOWN = 10
"""How many refused judgements a rebuild names (the rest are counted)."""


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class EntryRestore:
    """``ledger rebuild``'s handler of a batch of ``ledger`` records: counts by outcome (``written``,
    ``duplicate``, ``conflict``, ``expired``, and ``malformed`` for a value that is not an entry)."""

    store: LedgerStore
    ttl_ms: int
    clock: Callable[[], int] = _now_ms
    """Now, in epoch milliseconds: an entry's lifetime left is counted from it (once per batch)."""

    async def __call__(self, batch: Sequence[Record]) -> Counter[str]:
        counts: Counter[str] = Counter()
        now_ms = self.clock()
        entries: list[LedgerEntry] = []
        for record in batch:
            entry = entry_of(record.value)
            if entry is None:
                counts["malformed"] += 1
                continue
            entries.append(restorable(entry, record.timestamp, self.ttl_ms, now_ms))
        for result in await self.store.write_many(entries, restore=True):
            counts[result.outcome.lower()] += 1
        return counts


@dataclass
class JudgementRestore:
    """``ledger rebuild-judgements``' handler of a batch of ``judgements`` records: counts by outcome
    (``recorded``, ``present``, ``different``; ``skipped`` for a value that is not a judged event,
    ``refused`` for a judged one that does not hold), and names the first refused ones (:attr:`refused`)."""

    store: LedgerStore
    trusted: TrustedKeys | None
    """``EC_TRUSTED_KEYS_FILE``'s keys: with them only a judgement a trusted guard key signed is recorded."""
    max_chars: int | None = None
    """``EC_SEMANTIC__MAX_CHARS_PER_DRAFT``: a ``NOT_ASKED`` event whose case is within it is a case the
    judge declined, and its record is restored; None: every ``NOT_ASKED`` event is skipped."""
    refused: list[str] = field(default_factory=list)
    """``topic[partition]@offset: why`` of the first :data:`REFUSED_SHOWN` judgements refused."""

    async def __call__(self, batch: Sequence[Record]) -> Counter[str]:
        counts: Counter[str] = Counter()
        items: list[tuple[str, str, bytes]] = []
        for record in batch:
            read = judged_record(record.value, self.trusted, self.max_chars)
            if isinstance(read, tuple):
                items.append(read)
                continue
            counts["skipped" if read is None else "refused"] += 1
            if read is not None and len(self.refused) < REFUSED_SHOWN:
                self.refused.append(f"{record.topic}[{record.partition}]@{record.offset}: {read}")
        before = await self.store.recorded_judgements([(run_id, digest) for run_id, digest, _ in items])
        held = await self.store.record_judgements(items)
        seen: set[tuple[str, str]] = set()  # a repeat within the batch found its first recorded
        for (run_id, digest, value), was, now in zip(items, before, held, strict=True):
            first = was is None and (run_id, digest) not in seen
            counts["different" if now != value else "recorded" if first else "present"] += 1
            seen.add((run_id, digest))
        return counts


def judged_record(
    value: bytes, trusted: TrustedKeys | None, max_chars: int | None = None
) -> tuple[str, str, bytes] | str | None:
    """``(run_id, digest, record)`` of a judged ``judgements`` value that holds — or, with ``max_chars``,
    of a ``NOT_ASKED`` one whose case is within it (the judge declined it: a record with no answer); why
    not (a phrase) for one of those that does not hold; None for anything else (not JSON, over the cap,
    not a judgement)."""
    try:
        event: Any = codec.loads(value)
    except codec.JSONDecodeError:
        return None
    if not isinstance(event, dict):
        return None
    run_id, digest = event.get("run_id"), event.get("digest")
    if not isinstance(run_id, str) or not isinstance(digest, str):
        return None
    if event.get("status") == JudgementStatus.NOT_ASKED:
        if max_chars is None or event.get("answer") is not None or event.get("claims") != []:
            return None
        try:
            within = case_chars(event["case"]) <= max_chars
        except (KeyError, TypeError):
            return None  # no case to count: nothing the station would look up
        if not within:
            return None
    elif event.get("status") != JudgementStatus.JUDGED or not isinstance(event.get("answer"), str):
        return None
    held = check_judgement(cast(JudgementEvent, event), None, trusted)  # as carried: what was signed
    if not held.holds:
        return f"not recorded: {held.detail}"
    # the record the station writes when it asks (stations.semantic.recording, or .declined: no answer)
    record = {
        "digest": digest,
        "model": event["model"],  # a string: check_judgement computed the digest with it
        "answer": event["answer"],
        "claims": event.get("claims"),
    }
    return run_id, digest, codec.dumps(cast(JudgementRecord, record))
