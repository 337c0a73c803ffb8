"""Text from records, shown to people: every control character escaped, so none can reorder, break or
colour what a person reads (a terminal, a page, an error message).

Ids, errors and keys come from records anyone may write. :func:`printable` is the one escaping of them;
the commands (:mod:`streams.cli.display`), the audit pages (:mod:`streams.web.pages`) and the messages of
the receipts (:mod:`streams.trust.receipt`, :mod:`streams.audit.receipts`) use it.
"""

from __future__ import annotations

import re
from typing import Any

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
