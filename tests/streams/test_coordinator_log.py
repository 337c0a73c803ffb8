"""A fresh broker's coordinator start-up is no error in the log (``streams.observe.logs.CoordinatorStartUp``).

The records are logged as aiokafka logs them (its logger, its format strings, its error classes), and
the format strings are checked against aiokafka's own source, so an upgrade that rewords them fails
here instead of bringing the ERROR back unseen.
"""

from __future__ import annotations

import inspect
import io
import logging
import logging.config
from collections.abc import Callable, Iterator

import aiokafka.consumer.group_coordinator
import pytest
from aiokafka import errors

from streams.observe import logs
from streams.observe.logs import COORDINATOR_LOGGER, CoordinatorStartUp, logging_config

GROUP = "app-1"


def lookup_failed(log: logging.Logger, err: Exception) -> None:
    log.error(logs._LOOKUP_FAILED, err)


def marked_dead(log: logging.Logger, group: str = GROUP) -> None:
    log.warning(logs._MARKED_DEAD, 1, group)


def joined(log: logging.Logger, group: str = GROUP) -> None:
    log.info(logs._JOINED, group, 1, "member-1")


@pytest.fixture
def logged() -> Iterator[Callable[..., list[str]]]:
    """Configure logging as a command does at ``level``, run ``steps`` on aiokafka's coordinator logger,
    and return the ``[LEVEL] message`` of each line written."""

    def run(level: str, *steps: Callable[[logging.Logger], None]) -> list[str]:
        stream = io.StringIO()
        config = logging_config("text", level)
        config["handlers"]["stderr"]["stream"] = stream
        logging.config.dictConfig(config)
        log = logging.getLogger(COORDINATOR_LOGGER)
        for step in steps:
            step(log)
        lines = [line.split("] ", 2)[2] for line in stream.getvalue().splitlines()]
        return [line.replace(f"] {COORDINATOR_LOGGER}: ", "] ", 1) for line in lines]

    try:
        yield run
    finally:
        logging.config.dictConfig(logging_config("text", "warning"))


def test_the_messages_are_aiokafkas_own() -> None:
    source = inspect.getsource(aiokafka.consumer.group_coordinator)
    for message in (logs._LOOKUP_FAILED, logs._MARKED_DEAD, logs._JOINED):
        assert f'"{message}"' in source.replace('"\n                "', "")
    assert aiokafka.consumer.group_coordinator.log.name == COORDINATOR_LOGGER
    assert {errors.GroupLoadInProgressError.errno, errors.GroupCoordinatorNotAvailableError.errno} | {
        errors.NotCoordinatorForGroupError.errno
    } == logs._NOT_YET


def test_before_the_join_the_coordinator_lookup_and_the_dead_marks_are_info(
    logged: Callable[..., list[str]],
) -> None:
    lines = logged(
        "info",
        lambda log: lookup_failed(log, errors.GroupCoordinatorNotAvailableError()),
        marked_dead,
        marked_dead,
        joined,
    )
    assert lines == [
        "[INFO] Group Coordinator Request failed: [Error 15] GroupCoordinatorNotAvailableError",
        "[INFO] Marking the coordinator dead (node 1)for group app-1.",
        "[INFO] Marking the coordinator dead (node 1)for group app-1.",
        "[INFO] Joined group 'app-1' (generation 1) with member_id member-1",
    ]


def test_at_warning_level_the_start_up_prints_nothing(logged: Callable[..., list[str]]) -> None:
    lines = logged(
        "warning",
        lambda log: lookup_failed(log, errors.GroupCoordinatorNotAvailableError()),
        marked_dead,
        joined,
    )
    assert lines == []


def test_after_the_join_a_lost_coordinator_keeps_its_level(logged: Callable[..., list[str]]) -> None:
    lines = logged(
        "warning",
        joined,
        marked_dead,
        lambda log: lookup_failed(log, errors.GroupCoordinatorNotAvailableError()),
        lambda log: marked_dead(log, "another-group"),  # a group that has not joined yet: still start-up
    )
    assert [line.split(" ", 1)[0] for line in lines] == ["[WARNING]", "[ERROR]"]


def test_other_lookup_errors_keep_their_level(logged: Callable[..., list[str]]) -> None:
    lines = logged("warning", lambda log: lookup_failed(log, errors.KafkaConnectionError("refused")))
    assert len(lines) == 1 and lines[0].startswith("[ERROR]")


def test_a_coordinator_that_never_comes_is_an_error_after_the_grace(
    logged: Callable[..., list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = iter([100.0, 100.0 + CoordinatorStartUp.grace_seconds + 1])
    monkeypatch.setattr(logs.time, "monotonic", lambda: next(clock))
    not_available = errors.GroupCoordinatorNotAvailableError()
    lines = logged(
        "warning",
        lambda log: lookup_failed(log, not_available),
        lambda log: lookup_failed(log, not_available),
    )
    assert len(lines) == 1 and lines[0].startswith("[ERROR]")


def test_debug_lines_still_pass_at_debug_level(logged: Callable[..., list[str]]) -> None:
    lines = logged("debug", lambda log: log.debug("Sending JoinGroup"))
    assert lines == ["[DEBUG] Sending JoinGroup"]
