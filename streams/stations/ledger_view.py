"""What the guard reads from the ledger for one cited tool call (SPEC 3.6, 4).

The reads themselves happen at the edge (``streams.ledger.redis`` for Redis, ``streams.ledger.memory``
for files and tests), at most two round trips for a whole batch; the guard only sees the answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.ledger import LedgerEntry

LedgerKey = tuple[str, str]
"""``(run_id, tool_call_id)``: the key of one ledger entry."""


@dataclass(frozen=True, slots=True)
class LedgerLookup:
    """What the ledger says about one ``(run_id, tool_call_id)``.

    ``entry`` holds the stored fields (``projection`` as text or bytes, exactly as stored) or is
    None; ``foreign_owner`` tells whether another run owns an entry with this tool call id.
    """

    entry: LedgerEntry | None
    foreign_owner: bool = False
