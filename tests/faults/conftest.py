"""The fault suite's order, for `make test`'s three lanes (``tests/lanes.py``).

The three longest files start at once; the cluster's lane (which also starts three brokers) takes
the shortest of the next three, and the rest fill in whichever lane is free.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lanes import longest_first

LONGEST_FIRST = (
    # Seconds of each file on the two-core EPYC of 2026-12-07 (before C1-only test brokers); each lane
    # gets one of the first three, then one of the next three: cluster + group, outages + network,
    # semantic + alerts (about 430, 390 and 370 s), then the rest to whichever lane is free.
    "test_cluster.py",  # 394, 74 of it starting the three brokers
    "test_outages.py",  # 242
    "test_semantic.py",  # 234, 60 of it a judge outage
    "test_group.py",  # 41
    "test_network.py",  # 147
    "test_alerts.py",  # 133, most of it a Redis outage the alert must outlast
    "test_crashes.py",  # 111
    "test_operations.py",  # 72
    "test_sentinel.py",  # 72
    "test_hooks.py",  # 62
    "test_client_faults.py",  # 42
)
"""Files not named run after these, in their usual order."""


HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """This suite's tests reordered among the places they hold; other tests stay where they are."""
    longest_first(items, HERE, LONGEST_FIRST)
