"""A request body read within a size and a time, decoded as its ``Content-Encoding`` says; a client
that leaves mid-body is told apart.

aiohttp decodes request bodies itself unless told not to, and its decoder took what it could not
decode for something else (the red team's L3 after issue 38): a gzip stream cut short decoded silently
to a partial body (``/v1/drafts`` judged it), ``gzip, gzip`` was decoded once and the rest judged, and a
coding it does not know (``compress``) was read as if there were none. Every server's listener turns
that decoder off (:func:`streams.web.listener.listening`) and a body is decoded here: one coding, gzip
(``x-gzip``) or deflate, or none (``identity``); the stream must end, and nothing may follow it.
Anything else is a 400, and the decoded body is bounded as the raw one is (a gzip bomb is a 413 with
at most the limit held).
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError
from multidict import CIMultiDictProxy

from streams.errors import OversizedInput, RequestRefused

READ_CHUNK_BYTES = 64 * 1024
CLIENT_GONE = "CLIENT_GONE"
"""``reason`` of a request whose client closed the connection before its body was whole."""
DECODED = ("gzip", "x-gzip", "deflate")
"""The content codings a body may come in (besides ``identity``, none)."""
GZIP_MAGIC = b"\x1f\x8b"
"""How a gzip member starts (RFC 1952)."""
NOT_DECODED = "the body does not decode as its Content-Encoding says ({}); send it unencoded"


class _Undecodable(Exception):
    """The body is not a whole stream of its coding (why: the message)."""


class _Inflater:
    """A gzip or deflate stream decoded as it arrives, no more than asked for at a time.

    A gzip body may hold several members one after another (RFC 1952), each decoded in turn; deflate is
    the zlib format (RFC 9110), or a raw deflate stream as some clients send it (and as aiohttp took it:
    told apart by the first byte, as aiohttp does).
    """

    def __init__(self, coding: str) -> None:
        self.gzip = coding != "deflate"
        self._stream: Any = None
        self._fed = False

    def _start(self, first: int) -> Any:
        if self.gzip:
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(zlib.MAX_WBITS if first & 0x0F == 8 else -zlib.MAX_WBITS)

    def decode(self, data: bytes, room: int) -> bytes:
        """What ``data`` decodes to, cut once it is longer than ``room`` (the caller refuses that).

        Raises:
            _Undecodable: the bytes are not of the coding, or something follows the stream's end.
        """
        out: list[bytes] = []
        size = 0
        self._fed = self._fed or bool(data)
        while data and size <= room:
            if self._stream is None:
                self._stream = self._start(data[0])
            try:
                piece = self._stream.decompress(data, room - size + 1)
            except zlib.error as exc:
                raise _Undecodable(f"not {'gzip' if self.gzip else 'deflate'} data: {exc}") from None
            out.append(piece)
            size += len(piece)
            if not self._stream.eof:
                data = self._stream.unconsumed_tail
                continue
            data = self._stream.unused_data
            if data and not (self.gzip and GZIP_MAGIC.startswith(data[: len(GZIP_MAGIC)])):
                raise _Undecodable(f"bytes follow the end of the {'gzip' if self.gzip else 'deflate'} stream")
            if data:
                self._stream = None  # the next gzip member
        return b"".join(out)

    def finish(self) -> None:
        """The body is whole: its stream must have ended (an empty body is an empty body).

        Raises:
            _Undecodable: it ends before its stream does (cut short).
        """
        if self._fed and (self._stream is None or not self._stream.eof):
            raise _Undecodable("it ends before its stream does: cut short")


def content_codings(values: Iterable[str]) -> list[str]:
    """The content codings ``Content-Encoding`` header values name, in lower case, ``identity`` left out."""
    return [
        coding.strip().lower()
        for value in values
        for coding in value.split(",")
        if coding.strip().lower() not in ("", "identity")
    ]


def _inflater(headers: CIMultiDictProxy[str]) -> _Inflater | None:
    """The decoder of a body with these headers, or None for one that is not encoded.

    Raises:
        RequestRefused: 400 for more than one coding (``gzip, gzip``: the body is what two decodings
            give, and one would be judged as the body) or one this server does not decode.
    """
    codings = content_codings(headers.getall("Content-Encoding", []))
    if not codings:
        return None
    if len(codings) > 1:
        raise RequestRefused(
            400,
            "BAD_REQUEST",
            f"the body is encoded more than once ({len(codings)} codings in Content-Encoding); send it in "
            f"one of {', '.join(DECODED)}, or unencoded",
        )
    if codings[0] not in DECODED:
        raise RequestRefused(
            400,
            "BAD_REQUEST",
            f"Content-Encoding {codings[0][:20]!r} is not one this server decodes ({', '.join(DECODED)}); "
            "send the body in one of them, or unencoded",
        )
    return _Inflater(codings[0])


async def read_bounded(request: web.Request, limit: int, what: str, timeout_seconds: float) -> bytes:
    """The request body, read in chunks and decoded, never more than ``limit`` bytes of it held (sent
    or decoded).

    Raises:
        OversizedInput: the body is longer than ``limit`` (a ``Content-Length`` above it is refused
            before anything is read).
        RequestRefused: 408 when the whole body did not arrive within ``timeout_seconds``; 400 with
            reason :data:`CLIENT_GONE` when the client closed the connection before it was whole
            (nothing to answer, and nothing wrong with the server: no ERROR); 400 when the body does
            not decode as its ``Content-Encoding`` says (a gzip that is not gzip, or is cut short, or
            is followed by more bytes), names more than one coding, or one not decoded here.
    """
    too_large = f"{what} may be at most {limit} bytes"
    if request.content_length is not None and request.content_length > limit:
        raise OversizedInput(f"{too_large}; this one is {request.content_length}")
    inflater = _inflater(request.headers)
    chunks: list[bytes] = []
    size = sent = 0
    try:
        async with asyncio.timeout(timeout_seconds):
            async for chunk in request.content.iter_chunked(READ_CHUNK_BYTES):
                sent += len(chunk)
                if sent > limit:
                    raise OversizedInput(f"{too_large}; this one is longer")
                if inflater is not None:
                    chunk = inflater.decode(chunk, limit - size)
                size += len(chunk)
                if size > limit:
                    raise OversizedInput(f"{too_large}; this one is longer once decoded")
                chunks.append(chunk)
            if inflater is not None:
                inflater.finish()
    except _Undecodable as exc:
        raise RequestRefused(400, "BAD_REQUEST", NOT_DECODED.format(exc)) from None
    except TimeoutError:
        raise RequestRefused(
            408, "BAD_REQUEST", f"the body did not arrive within {timeout_seconds:g}s; send it whole"
        ) from None
    except ConnectionError:
        raise RequestRefused(400, CLIENT_GONE, "the client closed the connection mid-body") from None
    except HttpProcessingError as exc:  # a chunked body that breaks its own framing, ...
        raise RequestRefused(400, "BAD_REQUEST", f"the body cannot be read ({type(exc).__name__})") from None
    except RequestPayloadError:  # aiohttp's own decoder, were it on (every listener turns it off)
        raise RequestRefused(400, "BAD_REQUEST", NOT_DECODED.format("aiohttp could not")) from None
    return b"".join(chunks)
