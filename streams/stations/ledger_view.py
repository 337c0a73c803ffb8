"""How the guard reads the ledger: one batch call per draft, behind a small Protocol (SPEC 3.6, 4).

The Redis reader lives at the edge (``streams.ledger_store``); ``InMemoryLedger`` is the
write-once ledger in a dict, used by ``verify --ledger FILE`` and by tests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class LedgerLookup:
    """What the ledger says about one ``(run_id, tool_call_id)``.

    ``entry`` holds the stored fields (``projection`` as text or bytes, exactly as stored) or is
    None; ``foreign_owner`` tells whether another run owns an entry with this tool call id.
    """

    entry: Mapping[str, Any] | None
    foreign_owner: bool = False


class LedgerReader(Protocol):
    """Reads all cited entries of one draft in one call."""

    def read(self, run_id: str, tool_call_ids: Sequence[str]) -> Mapping[str, LedgerLookup]:
        """One lookup per requested tool call id."""
        ...


class AsyncLedgerReader(Protocol):
    """The asynchronous form of :class:`LedgerReader` (Redis)."""

    async def read(self, run_id: str, tool_call_ids: Sequence[str]) -> Mapping[str, LedgerLookup]:
        """One lookup per requested tool call id."""
        ...


class InMemoryLedger:
    """A write-once ledger in memory: the first entry for a key wins, as in Redis."""

    def __init__(self, entries: Iterable[Mapping[str, Any]] = ()) -> None:
        self._entries: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._owners: dict[str, set[str]] = {}
        for entry in entries:
            self.put(entry)

    def put(self, entry: Mapping[str, Any]) -> bool:
        """Store an entry unless its key is taken; returns whether it was stored."""
        run_id, tool_call_id = str(entry.get("run_id")), str(entry.get("tool_call_id"))
        key = (run_id, tool_call_id)
        if key in self._entries:
            return False
        self._entries[key] = entry
        self._owners.setdefault(tool_call_id, set()).add(run_id)
        return True

    def get(self, run_id: str, tool_call_id: str) -> Mapping[str, Any] | None:
        """The entry stored for one key, or None."""
        return self._entries.get((run_id, tool_call_id))

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, run_id: str, tool_call_ids: Sequence[str]) -> Mapping[str, LedgerLookup]:
        """One lookup per requested tool call id."""
        out: dict[str, LedgerLookup] = {}
        for tool_call_id in tool_call_ids:
            entry = self._entries.get((run_id, tool_call_id))
            foreign = entry is None and bool(self._owners.get(tool_call_id, set()) - {run_id})
            out[tool_call_id] = LedgerLookup(entry, foreign)
        return out
