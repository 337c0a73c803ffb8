"""``KnowledgeSearchPort``: one search, the engine's answer as bytes (the interface beside its adapters)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from streams.codec import JSONObject

SearchMode = str
"""py-rag's retrieval mode (``hybrid``, ``vector``, ``keyword``, ...): passed through, never judged here."""

DEFAULT_MODE: SearchMode = "hybrid"

Filters = JSONObject
"""py-rag's filters, passed through as given (a JSON object)."""


@runtime_checkable
class KnowledgeSearchPort(Protocol):
    """Asks a knowledge engine one question and hands back its answer's exact bytes.

    The answer is not parsed or judged here: the chain does that (postprocess), so an answer that is
    not what py-rag's contract says still ends as a FAILED ledger entry, never as a guess.
    """

    async def search(
        self, query: str, filters: Filters | None = None, mode: SearchMode = DEFAULT_MODE
    ) -> bytes:
        """The engine's answer to ``query``, byte for byte.

        Raises:
            SearchUnavailable: the engine cannot be reached or kept failing (retriable).
            SearchRefused: the engine refused the request, or its answer is too large to govern.
        """
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
