"""The project's one JSON codec: orjson with fixed options. Nothing else calls json/orjson directly.

Parsing is strict JSON: UTF-8 only, no ``NaN``/``Infinity`` literals, no number that overflows a
double, no lone surrogates. Serialization is compact, UTF-8, non-ASCII unescaped, no spaces — the
canonical form the ledger stores and hashes.

orjson reads JSON nested 1,024 levels deep but writes only about 254, so anything that may echo its
input bounds the depth first (:func:`nested_deeper_than`; the SPEC's bound is 64).
"""

from __future__ import annotations

from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError
"""Raised by :func:`loads` on anything that is not strict JSON (a ``ValueError``)."""

JSONEncodeError = orjson.JSONEncodeError
"""Raised by :func:`dumps` on a value JSON cannot hold (a ``TypeError``)."""

MAX_DEPTH = 64
"""SPEC 2 and 4: no value is nested more than 64 arrays/objects deep (the top level is depth 1)."""


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse strict JSON.

    Raises:
        JSONDecodeError: the text is not strict JSON (the message says where).
    """
    return orjson.loads(data)


def dumps(value: Any) -> bytes:
    """Serialize to compact UTF-8 JSON bytes, keys in insertion order.

    Raises:
        JSONEncodeError: the value holds something JSON cannot represent.
    """
    return orjson.dumps(value)


def dumps_line(value: Any) -> bytes:
    """Serialize one JSON-lines record (compact JSON plus ``\\n``)."""
    return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)


def nested_deeper_than(raw: bytes | str, value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (parsed from ``raw``) nests arrays/objects more than ``limit`` levels deep.

    A value that deep needs more than ``limit`` opening brackets in its text, so a text with few
    brackets (almost every real record) is answered by two byte counts; only a text with many is
    walked, containers only, without recursion.
    """
    if isinstance(raw, str):
        brackets = raw.count("[") + raw.count("{")
    else:
        brackets = raw.count(b"[") + raw.count(b"{")
    if brackets <= limit:
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
