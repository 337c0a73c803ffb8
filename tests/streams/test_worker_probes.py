"""The worker's probe server is the project's one listener (issue 32 item 7), not Faust's web server:
the same paths and answers, and the listener's limits — an idle connection closed after the header
timeout, a malformed request answered 400 in the JSON error shape, never a 500. Raw
requests go over sockets to the real listener on an ephemeral port (an HTTP client would refuse them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import faust
import pytest

from streams import codec
from streams.kafka.producer import KafkaSink
from streams.observe.metrics import WorkerMetrics
from streams.settings import Settings
from streams.web.listener import Limits
from streams.web.probes import serving
from streams.worker.app import app_options
from streams.worker.health import Health

HEADER_TIMEOUT_SECONDS = 0.3


@pytest.fixture
async def port() -> AsyncIterator[int]:
    app = faust.App("probe-test", broker="memory://", value_serializer="raw", key_serializer="raw")
    settings = Settings(topic_prefix="t.", web_enabled=True, web_port=0)
    health = Health(app, {}, KafkaSink(settings), [], settings, WorkerMetrics())
    limits = Limits(header_timeout_seconds=HEADER_TIMEOUT_SECONDS, keepalive_timeout_seconds=1.0)
    async with serving(health, "worker", settings.web_port, limits) as bound:
        yield bound


async def raw(port: int, request: bytes) -> bytes:
    """Send ``request`` as is; everything the server sends before it closes the connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()


def answer_of(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split(" ", 2)[1]), headers, body


def get(path: str, *lines: str) -> bytes:
    head = f"GET {path} HTTP/1.1\r\n" + "".join(f"{line}\r\n" for line in (*lines, "Connection: close"))
    return (head + "\r\n").encode("latin-1")


async def test_the_probes_answer_as_faust_s_server_did(port: int) -> None:
    status, headers, body = answer_of(await raw(port, get("/livez", "Host: 127.0.0.1")))
    assert (status, headers["content-type"]) == (200, "application/json; charset=utf-8")
    assert codec.loads(body) == {"live": True, "stalled": {}}
    status, headers, body = answer_of(await raw(port, get("/readyz", "Host: 127.0.0.1")))
    assert status == 503, body
    assert codec.loads(body)["problems"]["kafka"] == "the agents' producer has not started"
    status, headers, body = answer_of(await raw(port, get("/metrics", "Host: worker-0:6066")))
    assert (status, headers["content-type"]) == (200, "text/plain; version=0.0.4; charset=utf-8")
    assert b"evidence_chain_" in body
    assert b"\nevidence_chain_ready 0.0\n" in body  # what /readyz said: the producer has not started
    # an HTTP/1.0 health checker sends no Host: still answered
    status, _, body = answer_of(await raw(port, b"GET /livez HTTP/1.0\r\n\r\n"))
    assert status == 200, body


async def test_an_idle_connection_is_closed_after_the_header_timeout(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        started = asyncio.get_running_loop().time()
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed, nothing said
        assert asyncio.get_running_loop().time() - started < 3
    finally:
        writer.close()


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (get("/livez", "Host: ::1"), 400),  # an IPv6 literal without brackets
        (get("/livez", "Host: a", "Host: b"), 400),
        (get("/readyz", "Host: 127.0.0.1", "Authorization: Bearer se\x00cret"), 400),  # aiohttp cannot parse
        (get("/readyz", "Host: 127.0.0.1", "Content-Length: -1"), 400),
        (get("/nowhere", "Host: 127.0.0.1"), 404),
        (b"POST /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", 405),
    ],
)
async def test_a_bad_request_is_refused_in_the_json_shape_never_a_500(
    port: int, request_bytes: bytes, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    got, headers, body = answer_of(await raw(port, request_bytes))
    assert got == status, body
    assert headers["content-type"].startswith("application/json")
    error = codec.loads(body)["error"]
    assert set(error) == {"reason", "message", "retriable"}
    assert "cret" not in caplog.text  # no header bytes in a log line


def test_faust_s_own_web_server_stays_off() -> None:
    assert app_options(Settings(web_enabled=True, web_port=6066))["web_enabled"] is False
