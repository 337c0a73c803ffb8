"""The ledger's interface, beside its implementations (``redis``, ``memory``): what the agents, the
offline commands and replay ask of a ledger, and the one rule for "is this the same entry?"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from typing_extensions import ReadOnly, TypedDict

from models.ledger import LedgerEntry, WriteResult
from models.vocab import LedgerOutcome
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from streams.stations.publish import ReportClaim


class WriteOnceFields(TypedDict):
    """What write-once compares (SPEC 3.6, 3.7): not the event id, origin, signature or stamps, so the same
    bytes from another origin or under another key are a DUPLICATE. Any entry has them."""

    projection_sha256: ReadOnly[str | None]
    status: ReadOnly[str | None]


WRITE_ONCE_FIELDS: tuple[str, ...] = tuple(WriteOnceFields.__annotations__)


def write_outcome(stored: WriteOnceFields | None, entry: WriteOnceFields) -> LedgerOutcome:
    """What a write-once of ``entry`` does where ``stored`` is held (SPEC 3.6).

    No entry → WRITTEN; the same ``projection_sha256`` and status → DUPLICATE; anything else →
    CONFLICT. A null field equals only a null field (a FAILED entry has no hash). ``MemoryLedgerStore``
    and replay call this; the Lua script in ``streams.ledger.redis`` cannot, and
    ``tests/integration/test_same_entry.py`` holds it to this rule. ``EXPIRED`` (a restore whose
    lifetime is over) is the store's to decide, not this rule's.
    """
    if stored is None:
        return LedgerOutcome.WRITTEN
    same_hash = stored.get("projection_sha256") == entry.get("projection_sha256")
    if same_hash and stored.get("status") == entry.get("status"):
        return LedgerOutcome.DUPLICATE
    return LedgerOutcome.CONFLICT


class LedgerStore(Protocol):
    """The ledger as the agents use it: ``RedisLedgerStore``; ``MemoryLedgerStore`` offline and in tests."""

    async def write_many(
        self,
        entries: Sequence[LedgerEntry],
        *,
        restore: bool = False,
        written: list[WriteResult] | None = None,
    ) -> list[WriteResult]:
        """Write-once each entry, in order; return once the writes are durable as configured.

        With ``restore`` (``ledger rebuild``) each entry keeps its own ``written_at`` and
        ``expires_at``; one whose expiry has passed is not written (outcome ``EXPIRED``). The results
        of the entries already durable are appended to ``written`` as they become so (a store may
        write a batch in several parts).

        Raises:
            RedisUnavailable: the entries past those in ``written`` are not known to be durable; retry
                them (the writes are idempotent).
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

    async def claim_reports(self, claims: Sequence[ReportClaim]) -> list[str | None]:
        """The guard's write-once claims on its drafts' reports (SPEC 4.3), in order, in one round trip:
        what each triple's claim held before, None where this claim took it.

        Raises:
            RedisUnavailable: the claims are not known to be durable; the caller holds and retries them.
        """
        ...

    async def recorded_judgements(self, keys: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """The semantic review's recorded judgement of each ``(run_id, digest)`` (SPEC 4.4), in one round
        trip; None where none is recorded.

        Raises:
            RedisUnavailable: Redis cannot be reached; the caller holds and retries.
        """
        ...

    async def record_judgements(self, records: Sequence[tuple[str, str, bytes]]) -> list[bytes]:
        """Write-once each ``(run_id, digest, value)``, durable as configured; what each key holds after.

        Raises:
            RedisUnavailable: not known to be durable; the caller holds and retries them.
        """
        ...

    async def close(self) -> None:
        """Release the connections."""
        ...


class LedgerScan(Protocol):
    """What ``ledger check`` asks of a ledger: every key it holds, and the entries as stored."""

    async def ledger_keys(self) -> set[LedgerKey]:
        """The key of every entry in the namespace.

        Raises:
            RedisUnavailable: Redis cannot be reached.
        """
        ...

    async def read_entries(self, keys: Sequence[LedgerKey]) -> list[LedgerEntry | None]:
        """Entries as stored, one per key (None where there is none)."""
        ...
