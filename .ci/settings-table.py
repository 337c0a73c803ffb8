"""Print the README's settings table from ``streams.settings`` (tests/test_docs.py checks the README).

.venv/bin/python .ci/settings-table.py
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SecretStr

from streams.settings import Settings


def shown(value: Any) -> str:
    """A default as the table writes it: in backticks, or ``(empty)``."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
    elif isinstance(value, frozenset):
        value = ",".join(sorted(value))
    return "(empty)" if value is None or value == "" else f"`{value}`"


def rows() -> list[str]:
    out = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for name, field in Settings.model_fields.items():
        if isinstance(field.default, BaseModel):
            for sub, sub_field in type(field.default).model_fields.items():
                variable = f"EC_{name.upper()}__{sub.upper()}"
                out.append(f"| `{variable}` | `{sub_field.default}` | {sub_field.description} |")
        else:
            out.append(f"| `EC_{name.upper()}` | {shown(field.default)} | {field.description} |")
    return out


if __name__ == "__main__":
    print("\n".join(rows()))
