"""Validation against a contract, with the first error as a readable path (``hits[0].quality_score``)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


class ContractError(ValueError):
    """A value does not satisfy a contract; ``path`` locates the first offending field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def format_path(loc: tuple[int | str, ...]) -> str:
    """``('hits', 0, 'quality_score')`` → ``hits[0].quality_score``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def validate(adapter: TypeAdapter[T], value: Any) -> T:
    """Validate ``value`` with ``adapter``.

    Raises:
        ContractError: with the path and message of the first error.
    """
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ContractError(format_path(tuple(first["loc"])), first["msg"]) from exc
