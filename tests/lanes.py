"""Longest files first, for ``make test``'s lanes (``-n 3 --dist loadfile --no-loadscope-reorder``).

pytest-xdist hands each lane one file, then a second one each, in collection order, then the rest to
whichever lane is free first. A suite whose longest files come first ends with its lanes together
instead of with one lane running a long file that happened to be collected late.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest


def longest_first(items: list[pytest.Item], here: Path, order: Sequence[str]) -> None:
    """Reorder, in place, the tests of the files directly in ``here`` among the places they hold:
    files named in ``order`` first, in that order, then the others in their usual order. A file's
    tests keep their order, and tests of other directories keep their places."""
    rank = {name: n for n, name in enumerate(order)}
    places = [n for n, item in enumerate(items) if item.path.parent == here]
    ours = sorted((items[n] for n in places), key=lambda item: rank.get(item.path.name, len(rank)))
    for n, item in zip(places, ours, strict=True):  # sorted() is stable
        items[n] = item
