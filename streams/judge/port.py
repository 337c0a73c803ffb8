"""What the semantic station asks of a judge, beside its implementations (``openai``; the tests' fake
server speaks the same API).

A judge takes the chat messages of one case and returns the model's raw answer as text; reading that
answer (strict JSON, one label per claim) is the station's, :func:`streams.stations.semantic.read`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class JudgePort(Protocol):
    """A model behind an API, asked one case at a time."""

    async def ask(self, messages: Sequence[dict[str, str]], *, model: str) -> str:
        """The model's answer to ``messages``, as text.

        Raises:
            JudgeUnavailable: no usable answer this time (down, timed out, 408, 429 with its
                Retry-After, 5xx, a body that is not a chat completion): ask again later.
            JudgeDeclined: the judge cannot judge this case (400, 413, 422: over the model's context, too
                large a body, an input it rejects); the next case may be judged.
            JudgeRefused: refused in a way asking again cannot fix (a redirect, 401, 403, 404, another
                4xx): a setting is wrong.
        """
        ...

    async def close(self) -> None:
        """Release the connections."""
        ...
