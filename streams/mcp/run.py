"""One MCP session's run: its ``run_id``, the tool call ids it hands out, and its drafts' stamps.

Pure bookkeeping, no I/O: the server names every tool call (the model never picks an id that could
collide with another run's) and stamps every draft with ``run_id``, ``draft_id`` and ``attempt``
(SPEC 1: only the harness writes drafts). A draft's attempts count up until its verdict is final
(PASS or FALLBACK); the next draft starts again at attempt 1 under a new ``draft_id``.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from models.ids import is_valid_id
from models.vocab import VerdictKind
from streams.errors import ConfigurationError

STAMPED = ("run_id", "draft_id", "attempt")
"""The draft fields the server writes; the model's own values for them are dropped."""


def new_run_id() -> str:
    """A fresh run id: ``mcp-`` and 16 random hex digits."""
    return f"mcp-{secrets.token_hex(8)}"


@dataclass
class McpRun:
    """The state of one run: a counter for tool calls, and the draft being checked."""

    run_id: str
    tag: str = field(default_factory=lambda: secrets.token_hex(3))
    """Random per server process, so a run id given again (``EC_MCP_RUN_ID``) gets new tool call ids."""
    lookups: int = 0
    drafts: int = 1
    attempt: int = 0
    called: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, run_id: str | None) -> McpRun:
        """A run under ``run_id`` (``EC_MCP_RUN_ID``), or a generated one.

        Raises:
            ConfigurationError: ``run_id`` is not 1-128 characters of ``[A-Za-z0-9._-]``.
        """
        if run_id is None or run_id == "":
            return cls(new_run_id())
        if not is_valid_id(run_id):
            raise ConfigurationError("EC_MCP_RUN_ID must be 1-128 characters of [A-Za-z0-9._-]")
        return cls(run_id)

    def next_tool_call_id(self) -> str:
        """A tool call id unique in this run: ``call-<tag>-<n>``."""
        self.lookups += 1
        tool_call_id = f"call-{self.tag}-{self.lookups}"
        self.called.append(tool_call_id)
        return tool_call_id

    @property
    def draft_id(self) -> str:
        return f"draft-{self.tag}-{self.drafts}"

    def stamp(self, draft: Mapping[str, Any]) -> dict[str, Any]:
        """The draft as the guard is sent it: this run's ids and the next attempt first, then the rest."""
        self.attempt += 1
        rest = {name: value for name, value in draft.items() if name not in STAMPED}
        return {"run_id": self.run_id, "draft_id": self.draft_id, "attempt": self.attempt, **rest}

    def judged(self, verdict: str) -> None:
        """After a verdict: a final one (PASS, FALLBACK) closes the draft; the next starts at attempt 1."""
        if verdict in (VerdictKind.PASS, VerdictKind.FALLBACK):
            self.drafts += 1
            self.attempt = 0
