"""The id rule shared by every station: ids become Redis key parts, so no ``:`` (SPEC 2)."""

from __future__ import annotations

import re
from typing import Any

ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,128}")
"""1-128 characters from ``[A-Za-z0-9._-]`` (matched whole)."""


def is_valid_id(value: Any) -> bool:
    """Whether ``value`` is a string that can be a ``run_id`` or ``tool_call_id``."""
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None
