"""The py-rag adapter of :class:`~streams.search.port.KnowledgeSearchPort`, over HTTP (aiohttp).

``POST $EC_PYRAG_URL`` with ``{"query", "mode", "filters"}``, an optional ``Authorization: Bearer
$EC_PYRAG_TOKEN``, each try bounded by ``EC_PYRAG_TIMEOUT_MS``. A search is a read, so a connection
error, a timeout or a 5xx is tried again (``EC_PYRAG_ATTEMPTS`` tries, the backoff of
:class:`~streams.retry.RetryPolicy`); a 4xx, a 3xx (a redirect is never followed: the query, its
filters and the bearer token go to ``EC_PYRAG_URL`` and nowhere else), or an answer larger than a
raw-hits record may be (``EC_INPUT__MAX_MESSAGE_BYTES``), fails at once: asking again would get the
same. aiohttp's errors are translated here, once. No message, error or log line shows the URL's
secrets (a password in its user info, an ``api_key`` in its query, a key in its path): py-rag is named as
:func:`~streams.redaction.redact_url` shows it, and what aiohttp says is passed through
:func:`~streams.redaction.redact_in`.
"""

from __future__ import annotations

import asyncio
import logging

import aiohttp

from streams import codec
from streams.errors import ConfigurationError, SearchRefused, SearchUnavailable
from streams.outbound import JsonApi
from streams.retry import RetryPolicy
from streams.search.port import DEFAULT_MODE, Filters, SearchMode
from streams.settings import Settings

log = logging.getLogger(__name__)


class PyRagSearch(JsonApi):
    """py-rag over HTTP; one connection pool per instance, opened on the first search.

    Raises (at construction):
        ConfigurationError: ``EC_PYRAG_URL`` is not set or is not an http(s) URL.
    """

    def __init__(self, settings: Settings, *, policy: RetryPolicy | None = None) -> None:
        url = settings.pyrag_url
        if not url:
            raise ConfigurationError(
                "EC_PYRAG_URL is not set: give py-rag's search endpoint, e.g. http://127.0.0.1:8000/search"
            )
        if not url.startswith(("http://", "https://")):
            raise ConfigurationError("EC_PYRAG_URL must be an http:// or https:// URL")
        token = settings.pyrag_token.get_secret_value() if settings.pyrag_token is not None else ""
        super().__init__(url, settings.pyrag_timeout_ms / 1000, token)
        self.attempts = settings.pyrag_attempts
        self.max_answer_bytes = settings.input.max_message_bytes
        self.policy = policy or RetryPolicy(
            settings.retry_initial_backoff_ms / 1000, settings.retry_max_backoff_ms / 1000
        )

    def __repr__(self) -> str:  # the token stays out of every repr and log line
        return f"PyRagSearch(url={self.shown!r}, attempts={self.attempts})"

    async def search(
        self, query: str, filters: Filters | None = None, mode: SearchMode = DEFAULT_MODE
    ) -> bytes:
        """py-rag's answer to ``query``, byte for byte.

        Raises:
            SearchUnavailable: every try failed with a connection error, a timeout or a 5xx.
            SearchRefused: py-rag answered 3xx or 4xx, or more than ``EC_INPUT__MAX_MESSAGE_BYTES``.
        """
        body = codec.dumps({"query": query, "mode": mode, "filters": dict(filters or {})})
        delays = self.policy.delays()
        for attempt in range(1, self.attempts + 1):
            try:
                return await self._post(body)
            except SearchUnavailable as exc:
                if attempt == self.attempts:
                    raise SearchUnavailable(
                        f"{exc}; gave up after {self.attempts} tries (EC_PYRAG_ATTEMPTS): nothing was "
                        "ledgered, the search may be tried again"
                    ) from exc
                delay = next(delays)
                log.warning("py-rag search failed (%s); try %d in %.1fs", exc, attempt + 1, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    async def _post(self, body: bytes) -> bytes:
        """One try.

        Raises:
            SearchUnavailable: a connection error, a timeout or a 5xx (retriable).
            SearchRefused: a 3xx or 4xx, or an answer over the size cap.
        """
        session = self._session_for_use()
        try:
            async with session.post(
                self.url, data=body, headers=self._headers, allow_redirects=False
            ) as response:
                if response.status >= 500:
                    raise SearchUnavailable(f"py-rag at {self.shown} answered {response.status}")
                if 300 <= response.status < 400:
                    raise SearchRefused(
                        f"py-rag at {self.shown} answered a redirect ({response.status}), which is not "
                        "followed (the query and the token go to EC_PYRAG_URL only); set EC_PYRAG_URL "
                        "to the address py-rag answers at"
                    )
                if response.status >= 400:
                    raise SearchRefused(
                        f"py-rag at {self.shown} refused the search ({response.status}); check "
                        "EC_PYRAG_URL, EC_PYRAG_TOKEN and the query's filters"
                    )
                return await self._read_bounded(response)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            described = self._failure(exc, "timed out (EC_PYRAG_TIMEOUT_MS)")
            raise SearchUnavailable(f"py-rag at {self.shown} did not answer: {described}") from exc

    async def _read_bounded(self, response: aiohttp.ClientResponse) -> bytes:
        """The answer, never more than the cap held in memory."""
        too_large = (
            f"py-rag's answer is larger than a raw-hits record may be ({self.max_answer_bytes} bytes, "
            "EC_INPUT__MAX_MESSAGE_BYTES); ask for fewer hits or raise the cap"
        )
        if response.content_length is not None and response.content_length > self.max_answer_bytes:
            raise SearchRefused(too_large)
        return await self._read_capped(response, self.max_answer_bytes, SearchRefused(too_large))
