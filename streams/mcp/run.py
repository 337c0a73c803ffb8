"""One MCP session's run: its ``run_id``, the tool call ids it hands out, and its drafts' stamps.

Pure bookkeeping, no I/O: the server names every tool call (the model never picks an id that could
collide with another run's) and stamps every draft with ``run_id``, ``draft_id`` and ``attempt``
(SPEC 1: only the harness writes drafts). A draft's attempts count up until its verdict is final
(PASS or FALLBACK); the next draft starts again at attempt 1 under a new ``draft_id``.

:class:`McpRuns` says which run a tool call belongs to: over stdio (one host, one session, one
process) always the process's run; over streamable HTTP one run per MCP session (the SDK keeps one
connection per ``Mcp-Session-Id``), and none for a tool call in no session: two clients without a
session would share one run (one reading the other's evidence, one's first draft counted as the
other's next attempt), so such a call is refused (:mod:`streams.web.mcp_sessions` refuses the stateless
protocol before it gets here). With ``EC_MCP_RUN_ID`` every session runs under that id, each with tool
call ids, draft ids and attempts of its own.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from models.ids import is_valid_id
from models.vocab import VerdictKind
from streams import codec
from streams.codec import JSONObject
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

    def stamp(self, draft: JSONObject) -> JSONObject:
        """The draft as the guard is sent it: this run's ids and the next attempt first, then the rest."""
        self.attempt += 1
        return self._stamped(draft)

    def stamp_bytes(self, draft: JSONObject) -> bytes:
        """:meth:`stamp`'s draft as JSON bytes; the attempt counts only once the draft could be written.

        Raises:
            JSONEncodeError: the draft holds what JSON bytes cannot carry (an integer over 64 bits,
                nesting deeper than 254 levels); no attempt was counted.
        """
        self.attempt += 1
        try:
            return codec.dumps(self._stamped(draft))
        except codec.JSONEncodeError:
            self.attempt -= 1
            raise

    def withdraw(self, attempt: int) -> bool:
        """Give back ``attempt``, whose draft was refused before it was judged (the broker refused the
        record: it was never written); not when a later attempt has been stamped since (that number is
        spent). Whether it was given back.
        """
        if self.attempt != attempt or attempt < 1:
            return False
        self.attempt -= 1
        return True

    def _stamped(self, draft: JSONObject) -> JSONObject:
        rest = {name: value for name, value in draft.items() if name not in STAMPED}
        return {"run_id": self.run_id, "draft_id": self.draft_id, "attempt": self.attempt, **rest}

    def judged(self, verdict: str) -> None:
        """After a verdict: a final one (PASS, FALLBACK) closes the draft; the next starts at attempt 1."""
        if verdict in (VerdictKind.PASS, VerdictKind.FALLBACK):
            self.drafts += 1
            self.attempt = 0


class McpRuns:
    """The runs of one server process: the process's own, and one per MCP session when ``per_session``.

    A session's run lives as long as the SDK's object for the session (a weak key): a session that
    ends (closed, idle, discarded) takes its run with it.

    Raises (at construction):
        ConfigurationError: ``run_id`` (``EC_MCP_RUN_ID``) is not a valid id.
    """

    def __init__(self, run_id: str | None, *, per_session: bool = False) -> None:
        self.shared = McpRun.start(run_id)
        """Stdio's run (over HTTP, per session, no tool call is in it)."""
        self.given = self.shared.run_id if run_id else None
        self.per_session = per_session
        self._sessions: WeakKeyDictionary[object, McpRun] = WeakKeyDictionary()
        self._tags = {self.shared.tag}
        """Under a given run id, every tag handed out in this process: a tool call id is never repeated."""

    @classmethod
    def of_one(cls, run: McpRun) -> McpRuns:
        """Every tool call in ``run``, session or not."""
        runs = cls(run.run_id)
        runs.shared = run
        runs._tags = {run.tag}
        return runs

    def of(self, session: object | None) -> McpRun | None:
        """The run of a tool call that came in ``session`` (``None``: in no session); None for a call in
        no session when each session is a run of its own (it has no run: refuse it)."""
        if not self.per_session:
            return self.shared
        if session is None:
            return None
        run = self._sessions.get(session)
        if run is None:
            run = McpRun(self.given or new_run_id(), tag=self._new_tag())
            self._sessions[session] = run
        return run

    def _new_tag(self) -> str:
        tag = secrets.token_hex(3)
        if self.given is None:  # a run id of its own: its ids cannot meet another run's
            return tag
        while tag in self._tags:
            tag = secrets.token_hex(3)
        self._tags.add(tag)
        return tag
