"""The lines of the offline commands (``pipe``, ``verify``): one record per input line, read as bytes in
bounded memory, the ids of a line too long to keep, and exactly one output line per input line.

A line ends at ``\\n`` (a ``\\r`` before it is not part of it), and a final line without one still counts.
``pipe`` keeps at most a fixed number of bytes of one line, whatever its length: once a line is longer,
the rest of it is counted and dropped (read in chunks up to its ``\\n``), and only its first bytes remain
to find its ids in (:func:`top_level_strings`), without parsing the whole of it.

An input line whose stations give no output line of their own gets its dead letter
(:func:`dead_letter_line`); anything unexpected is that line's ``INTERNAL_ERROR`` (:func:`one_line_each`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from models.events import Rejection
from models.vocab import DeadLetterReason
from streams import codec
from streams.envelope import rejection
from streams.pipeline import Outcome, internal_error

DRAIN_CHUNK_BYTES = 64 * 1024
"""Bytes read at a time from the part of a line that is not kept."""

_MAX_NAME_TOKEN_BYTES = 256
"""A member name longer than this (escapes included) is none of the names looked for."""

_MAX_VALUE_TOKEN_BYTES = 1024
"""A string value longer than this cannot be an id (128 characters, each at most a 6-byte escape)."""

T = TypeVar("T")


def read_lines(stream: IO[bytes]) -> Iterator[bytes]:
    """Lines as bytes without their line ending; a final line without ``\\n`` still counts."""
    for line in stream:
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        yield line


@dataclass(frozen=True, slots=True)
class Line:
    """One input line without its line ending: all of it, or only its first bytes (``cut``).

    ``length`` is the whole line's length in bytes; a cut line's ``value`` holds fewer.
    """

    value: bytes
    length: int

    @property
    def cut(self) -> bool:
        """Whether only the first bytes of the line were kept."""
        return self.length > len(self.value)


def read_bounded_lines(stream: IO[bytes], keep: int) -> Iterator[Line]:
    """Lines as :func:`read_lines` splits them, each held in at most ``keep`` bytes.

    A line of at most ``keep`` bytes is given whole; a longer one as its first ``keep`` bytes and
    its length, the rest read ``DRAIN_CHUNK_BYTES`` at a time and dropped.
    """
    while head := stream.readline(keep):
        if head.endswith(b"\n"):
            line = head[:-2] if head.endswith(b"\r\n") else head[:-1]
            yield Line(line, len(line))
            continue
        if len(head) < keep:  # the last line, without a "\n"
            yield Line(head, len(head))
            continue
        length, last = len(head), head[-1:]
        while part := stream.readline(DRAIN_CHUNK_BYTES):
            if part.endswith(b"\n"):
                before = part[-2:-1] if len(part) > 1 else last
                length += len(part) - (2 if before == b"\r" else 1)
                break
            length, last = length + len(part), part[-1:]
        yield Line(head[:length] if length < keep else head, length)


# One JSON token after optional whitespace: a string, a punctuation mark, or a bare scalar.
_TOKEN = re.compile(
    rb'[ \t\r\n]*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\]:,])|([^ \t\r\n"{}\[\]:,]+))', re.DOTALL
)
# Inside a nested value only strings (which may hold brackets) and brackets matter.
_NESTED = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]', re.DOTALL)
_SCALAR = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")
_SPACE = re.compile(rb"[ \t\r\n]*")
_OPENS = frozenset(b"{[")
_PAIRS = {ord("}"): ord("{"), ord("]"): ord("[")}


def top_level_strings(prefix: bytes, names: Collection[str]) -> dict[str, str | None] | None:
    """The members ``names`` of the JSON object a text starts with, read from its first bytes.

    A member whose value is not a string (or too long to be an id) maps to None; a member not in
    ``prefix`` is left out; of duplicates, the last one read wins, as with the parser. Returns None
    when ``prefix`` already shows that the text is not a JSON object. A cheap scan, not a
    validation: it reads the top-level members, checks that brackets pair and top-level scalars are
    JSON scalars, and stops at the end of ``prefix`` or once every name is found.
    """
    found: dict[str, str | None] = {}
    depth = bytearray()  # the open brackets of the nested value being skipped
    expect = "{"
    name: str | None = None
    position, end = 0, len(prefix)
    while True:
        if depth:
            nested = _NESTED.search(prefix, position)
            if nested is None:
                return found
            position = nested.end()
            mark = prefix[nested.start()]
            if mark in _OPENS:
                depth.append(mark)
            elif mark in _PAIRS:
                if depth.pop() != _PAIRS[mark]:
                    return None
            continue
        token = _TOKEN.match(prefix, position)
        if token is None:
            return found
        position = token.end()
        text, punct, scalar = token.group(1, 2, 3)
        if expect == "{":
            if punct != b"{":
                return None
            expect = "first key"
        elif expect in ("first key", "key"):
            if expect == "first key" and punct == b"}":
                return found if _SPACE.fullmatch(prefix, position) else None
            if text is None:
                return None
            ok, key = _string(text, _MAX_NAME_TOKEN_BYTES)
            if not ok:
                return None
            name = key if key in names else None
            expect = ":"
        elif expect == ":":
            if punct != b":":
                return None
            expect = "value"
        elif expect == "value":
            if punct is not None and punct not in (b"{", b"["):
                return None
            if scalar is not None and position < end and _SCALAR.fullmatch(scalar) is None:
                return None
            if punct is not None:
                depth.append(punct[0])
            if name is not None:
                ok, value = _string(text, _MAX_VALUE_TOKEN_BYTES) if text is not None else (True, None)
                if not ok:
                    return None
                found[name] = value
                if len(found) == len(names):
                    return found
            expect = ","
        elif punct == b",":
            expect = "key"
        elif punct == b"}":
            return found if _SPACE.fullmatch(prefix, position) else None
        else:
            return None


def _string(token: bytes, limit: int) -> tuple[bool, str | None]:
    """Whether a string token is valid JSON, and its text (None when longer than ``limit``, unread)."""
    if len(token) > limit:
        return True, None
    try:
        text = codec.loads(token)
    except codec.JSONDecodeError:
        return False, None
    return True, text if isinstance(text, str) else None


def dead_letter_line(refused: Rejection) -> bytes:
    """The output line of an input line the stations rejected: ``{"dead_letter": ...}``."""
    return codec.dumps_line({"dead_letter": dict(refused)})


def rejection_of(step: Any) -> Rejection:
    """Why a station's step gave no output line: its rejection, else ``INTERNAL_ERROR`` (no result)."""
    if isinstance(step, Outcome) and step.rejection is not None:
        return step.rejection
    return rejection(DeadLetterReason.INTERNAL_ERROR, "no result")


def one_line_each(lines: Iterator[T], render: Callable[[T], bytes], out: IO[bytes]) -> None:
    """Exactly one output line per input line: anything unexpected is that line's INTERNAL_ERROR."""
    for line in lines:
        try:
            text = render(line)
        except Exception as exc:  # noqa: BLE001 - per-line isolation: the rest of the input goes on
            text = dead_letter_line(internal_error(exc))
        out.write(text)
    out.flush()
