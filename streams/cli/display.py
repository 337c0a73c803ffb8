"""What the commands print for people: text that cannot inject markup or terminal escapes, URLs
without their secrets.

Strings from records (ids, errors, keys) reach Rich only as :class:`rich.text.Text`, never as markup,
with control characters shown escaped (``\\x1b``, ``\\u202e``), so a hostile ``draft_id`` of ``x[/]`` or an
ANSI escape stays visible text. Every URL printed goes through :func:`redact_url`.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from streams.printable import printable as printable  # its home; re-exported for the commands
from streams.redaction import redact_url as redact_url  # its home; re-exported for the commands


def cell(value: Any, style: str = "", *, empty: str = "—") -> Text:
    """A table cell: plain text (never markup), controls escaped; None shows as a dim dash."""
    if value is None:
        return Text(empty, style="dim")
    return Text(printable(value), style=style)


def console(*, stderr: bool = False, width: int | None = None) -> Console:
    """A console that renders no markup, no emoji and no auto-highlighting of what it is given."""
    return Console(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)

