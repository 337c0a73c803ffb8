"""A lookup's usual answer, WRITTEN, is read off the stored entry's origin, with no station run
(``streams.client.client``: the gateway answers it on its event loop, not in a thread)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from models.ledger import LedgerEntry
from models.vocab import LedgerOutcome
from streams.client.client import lookup_outcome, written_here

WHERE = ("ec.raw-hits", 2, 41)


def stored(origin: dict[str, Any] | None) -> LedgerEntry:
    return cast(LedgerEntry, {"run_id": "r", "tool_call_id": "t", "origin": origin})


@pytest.mark.parametrize(
    ("origin", "written_at", "expected"),
    [
        ({"topic": "ec.raw-hits", "partition": 2, "offset": 41}, WHERE, True),
        ({"topic": "ec.raw-hits", "partition": 2, "offset": 40}, WHERE, False),
        ({"topic": "ec.raw-hits", "partition": 1, "offset": 41}, WHERE, False),
        ({"topic": "other.raw-hits", "partition": 2, "offset": 41}, WHERE, False),
        ({"topic": "ec.raw-hits", "partition": 2, "offset": 41}, None, False),
        (None, WHERE, False),
    ],
)
def test_an_entry_is_this_requests_write_only_at_its_own_coordinates(
    origin: dict[str, Any] | None, written_at: tuple[str, int, int] | None, expected: bool
) -> None:
    assert written_here(stored(origin), written_at) is expected


def test_written_is_decided_by_the_coordinates_alone() -> None:
    """No rules and a record that is not JSON: the WRITTEN answer never reaches the stations; the same
    entry met without this request's coordinates is compared with the record (here: not its entry)."""
    origin = {"topic": WHERE[0], "partition": WHERE[1], "offset": WHERE[2]}
    assert lookup_outcome(b"not json", cast(Any, None), stored(origin), WHERE) is LedgerOutcome.WRITTEN
    assert lookup_outcome(b"not json", cast(Any, None), stored(origin), None) is not LedgerOutcome.WRITTEN
