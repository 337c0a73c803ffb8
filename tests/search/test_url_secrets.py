"""No secret of ``EC_PYRAG_URL`` (a password in its user info, an ``api_key`` in its query, a key in its
path or in a path segment's ``;`` parameters) in any answer, tool error or log line (issue 38 L2, and
the red team's L5 after it for the path): py-rag unreachable, failing, refusing or not a URL aiohttp
takes, through ``POST /v1/search`` and through the MCP ``lookup_knowledge`` tool."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from mcp import Client
from mcp.types import TextContent

from streams.client import EvidenceChainClient
from streams.mcp.run import McpRuns
from streams.mcp.server import build_server
from streams.redaction import redact_in, redact_url
from streams.settings import Settings
from streams.web.gateway import create_gateway
from tests.streams.test_gateway import FakeChain

PASSWORD = "pa55-w0rd%40x"
API_KEY = "K3Y-0123456789"
PATH_KEY = "sk-APIKEY123"
MATRIX_KEY = "M4TRIX-KEY-77"
SECRETS = (PASSWORD, "pa55-w0rd@x", API_KEY, "alice-user", PATH_KEY, MATRIX_KEY)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def with_secrets(base: str) -> str:
    """``base`` (``http://host:port/path``) with a user, a password and an api_key in it."""
    scheme, rest = base.split("://", 1)
    return f"{scheme}://alice-user:{PASSWORD}@{rest}?api_key={API_KEY}&mode=x"


def with_path_secrets(base: str) -> str:
    """``base`` (``http://host:port/a/b``) with a key as a path segment and one in ``;`` parameters, as
    some APIs take them (``/bad/sk-KEY/search``, ``/search;api_key=KEY``)."""
    scheme, rest = base.split("://", 1)
    netloc, _, path = rest.partition("/")
    head, _, last = path.rpartition("/")
    return f"{scheme}://{netloc}/{head}/{PATH_KEY}/{last};api_key={MATRIX_KEY}"


@pytest.fixture
async def failing_pyrag() -> AsyncIterator[dict[str, str]]:
    """py-rag URLs, each with secrets, that fail in a different way."""

    async def status(request: web.Request) -> web.Response:
        code = int(request.match_info["code"].partition(";")[0])
        if 300 <= code < 400:
            raise web.HTTPTemporaryRedirect(str(request.url))
        return web.Response(status=code, text=f"py-rag says {code} for {request.url}")

    app = web.Application()
    app.add_routes([web.post("/status/{code}", status), web.post("/status/{key}/{code}", status)])
    server = TestServer(app, host="127.0.0.1")
    await server.start_server(access_log=None)  # the stand-in's own log is py-rag's, not ours
    try:
        yield {
            "unreachable": with_secrets(f"http://127.0.0.1:{free_port()}/search"),
            "500": with_secrets(str(server.make_url("/status/500"))),
            "401": with_secrets(str(server.make_url("/status/401"))),
            "307": with_secrets(str(server.make_url("/status/307"))),
            "bad host": with_secrets("http://exa mple.invalid:80/search"),
            "bad port": f"http://alice-user:{PASSWORD}@127.0.0.1:99999/search?api_key={API_KEY}",
            "path unreachable": with_path_secrets(f"http://127.0.0.1:{free_port()}/v1/search"),
            "path 500": with_path_secrets(str(server.make_url("/status/500"))),
            "path 401": with_path_secrets(str(server.make_url("/status/401"))),
            "path 307": with_path_secrets(str(server.make_url("/status/307"))),
        }
    finally:
        await server.close()


def settings_for(url: str) -> Settings:
    return Settings(pyrag_url=url, pyrag_attempts=2, pyrag_timeout_ms=500, retry_initial_backoff_ms=1)


def no_secret_in(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} in {where}: {text}"


def logged(caplog: pytest.LogCaptureFixture) -> str:
    formatter = logging.Formatter()
    return "\n".join(
        record.getMessage() + (formatter.formatException(record.exc_info) if record.exc_info else "")
        for record in caplog.records
    )


def test_redact_in_masks_the_url_as_written_and_its_secrets_wherever_they_are() -> None:
    url = with_secrets("http://rag.example:8000/search")
    said = f"Cannot connect to {url}; user alice-user, password pa55-w0rd@x, key {API_KEY}"
    shown = redact_in(said, url)
    no_secret_in(shown, "redact_in")
    assert "http://****@rag.example:8000/search?****=****&****=****" in shown
    assert redact_in("nothing secret here", url) == "nothing secret here"
    assert redact_in("a", "not a url") == "a"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # the red team's L5: a key in a path segment, or in its ';' parameters, was shown as it is
        ("http://127.0.0.1:18792/bad/sk-APIKEY123/search", "http://127.0.0.1:18792/bad/****/search"),
        ("http://127.0.0.1:18792/bad/search;api_key=APIKEY123", "http://127.0.0.1:18792/bad/****"),
        ("https://rag.example/t/0123abcdef0123abcdef/search", "https://rag.example/t/****/search"),
        ("https://rag.example/Search", "https://rag.example/****"),  # a capital may be a key's
        ("https://rag.example/%73k-key/search", "https://rag.example/****/search"),
        # the words of an endpoint are kept, so the operator sees which one failed
        ("http://127.0.0.1:8000/search", "http://127.0.0.1:8000/search"),
        ("http://judge:11434/v1/chat/completions", "http://judge:11434/v1/chat/completions"),
        ("https://rag.example/api/v2/rag-search/", "https://rag.example/api/v2/rag-search/"),
        ("http://[::1]:8000/search_docs", "http://[::1]:8000/search_docs"),
        ("redis://:s3cret@cache:6379/12", "redis://****@cache:6379/12"),
        ("unix:///var/run/redis.sock", "unix:///var/run/redis.sock"),
        ("http://h", "http://h"),
    ],
)
def test_a_url_is_shown_with_every_path_segment_that_is_not_a_plain_word_masked(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    said = f"Cannot connect to host {url}: refused"
    assert redact_in(said, url) == f"Cannot connect to host {shown}: refused"


def test_redact_in_masks_a_path_secret_wherever_a_library_quotes_it() -> None:
    url = f"http://rag.example:8000/bad/{PATH_KEY}/search;api_key={MATRIX_KEY}"
    said = f"404 for /bad/{PATH_KEY}/search;api_key={MATRIX_KEY}; key {MATRIX_KEY}, path {PATH_KEY}"
    shown = redact_in(said, url)
    no_secret_in(shown, "redact_in")
    assert shown.startswith("404 for /bad/****/")  # the path's shape stays readable


@pytest.mark.parametrize(
    "failure",
    [
        "unreachable",
        "500",
        "401",
        "307",
        "bad host",
        "bad port",
        "path unreachable",
        "path 500",
        "path 401",
        "path 307",
    ],
)
async def test_v1_search_and_lookup_knowledge_never_show_the_urls_secrets(
    failing_pyrag: dict[str, str], caplog: pytest.LogCaptureFixture, failure: str
) -> None:
    caplog.set_level(logging.DEBUG)
    settings = settings_for(failing_pyrag[failure])

    gateway: TestClient[Any, Any] = TestClient(TestServer(create_gateway(settings, FakeChain(settings))))
    await gateway.start_server()
    try:
        answer = await gateway.post(
            "/v1/search",
            json={"run_id": "run-1", "tool_call_id": "call-1", "query": "gateway timeout"},
            headers={"Content-Type": "application/json"},
        )
        body = await answer.text()
    finally:
        await gateway.close()
    assert answer.status == 502, body
    assert "py-rag at " in body
    no_secret_in(body, "the /v1/search answer")

    client = EvidenceChainClient(settings)
    try:
        async with Client(build_server(client, McpRuns("run-1"))) as mcp:
            result = await mcp.call_tool("lookup_knowledge", {"query": "gateway timeout"})
    finally:
        await client.close()
    assert result.is_error
    said = " ".join(block.text for block in result.content if isinstance(block, TextContent))
    assert "py-rag at " in said
    no_secret_in(said, "the tool error")
    assert repr(client).count(API_KEY) == 0

    no_secret_in(logged(caplog), "the log")
