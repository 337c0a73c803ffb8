"""``make test``'s lanes hand a file to a lane only when it is about to run out (``tests/lanes.py``)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from xdist.scheduler import LoadFileScheduling

from tests.lanes import JustInTime

# Three files of one long test each, then one of two tests, as the fault suite's are.
COLLECTION = ["a.py::t", "b.py::t", "c.py::t", "d.py::t1", "d.py::t2", "e.py::t", "f.py::t"]


class Lane:
    """A pytest-xdist worker as the scheduler sees it: the tests it was sent, by index."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent += indices

    def shutdown(self) -> None:
        self.shutting_down = True


def scheduled(kind: type[Any], lanes: int) -> tuple[Any, list[Lane]]:
    config = SimpleNamespace(
        getvalue=lambda name: [f"{lanes}*popen"], option=SimpleNamespace(loadscopereorder=False)
    )
    scheduler = kind(config, None)
    nodes = [Lane(f"gw{i}") for i in range(lanes)]
    for node in nodes:
        scheduler.add_node(node)
        scheduler.add_node_collection(node, COLLECTION)
    scheduler.schedule()
    return scheduler, nodes


def files(node: Lane) -> list[str]:
    return sorted({COLLECTION[i].split("::")[0] for i in node.sent})


def test_a_lane_holds_at_most_the_file_it_runs_and_the_next() -> None:
    _, (one, two) = scheduled(JustInTime, 2)
    # A worker runs a test only once it knows the next: a one-test file needs the next file with it.
    assert files(one) == ["a.py", "c.py"] and files(two) == ["b.py", "d.py"]


def test_the_next_file_goes_to_the_lane_that_runs_out_first() -> None:
    scheduler, (one, two) = scheduled(JustInTime, 2)
    scheduler.mark_test_complete(two, COLLECTION.index("b.py::t"))  # two starts d.py: holds two tests
    assert files(two) == ["b.py", "d.py"]
    scheduler.mark_test_complete(one, COLLECTION.index("a.py::t"))  # one is down to c.py's one test
    assert files(one) == ["a.py", "c.py", "e.py"]
    scheduler.mark_test_complete(two, COLLECTION.index("d.py::t1"))
    assert files(two) == ["b.py", "d.py", "f.py"]
    scheduler.mark_test_complete(one, COLLECTION.index("c.py::t"))
    assert one.shutting_down and not two.shutting_down  # nothing left to hand out


def test_pytest_xdists_own_scheduler_commits_a_file_to_a_busy_lane() -> None:
    """What :class:`JustInTime` changes: once lane two starts d.py's first of two tests, the stock
    scheduler hands it another file at once (it hands out files until a lane holds three tests), so
    that file waits behind d.py while lane one may be free first."""
    for kind, more in ((LoadFileScheduling, True), (JustInTime, False)):
        scheduler, (_, two) = scheduled(kind, 2)
        scheduler.mark_test_complete(two, COLLECTION.index("b.py::t"))
        assert (len(files(two)) > 2) is more, kind.__name__
