"""What SPEC 4 calls a blank text, defined once for every guard rule that says blank.

A text is blank when it has no character other than whitespace (Unicode White_Space), format
characters (general category Cf, such as U+200B or U+FEFF) and the Hangul fillers U+115F, U+1160,
U+3164, U+FFA0: a person reads it as empty, so it says nothing.
"""

from __future__ import annotations

import re
from unicodedata import category

WHITE_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
"""The Unicode White_Space property, spelled out. ``str.isspace`` is not it: it also accepts the
separators U+001C-U+001F (control characters, so not blank) and misses nothing else we need."""

HANGUL_FILLERS = "\u115f\u1160\u3164\uffa0"

# Where the format characters are (Unicode 15.1). Runs of them are skipped at regex speed with the
# two sets above, so even a 256 KiB draft of nothing but format characters costs about a millisecond.
# Each is checked against this Python's tables (U+180E, for one, moved from White_Space to Cf in
# Unicode 6.3); a character outside these ranges is asked its category one by one.
_FORMAT_RANGES = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip


def _character_class(characters: str) -> str:
    """A regex character class of ``characters``, consecutive code points written as ranges."""
    codes = sorted(set(map(ord, characters)))
    parts: list[str] = []
    start = previous = codes[0]
    for code in [*codes[1:], -1]:
        if code != previous + 1:
            first, last = re.escape(chr(start)), re.escape(chr(previous))
            parts.append(first if start == previous else f"{first}-{last}")
            start = code
        previous = code
    return f"[{''.join(parts)}]"


_KNOWN_FORMAT = "".join(
    chr(code)
    for first, last in _FORMAT_RANGES
    for code in range(first, last + 1)
    if category(chr(code)) == "Cf"
)
_RUN = re.compile(_character_class(WHITE_SPACE + HANGUL_FILLERS + _KNOWN_FORMAT) + "*")


def _after_run(text: str, position: int) -> int:
    """Where the run of known blank characters that starts at ``position`` ends."""
    run = _RUN.match(text, position)
    return run.end() if run is not None else position


def is_blank(text: str | None) -> bool:
    """Whether ``text`` is absent or has only whitespace, format characters and Hangul fillers."""
    if text is None:
        return True
    end = len(text)
    position = _after_run(text, 0)
    while position < end:
        if category(text[position]) != "Cf":
            return False
        position = _after_run(text, position + 1)
    return True
