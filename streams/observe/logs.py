"""Log lines for people (``EC_LOG_FORMAT=text``) or for log pipelines (``json``: one object per line).

A line about one record carries its coordinates as ``extra`` fields, named as in the audit records:
``run_id``, ``tool_call_id``, ``event_id``, ``agent``, ``topic``, ``partition``, ``offset`` (see
:func:`record_fields`); the JSON formatter puts each on the line, the text formatter appends them.
Messages are made printable first (control characters escaped), so a hostile id cannot forge a line.
"""

from __future__ import annotations

import logging
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


def logging_config(log_format: str, level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for the worker and the audit sink (stderr)."""
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"main": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "main", "stream": "ext://sys.stderr"}
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
    }
