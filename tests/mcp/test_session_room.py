"""The session gate of ``evidence-chain mcp --http`` against a stand-in for the SDK, with client addresses
of any kind and a clock moved by hand (the red team's re-review of issue 38):

- M1: 100 ``initialize`` from each of 11 loopback addresses, then one ``ping`` in each session, held
  every session for 30 minutes; all of loopback is now one client, and a newcomer closes a session that
  is not in use instead of being refused;
- M2: a request that arrived while the opening request's answer was still being written was not
  counted, so a used session was closed as unused.

The stand-in answers as the SDK does what the gate looks at: ``initialize`` opens a session (its id in
the answer's head), a request in an open session is answered, in a closed one 404.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

import pytest
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from streams import codec
from streams.web.asgi import Message
from streams.web.mcp_sessions import SessionGate, SessionLimits
from streams.web.peers import LOOPBACK, peer_of
from tests.support import MCP_INITIALIZE

PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Transport:
    """What the gate's ``_Sessions`` touches of the SDK's transport (a DELETE's ``terminate``)."""

    def __init__(self, sdk: Sdk, session_id: str) -> None:
        self.sdk, self.session_id = sdk, session_id
        self.is_terminated = False

    async def terminate(self) -> None:
        self.is_terminated = True
        self.sdk._server_instances.pop(self.session_id, None)


class Sdk:
    """The SDK's streamable-HTTP app and its session manager, as far as the gate sees them.

    ``opening_held``: an opening answer waits after its head (its session id) is sent, until set.
    ``held``: a request in a session waits until set before it is answered.
    """

    def __init__(self) -> None:
        self._server_instances: dict[str, Transport] = {}
        self.opening_held: asyncio.Event | None = None
        self.held: asyncio.Event | None = None
        self.heads: asyncio.Queue[str] = asyncio.Queue()

    async def _discard_session(self, session_id: str, transport: Transport) -> None:
        self._server_instances.pop(session_id, None)
        transport.is_terminated = True

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        session_id = dict(scope["headers"]).get(b"mcp-session-id")
        if session_id is None:
            opened = uuid.uuid4().hex
            self._server_instances[opened] = Transport(self, opened)
            head = [(b"content-type", b"application/json"), (b"mcp-session-id", opened.encode())]
            await send({"type": "http.response.start", "status": 200, "headers": head})
            await self.heads.put(opened)
            if self.opening_held is not None:
                await self.opening_held.wait()
            await send({"type": "http.response.body", "body": b"{}"})
            return
        if session_id.decode() not in self._server_instances:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b"Session not found"})
            return
        if self.held is not None:
            await self.held.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


class Gate:
    """A :class:`SessionGate` over the stand-in, and requests to it from any address."""

    def __init__(self, **limits: Any) -> None:
        self.now = 0.0
        self.sdk = Sdk()
        self.said = b""
        self.gate = SessionGate(
            self.sdk,
            cast(StreamableHTTPSessionManager, self.sdk),
            SessionLimits(**limits),
            clock=lambda: self.now,
        )

    async def post(self, body: Any, source: str, session: str | None = None) -> tuple[int, dict[str, str]]:
        """The status and head of the answer to one POST from ``source`` (its body: :attr:`said`)."""
        headers = [(b"content-type", b"application/json")]
        if session is not None:
            headers += [(b"mcp-session-id", session.encode()), (b"mcp-protocol-version", b"2025-06-18")]
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": headers,
            "client": (source, 40000),
        }
        sent: list[Message] = [{"type": "http.request", "body": codec.dumps(body), "more_body": False}]
        answer: list[Message] = []

        async def receive() -> Message:
            return sent.pop() if sent else {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            answer.append(message)

        await self.gate(scope, receive, send)
        start = answer[0]
        head = {bytes(k).decode(): bytes(v).decode() for k, v in start.get("headers", [])}
        self.said = b"".join(bytes(m.get("body", b"")) for m in answer[1:])
        return int(start["status"]), head

    async def opened(self, source: str) -> str:
        status, head = await self.post(MCP_INITIALIZE, source)
        assert status == 200, (status, head)
        return head["mcp-session-id"]

    async def used(self, source: str) -> str:
        """A session whose client has asked something (a ``ping``)."""
        session = await self.opened(source)
        assert (await self.post(PING, source, session))[0] == 200
        return session

    def is_open(self, session: str) -> bool:
        return session in self.sdk._server_instances


@pytest.mark.parametrize(
    ("address", "peer"),
    [
        ("127.0.0.1", LOOPBACK),
        ("127.0.1.12", LOOPBACK),
        ("127.255.255.254", LOOPBACK),
        ("::1", LOOPBACK),
        ("::ffff:127.0.0.9", LOOPBACK),
        ("192.0.2.7", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("2001:db8:0:1::1", "2001:db8:0:1::/64"),
        ("2001:db8:0:1:ffff::9", "2001:db8:0:1::/64"),
        ("2001:db8:0:2::1", "2001:db8:0:2::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        (None, "?"),
        ("/run/mcp.sock", "/run/mcp.sock"),
    ],
)
def test_all_of_loopback_is_one_client_and_an_ipv6_client_is_its_64(address: str | None, peer: str) -> None:
    assert peer_of(address) == peer


async def test_eleven_loopback_addresses_opening_and_pinging_a_hundred_sessions_each_lock_out_briefly() -> (
    None
):
    # The red team's probe (pI2.py 11 100): before, 1,000 sessions were held for 30 minutes and every
    # newcomer was answered 503.
    gate = Gate(max_sessions=1000, max_sessions_per_peer=100, unused_seconds=30, in_use_seconds=30)
    flood = [(f"127.0.1.{2 + i // 100}", await gate.opened(f"127.0.1.{2 + i // 100}")) for i in range(1100)]
    assert gate.gate.open_sessions() == 100  # a newcomer closed the oldest session that asked nothing
    pinged = [(await gate.post(PING, source, session))[0] for source, session in flood]
    assert pinged.count(200) == 100 and pinged.count(404) == 1000
    status, head = await gate.post(MCP_INITIALIZE, "127.0.0.99")
    assert status == 503 and head["retry-after"] == "5"  # every session asked something just now
    gate.now = 31.0  # no longer in use: the least recently asked gives way
    newcomer = await gate.opened("127.0.0.99")
    assert gate.is_open(newcomer) and gate.gate.open_sessions() == 100


async def test_initialize_floods_from_loopback_never_close_a_session_in_use_and_newcomers_get_in() -> None:
    gate = Gate(max_sessions_per_peer=5, in_use_seconds=30)
    working = await gate.used("127.0.0.1")
    for _ in range(50):
        await gate.opened("127.0.0.1")
    newcomer = await gate.opened("127.0.0.2")  # the flood's sessions asked nothing: they give way
    assert gate.is_open(working) and gate.is_open(newcomer)
    assert (await gate.post(PING, "127.0.0.2", newcomer))[0] == 200


async def test_a_session_with_a_request_in_flight_is_never_closed_to_make_room() -> None:
    gate = Gate(max_sessions_per_peer=1, in_use_seconds=30)
    working = await gate.used("192.0.2.1")
    gate.sdk.held = asyncio.Event()
    call = asyncio.create_task(gate.post(PING, "192.0.2.1", working))  # a tool call that takes long
    await asyncio.sleep(0.01)
    gate.now = 100.0
    status, _ = await gate.post(MCP_INITIALIZE, "192.0.2.1")
    assert status == 503 and gate.is_open(working)
    gate.sdk.held.set()
    assert (await call)[0] == 200
    gate.now = 129.0  # its answer counts as asking: in use 30 s from then
    assert (await gate.post(MCP_INITIALIZE, "192.0.2.1"))[0] == 503
    gate.now = 131.0
    await gate.opened("192.0.2.1")
    assert not gate.is_open(working)


async def test_at_the_cap_in_all_the_client_holding_the_most_gives_way() -> None:
    gate = Gate(max_sessions=4, max_sessions_per_peer=3, in_use_seconds=30)
    many = [await gate.used("192.0.2.1") for _ in range(3)]
    one = await gate.used("192.0.2.2")
    status, head = await gate.post(MCP_INITIALIZE, "192.0.2.3")
    assert status == 503 and head["retry-after"] == "5"  # all four in use
    gate.now = 40.0
    assert (await gate.post(PING, "192.0.2.1", many[2]))[0] == 200  # the richest client's newest stays
    third = await gate.opened("192.0.2.3")
    assert not gate.is_open(many[0]) and gate.is_open(one) and gate.is_open(third)
    second = await gate.opened("192.0.2.2")  # 192.0.2.1 still holds more than 192.0.2.2 did
    assert not gate.is_open(many[1]) and gate.is_open(many[2]) and gate.is_open(one)
    assert gate.gate.open_sessions("192.0.2.2") == 2 and gate.is_open(second)


async def test_a_client_at_its_own_cap_closes_its_own_session_never_anothers() -> None:
    gate = Gate(max_sessions=10, max_sessions_per_peer=2, in_use_seconds=30)
    other = await gate.used("192.0.2.9")
    mine = [await gate.used("192.0.2.1") for _ in range(2)]
    assert (await gate.post(MCP_INITIALIZE, "192.0.2.1"))[0] == 503
    gate.now = 40.0
    await gate.opened("192.0.2.1")
    assert not gate.is_open(mine[0]) and gate.is_open(mine[1]) and gate.is_open(other)
    for session in list(gate.sdk._server_instances):
        await gate.post(PING, "192.0.2.1", session)  # each in use again
    assert (await gate.post(MCP_INITIALIZE, "192.0.2.1"))[0] == 503
    assert "(EC_MCP_MAX_SESSIONS_PER_PEER)" in codec.loads(gate.said)["error"]["message"]


async def test_a_request_sent_while_the_opening_answer_is_written_counts() -> None:
    # M2: the session was recorded only once the SDK's handler returned, after the client could already
    # use the id it had been sent; such a request was not counted and the session was closed as unused.
    gate = Gate(unused_seconds=30)
    gate.sdk.opening_held = asyncio.Event()
    opening = asyncio.create_task(gate.post(MCP_INITIALIZE, "127.0.0.1"))
    session = await asyncio.wait_for(gate.sdk.heads.get(), 5)
    await gate.post(INITIALIZED, "127.0.0.1", session)
    assert (await gate.post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, "127.0.0.1", session))[
        0
    ] == 200
    gate.sdk.opening_held.set()
    await opening
    gate.now = 40.0
    assert await gate.gate.close_unused() == 0
    assert (await gate.post(PING, "127.0.0.1", session))[0] == 200


async def test_a_session_that_asked_nothing_is_closed_after_its_time_unless_a_request_is_in_flight() -> None:
    gate = Gate(unused_seconds=30)
    idle = await gate.opened("127.0.0.1")
    streaming = await gate.opened("127.0.0.1")
    gate.sdk.held = asyncio.Event()
    notified = asyncio.create_task(gate.post(INITIALIZED, "127.0.0.1", streaming))  # served for long
    await asyncio.sleep(0.01)
    gate.now = 31.0
    assert await gate.gate.close_unused() == 1
    assert not gate.is_open(idle) and gate.is_open(streaming)
    gate.sdk.held.set()
    await notified
    assert await gate.gate.close_unused() == 1 and not gate.is_open(streaming)


def test_limits_are_read_from_the_settings() -> None:
    from streams.settings import Settings

    limits = SessionLimits.of(Settings(mcp_session_in_use_seconds=7, mcp_max_sessions_per_peer=3))
    assert limits.in_use_seconds == 7 and limits.max_sessions_per_peer == 3
