"""The id rule shared by every station: ids become Redis key parts, so no ``:`` (SPEC 2)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field, StringConstraints

ID_PATTERN = re.compile(r"[A-Za-z0-9._-]{1,128}")
"""1-128 characters from ``[A-Za-z0-9._-]`` (matched whole)."""

ValidId = Annotated[
    str,
    StringConstraints(pattern=rf"^{ID_PATTERN.pattern}$"),
    Field(description="1-128 characters from [A-Za-z0-9._-]; no ':', as ids become Redis key parts."),
]
"""A ``run_id`` or ``tool_call_id`` that passed :func:`is_valid_id`, as a type (and a JSON Schema pattern)."""


def is_valid_id(value: Any) -> bool:
    """Whether ``value`` is a string that can be a ``run_id`` or ``tool_call_id``."""
    return isinstance(value, str) and ID_PATTERN.fullmatch(value) is not None
