"""``lookup_knowledge`` on the real stack: the MCP server over stdio, and ``POST /v1/search``.

One worker serves the module's prefix. The MCP tests drive ``evidence-chain mcp`` as an agent host
does (the SDK's stdio client spawning the console script, its settings in the environment) against a
py-rag stand-in (:mod:`tests.pyrag`) in this test's event loop; the gateway tests run the gateway
in-process over the same worker, its client asking the same stand-in.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from models.vocab import Topic, VerdictKind
from streams import codec
from streams.client import EvidenceChainClient
from streams.offline.pipe import pipe_line
from streams.pipeline import StationRules
from streams.search import PyRagSearch, raw_hits_record
from streams.settings import Settings
from streams.web.gateway import create_gateway
from tests.integration.helpers import CLI, Stack, read_topic
from tests.openapi_contract import validate_answer
from tests.pyrag import FakePyRag, recorded_answers
from tests.support import MCP_ACCEPT, MCP_INITIALIZE

ANSWERS = recorded_answers()
FOUND = "网关超时怎么排查"
"""A recorded query whose answer has evidence (the golden pipe case 1)."""
NOTHING = "a question nobody recorded"
STACK_SETTINGS = {"gateway_timeout_ms": 60_000, "retry_initial_backoff_ms": 50, "retry_max_backoff_ms": 200}
"""The module's worker stack (conftest.py's ``stack``): a minute for a reply, short retries."""


@pytest.fixture
async def pyrag() -> AsyncIterator[tuple[FakePyRag, str]]:
    fake = FakePyRag()
    server = TestServer(fake.app(), host="127.0.0.1")
    await server.start_server()
    try:
        yield fake, str(server.make_url("/search"))
    finally:
        await server.close()


def reference(run_id: str, tool_call_id: str, answer: bytes) -> str:
    """The projection the chain makes of ``answer`` under these ids (``evidence-chain pipe``'s code path)."""
    rules = StationRules.from_settings(Settings())
    record = raw_hits_record(run_id, tool_call_id, answer)
    line = pipe_line(record, rules, source="raw-hits", emit="projection")
    return line.decode("utf-8").rstrip("\n")


def text_of(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


@asynccontextmanager
async def mcp_session(stack: Stack, pyrag_url: str, **extra: str) -> AsyncIterator[tuple[Client, str]]:
    """``evidence-chain mcp`` over stdio, as an agent host spawns it; yields the client and the run id."""
    env = {
        **stack.env,
        "EC_PYRAG_URL": pyrag_url,
        "EC_PYRAG_ATTEMPTS": "3",
        "EC_RETRY_INITIAL_BACKOFF_MS": "50",
        "EC_RETRY_MAX_BACKOFF_MS": "200",
        "EC_GATEWAY_TIMEOUT_MS": "60000",
        **extra,
    }
    async with Client(StdioServerParameters(command=CLI, args=["mcp"], env=env)) as client:
        found = re.search(r"for run (\S+)\.", client.instructions or "")
        assert found is not None, client.instructions
        yield client, found.group(1)


def tool_call_id_of(message: str) -> str:
    found = re.search(r"lookup (call-[0-9a-f]+-\d+)", message)
    assert found is not None, message
    return found.group(1)


def passing_draft(found_id: str, found_projection: dict[str, Any], nothing_id: str) -> dict[str, Any]:
    """A draft the guard passes: its words are the excerpt itself, citing the evidence as shown."""
    first = found_projection["evidence"][0]
    return {
        "analysis": [
            {
                "id": "a1",
                "kind": "NORMAL",
                "content": first["excerpt"],
                "tool_call_ids": [found_id],
                "document_ids": [first["document_id"]],
            },
            {
                "id": "a2",
                "kind": "NEGATIVE_OBSERVATION",
                "content": "没有找到相关资料。",
                "tool_call_ids": [nothing_id],
            },
        ],
        "conclusion": {"content": first["excerpt"], "based_on_analysis_ids": ["a1"]},
        "action_plan": [{"id": "p1", "content": first["excerpt"], "based_on_analysis_ids": ["a1"]}],
        "limitations": ["只依据知识库中检索到的摘录。"],
    }


async def test_mcp_lookups_show_the_ledgers_bytes_and_the_loop_repairs_to_pass(
    stack: Stack, pyrag: tuple[FakePyRag, str]
) -> None:
    fake, url = pyrag
    async with mcp_session(stack, url) as (mcp, run_id), EvidenceChainClient(stack.settings) as ledger:
        names = {tool.name for tool in (await mcp.list_tools()).tools}
        assert names == {"lookup_knowledge", "check_diagnosis", "get_evidence"}

        found = await mcp.call_tool("lookup_knowledge", {"query": FOUND})
        assert not found.is_error, text_of(found)
        [shown] = text_of(found)
        found_id = codec.loads(shown)["tool_call_id"]
        assert shown == reference(run_id, found_id, ANSWERS[FOUND])
        stored = await ledger.entry(run_id, found_id)
        assert stored is not None and stored.projection == shown
        assert codec.loads(shown)["evidence_status"] == "EVIDENCE_FOUND"

        fake.fail = 1  # one 500, then the recorded answer: the server tries again
        nothing = await mcp.call_tool("lookup_knowledge", {"query": NOTHING, "filters": {"team": "sre"}})
        assert not nothing.is_error, text_of(nothing)
        [nothing_shown] = text_of(nothing)
        nothing_id = codec.loads(nothing_shown)["tool_call_id"]
        assert nothing_id != found_id
        assert [r["query"] for r in fake.requests[-2:]] == [NOTHING, NOTHING]
        assert fake.requests[-1] == {"query": NOTHING, "mode": "hybrid", "filters": {"team": "sre"}}
        assert codec.loads(nothing_shown)["evidence_status"] == "NO_EVIDENCE"

        fake.not_json = 1  # an HTML page: the chain gives it a FAILED entry, the model a tool error
        broken = await mcp.call_tool("lookup_knowledge", {"query": FOUND})
        assert broken.is_error
        [message] = text_of(broken)
        broken_id = tool_call_id_of(message)
        evidence = await mcp.call_tool("get_evidence", {"tool_call_id": broken_id})
        entry = codec.loads(text_of(evidence)[0])
        assert entry["status"] == "FAILED" and entry["failure_reason"] == "SCHEMA_VIOLATION"

        first = passing_draft(found_id, codec.loads(shown), nothing_id)
        first["analysis"][1]["kind"] = "NORMAL"  # a NORMAL finding resting on NO_EVIDENCE
        rejected = await mcp.call_tool("check_diagnosis", {"draft": {**first, "run_id": "not-mine"}})
        verdict, repair = text_of(rejected)
        judged = codec.loads(verdict)
        assert judged["verdict"] == VerdictKind.REJECT
        assert (judged["run_id"], judged["attempt"]) == (run_id, 1)  # stamped by the server
        assert [v["code"] for v in judged["violations"]] == ["NORMAL_CITES_NO_EVIDENCE"]
        assert "NORMAL_CITES_NO_EVIDENCE" in repair and "attempt 2" in repair

        passed = await mcp.call_tool(
            "check_diagnosis", {"draft": passing_draft(found_id, codec.loads(shown), nothing_id)}
        )
        verdict, published = text_of(passed)
        judged = codec.loads(verdict)
        assert judged["verdict"] == VerdictKind.PASS, judged
        assert (judged["attempt"], judged["draft_id"]) == (2, codec.loads(text_of(rejected)[0])["draft_id"])
        report_id = f"publish:{judged['event_id'].split(':', 1)[1]}"
        assert published == f"PASS: published as report {report_id}"
        on_topic = await read_topic(
            stack.settings.kafka_bootstrap,
            stack.settings.topic(Topic.REPORTS),
            until=lambda values: any(report_id.encode() in v for v in values),
        )
        reports = [codec.loads(v) for v in on_topic]
        [report] = [r for r in reports if r["event_id"] == report_id]
        assert (report["verdict"], report["verdict_event_id"]) == ("PASS", judged["event_id"])


async def test_mcp_lookup_with_py_rag_down_is_a_tool_error_and_ledgers_nothing(stack: Stack) -> None:
    closed = TestServer(web.Application(), host="127.0.0.1")
    await closed.start_server()
    url = str(closed.make_url("/search"))
    await closed.close()  # nothing listens there now
    async with mcp_session(stack, url) as (mcp, run_id), EvidenceChainClient(stack.settings) as ledger:
        result = await mcp.call_tool("lookup_knowledge", {"query": FOUND})
        assert result.is_error
        [message] = text_of(result)
        assert "SearchUnavailable" in message and "3 tries" in message
        assert await ledger.entry(run_id, tool_call_id_of(message)) is None


@asynccontextmanager
async def gateway(stack: Stack, url: str, **settings: Any) -> AsyncIterator[TestClient[Any, Any]]:
    """The gateway in-process over the module's worker, its client asking py-rag at ``url``."""
    configured = stack.settings.model_copy(update={"pyrag_url": url, **settings})
    client = EvidenceChainClient(configured, search=PyRagSearch(configured))
    await client.start()
    try:
        async with TestClient(TestServer(create_gateway(configured, client))) as http:
            yield http
    finally:
        await client.close()


async def search(http: TestClient[Any, Any], body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = await http.post(
        "/v1/search", data=codec.dumps(body), headers={"Content-Type": "application/json"}
    )
    return response.status, codec.loads(await response.read())


async def test_v1_search_answers_as_v1_lookups_with_the_same_bytes(
    stack: Stack, pyrag: tuple[FakePyRag, str]
) -> None:
    fake, url = pyrag
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    async with gateway(stack, url, pyrag_timeout_ms=300) as http:
        fake.fail, fake.slow, fake.slow_seconds = 1, 1, 3.0  # a 500, then a timeout, then the answer
        status, answer = await search(http, {"run_id": run_id, "tool_call_id": "c1", "query": FOUND})
        assert status == 200, answer
        validate_answer("LookupAnswer", answer)
        assert answer["projection"] == reference(run_id, "c1", ANSWERS[FOUND])
        assert len(fake.requests) == 3

        record = raw_hits_record(run_id, "c2", ANSWERS[FOUND])
        looked = await http.post("/v1/lookups", data=record, headers={"Content-Type": "application/json"})
        via_lookups = codec.loads(await looked.read())
        assert via_lookups["projection"] == reference(run_id, "c2", ANSWERS[FOUND])

        fake.not_json = 1
        status, answer = await search(http, {"run_id": run_id, "tool_call_id": "c3", "query": FOUND})
        assert status == 200 and answer["status"] == "FAILED", answer
        assert answer["failure_reason"] == "SCHEMA_VIOLATION"

        asked = len(fake.requests)
        fake.oversized = 1
        status, answer = await search(http, {"run_id": run_id, "tool_call_id": "c4", "query": FOUND})
        assert status == 502 and answer["error"]["reason"] == "SEARCH_REFUSED", answer
        assert answer["error"]["retriable"] is False
        assert len(fake.requests) == asked + 1  # not tried again

        status, answer = await search(http, {"run_id": run_id, "tool_call_id": "c5", "query": ""})
        assert status == 400 and answer["error"]["reason"] == "BAD_REQUEST", answer
        status, answer = await search(http, {"run_id": run_id, "tool_call_id": "c 5", "query": FOUND})
        assert status == 400 and answer["error"]["reason"] == "INVALID_ID", answer


async def test_v1_search_with_py_rag_down_is_502_retriable_and_ledgers_nothing(stack: Stack) -> None:
    closed = TestServer(web.Application(), host="127.0.0.1")
    await closed.start_server()
    url = str(closed.make_url("/search"))
    await closed.close()
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    async with gateway(stack, url) as http, EvidenceChainClient(stack.settings) as ledger:
        status, answer = await search(http, {"run_id": run_id, "tool_call_id": "c1", "query": FOUND})
        assert status == 502, answer
        validate_answer("Error", answer)
        assert answer["error"]["reason"] == "SEARCH_UNAVAILABLE" and answer["error"]["retriable"] is True
        assert await ledger.entry(run_id, "c1") is None


@asynccontextmanager
async def mcp_over_http(env: dict[str, str], *args: str) -> AsyncIterator[tuple[str, str]]:
    """``evidence-chain mcp --http --port 0 *args``; yields its ``/mcp`` URL and first line (each MCP
    session is a run of its own). Its stderr is read when it stops: the token is in no line of it."""
    process = await asyncio.create_subprocess_exec(
        CLI,
        "mcp",
        "--http",
        "--port",
        "0",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.search(r" at (http://\S+/mcp)", line)
        assert found is not None, line
        yield found.group(1), line
    finally:
        process.terminate()
        _, errors = await process.communicate()
        token = env.get("EC_GATEWAY_TOKEN")
        assert not token or token.encode() not in errors


async def test_mcp_over_streamable_http_needs_the_bearer_token(
    stack: Stack, pyrag: tuple[FakePyRag, str]
) -> None:
    _, url = pyrag
    token = f"mcp-{uuid.uuid4().hex}"
    env = {**stack.env, "EC_PYRAG_URL": url, "EC_GATEWAY_TOKEN": token, "EC_GATEWAY_TIMEOUT_MS": "60000"}
    async with mcp_over_http(env) as (endpoint, line):
        assert "bearer token required" in line, line
        async with httpx2.AsyncClient() as anonymous:
            refused = await anonymous.post(endpoint, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as authorized,
            Client(streamable_http_client(endpoint, http_client=authorized)) as mcp,
        ):
            await a_lookup_shows_the_ledgers_bytes(mcp, stack)


async def a_lookup_shows_the_ledgers_bytes(mcp: Client, stack: Stack) -> None:
    """A lookup through ``mcp`` answers the reference bytes, and the ledger holds exactly those (under
    the session's run, which ``get_evidence`` names)."""
    async with EvidenceChainClient(stack.settings) as ledger:
        found_text = text_of(await mcp.call_tool("lookup_knowledge", {"query": FOUND}))[0]
        tool_call_id = codec.loads(found_text)["tool_call_id"]
        shown = text_of(await mcp.call_tool("get_evidence", {"tool_call_id": tool_call_id}))[0]
        run_id = codec.loads(shown)["run_id"]
        assert found_text == reference(run_id, tool_call_id, ANSWERS[FOUND])
        stored = await ledger.entry(run_id, tool_call_id)
        assert stored is not None and stored.projection == found_text


async def test_mcp_over_streamable_http_without_a_token_answers_no_web_page(
    stack: Stack, pyrag: tuple[FakePyRag, str]
) -> None:
    """On 127.0.0.2 (loopback, so allowed without a token) the SDK's own check stays off by default."""
    _, url = pyrag
    env = {**stack.env, "EC_PYRAG_URL": url, "EC_GATEWAY_TIMEOUT_MS": "60000"}
    env.pop("EC_GATEWAY_TOKEN", None)
    json_body = codec.dumps(MCP_INITIALIZE)
    pages = [
        ({"Content-Type": "application/json", "Origin": "http://evil.example"}, 403, "CROSS_ORIGIN"),
        ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403, "CROSS_ORIGIN"),
        ({"Content-Type": "application/json", "Host": "evil.example"}, 403, "HOST_NOT_LOOPBACK"),
        ({"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
        ({}, 415, "UNSUPPORTED_MEDIA_TYPE"),
    ]
    async with mcp_over_http(env, "--host", "127.0.0.2") as (endpoint, line):
        assert "no token: loopback only" in line, line
        async with httpx2.AsyncClient(timeout=60) as page:
            for headers, status, reason in pages:
                refused = await page.post(endpoint, content=json_body, headers={**MCP_ACCEPT, **headers})
                assert refused.status_code == status, (headers, refused.text)
                assert refused.json()["error"]["reason"] == reason, refused.text
        async with Client(streamable_http_client(endpoint)) as mcp:
            await a_lookup_shows_the_ledgers_bytes(mcp, stack)
