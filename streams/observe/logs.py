"""Log lines for people (``EC_LOG_FORMAT=text``) or for log pipelines (``json``: one object per line).

A line about one record carries its coordinates as ``extra`` fields, named as in the audit records:
``run_id``, ``tool_call_id``, ``event_id``, ``agent``, ``topic``, ``partition``, ``offset`` (see
:func:`record_fields`); the JSON formatter puts each on the line, the text formatter appends them.
Messages are made printable first (control characters escaped), so a hostile id cannot forge a line.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

from streams import codec
from streams.messages import Record

RECORD_FIELDS = ("run_id", "tool_call_id", "event_id", "agent", "topic", "partition", "offset", "reason")
MAX_FIELD_CHARS = 256


def record_fields(record: Record, **more: Any) -> dict[str, Any]:
    """``extra=`` for a log line about ``record`` (plus ``run_id``, ``agent``, ... when known)."""
    return {"topic": record.topic, "partition": record.partition, "offset": record.offset, **more}


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        text = value if value.isprintable() else value.encode("unicode_escape").decode("ascii")
        return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "…"
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``message``, the record fields, ``exc``."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": _printable(record.getMessage()),
        }
        for name in RECORD_FIELDS:
            if name in record.__dict__ and record.__dict__[name] is not None:
                line[name] = _printable(record.__dict__[name])
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return codec.dumps(line).decode("utf-8")


class TextFormatter(logging.Formatter):
    """``[time] [level] logger: message key=value ...``."""

    def __init__(self) -> None:
        super().__init__("[%(asctime)s] [%(process)d] [%(levelname)s] %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        record.msg, record.args = _printable(record.getMessage()), None
        text = super().format(record)
        extra = [
            f"{n}={_printable(record.__dict__[n])}"
            for n in RECORD_FIELDS
            if record.__dict__.get(n) is not None
        ]
        return f"{text} {' '.join(extra)}" if extra else text


COORDINATOR_LOGGER = "aiokafka.consumer.group_coordinator"
_LOOKUP_FAILED = "Group Coordinator Request failed: %s"
_MARKED_DEAD = "Marking the coordinator dead (node %s)for group %s."
_JOINED = "Joined group '%s' (generation %s) with member_id %s"
# Kafka's COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: what a group hears
# while the broker is still creating __consumer_offsets and electing its partitions' leaders.
_NOT_YET = frozenset({14, 15, 16})


class CoordinatorStartUp(logging.Filter):
    """aiokafka's complaints while a consumer group first looks for its coordinator, demoted to INFO.

    On a fresh broker the first group to ask creates ``__consumer_offsets``; until its partitions have
    leaders aiokafka logs ``Group Coordinator Request failed: [Error 15] GroupCoordinatorNotAvailableError``
    at ERROR and ``Marking the coordinator dead`` warnings, retries, and joins a moment later. Nothing
    is wrong, yet it reads like a failure. Those two lines are INFO until the group has joined (the
    lookup's until the first group of the process has), and only for :attr:`grace_seconds` from the
    first of them: a coordinator that never comes, or one lost after the join, keeps its level.

    It filters the handler, not the logger: :func:`logging_config` makes a new handler each time it is
    applied, while a logger would keep every filter ever added. It sees the join's INFO line whatever
    the process's level (the coordinator's logger is set to INFO at most), so it drops that logger's
    lines below ``level`` itself, as the root logger would have.
    """

    grace_seconds = 60.0

    def __init__(self, level: str = "INFO") -> None:
        super().__init__()
        self._level = logging.getLevelNamesMapping()[level.upper()]
        self._joined: set[str] = set()
        self._first: float | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name != COORDINATOR_LOGGER:
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        if record.msg == _JOINED and args:
            self._joined.add(str(args[0]))
        elif self._starting(record.msg, args):
            now = time.monotonic()
            self._first = now if self._first is None else self._first
            if now - self._first <= self.grace_seconds:
                record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return record.levelno >= self._level

    def _starting(self, message: object, args: tuple[object, ...]) -> bool:
        if message == _LOOKUP_FAILED and len(args) == 1:
            return not self._joined and getattr(args[0], "errno", None) in _NOT_YET
        if message == _MARKED_DEAD and len(args) == 2:
            return str(args[1]) not in self._joined
        return False


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the worker and the audit sink (stderr)."""
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "filters": {
            "coordinator_start_up": {"()": f"{__name__}.{CoordinatorStartUp.__qualname__}", "level": level}
        },
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "main",
                "stream": "ext://sys.stderr",
                "filters": ["coordinator_start_up"],
            }
        },
        "loggers": {
            COORDINATOR_LOGGER: {"level": min(logging.INFO, logging.getLevelNamesMapping()[level.upper()])}
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
    }
