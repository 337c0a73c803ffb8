"""Ids with bidirectional controls in them, for the display tests of the CLI and of ``serve``."""

from __future__ import annotations

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SEPARATORS = "\u2028\u2029"  # line and paragraph separators: line breaks, like the \n already escaped
EVIL_RUN = "run\u202eg"
EVIL_CALL = "call\u202ex"
EVIL_DRAFT = "d\u202etxt.exe"
