"""Issue 38 M6 on the real command: 10,000 ``initialize`` requests from 127.0.0.1 to
``evidence-chain mcp --http`` (which opened as many sessions, filled the SDK's cap of 10,000 and locked
every new client out for 30 minutes, at 491 MB) leave a client from 127.0.0.2 able to connect and work,
and the server's resident memory under 200 MB at its peak.

127.0.0.2 is a loopback address on Linux (all of 127/8 is): the second client binds it as its source.
The flood is bounded in time by the test's own timeout, never timed.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from streams import codec
from tests.integration.helpers import CLI, worker_env
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


async def flood(endpoint: str) -> Counter[int]:
    """``FLOOD`` initialize requests from 127.0.0.1, ``IN_FLIGHT`` at a time; their statuses."""
    body = codec.dumps(MCP_INITIALIZE)
    headers = {**MCP_ACCEPT, "Content-Type": "application/json"}
    statuses: Counter[int] = Counter()
    left = iter(range(FLOOD))
    transport = httpx2.AsyncHTTPTransport(
        local_address="127.0.0.1", limits=httpx2.Limits(max_connections=IN_FLIGHT)
    )
    async with httpx2.AsyncClient(transport=transport, timeout=60) as http:

        async def one_at_a_time() -> None:
            for _ in left:
                answer = await http.post(endpoint, content=body, headers=headers)
                statuses[answer.status_code] += 1

        await asyncio.gather(*(one_at_a_time() for _ in range(IN_FLIGHT)))
    return statuses


async def test_ten_thousand_initializes_from_one_address_lock_no_other_out(
    kafka_bootstrap: str, redis_url: str
) -> None:
    env = worker_env(f"t-{uuid.uuid4().hex[:8]}-", kafka_bootstrap, redis_url)
    env.pop("EC_GATEWAY_TOKEN", None)
    async with asyncio.timeout(600), mcp_server(env) as (endpoint, pid):
        statuses = await flood(endpoint)
        assert sum(statuses.values()) == FLOOD
        assert set(statuses) <= {200, 503}, statuses  # a session, or the cap per address: nothing else
        assert statuses[503] > FLOOD // 2, statuses  # most were refused, not opened
        other = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address="127.0.0.2"), timeout=60)
        session = Client(streamable_http_client(endpoint, http_client=other), mode="legacy")  # a session
        async with other, session as mcp:
            tools = await mcp.list_tools()
        assert {tool.name for tool in tools.tools} == {"lookup_knowledge", "check_diagnosis", "get_evidence"}
        assert peak_rss_kb(pid) < RSS_CAP_KB
