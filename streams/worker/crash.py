"""Crash-only exit: a batch-level error that is neither one record's fault nor a known outage ends the
process at once, committing nothing more; its supervisor starts it again and the batch is re-read.

``os._exit`` and not ``sys.exit``: Faust's supervisor restarts a crashed agent in-process, and its
``on_task_error`` commits; neither may run after such an error.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

log = logging.getLogger(__name__)

EXIT_CRASH = 70
"""Exit status of a crash-only exit (``EX_SOFTWARE``)."""


def crash(exc: BaseException, what: str) -> NoReturn:
    """Exit the process at once, without committing anything more (crash-only)."""
    log.critical(
        "%s: %s: %s; exiting (status %d) without committing this batch",
        what,
        type(exc).__name__,
        exc,
        EXIT_CRASH,
        exc_info=exc,
    )
    for handler in logging.getLogger().handlers:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001, S110 - flushing is best effort on the way out
            pass
    sys.stderr.flush()
    os._exit(EXIT_CRASH)
