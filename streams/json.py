"""The project's one JSON module: orjson with fixed options. Nothing else calls json/orjson directly.

Parsing is strict JSON: UTF-8 only, no ``NaN``/``Infinity`` literals, no number that overflows a
double, no lone surrogates. Serialization is compact, UTF-8, non-ASCII unescaped, no spaces — the
canonical form the ledger stores and hashes.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError
"""Raised by :func:`loads` on anything that is not strict JSON (a ``ValueError``)."""

JSONEncodeError = orjson.JSONEncodeError
"""Raised by :func:`dumps` on a value JSON cannot hold (a ``TypeError``)."""


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


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of some bytes."""
    return hashlib.sha256(data).hexdigest()
