"""The HTTP APIs this project calls (py-rag, the semantic judge), on one footing, with aiohttp: a JSON
POST to one URL over a connection pool of the caller's own, opened on first use; a redirect never
followed (the body and the bearer token go to that URL and nowhere else, so each caller passes
``allow_redirects=False``); an answer read no further than a cap; a failure described in words that
never show the URL's secrets (:func:`~streams.redaction.redact_in`). Each caller turns statuses and
failures into its own errors.
"""

from __future__ import annotations

import aiohttp

from streams.redaction import redact_in, redact_url

READ_CHUNK_BYTES = 64 * 1024


class JsonApi:
    """A JSON API at ``url``: its headers (with the bearer ``token``, if any) and its connection pool.

    ``shown`` is the URL as every message names it (no password, no query value); ``timeout`` bounds
    each call, and a new value holds from the next pool (after :meth:`close`).
    """

    def __init__(self, url: str, timeout_seconds: float, token: str = "") -> None:
        self.url = url
        self.shown = redact_url(url)
        self.timeout = aiohttp.ClientTimeout(total=timeout_seconds)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._session: aiohttp.ClientSession | None = None

    def _session_for_use(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self.timeout, raise_for_status=False)
        return self._session

    async def close(self) -> None:
        """Close the connection pool."""
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    @staticmethod
    async def _read_capped(response: aiohttp.ClientResponse, cap: int, too_large: Exception) -> bytes:
        """The answer's body, never more than ``cap`` bytes of it held in memory.

        Raises:
            Exception: ``too_large``, once the body has gone over ``cap``.
        """
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_chunked(READ_CHUNK_BYTES):
            size += len(chunk)
            if size > cap:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)

    def _failure(self, exc: BaseException, timed_out: str) -> str:
        """Why a call got no answer, as a message may say it: ``timed_out`` for a timeout, else the
        error's class and words, with the URL's secrets taken out."""
        if isinstance(exc, TimeoutError):
            described = timed_out
        else:
            described = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return redact_in(described, self.url)
