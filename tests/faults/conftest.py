"""The fault suite's order, for `make test`'s three lanes (``-n 3 --dist loadfile --no-loadscope-reorder``).

pytest-xdist hands each lane one file, then a second one each, in this order, then the rest to
whichever lane is free first. So the three longest files start at once, the shortest goes to the lane
with the longest (the cluster's, which also starts three brokers), and the rest fill in. The real
Prometheus's file waits out a Redis outage of over a minute; it is a fourth lane's worth of waiting
and starts as soon as a lane is free.
"""

from __future__ import annotations

from pathlib import Path

import pytest

LONGEST_FIRST = (
    "test_cluster.py",  # about 150 s here with the cluster's start
    "test_network.py",  # about 90 s
    "test_outages.py",  # about 80 s
    "test_client_faults.py",  # the shortest, about 15 s: the cluster lane's second file
    "test_alerts.py",  # about 90 s, most of it a Redis outage the alert must outlast
    "test_semantic.py",  # about 130 s, 60 of it a judge outage
    "test_sentinel.py",
    "test_crashes.py",
    "test_hooks.py",
    "test_operations.py",
    "test_group.py",
)
"""Files not named run after these, in their usual order."""


HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """This suite's tests reordered among the places they hold; other tests stay where they are."""
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    places = [n for n, item in enumerate(items) if item.path.parent == HERE]
    ours = sorted((items[n] for n in places), key=lambda item: rank.get(item.path.name, len(rank)))
    for n, item in zip(places, ours, strict=True):  # sorted() is stable: a file's tests keep their order
        items[n] = item
