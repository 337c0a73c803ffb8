"""Issue 38 M6 on the real command: 10,000 ``initialize`` requests from 127.0.0.1 to
``evidence-chain mcp --http`` (which opened as many sessions, filled the SDK's cap of 10,000 and locked
every new client out for 30 minutes, at 491 MB) leave a client from 127.0.0.2, and one from 127.0.0.1
itself, able to connect and work, and the server's resident memory under 200 MB at its peak. And the
red team's M1 after it: 100 sessions opened and pinged from each of 11 loopback addresses lock a
newcomer out only while they are in use (``EC_MCP_SESSION_IN_USE_SECONDS``), not for 30 minutes.

127.0.0.2 is a loopback address on Linux (all of 127/8 is): the second client binds it as its source.
The server counts all of loopback as one client (any local process picks its source address there),
so the newcomer gets in because the flood's sessions, which asked nothing, give way to it: the flood's
own address could connect as well. The flood is bounded in time by the test's own timeout, never timed.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from streams import codec
from tests.integration.helpers import CLI, new_prefix, worker_env
from tests.support import MCP_ACCEPT, MCP_INITIALIZE

FLOOD = 10_000
IN_FLIGHT = 32
RSS_CAP_KB = 200 * 1024


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident set (``VmHWM``), in kB."""
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    assert found is not None, status
    return int(found.group(1))


@asynccontextmanager
async def mcp_server(env: dict[str, str]) -> AsyncIterator[tuple[str, int]]:
    """``evidence-chain mcp --http --port 0`` on 127.0.0.1; its ``/mcp`` URL and pid."""
    process = await asyncio.create_subprocess_exec(
        CLI, "mcp", "--http", "--port", "0", env=env, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 60)).decode()
        found = re.search(r" at (http://\S+/mcp)", line)
        assert found is not None, line
        yield found.group(1), process.pid
    finally:
        process.terminate()
        await process.wait()


HEADERS = {**MCP_ACCEPT, "Content-Type": "application/json"}
PING = codec.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"})


async def flood(endpoint: str, sources: list[str]) -> tuple[Counter[int], list[tuple[str, str]]]:
    """An initialize request from each of ``sources``, ``IN_FLIGHT`` at a time; their statuses, and the
    sessions opened (source, id)."""
    body = codec.dumps(MCP_INITIALIZE)
    statuses: Counter[int] = Counter()
    sessions: list[tuple[str, str]] = []
    by_source = {
        source: httpx2.AsyncClient(
            transport=httpx2.AsyncHTTPTransport(
                local_address=source, limits=httpx2.Limits(max_connections=IN_FLIGHT)
            ),
            timeout=60,
        )
        for source in set(sources)
    }
    left = iter(sources)

    async def one_at_a_time() -> None:
        for source in left:
            answer = await by_source[source].post(endpoint, content=body, headers=HEADERS)
            statuses[answer.status_code] += 1
            if answer.status_code == 200:
                sessions.append((source, answer.headers["mcp-session-id"]))

    try:
        await asyncio.gather(*(one_at_a_time() for _ in range(IN_FLIGHT)))
    finally:
        for http in by_source.values():
            await http.aclose()
    return statuses, sessions


async def connects(endpoint: str, source: str) -> None:
    """An SDK client from ``source`` opens a session and lists the tools."""
    other = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=source), timeout=60)
    session = Client(streamable_http_client(endpoint, http_client=other), mode="legacy")  # a session
    async with other, session as mcp:
        tools = await mcp.list_tools()
    assert {tool.name for tool in tools.tools} == {"lookup_knowledge", "check_diagnosis", "get_evidence"}


async def test_ten_thousand_initializes_from_one_address_lock_no_other_out(
    kafka_bootstrap: str, redis_url: str
) -> None:
    env = worker_env(new_prefix(), kafka_bootstrap, redis_url)
    env.pop("EC_GATEWAY_TOKEN", None)
    async with asyncio.timeout(600), mcp_server(env) as (endpoint, pid):
        statuses, _ = await flood(endpoint, ["127.0.0.1"] * FLOOD)
        assert statuses == {200: FLOOD}, statuses  # each opened; the oldest that asked nothing gave way
        await connects(endpoint, "127.0.0.2")
        await connects(endpoint, "127.0.0.1")  # the flood's own address: one client, the same room
        assert peak_rss_kb(pid) < RSS_CAP_KB


async def test_sessions_pinged_from_eleven_loopback_addresses_lock_a_newcomer_out_only_while_in_use(
    kafka_bootstrap: str, redis_url: str
) -> None:
    env = worker_env(new_prefix(), kafka_bootstrap, redis_url)
    env.pop("EC_GATEWAY_TOKEN", None)
    env["EC_MCP_SESSION_IN_USE_SECONDS"] = "10"
    async with asyncio.timeout(300), mcp_server(env) as (endpoint, _):
        sources = [f"127.0.1.{2 + i // 100}" for i in range(1100)]
        statuses, sessions = await flood(endpoint, sources)
        assert statuses == {200: 1100}, statuses
        async with httpx2.AsyncClient(timeout=60) as http:

            async def ping(session: str) -> int:
                headers = {**HEADERS, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"}
                return (await http.post(endpoint, content=PING, headers=headers)).status_code

            pinged = {session: await ping(session) for _, session in sessions}
            assert Counter(pinged.values()) == {200: 100, 404: 1000}  # loopback is one client: 100 at most
            alive = [session for session, status in pinged.items() if status == 200]
            assert {await ping(session) for session in alive} == {200}  # each in use for 10 s from now
            body = codec.dumps(MCP_INITIALIZE)
            refused = await http.post(endpoint, content=body, headers=HEADERS)
            assert refused.status_code == 503 and refused.headers["retry-after"] == "5", refused.text
            for _ in range(120):  # then the least recently asked gives way (bounded by the timeout above)
                answer = await http.post(endpoint, content=body, headers=HEADERS)
                if answer.status_code != 503:
                    break
                await asyncio.sleep(0.5)
            assert answer.status_code == 200, answer.text
