"""Helpers the test tiers share: the memory ledger, a station settled on one record, and the guard station run
as ``verify`` runs it."""

from __future__ import annotations

from collections.abc import Coroutine, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from models.limits import GuardSettings
from models.verdict import Verdict
from models.vocab import Station
from streams.ledger.memory import MemoryLedgerStore
from streams.messages import Record
from streams.pipeline import (
    Outcome,
    PendingRead,
    PendingWrite,
    StationRules,
    finish_read,
    finish_write,
    guard_station,
    resolve_reads,
    run_station,
)
from streams.settings import Settings
from streams.stations.ledger_view import LedgerKey, LedgerLookup


def memory_ledger(entries: Iterable[Mapping[str, Any]] = ()) -> MemoryLedgerStore:
    """A memory ledger holding ``entries`` (the first for a key wins), as ``verify --ledger`` loads a file."""
    ledger = MemoryLedgerStore()
    ledger.load(entries)
    return ledger


T = TypeVar("T")


def run_now(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never waits (its reads answered from memory), with no event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise AssertionError("the coroutine waited on something: it needs an event loop")


def settle(station: Station, record: Record, rules: StationRules, ledger: MemoryLedgerStore) -> Outcome[Any]:
    """One station on one record, as its agent runs it, the Redis step (the ledger's write, the guard's
    reads) answered by ``ledger``."""
    step = run_station(station, record, rules)
    if isinstance(step, PendingWrite):
        (result,) = run_now(ledger.write_many([step.entry]))
        return finish_write(step, result, record)
    if isinstance(step, PendingRead):
        return finish_read(step, ledger.read_now(list(step.keys)), record)
    return step


class Reader(Protocol):
    def read(self, run_id: str, tool_call_ids: list[str]) -> Mapping[str, LedgerLookup]: ...


def lookups_from(
    ledger: MemoryLedgerStore | Reader, keys: tuple[LedgerKey, ...]
) -> dict[LedgerKey, LedgerLookup]:
    """Ask a memory ledger, or a reader keyed by tool call id, for one draft's keys."""
    if not keys:
        return {}
    if isinstance(ledger, MemoryLedgerStore):
        return ledger.read_now(list(keys))
    run_id = keys[0][0]
    found = ledger.read(run_id, [t for _, t in keys])
    return {(run_id, t): found[t] for _, t in keys}


def verdict_of(
    raw: bytes,
    ledger: MemoryLedgerStore | Reader,
    guard: GuardSettings | None = None,
    record: Record | None = None,
) -> Verdict:
    """The guard station on one draft, its reads answered by ``ledger`` (offline unless ``record``)."""
    rules = StationRules.from_settings(Settings(guard=guard or GuardSettings()))
    record = record or Record.offline(raw)
    step = guard_station(record, rules)
    assert isinstance(step, PendingRead)

    async def read(keys: list[LedgerKey]) -> Mapping[LedgerKey, LedgerLookup]:
        return lookups_from(ledger, tuple(keys))

    (outcome,) = run_now(resolve_reads([(step, record)], read))
    assert outcome.rejection is None, outcome.rejection
    verdict: Verdict = outcome.detail
    return verdict


MCP_INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
"""An MCP client's first request, as a streamable-HTTP door sees it."""
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}
"""The Accept header the MCP transport asks its clients for."""
