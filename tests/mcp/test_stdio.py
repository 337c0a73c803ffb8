"""``evidence-chain mcp`` over stdio answers a line that is no JSON-RPC message with a JSON-RPC error
(issue 38 L4: garbage got no reply, so the host waited for its own timeout), and goes on serving.

The transport is the SDK's, over text files in place of stdin and stdout (:func:`run_stdio` takes them);
the client is never started: nothing here reaches Kafka or Redis.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import pytest

from streams import codec
from streams.client import EvidenceChainClient
from streams.mcp.run import McpRuns
from streams.mcp.server import build_server
from streams.mcp.stdio import run_stdio

INITIALIZE = codec.dumps(
    {
        "jsonrpc": "2.0",
        "id": 70,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
).decode()


class Host:
    """A host's side of the pipes: sends its lines, then holds stdin open until ``expected`` answers
    are out (a host that closes stdin at once may end the session before the last answer)."""

    def __init__(self, lines: tuple[str, ...], expected: int) -> None:
        self.lines = lines
        self.expected = expected
        self.out = io.StringIO()

    def answers(self) -> list[dict[str, Any]]:
        return [codec.loads(line) for line in self.out.getvalue().splitlines()]

    async def __aiter__(self) -> AsyncIterator[str]:
        for line in self.lines:
            yield f"{line}\n"
        # the answers are written from a worker thread (anyio.wrap_file), which cannot set an event
        while len(self.answers()) < self.expected:  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def answers(*lines: str, expected: int | None = None) -> list[dict[str, Any]]:
    """What the server writes for ``lines``, one JSON object per line: one answer per line, or
    ``expected`` answers in all."""
    host = Host(lines, len(lines) if expected is None else expected)
    server = build_server(cast(EvidenceChainClient, None), McpRuns("run-1"))
    with anyio.fail_after(30):
        await run_stdio(server, cast(anyio.AsyncFile[str], host), anyio.wrap_file(host.out))
    return host.answers()


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        ("garbage", -32700, None),
        ("{", -32700, None),
        ('{"jsonrpc": "2.0", "id": 5}', -32600, 5),  # no method: the id is read back
        ('{"jsonrpc": "2.0", "id": "x-1", "method": 5}', -32600, "x-1"),
        ('{"jsonrpc": "2.0", "id": null}', -32600, None),
        ('{"jsonrpc": "2.0", "id": 1.5, "result": {}}', -32600, None),  # no id JSON-RPC allows
        ('{"id": 9, "method": "tools/list"}', -32600, 9),  # no "jsonrpc": "2.0"
        ("[1, 2]", -32600, None),
        ('"just a string"', -32600, None),
        ("x" * 100_000, -32700, None),
    ],
)
async def test_a_line_that_is_no_jsonrpc_message_gets_an_error_and_the_session_goes_on(
    line: str, code: int, request_id: object
) -> None:
    refused, initialized = await answers(line, INITIALIZE)
    assert refused["jsonrpc"] == "2.0" and "id" in refused and refused["id"] == request_id
    assert refused["error"]["code"] == code and "result" not in refused
    assert len(codec.dumps(refused)) < 1000  # the line is never echoed back
    assert initialized["id"] == 70 and initialized["result"]["serverInfo"]["name"] == "evidence-chain"


async def test_a_valid_request_for_no_method_is_answered_by_the_server_as_before() -> None:
    unknown = codec.dumps({"jsonrpc": "2.0", "id": 3, "method": "no/such"}).decode()
    initialized, refused = await answers(INITIALIZE, unknown)
    assert initialized["id"] == 70
    assert refused["id"] == 3 and refused["error"]["code"] == -32601


@pytest.mark.parametrize(
    "request_id", ["NaN", "Infinity", "-Infinity", "1.5", "1.0", "true", "null", "{}", "[]"]
)
async def test_a_request_whose_id_mcp_does_not_allow_gets_invalid_request_with_a_null_id(
    request_id: str,
) -> None:
    # The SDK reads such a line as a notification, which nobody answers: the host waited for its own
    # timeout (the red team's re-review of issue 38, L4).
    line = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "ping"}}'
    refused, initialized = await answers(line, INITIALIZE)
    assert refused == {"jsonrpc": "2.0", "id": None, "error": refused["error"]}
    assert refused["error"]["code"] == -32600 and "string or an integer" in refused["error"]["message"]
    assert initialized["id"] == 70


async def test_a_notification_is_still_not_answered() -> None:
    initialized_note = codec.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).decode()
    ping = codec.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}).decode()
    initialized, pong = await answers(INITIALIZE, initialized_note, ping, expected=2)
    assert initialized["id"] == 70 and pong == {"jsonrpc": "2.0", "id": 4, "result": {}}
