"""``faust -A streams.app worker``: the Faust app as SPEC 6 names it (it lives in ``streams.worker.app``).

``streams.app.app`` is composed from the environment's settings on first access, as there.
"""

from __future__ import annotations

from streams.worker.app import __getattr__ as __getattr__  # noqa: PLC0414 - re-exported for faust -A
from streams.worker.app import create_app

__all__ = ["create_app"]
