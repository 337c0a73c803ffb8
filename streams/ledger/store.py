"""The ledger's interface, beside its implementations (``redis``, ``memory``): what the agents, the
offline commands and replay ask of a ledger."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from models.ledger import LedgerEntry, WriteResult
from streams.stations.ledger_view import LedgerKey, LedgerLookup


class LedgerStore(Protocol):
    """The ledger as the agents use it: ``RedisLedgerStore``; ``MemoryLedgerStore`` offline and in tests."""

    async def write_many(self, entries: Sequence[LedgerEntry], *, restore: bool = False) -> list[WriteResult]:
        """Write-once each entry, in order; return once the writes are durable as configured.

        With ``restore`` (``ledger rebuild``) each entry keeps its own ``written_at`` and
        ``expires_at``; one whose expiry has passed is not written (outcome ``EXPIRED``).

        Raises:
            RedisUnavailable: nothing is known to be durable; retry the whole batch (idempotent).
        """
        ...

    async def read_many(self, keys: Sequence[LedgerKey]) -> dict[LedgerKey, LedgerLookup]:
        """Look up ``(run_id, tool_call_id)`` pairs in at most two round trips.

        Raises:
            RedisUnavailable: Redis cannot be reached; the caller holds and retries.
        """
        ...

    async def entries_of_run(self, run_id: str) -> list[LedgerEntry]:
        """Every live entry of one run."""
        ...

    async def close(self) -> None:
        """Release the connections."""
        ...
