"""The write-once ledger in memory: for ``verify --ledger FILE``, for tests, and as the fake of Redis.

Same semantics as the Redis store (``streams.ledger.redis``): the first entry for a key wins; a
repeat is DUPLICATE or CONFLICT by the one rule, ``streams.ledger.store.write_outcome``; a missing entry is
reported as owned by another run when another run holds that tool call id — found in an index by
tool call id (as the Redis store keeps an owners set per tool call id), never by a scan. No I/O.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import Any, cast

from models.ledger import LedgerEntry, WriteResult, as_stored
from models.vocab import LedgerOutcome
from streams.codec import JSONObject
from streams.errors import RedisUnavailable
from streams.ledger.events import expired
from streams.ledger.keys import judgement_key, ledger_key, report_claim_key
from streams.ledger.store import write_outcome
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from streams.stations.publish import ReportClaim


class LedgerEntries(MutableMapping[LedgerKey, LedgerEntry]):
    """The entries by ``(run_id, tool_call_id)``, with the runs holding each tool call id beside them.

    A mapping like the dict it replaces (tests seed and compare it directly); every change goes
    through ``__setitem__``/``__delitem__``, so the index cannot drift from the entries. Without the
    index, each citation ``verify --ledger`` cannot find scanned the whole ledger.
    """

    def __init__(self) -> None:
        self._entries: dict[LedgerKey, LedgerEntry] = {}
        self._runs: dict[str, set[str]] = {}

    def runs_holding(self, tool_call_id: str) -> frozenset[str]:
        """The run ids that hold an entry for this tool call id (an index lookup)."""
        return frozenset(self._runs.get(tool_call_id, ()))

    def held_by_another_run(self, run_id: str, tool_call_id: str) -> bool:
        """Whether a run other than ``run_id`` holds an entry for this tool call id."""
        runs = self._runs.get(tool_call_id)
        if not runs:
            return False
        return len(runs) > 1 or run_id not in runs

    def __getitem__(self, key: LedgerKey) -> LedgerEntry:
        return self._entries[key]

    def get(self, key: LedgerKey, default: Any = None) -> Any:
        # the dict's own get: Mapping's goes through __getitem__ and a KeyError per miss
        return self._entries.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __setitem__(self, key: LedgerKey, entry: LedgerEntry) -> None:
        self._entries[key] = entry
        self._runs.setdefault(key[1], set()).add(key[0])

    def __delitem__(self, key: LedgerKey) -> None:
        del self._entries[key]
        runs = self._runs[key[1]]
        runs.discard(key[0])
        if not runs:
            del self._runs[key[1]]

    def __iter__(self) -> Iterator[LedgerKey]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"LedgerEntries({self._entries!r})"


class MemoryLedgerStore:
    """The ledger in a dict; ``down = True`` makes it fail like an unreachable Redis."""

    def __init__(
        self,
        ns: str = "ec",
        ttl_seconds: int = 7 * 24 * 3600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.ns = ns
        self.ttl_ms = ttl_seconds * 1000
        self.clock = clock
        self.entries = LedgerEntries()
        self.claims: dict[str, tuple[str, int]] = {}
        """The guard's report claims by key: (owner, expiry in epoch ms), as the Redis store keeps them."""
        self.judgements: dict[str, tuple[bytes, int]] = {}
        """The semantic review's recorded judgements by key: (value, expiry in epoch ms)."""
        self.reads = 0
        self.writes = 0
        self.down = False

    def load(self, entries: Iterable[JSONObject]) -> int:
        """Store entries as given (a ledger file), the first for a key winning; returns how many were new."""
        stored = 0
        for entry in entries:
            key = (str(entry.get("run_id")), str(entry.get("tool_call_id")))
            if key not in self.entries:
                self.entries[key] = cast(LedgerEntry, {**as_stored(entry), **entry})
                stored += 1
        return stored

    def _check(self) -> None:
        if self.down:
            raise RedisUnavailable("memory ledger marked down")

    async def write_many(
        self,
        entries: Sequence[LedgerEntry],
        *,
        restore: bool = False,
        written: list[WriteResult] | None = None,
    ) -> list[WriteResult]:
        """Write-once each entry, in order (``restore`` keeps each entry's own stamps, skips expired ones)."""
        self._check()
        self.writes += 1
        results = []
        now = int(self.clock() * 1000)
        for entry in entries:
            key = (entry["run_id"], entry["tool_call_id"])
            redis_key = ledger_key(self.ns, *key)
            stored = self.entries.get(key)
            outcome = write_outcome(stored, entry)
            if stored is not None:  # DUPLICATE or CONFLICT: nothing changes
                results.append(WriteResult(outcome, stored, redis_key))
                continue
            fresh = dict(entry)
            if restore and expired(entry.get("expires_at"), now):
                results.append(WriteResult(LedgerOutcome.EXPIRED, entry, redis_key))
                continue
            if not restore:
                fresh["written_at"], fresh["expires_at"] = now, now + self.ttl_ms
            self.entries[key] = as_stored(fresh)
            results.append(WriteResult(outcome, self.entries[key], redis_key))
        if written is not None:
            written += results
        return results

    async def read_many(self, keys: Sequence[LedgerKey]) -> dict[LedgerKey, LedgerLookup]:
        """Look up pairs; one call counts as one read (the Redis store needs at most two round trips)."""
        self._check()
        self.reads += 1
        return self.read_now(keys)

    def read_now(self, keys: Sequence[LedgerKey]) -> dict[LedgerKey, LedgerLookup]:
        """The same lookups without the event loop (``verify --ledger``)."""
        out: dict[LedgerKey, LedgerLookup] = {}
        for run_id, tool_call_id in keys:
            entry = self.entries.get((run_id, tool_call_id))
            foreign = entry is None and self.entries.held_by_another_run(run_id, tool_call_id)
            out[(run_id, tool_call_id)] = LedgerLookup(entry or None, foreign)
        return out

    async def claim_reports(self, claims: Sequence[ReportClaim]) -> list[str | None]:
        """Write-once each claim, in order (the first for a key wins until it expires); what each key
        held before (None: this claim took it), as ``RedisLedgerStore.claim_reports``."""
        self._check()
        self.writes += 1
        now = int(self.clock() * 1000)
        held: list[str | None] = []
        for claim in claims:
            key = report_claim_key(self.ns, claim.run_id, claim.draft_id, claim.attempt)
            found = self.claims.get(key)
            if found is not None and found[1] > now:
                held.append(found[0])
                continue
            self.claims[key] = (claim.owner, now + self.ttl_ms)
            held.append(None)
        return held

    async def recorded_judgements(self, keys: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """The judgement recorded for each ``(run_id, digest)`` (as the Redis store's)."""
        self._check()
        self.reads += 1
        now = int(self.clock() * 1000)
        out: list[bytes | None] = []
        for run_id, digest in keys:
            found = self.judgements.get(judgement_key(self.ns, run_id, digest))
            out.append(found[0] if found is not None and found[1] > now else None)
        return out

    async def record_judgements(self, records: Sequence[tuple[str, str, bytes]]) -> list[bytes]:
        """Write-once each ``(run_id, digest, value)``; what each key holds after (the first value wins)."""
        self._check()
        self.writes += 1
        now = int(self.clock() * 1000)
        out: list[bytes] = []
        for run_id, digest, value in records:
            key = judgement_key(self.ns, run_id, digest)
            found = self.judgements.get(key)
            if found is None or found[1] <= now:
                found = self.judgements[key] = (value, now + self.ttl_ms)
            out.append(found[0])
        return out

    async def ledger_keys(self) -> set[LedgerKey]:
        """The key of every entry (what the Redis store finds with SCAN)."""
        self._check()
        return set(self.entries)

    async def read_entries(self, keys: Sequence[LedgerKey]) -> list[LedgerEntry | None]:
        """Entries as stored, one per key (None where there is none)."""
        self._check()
        self.reads += 1
        return [self.entries.get(key) for key in keys]

    async def entries_of_run(self, run_id: str) -> list[LedgerEntry]:
        """Every entry of one run, by tool call id."""
        self._check()
        return sorted(
            (e for (r, _), e in self.entries.items() if r == run_id), key=lambda e: e["tool_call_id"]
        )

    async def close(self) -> None:
        """Nothing to close."""
