"""``evidence-chain mcp --http`` sessions that cannot cross (issue 38 item 4): a request in no session is
refused (M5), sessions are capped per client and unused ones end quickly (M6), a draft refused before it
is judged spends no attempt (L3), tool arguments have the gateway's caps and malformed JSON-RPC gets a
JSON-RPC error (L4, and a request whose id MCP does not allow: the red team's re-review).

The server is the one ``serve_http`` builds, under uvicorn in this test's loop on 127.0.0.2
(:func:`tests.mcp.test_sessions.mcp_http`); the clients bind 127.0.0.1 and 127.0.0.3 as their source
addresses (all of 127/8 is loopback on Linux), which the gate counts as one client, since any local
process may pick its source address there. Clients of other addresses, the cap in all and the clock of
the in-use window are in ``tests/mcp/test_session_room.py``, against a stand-in for the SDK.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from streams import codec
from streams.client import EvidenceChainClient
from streams.errors import KafkaRefused
from streams.kafka.producer import RECORD_OVERHEAD_BYTES
from streams.mcp.run import McpRun, McpRuns
from streams.mcp.server import NO_SESSION, EvidenceTools
from streams.search.request import SEARCH_BODY_BYTES
from streams.settings import Settings
from tests.mcp.test_sessions import Recorder, Reply, mcp_http, text_of
from tests.support import MCP_ACCEPT, MCP_INITIALIZE

ONE, OTHER = "127.0.0.1", "127.0.0.3"
"""Two client addresses."""
JSON = {**MCP_ACCEPT, "Content-Type": "application/json"}
VERSION = {"MCP-Protocol-Version": "2025-06-18"}


async def post(
    endpoint: str, body: Any, *, source: str = ONE, session: str | None = None, **headers: str
) -> httpx2.Response:
    """One POST to ``/mcp`` from ``source`` (``body``: JSON, or bytes sent as they are)."""
    sent = {**JSON, **headers}
    if session is not None:
        sent |= {"Mcp-Session-Id": session, **VERSION}
    content = body if isinstance(body, bytes) else codec.dumps(body)
    transport = httpx2.AsyncHTTPTransport(local_address=source)
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        return await http.post(endpoint, headers=sent, content=content)


async def opened(endpoint: str, source: str = ONE) -> str:
    """A new session's id (an ``initialize`` that must succeed)."""
    answer = await post(endpoint, MCP_INITIALIZE, source=source)
    assert answer.status_code == 200, answer.text
    return str(answer.headers["mcp-session-id"])


async def use(endpoint: str, session: str, source: str = ONE) -> httpx2.Response:
    """What a client asks once a session is open: ``initialized``, then the tools."""
    await post(
        endpoint, {"jsonrpc": "2.0", "method": "notifications/initialized"}, source=source, session=session
    )
    return await post(
        endpoint, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, source=source, session=session
    )


def json_rpc_error(answer: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC error of an answer, SSE-framed or not."""
    text = answer.text
    if "data: " in text:
        text = text.split("data: ", 1)[1].split("\n", 1)[0]
    body = codec.loads(text)
    assert body["jsonrpc"] == "2.0" and "result" not in body, body
    error: dict[str, Any] = body["error"]
    return error | {"id": body["id"]}


# --- M5: no session, no tool call ------------------------------------------------------------------


async def test_requests_in_no_session_are_refused_and_two_such_clients_share_nothing() -> None:
    recorder = Recorder()
    async with mcp_http(McpRuns(None, per_session=True), recorder) as endpoint:
        for number, source in enumerate((ONE, OTHER)):
            call = {
                "jsonrpc": "2.0",
                "id": 40 + number,
                "method": "tools/call",
                "params": {"name": "lookup_knowledge", "arguments": {"query": "gateway timeout"}},
            }
            refused = await post(endpoint, call, source=source, **{"MCP-Protocol-Version": "2026-07-28"})
            assert refused.status_code == 400, refused.text
            error = json_rpc_error(refused)
            assert error["id"] == 40 + number and error["code"] == -32022
            assert error["data"] == {
                "supported": list(HANDSHAKE_PROTOCOL_VERSIONS),
                "requested": "2026-07-28",
            }
            assert "only in a session" in error["message"]
            for version in ({}, VERSION):  # a handshake-era client that sends no Mcp-Session-Id
                alone = await post(endpoint, call, source=source, **version)
                assert alone.status_code == 400 and json_rpc_error(alone)["code"] == -32600, alone.text
    assert recorder.lookups == [] and recorder.drafts == []


async def test_a_tool_call_in_no_session_has_no_run_when_each_session_is_one() -> None:
    recorder = Recorder()
    runs = McpRuns(None, per_session=True)
    assert runs.of(None) is None
    tools = EvidenceTools(cast(EvidenceChainClient, recorder), runs)
    for call in (
        tools.lookup_knowledge("gateway timeout"),
        tools.check_diagnosis({"analysis": []}),
        tools.get_evidence("call-1"),
    ):
        with pytest.raises(ToolError, match="only inside an MCP session"):
            await call
    assert NO_SESSION.startswith("no tool call was made")
    assert recorder.lookups == [] and recorder.drafts == [] and runs.shared.lookups == 0


# --- M6: sessions per client, room made from those not in use, unused ones closed ------------------------


async def test_all_of_loopback_is_one_client_and_room_is_made_from_sessions_not_in_use() -> None:
    now = [0.0]
    settings = Settings(mcp_max_sessions_per_peer=3, mcp_session_in_use_seconds=30)
    recorder = Recorder(settings=settings)
    async with mcp_http(McpRuns(None, per_session=True), recorder, clock=lambda: now[0]) as endpoint:
        first = [await opened(endpoint, ONE) for _ in range(3)]
        other = await opened(endpoint, OTHER)  # another loopback address: the same client, at its cap
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        assert (await post(endpoint, ping, session=first[0])).status_code == 404  # the oldest unused gave way
        for session in (*first[1:], other):
            assert (await use(endpoint, session)).status_code == 200
        refused = await post(endpoint, MCP_INITIALIZE, source=OTHER)  # every one is in use
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        message = json_rpc_error(refused)["message"]
        assert "(EC_MCP_MAX_SESSIONS_PER_PEER)" in message and "all of loopback is one client" in message
        now[0] = 20.0
        assert (await use(endpoint, first[2])).status_code == 200
        now[0] = 40.0  # first[1] and other last asked at 0, first[2] at 20
        newcomer = await opened(endpoint, OTHER)
        gone = [s for s in (first[1], other) if (await post(endpoint, ping, session=s)).status_code == 404]
        assert len(gone) == 1  # the least recently asked of the two (they asked at the same time)
        assert (await post(endpoint, ping, session=first[2])).status_code == 200
        async with httpx2.AsyncClient(
            transport=httpx2.AsyncHTTPTransport(local_address=ONE), timeout=30
        ) as http:
            closed = await http.delete(endpoint, headers={**JSON, **VERSION, "Mcp-Session-Id": newcomer})
        assert closed.status_code == 200, closed.text
        assert await opened(endpoint, ONE) not in (*first, other, newcomer)  # room without closing any


async def test_a_session_nobody_uses_is_closed_quickly_and_a_used_one_stays() -> None:
    now = [0.0]  # the gate's clock, moved by hand: nothing here depends on how fast the machine is
    recorder = Recorder(settings=Settings(mcp_unused_session_seconds=30))
    async with mcp_http(McpRuns(None, per_session=True), recorder, clock=lambda: now[0]) as endpoint:
        unused = await opened(endpoint)
        used = await opened(endpoint)
        assert (await use(endpoint, used)).status_code == 200
        now[0] = 29.0
        early = await post(endpoint, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, session=unused)
        assert early.status_code == 200  # not yet: and a ping is a request, so it is used from now on
        later = await opened(endpoint)
        now[0] = 61.0  # past the later one's 30 s; the used ones idle 1800 s
        third = await opened(endpoint)  # opening runs the check, as the sweep does every few seconds
        gone = await post(endpoint, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, session=later)
        assert gone.status_code == 404, gone.text
        for session in (unused, used):
            listed = await post(
                endpoint, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, session=session
            )
            assert listed.status_code == 200 and '"lookup_knowledge"' in listed.text
        assert third not in (unused, used, later)


async def test_an_sdk_client_connects_and_works_while_its_own_address_floods() -> None:
    recorder = Recorder(settings=Settings(mcp_max_sessions_per_peer=20))
    async with mcp_http(McpRuns(None, per_session=True), recorder) as endpoint:
        answers = await asyncio.gather(*(post(endpoint, MCP_INITIALIZE, source=ONE) for _ in range(60)))
        statuses = [a.status_code for a in answers]
        # each opened (the oldest that asked nothing gave way), or refused while 20 others were being opened
        assert set(statuses) <= {200, 503} and statuses.count(200) >= 20, statuses
        for source in (OTHER, ONE):
            http = httpx2.AsyncClient(transport=httpx2.AsyncHTTPTransport(local_address=source), timeout=30)
            async with http, Client(streamable_http_client(endpoint, http_client=http), mode="legacy") as mcp:
                found = await mcp.call_tool("lookup_knowledge", {"query": "gateway timeout"})
                assert not found.is_error, text_of(found)
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        flood = [a.headers["mcp-session-id"] for a in answers if a.status_code == 200]
        alive = [(await post(endpoint, ping, session=s)).status_code for s in flood]
        assert alive.count(200) <= 20 and set(alive) <= {200, 404}  # never more than the cap held
    assert len(recorder.lookups) == 2


# --- L4: malformed JSON-RPC over HTTP gets a JSON-RPC error ------------------------------------------


@pytest.mark.parametrize(
    "body", [b"garbage", b"{", b"[1, 2]", b'{"jsonrpc": "2.0", "id": 5}', b"\x1f\x8b\x08 not gzip"]
)
async def test_malformed_json_rpc_over_http_gets_a_json_rpc_error_and_no_traceback(
    body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with mcp_http(McpRuns(None, per_session=True), Recorder()) as endpoint:
        session = await opened(endpoint)
        for answer in (
            await post(endpoint, body),
            await post(endpoint, body, session=session),
            await post(endpoint, body, session=session, **{"Content-Encoding": "gzip"}),
        ):
            assert answer.status_code == 400, answer.text
            assert json_rpc_error(answer)["code"] in (-32700, -32600, -32602)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("request_id", [b"NaN", b"Infinity", b"1.5", b"true", b"null", b"{}"])
async def test_a_request_whose_id_mcp_does_not_allow_gets_invalid_request_over_http(
    request_id: bytes,
) -> None:
    # The SDK reads it as a notification: 202 and nothing, and the host waits (the re-review's L4).
    body = b'{"jsonrpc": "2.0", "id": ' + request_id + b', "method": "ping"}'
    async with mcp_http(McpRuns(None, per_session=True), Recorder()) as endpoint:
        session = await opened(endpoint)
        for answer in (await post(endpoint, body, session=session), await post(endpoint, body)):
            assert answer.status_code == 400, answer.text
            error = json_rpc_error(answer)
            assert error["code"] == -32600 and error["id"] is None
            assert "string or an integer" in error["message"]
        note = await post(
            endpoint, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session=session
        )
        assert note.status_code == 202  # a notification is still one


@pytest.mark.parametrize("encoding", ["compress", "gzip", "gzip, gzip", "x-anything"])
async def test_a_plain_body_labelled_with_a_content_coding_is_a_parse_error_not_read_as_plain(
    encoding: str,
) -> None:
    # The re-review's L3: an unknown coding over a plain body was read as if there were none.
    async with mcp_http(McpRuns(None, per_session=True), Recorder()) as endpoint:
        session = await opened(endpoint)
        listing = {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}
        answer = await post(endpoint, listing, session=session, **{"Content-Encoding": encoding})
        assert answer.status_code == 400, answer.text
        assert json_rpc_error(answer)["code"] == -32700 and "unencoded" in answer.text
        plain = await post(endpoint, listing, session=session, **{"Content-Encoding": "identity"})
        assert plain.status_code == 200 and '"check_diagnosis"' in plain.text


# --- L3 and L4: what is refused before it is judged spends nothing ---------------------------------------


class Refusing(Recorder):
    """Every draft is refused by the broker, as a record over the topic's max.message.bytes is."""

    async def check(self, draft: bytes) -> Reply:
        self.drafts.append(codec.loads(draft))
        raise KafkaRefused("producing to diagnosis-drafts[0]: MessageSizeTooLargeError")


async def test_a_draft_the_broker_refuses_spends_no_attempt() -> None:
    refusing = Refusing()
    runs = McpRuns("run-1")
    tools = EvidenceTools(cast(EvidenceChainClient, refusing), runs)
    for _ in range(3):
        with pytest.raises(ToolError, match=r"not checked \(no attempt counted\): the broker refused it"):
            await tools.check_diagnosis({"analysis": []})
    assert [d["attempt"] for d in refusing.drafts] == [1, 1, 1]
    assert runs.shared.attempt == 0 and runs.shared.drafts == 1


def test_an_attempt_is_given_back_only_when_no_later_one_was_stamped() -> None:
    run = McpRun.start("run-1")
    run.stamp({}), run.stamp({})
    assert not run.withdraw(1)  # attempt 2 is out: 1 stays spent
    assert run.withdraw(2) and run.attempt == 1
    assert not run.withdraw(0)


async def test_a_draft_over_the_topics_size_is_refused_before_it_is_sent_and_not_counted() -> None:
    recorder = Recorder(settings=Settings(topic_max_message_bytes=4096))
    runs = McpRuns("run-1")
    tools = EvidenceTools(cast(EvidenceChainClient, recorder), runs)
    big = {"analysis": [], "limitations": ["x" * (4096 - RECORD_OVERHEAD_BYTES)]}
    with pytest.raises(ToolError, match=r"no attempt counted\): it is [\d,]+ bytes as JSON, over the 3,072"):
        await tools.check_diagnosis(big)
    assert recorder.drafts == [] and runs.shared.attempt == 0
    await tools.check_diagnosis({"analysis": []})
    assert [d["attempt"] for d in recorder.drafts] == [1]


async def test_a_draft_over_what_the_guard_reads_is_refused_before_it_is_sent_and_not_counted() -> None:
    # The re-review's L2: a draft between the guard's 256 KiB and the topic's 4 MiB was sent, got
    # DRAFT_TOO_LARGE with run_id and draft_id null, and spent the attempt (the next one was the last).
    recorder = Recorder(settings=Settings(guard={"max_draft_bytes": 2048}))
    runs = McpRuns("run-1")
    tools = EvidenceTools(cast(EvidenceChainClient, recorder), runs)
    big = {"analysis": [], "limitations": ["x" * 2048]}
    with pytest.raises(
        ToolError, match=r"no attempt counted\): it is [\d,]+ bytes as JSON, over the 2,048 the "
    ):
        await tools.check_diagnosis(big)
    assert recorder.drafts == [] and runs.shared.attempt == 0
    fits = {"analysis": [], "limitations": ["x" * 1900]}  # stamped, just under the guard's 2,048
    await tools.check_diagnosis(fits)
    assert [d["attempt"] for d in recorder.drafts] == [1]


async def test_lookup_filters_have_the_search_bodys_cap() -> None:
    recorder = Recorder()
    runs = McpRuns("run-1")
    tools = EvidenceTools(cast(EvidenceChainClient, recorder), runs)
    with pytest.raises(ToolError, match=rf"no lookup was made: .* over the {SEARCH_BODY_BYTES:,}"):
        await tools.lookup_knowledge("gateway timeout", {"team": "x" * SEARCH_BODY_BYTES})
    with pytest.raises(ToolError, match="no lookup was made: the filters cannot be written as JSON"):
        await tools.lookup_knowledge("gateway timeout", {"n": 10**30})
    for depth in (64, 300):  # the search around them is one level more: over 64, as POST /v1/search
        with pytest.raises(ToolError, match=r"no lookup was made: .*nested (too deep|more than 64)"):
            await tools.lookup_knowledge("gateway timeout", nested(depth))
    assert recorder.lookups == [] and runs.shared.lookups == 0
    await tools.lookup_knowledge("gateway timeout", {"team": "sre"})
    await tools.lookup_knowledge("gateway timeout", nested(62))
    assert len(recorder.lookups) == 2


def nested(depth: int) -> dict[str, Any]:
    """``{"a": {"a": ... 1}}``, ``depth`` objects deep."""
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return cast(dict[str, Any], value)
