"""The fault suite's order, for `make test`'s three lanes (``tests/lanes.py``).

The three longest files start at once; the cluster's lane (which also starts three brokers) takes
the shortest of the next three, and the rest fill in whichever lane is free.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lanes import longest_first

LONGEST_FIRST = (
    # Seconds of each file on the two-core EPYC of 2026-12-07 (C1-only test brokers, make test's junit):
    # each lane gets one of the first three, then the rest go to whichever lane is free; the lanes
    # end at about 390 s of tests each (1,155 s in all), the best three lanes can do being 385.
    "test_cluster.py",  # 244, some of it starting the three brokers
    "test_outages.py",  # 140
    "test_semantic.py",  # 250, 60 of it a judge outage
    "test_group.py",  # 65
    "test_network.py",  # 117
    "test_alerts.py",  # 90, most of it a Redis outage the alert must outlast
    "test_crashes.py",  # 80
    "test_operations.py",  # 66
    "test_sentinel.py",  # 45
    "test_hooks.py",  # 33
    "test_client_faults.py",  # 25
)
"""Files not named run after these, in their usual order."""


HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """This suite's tests reordered among the places they hold; other tests stay where they are."""
    longest_first(items, HERE, LONGEST_FIRST)
