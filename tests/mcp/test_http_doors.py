"""The MCP server's streamable HTTP has the gateway's doors (issue 32 for issue 34's ``mcp --http``).

The app ``serve_http`` serves (:func:`streams.web.mcp.http_app`) runs in this test's loop under
uvicorn with the project's limits (:func:`streams.web.asgi.uvicorn_config`), on 127.0.0.2: a loopback
address a token-less server may listen on, and one for which the SDK does not switch its own
DNS-rebinding check on by itself (it does for 127.0.0.1, localhost and ::1 only). Its client is never
started: listing tools and refusing requests reach neither Kafka nor Redis.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from pydantic import SecretStr

from streams.client import EvidenceChainClient
from streams.mcp.run import McpRun
from streams.mcp.server import build_server
from streams.settings import Settings
from streams.web.asgi import uvicorn_config
from streams.web.gateway import bearer_token, limits_of
from streams.web.mcp import _listen, http_app
from tests.support import MCP_ACCEPT as ACCEPT
from tests.support import MCP_INITIALIZE as INITIALIZE

HOST = "127.0.0.2"
TOKEN = "mcp-doors-test-token-0123456789abcdef"
TOOLS = {"lookup_knowledge", "check_diagnosis", "get_evidence"}


@asynccontextmanager
async def mcp_http(host: str = HOST, **overrides: Any) -> AsyncIterator[tuple[str, int]]:
    """``/mcp``'s address and port, served as ``evidence-chain mcp --http`` serves it."""
    settings = Settings(**overrides)
    token = bearer_token(settings, host)
    app = http_app(build_server(EvidenceChainClient(settings), McpRun.start(None)), host, token, settings)
    listening = _listen(host, 0)
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, limits_of(settings), log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[listening]))
    try:  # the socket listens already: a request waits in its backlog until uvicorn has started
        yield f"http://{host}:{port}/mcp", port
    finally:
        server.should_exit = True
        await serving
        listening.close()


async def post(endpoint: str, headers: dict[str, str], **body: Any) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(endpoint, headers={**ACCEPT, **headers}, **body)


def error_of(response: httpx2.Response, status: int, reason: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["reason"] == reason and error["retriable"] is False
    return str(error["message"])


@pytest.mark.parametrize(
    ("headers", "status", "reason"),
    [
        ({"Origin": "http://evil.example"}, 403, "CROSS_ORIGIN"),
        ({"Origin": "http://localhost:9999"}, 403, "CROSS_ORIGIN"),  # the SDK lets loopback origins in
        ({"Sec-Fetch-Site": "cross-site"}, 403, "CROSS_ORIGIN"),  # the SDK does not read it
        ({"Sec-Fetch-Site": "same-site"}, 403, "CROSS_ORIGIN"),
        ({"Host": "evil.example"}, 403, "HOST_NOT_LOOPBACK"),  # DNS rebinding
        ({"Host": "evil.example:8081"}, 403, "HOST_NOT_LOOPBACK"),
        ({"Host": "a b"}, 400, "BAD_REQUEST"),
        ({"Content-Type": "text/plain;charset=UTF-8"}, 415, "UNSUPPORTED_MEDIA_TYPE"),  # a page's simple POST
        ({"Content-Type": ""}, 415, "UNSUPPORTED_MEDIA_TYPE"),
    ],
)
async def test_a_tokenless_mcp_server_answers_no_web_page(
    headers: dict[str, str], status: int, reason: str
) -> None:
    async with mcp_http() as (endpoint, _):
        sent = {"Content-Type": "application/json", **headers}
        refused = await post(
            endpoint, sent, content=httpx2.Request("POST", endpoint, json=INITIALIZE).content
        )
        message = error_of(refused, status, reason)
        if status == 403:
            assert "the MCP server without EC_GATEWAY_TOKEN" in message
        same_from_a_process = await post(endpoint, {}, json=INITIALIZE)
        assert same_from_a_process.status_code == 200, same_from_a_process.text


async def test_the_sdks_client_session_works_without_a_token() -> None:
    async with mcp_http() as (endpoint, _), Client(streamable_http_client(endpoint)) as mcp:
        tools = await mcp.list_tools()
    assert {tool.name for tool in tools.tools} == TOOLS


async def test_with_a_token_the_mcp_server_asks_what_the_gateway_asks(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with mcp_http("127.0.0.1", gateway_token=SecretStr(TOKEN)) as (endpoint, _):
        missing = await post(endpoint, {}, json=INITIALIZE)
        error_of(missing, 401, "UNAUTHORIZED")
        assert missing.headers["www-authenticate"] == 'Bearer realm="evidence-chain"'
        wrong = await post(endpoint, {"Authorization": f"Bearer {TOKEN[:-1]}x"}, json=INITIALIZE)
        assert "the MCP server's EC_GATEWAY_TOKEN" in error_of(wrong, 401, "UNAUTHORIZED")
        assert wrong.headers["www-authenticate"].endswith('error="invalid_token"')
        broken = await post(endpoint, {"Authorization": f"Bearer\x7f{TOKEN}"}, json=INITIALIZE)
        error_of(broken, 401, "UNAUTHORIZED")
        # with the token the token is the door, as on the gateway: a page could not have sent it
        authorized = {"Authorization": f"Bearer {TOKEN}"}
        page = await post(endpoint, {**authorized, "Origin": "http://evil.example"}, json=INITIALIZE)
        assert page.status_code == 200, page.text
        async with (
            httpx2.AsyncClient(headers=authorized, timeout=30) as http,
            Client(streamable_http_client(endpoint, http_client=http)) as mcp,
        ):
            assert {tool.name for tool in (await mcp.list_tools()).tools} == TOOLS
    assert TOKEN not in caplog.text and TOKEN[:-1] not in caplog.text


async def test_a_late_request_head_or_body_is_not_waited_for() -> None:
    async with mcp_http(gateway_header_timeout_seconds=0.2, gateway_body_timeout_seconds=0.2) as (_, port):
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.2\r\n")  # and never the rest of the head
        assert await asyncio.wait_for(reader.read(), 30) == b""  # closed, nothing answered
        writer.close()
        reader, writer = await asyncio.open_connection(HOST, port)
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.2\r\nContent-Type: application/json\r\n"
        writer.write(head + b"Content-Length: 100\r\n\r\n" + b'{"jsonrpc"')  # 10 of the 100 bytes
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 408 ") and b'"reason":"BAD_REQUEST"' in answer, answer


async def test_a_body_over_the_cap_is_refused_before_it_is_read() -> None:
    async with mcp_http() as (_, port):
        reader, writer = await asyncio.open_connection(HOST, port)
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.2\r\nContent-Type: application/json\r\n"
        writer.write(head + b"Content-Length: %d\r\n\r\n{" % (5 * 1024 * 1024))
        answer = await asyncio.wait_for(reader.read(), 30)
        writer.close()
    assert answer.startswith(b"HTTP/1.1 413 ") and b'"reason":"OVERSIZED"' in answer, answer
