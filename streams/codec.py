"""The project's one JSON codec: orjson with fixed options. Nothing else calls json/orjson directly.

Parsing is strict JSON: UTF-8 only, no ``NaN``/``Infinity`` literals, no number that overflows a
double, no lone surrogates. Serialization is compact, UTF-8, non-ASCII unescaped, no spaces — the
canonical form the ledger stores and hashes.

orjson reads JSON nested 1,024 levels deep but writes only about 254, so anything that may echo its
input bounds the depth first (:func:`nested_deeper_than`; the SPEC's bound is 64).

orjson keeps the last of a repeated name; :func:`loads_unique` refuses one instead (I-JSON, RFC 7493),
for input where a reader that kept the first would judge another document (SPEC 4 A.1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError
"""Raised by :func:`loads` on anything that is not strict JSON (a ``ValueError``)."""

JSONEncodeError = orjson.JSONEncodeError
"""Raised by :func:`dumps` on a value JSON cannot hold (a ``TypeError``)."""

JSONObject = Mapping[str, Any]
"""A parsed JSON object whose shape is open: input a tolerant reader checks field by field (a caller's
raw-hits record or draft, a search's filters), or a document of its own kind (a JSON Schema, an OpenAPI
file). A value of a known shape has its type in :mod:`models` instead."""

MAX_DEPTH = 64
"""SPEC 2 and 4: no value is nested more than 64 arrays/objects deep (the top level is depth 1)."""


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse strict JSON.

    Raises:
        JSONDecodeError: the text is not strict JSON (the message says where).
    """
    return orjson.loads(data)


_MAX_NAME_SHOWN = 60

# A JSON string token (valid JSON only: outside strings there is no '"'), and the tokens that decide
# which object a name belongs to. Keys are never directly inside arrays, so the innermost open '{'
# owns every name met.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_NAME_TOKENS = re.compile(_STRING + r"(\s*:)?|[{}]")


# Why the check is cheap and exact: in valid JSON a ``:`` outside strings only ever follows a name,
# so the text holds (names + colons inside strings) colons, and the parsed value written back by
# orjson holds (names kept + the same colons inside strings). The counts are equal exactly when no
# name was dropped, i.e. none repeated; an escaped ``\u003a`` is a colon only once parsed, so those
# are added to the text's count. Measured on drafts: a 2 KiB one parses in about 6 µs and the check
# adds about 5 µs; a 256 KiB one adds 0.15-0.65 ms to a 0.25-2.7 ms parse (1.1-2.4 times orjson
# alone). ``json.loads`` with an ``object_pairs_hook`` costs 2-8 times orjson alone and a Python
# token scanner 6-23 times, so the scanner runs only where the counts differ (or the value nests
# too deep for orjson to write back), to find the repeated name and say where it is.
def loads_unique(data: bytes | str) -> Any:
    """Parse strict JSON in which no object repeats a name (I-JSON, RFC 7493 section 2.3).

    Raises:
        JSONDecodeError: the text is not strict JSON, or an object in it repeats a name.
    """
    value = orjson.loads(data)
    raw = data.encode() if isinstance(data, str) else data
    colons = raw.count(b":")
    if b"\\" in raw and b"\\u003" in raw:
        # Count the escaped colons. Escaped backslashes go first, pair by pair from the left as a
        # parser reads them, so that ``\\u003a`` (a backslash, then the text "u003a") is not one.
        escapes = raw.replace(b"\\\\", b"")
        colons += escapes.count(b"\\u003a") + escapes.count(b"\\u003A")
    try:
        written = orjson.dumps(value)
    except orjson.JSONEncodeError:  # nested deeper than orjson writes: no count to compare
        _refuse_repeated_name(raw)
        return value
    if colons != written.count(b":"):
        _refuse_repeated_name(raw)
    return value


def _refuse_repeated_name(raw: bytes) -> None:
    """Scan valid JSON for the first name an object repeats (names compared as decoded).

    Raises:
        JSONDecodeError: naming the repeated name and where its second use starts.
    """
    text = raw.decode("utf-8")
    open_objects: list[set[str]] = []
    for token in _NAME_TOKENS.finditer(text):
        kind = token.group()
        if kind == "{":
            open_objects.append(set())
        elif kind == "}":
            open_objects.pop()
        elif token.group(1) is not None:
            quoted = text[token.start() : token.start(1)]
            name: str = orjson.loads(quoted) if "\\" in quoted else quoted[1:-1]
            names = open_objects[-1]
            if name in names:
                shown = repr(name)
                if len(shown) > _MAX_NAME_SHOWN:
                    shown = f"{shown[: _MAX_NAME_SHOWN - 1]}…"
                message = f"an object repeats the name {shown} (I-JSON, RFC 7493, allows each name once)"
                raise JSONDecodeError(message, text, token.start())
            names.add(name)


def dumps(value: Any) -> bytes:
    """Serialize to compact UTF-8 JSON bytes, keys in insertion order.

    Raises:
        JSONEncodeError: the value holds something JSON cannot represent.
    """
    return orjson.dumps(value)


def dumps_sorted(value: Any) -> bytes:
    """Serialize with object keys sorted: two values give the same bytes when they are the same JSON.

    Raises:
        JSONEncodeError: the value holds something JSON cannot represent, or nests too deep.
    """
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def dumps_line(value: Any) -> bytes:
    """Serialize one JSON-lines record (compact JSON plus ``\\n``)."""
    return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)


def _brackets_over(raw: bytes | str, limit: int) -> bool:
    """Whether the text holds more than ``limit`` opening brackets (``[`` and ``{``), strings included.

    ``find`` jumps from one bracket to the next (memchr), and the count stops past ``limit``: a
    record of 24 KB with 24 brackets takes a few µs here, where two ``count`` calls read every byte
    twice (~20 µs, issue 42).
    """
    found = 0
    brackets = ("[", "{") if isinstance(raw, str) else (b"[", b"{")
    for bracket in brackets:
        at = raw.find(bracket)  # type: ignore[arg-type]
        while at != -1:
            found += 1
            if found > limit:
                return True
            at = raw.find(bracket, at + 1)  # type: ignore[arg-type]
    return False


def nested_deeper_than(raw: bytes | str, value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed from ``raw``) nests arrays/objects more than ``limit`` levels deep.

    A value that deep needs more than ``limit`` opening brackets in its text, so a text with few
    brackets (almost every real record) is answered by looking for them; only a text with many is
    walked, containers only, without recursion.
    """
    if not _brackets_over(raw, limit):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        kind = type(node)
        if kind is dict:
            children = node.values()
        elif kind is list:
            children = node
        else:
            continue
        if depth > limit:
            return True
        for child in children:
            child_kind = type(child)
            if child_kind is dict or child_kind is list:
                push((child, depth + 1))
    return False
