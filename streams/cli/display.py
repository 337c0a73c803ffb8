"""What the commands print for people: text that cannot inject markup or terminal escapes, URLs
without their secrets.

Strings from records (ids, errors, keys) reach Rich only as :class:`rich.text.Text`, never as markup,
with control characters shown escaped (``\\x1b``, ``\\u202e``), so a hostile ``draft_id`` of ``x[/]`` or an
ANSI escape stays visible text. Every URL printed goes through :func:`redact_url`.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from rich.console import Console
from rich.text import Text

from streams.redaction import redact_url as redact_url  # its home; re-exported for the commands

# C0 and C1 controls, the bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E,
# U+2066-U+2069: a U+202E makes "exe.txt" read "txt.exe") and the line and paragraph separators
# (U+2028, U+2029: line breaks to some terminals and viewers, like the newline they stand for).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(value: Any) -> str:
    """``str(value)`` with every control character escaped: C0/C1 (``\\x1b``, newlines included) and
    the bidirectional controls and line separators (``\\u202e``), so none reorders or breaks the text."""
    return _CONTROL.sub(_escape, str(value))


def cell(value: Any, style: str = "", *, empty: str = "—") -> Text:
    """A table cell: plain text (never markup), controls escaped; None shows as a dim dash."""
    if value is None:
        return Text(empty, style="dim")
    return Text(printable(value), style=style)


def console(*, stderr: bool = False, width: int | None = None) -> Console:
    """A console that renders no markup, no emoji and no auto-highlighting of what it is given."""
    return Console(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)


def html_text(value: Any) -> str:
    """``value`` as HTML text: None as a dash, booleans as yes/no, controls escaped, then ``html.escape``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return escape(printable(value), quote=True)
