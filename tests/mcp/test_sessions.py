"""``evidence-chain mcp --http``: each MCP session is a run of its own (issue 34: one session, one run,
attempts counted per session), and the tools refuse what they cannot send, without counting it.

The server is the one ``serve_http`` builds (:func:`streams.web.mcp.http_app` over
:class:`~streams.mcp.run.McpRuns` with ``per_session``), under uvicorn in this test's loop, over a
stand-in for the client that records what the tools send it: neither Kafka nor Redis is needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

from models.vocab import LedgerStatus
from streams import codec
from streams.client import EvidenceChainClient
from streams.mcp.run import McpRuns
from streams.mcp.server import EvidenceTools, build_server, instructions
from streams.search.request import MAX_QUERY_CHARS
from streams.settings import Settings
from streams.web.asgi import uvicorn_config
from streams.web.gateway import limits_of
from streams.web.mcp import _listen, http_app
from streams.web.mcp_sessions import SessionGate

HOST = "127.0.0.2"


@dataclass
class Reply:
    kind: str
    raw: bytes
    verdict: dict[str, Any]
    status: str = LedgerStatus.READY
    projection: str | None = None


@dataclass
class Recorder:
    """What the tools sent: each lookup's ids and query, each draft's stamps. Every draft is REJECTed."""

    lookups: list[tuple[str, str, str]] = field(default_factory=list)
    drafts: list[dict[str, Any]] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)

    async def lookup_knowledge(
        self, run_id: str, tool_call_id: str, query: str, filters: object = None
    ) -> Reply:
        self.lookups.append((run_id, tool_call_id, query))
        shown = codec.dumps({"tool_call_id": tool_call_id}).decode()
        return Reply("", b"", {}, projection=shown)

    async def check(self, draft: bytes) -> Reply:
        stamped = codec.loads(draft)
        self.drafts.append(stamped)
        verdict = {"verdict": "REJECT", "attempt": stamped["attempt"], "violations": [], "violation_count": 0}
        return Reply("REJECT", codec.dumps(verdict), verdict)


@asynccontextmanager
async def mcp_http(
    runs: McpRuns, recorder: Recorder, clock: Callable[[], float] | None = None
) -> AsyncIterator[str]:
    """``/mcp`` as ``serve_http`` serves it on 127.0.0.2, with the recorder's settings (and ``clock`` as
    the session gate's notion of now, when given)."""
    settings = recorder.settings
    client = cast(EvidenceChainClient, recorder)
    app = http_app(build_server(client, runs), HOST, None, settings)
    if clock is not None:
        cast(SessionGate, app.app).clock = clock
    listening = _listen(HOST, 0)
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, limits_of(settings), log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:
        yield f"http://{HOST}:{port}/mcp"
    finally:
        server.should_exit = True
        await serving
        listening.close()


def text_of(result: CallToolResult) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


async def one_session(endpoint: str, mode: str = "legacy") -> None:
    """A lookup and two attempts of a draft, in one MCP session (``legacy``: the handshake and its
    ``Mcp-Session-Id``; ``auto``: the SDK's default, which asks for the stateless protocol first and,
    refused, falls back to the handshake)."""
    async with Client(streamable_http_client(endpoint), mode=mode) as mcp:
        found = await mcp.call_tool("lookup_knowledge", {"query": "gateway timeout"})
        assert not found.is_error, text_of(found)
        for _ in range(2):
            checked = await mcp.call_tool("check_diagnosis", {"draft": {"analysis": []}})
            assert not checked.is_error, text_of(checked)


async def test_over_http_each_session_is_a_run_with_its_own_attempts() -> None:
    recorder = Recorder()
    runs = McpRuns(None, per_session=True)
    async with mcp_http(runs, recorder) as endpoint:
        await asyncio.gather(one_session(endpoint), one_session(endpoint))
    run_ids = {run_id for run_id, _, _ in recorder.lookups}
    assert len(run_ids) == 2 and runs.shared.run_id not in run_ids
    for run_id in run_ids:
        attempts = [(d["draft_id"], d["attempt"]) for d in recorder.drafts if d["run_id"] == run_id]
        assert [attempt for _, attempt in attempts] == [1, 2]  # before: 1, 2, 3, 4 across both sessions
        assert len({draft_id for draft_id, _ in attempts}) == 1


async def test_with_a_run_id_given_sessions_share_it_but_not_their_ids_or_attempts() -> None:
    recorder = Recorder()
    runs = McpRuns("run-given", per_session=True)
    async with mcp_http(runs, recorder) as endpoint:
        await asyncio.gather(one_session(endpoint), one_session(endpoint))
    assert {run_id for run_id, _, _ in recorder.lookups} == {"run-given"}
    tool_call_ids = [tool_call_id for _, tool_call_id, _ in recorder.lookups]
    assert len(set(tool_call_ids)) == 2  # unique within the run
    by_draft: dict[str, list[int]] = {}
    for draft in recorder.drafts:
        by_draft.setdefault(draft["draft_id"], []).append(draft["attempt"])
    assert sorted(by_draft.values()) == [[1, 2], [1, 2]]


async def test_clients_of_the_sdks_default_mode_get_a_session_each_and_share_nothing() -> None:
    """The SDK's ``Client`` asks for the stateless protocol first (``auto``); the server refuses it, so
    each falls back to a session: two runs, each with attempts 1 and 2 (issue 38 M5: they shared one
    run, and the second client's first draft was the first one's attempt 3)."""
    recorder = Recorder()
    runs = McpRuns(None, per_session=True)
    async with mcp_http(runs, recorder) as endpoint:
        await asyncio.gather(one_session(endpoint, mode="auto"), one_session(endpoint, mode="auto"))
    run_ids = {run_id for run_id, _, _ in recorder.lookups}
    assert len(run_ids) == 2 and runs.shared.run_id not in run_ids
    for run_id in run_ids:
        assert [d["attempt"] for d in recorder.drafts if d["run_id"] == run_id] == [1, 2]


def test_stdio_keeps_one_run_for_the_process() -> None:
    runs = McpRuns("run-stdio")
    assert runs.of(object()) is runs.of(None) is runs.shared
    assert "run run-stdio" in instructions(runs.shared.run_id)
    assert "each MCP session" in instructions(None)


async def test_a_draft_json_cannot_carry_is_refused_and_not_counted() -> None:
    recorder = Recorder()
    runs = McpRuns("run-1")
    tools = EvidenceTools(cast(EvidenceChainClient, recorder), runs)
    with pytest.raises(ToolError, match="no attempt counted.*64 bits") as refused:
        await tools.check_diagnosis({"analysis": [], "x": 10**30})
    assert "check_diagnosis again" in str(refused.value)
    assert recorder.drafts == [] and runs.shared.attempt == 0
    await tools.check_diagnosis({"analysis": [], "x": 10})
    assert recorder.drafts[0]["attempt"] == 1


async def test_a_draft_json_cannot_carry_is_a_clear_tool_error_over_mcp() -> None:
    recorder = Recorder()
    async with (
        mcp_http(McpRuns(None, per_session=True), recorder) as endpoint,
        Client(streamable_http_client(endpoint), mode="legacy") as mcp,
    ):
        refused = await mcp.call_tool("check_diagnosis", {"draft": {"analysis": [], "x": 10**30}})
        assert refused.is_error and "cannot be written as JSON" in text_of(refused), text_of(refused)
        await mcp.call_tool("check_diagnosis", {"draft": {"analysis": []}})
    assert [d["attempt"] for d in recorder.drafts] == [1]


@pytest.mark.parametrize("query", ["", "  \t", "x" * (MAX_QUERY_CHARS + 1)])
async def test_lookup_knowledge_refuses_the_queries_v1_search_refuses(query: str) -> None:
    recorder = Recorder()
    runs = McpRuns("run-1")
    tools = EvidenceTools(cast(EvidenceChainClient, recorder), runs)
    with pytest.raises(ToolError, match="no lookup was made: query: must be a non-empty string"):
        await tools.lookup_knowledge(query)
    assert recorder.lookups == [] and runs.shared.lookups == 0
