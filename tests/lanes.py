"""``make test``'s lanes (``-n 3 --dist loadfile --no-loadscope-reorder``): longest files first, each
handed to a lane only when that lane is about to run out.

pytest-xdist's file scheduler keeps handing a lane files until it holds more than two tests it has not
finished. The fault suite's files hold one to three tests of 20-300 s each, so each lane was given its
second and third files at the start, minutes before it was free, and whichever lane drew the long ones
ran alone at the end: 502 s of lanes where the same files, handed out as lanes free up, take 430
(a replay of one ``make test``'s 18 fault tests and their measured times). :class:`JustInTime` hands
a lane its next file only when it has at most one test left: the least a pytest-xdist worker can hold,
since it runs a test only once it knows the one after it (for the fixtures' teardown).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling


def longest_first(items: list[pytest.Item], here: Path, order: Sequence[str]) -> None:
    """Reorder, in place, the tests of the files directly in ``here`` among the places they hold:
    files named in ``order`` first, in that order, then the others in their usual order. A file's
    tests keep their order, and tests of other directories keep their places."""
    rank = {name: n for n, name in enumerate(order)}
    places = [n for n, item in enumerate(items) if item.path.parent == here]
    ours = sorted((items[n] for n in places), key=lambda item: rank.get(item.path.name, len(rank)))
    for n, item in zip(places, ours, strict=True):  # sorted() is stable
        items[n] = item


class JustInTime(LoadFileScheduling):  # type: ignore[misc]  # pytest-xdist ships no types
    """``--dist loadfile`` with the next file handed to a lane only when it has at most one test left
    (pytest-xdist's own threshold is two, which, with files of one to three long tests, commits
    files to lanes long before those lanes are free)."""

    def _reschedule(self, node: Any) -> None:
        """pytest-xdist's own, entered only once the lane is down to one test (or has nothing left to
        be handed)."""
        if self.workqueue and not node.shutting_down and self._pending_of(self.assigned_work[node]) > 1:
            return
        super()._reschedule(node)
