"""A request body read within a size and a time; a client that leaves mid-body is told apart."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from streams.errors import OversizedInput, RequestRefused

READ_CHUNK_BYTES = 64 * 1024
CLIENT_GONE = "CLIENT_GONE"
"""``reason`` of a request whose client closed the connection before its body was whole."""


async def read_bounded(request: web.Request, limit: int, what: str, timeout_seconds: float) -> bytes:
    """The request body, read in chunks, never more than ``limit`` bytes of it held.

    Raises:
        OversizedInput: the body is longer than ``limit`` (a ``Content-Length`` above it is refused
            before anything is read).
        RequestRefused: 408 when the whole body did not arrive within ``timeout_seconds``; 400 with
            reason :data:`CLIENT_GONE` when the client closed the connection before it was whole
            (nothing to answer, and nothing wrong with the server: no ERROR); 400 when the body does
            not decode as its ``Content-Encoding`` says (a gzip that is not gzip).
    """
    too_large = f"{what} may be at most {limit} bytes"
    if request.content_length is not None and request.content_length > limit:
        raise OversizedInput(f"{too_large}; this one is {request.content_length}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_seconds):
            async for chunk in request.content.iter_chunked(READ_CHUNK_BYTES):
                size += len(chunk)
                if size > limit:
                    raise OversizedInput(f"{too_large}; this one is longer")
                chunks.append(chunk)
    except TimeoutError:
        raise RequestRefused(
            408, "BAD_REQUEST", f"the body did not arrive within {timeout_seconds:g}s; send it whole"
        ) from None
    except ConnectionError:
        raise RequestRefused(400, CLIENT_GONE, "the client closed the connection mid-body") from None
    except HttpProcessingError as exc:  # a chunked body that breaks its own framing, ...
        raise RequestRefused(400, "BAD_REQUEST", f"the body cannot be read ({type(exc).__name__})") from None
    except RequestPayloadError:  # a Content-Encoding (gzip, deflate, ...) whose bytes do not decode
        raise RequestRefused(
            400, "BAD_REQUEST", "the body does not decode as its Content-Encoding says; send it unencoded"
        ) from None
    return b"".join(chunks)
