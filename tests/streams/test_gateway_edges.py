"""The gateway's doors, hardened (issue 32 items 3 and 7): no web page can drive a token-less gateway,
malformed heads and Hosts are 400/403 in the one error shape and never a 500, no token reaches a log,
bodies and connections are bounded. Malformed requests go over raw sockets to the real listener
(:func:`streams.web.listener.listening`), since an HTTP client would refuse to send them.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import ClientSession
from multidict import CIMultiDict
from pydantic import SecretStr

from models.ids import is_valid_id
from streams import codec
from streams.client import VerdictReply
from streams.settings import Settings
from streams.web.gateway import create_gateway, error_shape, limits_of
from streams.web.listener import listening
from tests.streams.test_gateway import TOKEN, FakeChain

LOOKUP = b'{"run_id":"r1","tool_call_id":"c1"}'


class Gateway:
    """A gateway on a free loopback port behind the real listener, with a fake client."""

    def __init__(self, port: int, chain: FakeChain) -> None:
        self.port = port
        self.chain = chain

    async def raw(self, request: bytes, *, source: str = "127.0.0.1") -> bytes:
        """Send ``request`` as is, from the loopback address ``source``; the answer (its head, and its
        body by ``Content-Length``), or what came before the gateway closed the connection (at most 10 s)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(source, 0))
        try:
            writer.write(request)
            await writer.drain()
            try:
                answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            except asyncio.IncompleteReadError as closed:
                return closed.partial
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in answer.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            return answer + await asyncio.wait_for(reader.readexactly(length), 10)
        finally:
            writer.close()

    async def drop(self, request: bytes) -> None:
        """Send ``request`` and close the connection at once, as a client that goes away."""
        _, writer = await asyncio.open_connection("127.0.0.1", self.port)
        writer.write(request)
        await writer.drain()
        writer.transport.abort()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


Start = Callable[..., Any]


@pytest.fixture
async def start() -> AsyncIterator[Start]:
    stops: list[asyncio.Event] = []
    tasks: list[asyncio.Task[None]] = []

    async def run(token: str | None = TOKEN, **overrides: Any) -> Gateway:
        settings = Settings(gateway_token=SecretStr(token) if token is not None else None, **overrides)
        chain = FakeChain(settings)
        app = create_gateway(settings, chain)
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        stop = asyncio.Event()

        async def serve() -> None:
            async with listening(app, "127.0.0.1", 0, limits_of(settings), shape=error_shape()) as port:
                ready.set_result(port)
                await stop.wait()

        tasks.append(asyncio.create_task(serve()))
        stops.append(stop)
        return Gateway(await ready, chain)

    yield run
    for stop in stops:
        stop.set()
    await asyncio.gather(*tasks)


def status_and_body(answer: bytes) -> tuple[int, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def error_reason(answer: bytes, status: int) -> str:
    got, body = status_and_body(answer)
    assert got == status, answer[:400]
    error = codec.loads(body)["error"]
    assert set(error) == {"reason", "message", "retriable"}
    assert TOKEN not in answer.decode("latin-1")
    return str(error["reason"])


def head(method: str, path: str, *lines: str, body: bytes = b"") -> bytes:
    """A request as raw bytes; ``Connection: close``, so the answer ends when the gateway closes."""
    lines = (*lines, "Connection: close")
    text = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{line}\r\n" for line in lines) + "\r\n"
    return text.encode("latin-1") + body


def no_token_in_logs(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        shown = record.getMessage() + (
            logging.Formatter().formatException(record.exc_info) if record.exc_info else ""
        )
        assert TOKEN not in shown, shown


# --- no page can drive a gateway without a token (CSRF) ------------------------------------------


async def test_without_a_token_a_post_must_say_json_and_no_page_may_send_it(start: Start) -> None:
    gateway = await start(token=None)
    async with ClientSession() as session:
        refused = [
            ({}, 415, "UNSUPPORTED_MEDIA_TYPE"),  # what fetch(url, {mode: "no-cors", body}) sends
            ({"Content-Type": "application/octet-stream"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
            ({"Content-Type": "text/plain;charset=UTF-8"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
            ({"Content-Type": "application/json", "Origin": "http://localhost:9999"}, 403, "CROSS_ORIGIN"),
            ({"Content-Type": "application/json", "Origin": "null"}, 403, "CROSS_ORIGIN"),
            ({"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403, "CROSS_ORIGIN"),
            ({"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403, "CROSS_ORIGIN"),
        ]
        for headers, status, reason in refused:
            async with session.post(gateway.url("/v1/lookups"), data=LOOKUP, headers=headers) as answer:
                assert answer.status == status, headers
                assert (await answer.json())["error"]["reason"] == reason, headers
        async with session.get(
            gateway.url("/v1/ledger/r1/c1"), headers={"Origin": "http://evil.example"}
        ) as answer:
            assert answer.status == 403  # a page cannot read the ledger either
        assert gateway.chain.bodies == [] and gateway.chain.asked == []
        for site in ("none", "same-origin"):
            headers = {"Content-Type": "application/json; charset=utf-8", "Sec-Fetch-Site": site}
            async with session.post(gateway.url("/v1/lookups"), data=LOOKUP, headers=headers) as answer:
                assert answer.status == 200, site
    assert len(gateway.chain.bodies) == 2


async def test_with_a_token_an_unlabelled_body_is_still_read(start: Start) -> None:
    gateway = await start()
    async with ClientSession() as session:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with session.post(gateway.url("/v1/lookups"), data=LOOKUP, headers=headers) as answer:
            assert answer.status == 200


# --- Authorization ---------------------------------------------------------------------------------


async def test_authorization_variants_are_401_and_never_logged(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    gateway = await start()
    variants: list[CIMultiDict[str]] = [
        CIMultiDict([("Authorization", f"Basic {TOKEN}")]),
        CIMultiDict([("Authorization", f"Bearer x{TOKEN}")]),
        CIMultiDict([("Authorization", f"Bearer {TOKEN}x")]),
        CIMultiDict([("Authorization", f"Bearer {TOKEN} {TOKEN}")]),
        CIMultiDict([("Authorization", f"Bearer{TOKEN}")]),
        CIMultiDict([("Authorization", TOKEN)]),
        CIMultiDict([("Authorization", "")]),
        CIMultiDict([("Authorization", "Bearer ")]),
        CIMultiDict([("Authorization", f"Bearer {TOKEN}"), ("Authorization", f"Bearer {TOKEN}")]),
    ]
    async with ClientSession() as session:
        for headers in variants:
            headers["Content-Type"] = "application/json"
            async with session.post(gateway.url("/v1/lookups"), data=LOOKUP, headers=headers) as answer:
                assert answer.status == 401, headers
                assert TOKEN not in await answer.text()
    assert gateway.chain.bodies == []
    no_token_in_logs(caplog)


@pytest.mark.parametrize(
    "line",
    [
        f"Authorization: Bearer {TOKEN}\x00",
        f"Authorization: Bearer \x00{TOKEN}",
        f"Authorization: Bearer\r\n {TOKEN}",  # obs-fold
        f"Authorization: Bearer {TOKEN}\r\n\tmore",
        f"Authorization : Bearer {TOKEN}",
        f"Authorization: Bearer {TOKEN}\x7f",
    ],
)
async def test_a_malformed_authorization_is_400_in_the_error_shape_with_no_token_in_any_log(
    start: Start, caplog: pytest.LogCaptureFixture, line: str
) -> None:
    caplog.set_level(logging.DEBUG)
    gateway = await start()
    answer = await gateway.raw(
        head(
            "POST",
            "/v1/lookups",
            "Host: 127.0.0.1",
            line,
            "Content-Type: application/json",
            f"Content-Length: {len(LOOKUP)}",
            body=LOOKUP,
        )
    )
    assert error_reason(answer, 400) == "BAD_REQUEST"
    assert b"application/json" in answer.split(b"\r\n\r\n")[0]
    assert gateway.chain.bodies == []
    no_token_in_logs(caplog)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# --- Host ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host_lines", "status"),
    [
        (["Host: evil.com"], 403),
        (["Host: localhost."], 403),
        (["Host: 127.1"], 403),
        (["Host: 0x7f000001"], 403),
        (["Host: 0x7f.0.0.1"], 403),
        (["Host: 2130706433"], 403),
        (["Host: 017700000001"], 403),
        (["Host: [::ffff:127.0.0.1]"], 403),
        (["Host: evil.com", "X-Forwarded-Host: localhost"], 403),
        (["Host: localhost", "Host: evil.com"], 400),
        (["Host: ::1"], 400),
        (["Host: [::1"], 400),
        (["Host: localhost:80:80"], 400),
        (["Host: local host"], 400),
        (["Host: localhost:x"], 400),
        (["Host: [not-an-address]"], 400),
        ([], 400),
    ],
)
async def test_host_tricks_are_403_or_400_never_500(start: Start, host_lines: list[str], status: int) -> None:
    gateway = await start(token=None)
    answer = await gateway.raw(head("GET", "/v1/ledger/r1/c1", *host_lines))
    got, _ = status_and_body(answer)
    assert got == status, answer[:300]
    assert gateway.chain.asked == []


async def test_loopback_hosts_are_answered(start: Start) -> None:
    gateway = await start(token=None)
    for host in ("localhost", "LOCALHOST:8080", "127.0.0.1", "127.0.0.2:1", "[::1]", "[::1]:8080"):
        answer = await gateway.raw(head("GET", "/v1/ledger/r1/c1", f"Host: {host}"))
        assert status_and_body(answer)[0] == 200, host


async def test_an_unreadable_host_is_400_on_the_probes_too(start: Start) -> None:
    gateway = await start()
    answer = await gateway.raw(head("GET", "/livez", "Host: ::1"))
    assert error_reason(answer, 400) == "BAD_REQUEST"


# --- bodies ----------------------------------------------------------------------------------------

AUTH_LINES = ("Host: 127.0.0.1", f"Authorization: Bearer {TOKEN}", "Content-Type: application/json")


async def test_a_chunked_body_over_the_limit_is_413(start: Start) -> None:
    gateway = await start(input={"max_message_bytes": 4096})
    chunk = b"1000\r\n" + b"x" * 4096 + b"\r\n"
    answer = await gateway.raw(
        head("POST", "/v1/lookups", *AUTH_LINES, "Transfer-Encoding: chunked", body=chunk * 3 + b"0\r\n\r\n")
    )
    assert error_reason(answer, 413) == "OVERSIZED"
    assert gateway.chain.bodies == []


@pytest.mark.parametrize(
    ("lengths", "status"),
    [
        (["Content-Length: -1"], 400),
        (["Content-Length: 10", "Content-Length: 12"], 400),
        (["Content-Length: 1e3"], 400),
        (["Content-Length: +10"], 400),
        (["Content-Length: 99999999999999999999999"], 400),
        ([f"Content-Length: {2**31}"], 413),
    ],
)
async def test_bad_or_huge_content_lengths_are_400_or_413(
    start: Start, lengths: list[str], status: int
) -> None:
    gateway = await start()
    answer = await gateway.raw(head("POST", "/v1/lookups", *AUTH_LINES, *lengths, body=b"0123456789"))
    assert status_and_body(answer)[0] == status, answer[:300]
    assert gateway.chain.bodies == []


async def test_a_client_that_leaves_mid_body_is_no_500_and_no_error(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    gateway = await start()
    for _ in range(5):
        await gateway.drop(head("POST", "/v1/lookups", *AUTH_LINES, "Content-Length: 1000", body=b"{"))
    for _ in range(200):  # until the gateway has seen the five go (it counts each as a 400)
        metrics = await gateway.raw(head("GET", "/metrics", "Host: 127.0.0.1"))
        if b'route="/v1/lookups",status="400"} 5.0' in metrics:
            break
        await asyncio.sleep(0.05)
    assert b'route="/v1/lookups",status="400"} 5.0' in metrics
    assert b'status="500"' not in metrics
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert gateway.chain.bodies == []


async def test_a_body_that_does_not_arrive_in_time_is_408(start: Start) -> None:
    gateway = await start(gateway_body_timeout_seconds=0.2)
    answer = await gateway.raw(head("POST", "/v1/lookups", *AUTH_LINES, "Content-Length: 1000", body=b"{"))
    assert status_and_body(answer)[0] == 408
    assert gateway.chain.bodies == []


# --- connections -----------------------------------------------------------------------------------


async def test_an_idle_or_slow_connection_is_closed(start: Start) -> None:
    gateway = await start(gateway_header_timeout_seconds=0.2, gateway_keepalive_timeout_seconds=0.2)
    assert await gateway.raw(b"") == b""  # says nothing: closed, nothing answered
    assert await gateway.raw(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n") == b""  # never ends


async def test_connections_per_peer_are_capped_with_a_503_in_the_error_shape(start: Start) -> None:
    gateway = await start(gateway_max_connections_per_peer=2)
    held = [await asyncio.open_connection("127.0.0.1", gateway.port) for _ in range(2)]
    try:
        answer = await gateway.raw(head("GET", "/livez", "Host: 127.0.0.1"))
        assert error_reason(answer, 503) == "UNAVAILABLE"
    finally:
        for _, writer in held:
            writer.close()
    for _ in range(100):  # the gate counts a connection until the server sees it close
        answer = await gateway.raw(head("GET", "/livez", "Host: 127.0.0.1"))
        if status_and_body(answer)[0] == 200:
            break
        await asyncio.sleep(0.05)
    assert status_and_body(answer)[0] == 200


async def test_all_of_loopback_is_one_peer_so_a_local_process_cannot_spread_over_127_8(
    start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    """Any local process may bind any source address in 127/8: counted by exact address, each address
    had a cap of its own and a few of them took every connection. All of loopback is one peer, as the
    MCP session gate counts it (streams.web.peers)."""
    gateway = await start(gateway_max_connections_per_peer=2)
    held = [
        await asyncio.open_connection("127.0.0.1", gateway.port, local_addr=(f"127.0.0.{n}", 0))
        for n in (2, 3)
    ]
    try:
        for source in ("127.0.0.4", "127.0.0.1", "127.1.2.3"):
            with caplog.at_level(logging.WARNING, logger="streams.web.listener"):
                answer = await gateway.raw(head("GET", "/livez", "Host: 127.0.0.1"), source=source)
            assert error_reason(answer, 503) == "UNAVAILABLE", source
    finally:
        for _, writer in held:
            writer.close()
    assert "2 connections open from this machine (all of loopback is one peer)" in caplog.text
    for _ in range(100):  # the gate counts a connection until the server sees it close
        answer = await gateway.raw(head("GET", "/livez", "Host: 127.0.0.1"), source="127.0.0.5")
        if status_and_body(answer)[0] == 200:
            break
        await asyncio.sleep(0.05)
    assert status_and_body(answer)[0] == 200


# --- ledger paths ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "asked"),
    [
        ("/v1/ledger/%2E/c1", "."),
        ("/v1/ledger/%2E%2E/c1", ".."),
        ("/v1/ledger/r1%2Fx/c1", "r1/x"),
        ("/v1/ledger/r%001/c1", "r\x001"),
        ("/v1/ledger/" + "r" * 5_000 + "/c1", "r" * 5_000),
    ],
)
async def test_odd_ids_in_ledger_paths_reach_the_client_decoded_never_a_500(
    start: Start, path: str, asked: str
) -> None:
    """The ids are percent-decoded once and handed to the client, which refuses an invalid one (400,
    tests/integration/test_gateway.py); the HTTP edge itself never fails on them."""
    gateway = await start()
    answer = await gateway.raw(head("GET", path, "Host: 127.0.0.1", f"Authorization: Bearer {TOKEN}"))
    assert status_and_body(answer)[0] == 200, answer[:300]
    assert gateway.chain.asked == [(asked, "c1")]
    assert is_valid_id(asked) == (asked in (".", ".."))


async def test_a_10000_character_id_is_400_in_the_error_shape(start: Start) -> None:
    gateway = await start()
    path = "/v1/ledger/" + "r" * 10_000 + "/c1"  # beyond aiohttp's request-line limit
    answer = await gateway.raw(head("GET", path, "Host: 127.0.0.1", f"Authorization: Bearer {TOKEN}"))
    assert error_reason(answer, 400) == "BAD_REQUEST"
    assert gateway.chain.asked == []


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", b"not gzip at all"),
        ("gzip", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 64),  # a gzip head, then garbage
        ("deflate", b"\x00\x01garbage"),
        ("br", b"\x00"),  # a coding aiohttp cannot decode here
        ("zstd", b"\x00"),
    ],
)
async def test_a_body_that_does_not_decode_is_400_with_no_traceback(
    start: Start, caplog: pytest.LogCaptureFixture, encoding: str, body: bytes
) -> None:
    caplog.set_level(logging.DEBUG)
    gateway = await start()
    for path in ("/v1/drafts", "/v1/lookups", "/v1/search"):
        answer = await gateway.raw(
            head(
                "POST",
                path,
                *AUTH_LINES,
                f"Content-Encoding: {encoding}",
                f"Content-Length: {len(body)}",
                body=body,
            )
        )
        assert error_reason(answer, 400) == "BAD_REQUEST", answer[:300]
    await asyncio.sleep(0.1)  # aiohttp logs what it finds while reading the rest after the answer
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], [
        r.getMessage() for r in caplog.records
    ]
    assert gateway.chain.bodies == []


DRAFT = codec.dumps({"run_id": "r1", "draft_id": "d1", "attempt": 1, "analysis": [], "limitations": ["x"]})


@pytest.mark.parametrize(
    ("encoding", "body", "why"),
    [
        ("gzip", gzip.compress(DRAFT)[:40], "ends before"),  # truncated: it decoded to a partial body
        ("gzip", gzip.compress(DRAFT)[:-4], "ends before"),  # the size trailer missing
        ("deflate", zlib.compress(DRAFT)[:-6], "ends before"),
        ("gzip, gzip", gzip.compress(DRAFT), "more than once"),  # decoded once, the rest judged
        ("gzip,identity,gzip", gzip.compress(gzip.compress(DRAFT)), "more than once"),
        ("compress", DRAFT, "not one this server decodes"),  # it was read as if unencoded
        ("x-compress", DRAFT, "not one this server decodes"),
        ("br", DRAFT, "not one this server decodes"),
        ("gzip", gzip.compress(DRAFT) + b"trailing", "follow the end"),
        ("deflate", zlib.compress(DRAFT) + b"\x00", "follow the end"),
        ("gzip", gzip.compress(DRAFT) + b"\x1f\x8b\x08", "ends before"),  # a second member, cut short
    ],
    ids=[
        "gzip-cut",
        "gzip-no-trailer",
        "deflate-cut",
        "gzip-twice",
        "gzip-identity-gzip",
        "compress",
        "x-compress",
        "br",
        "gzip-then-junk",
        "deflate-then-junk",
        "gzip-member-cut",
    ],
)
async def test_a_body_that_is_truncated_stacked_or_in_an_unknown_encoding_is_400(
    start: Start, caplog: pytest.LogCaptureFixture, encoding: str, body: bytes, why: str
) -> None:
    # The re-review's L3: /v1/drafts answered 200 to each of the first four, judging what was decoded.
    caplog.set_level(logging.DEBUG)
    gateway = await start()
    gateway.chain.answer = VerdictReply(b'{"verdict":"REJECT"}', {"verdict": "REJECT"})
    for path in ("/v1/drafts", "/v1/lookups", "/v1/search"):
        lines = (*AUTH_LINES, f"Content-Encoding: {encoding}", f"Content-Length: {len(body)}")
        answer = await gateway.raw(head("POST", path, *lines, body=body))
        assert error_reason(answer, 400) == "BAD_REQUEST" and why.encode() in answer, answer[:300]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert gateway.chain.bodies == []


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", gzip.compress(DRAFT)),
        ("x-gzip", gzip.compress(DRAFT)),
        ("GZIP", gzip.compress(DRAFT)),
        ("gzip", gzip.compress(DRAFT[:20]) + gzip.compress(DRAFT[20:])),  # two members: one stream
        ("deflate", zlib.compress(DRAFT)),
        ("deflate", zlib.compress(DRAFT)[2:-4]),  # raw deflate, as aiohttp has always taken it
        ("identity", DRAFT),
        ("", DRAFT),
    ],
    ids=["gzip", "x-gzip", "GZIP", "two-members", "zlib", "raw-deflate", "identity", "empty"],
)
async def test_a_body_that_decodes_whole_is_taken(start: Start, encoding: str, body: bytes) -> None:
    gateway = await start()
    gateway.chain.answer = VerdictReply(b'{"verdict":"PASS"}', {"verdict": "PASS"})
    lines = (*AUTH_LINES, f"Content-Encoding: {encoding}", f"Content-Length: {len(body)}")
    answer = await gateway.raw(head("POST", "/v1/drafts", *lines, body=body))
    assert status_and_body(answer)[0] == 200, answer[:300]
    assert gateway.chain.bodies == [DRAFT]


async def test_a_gzip_bomb_is_413_and_never_held_whole(start: Start) -> None:
    gateway = await start()
    bomb = gzip.compress(b" " * (64 << 20))  # 64 MiB of spaces in about 64 KiB
    lines = (*AUTH_LINES, "Content-Encoding: gzip", f"Content-Length: {len(bomb)}")
    answer = await gateway.raw(head("POST", "/v1/lookups", *lines, body=bomb))
    assert error_reason(answer, 413) == "OVERSIZED"
    assert gateway.chain.bodies == []


def nested(depth: int) -> bytes:
    """``{"a":{"a":...1}}``, ``depth`` objects deep, as text (orjson writes only about 254 levels)."""
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth", [63, 64, 254, 300, 1000])
async def test_search_filters_nested_deeper_than_a_record_may_be_are_400_never_a_500(
    start: Start, caplog: pytest.LogCaptureFixture, depth: int
) -> None:
    # The re-review's L1: orjson reads JSON 1,024 levels deep but writes only about 254, and the filters
    # are written again for py-rag: 254 to 1,024 levels were a 500 with a traceback.
    caplog.set_level(logging.DEBUG)
    gateway = await start(pyrag_url="http://127.0.0.1:9/search", pyrag_attempts=1, pyrag_timeout_ms=200)
    body = b'{"run_id":"r1","tool_call_id":"c1","query":"q","filters":' + nested(depth) + b"}"
    answer = await gateway.raw(
        head("POST", "/v1/search", *AUTH_LINES, f"Content-Length: {len(body)}", body=body)
    )
    if depth + 1 <= codec.MAX_DEPTH:  # the body is one level more: within a record's 64, asked
        assert error_reason(answer, 502) == "SEARCH_UNAVAILABLE", answer[:300]
    else:
        assert error_reason(answer, 400) == "BAD_REQUEST", answer[:300]
        assert b"nested more than 64" in answer
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert gateway.chain.bodies == []
