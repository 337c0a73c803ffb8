"""The gateway's HTTP edge with a fake client of the same interface: access, limits, the error shape.

What the real chain answers is in tests/integration/test_gateway.py; here every outcome the client
can have (each error of the tree included) is made to order, so each status is pinned down.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr
from yarl import URL

from streams import codec
from streams.client import EvidenceChainClient, LedgerReply, VerdictReply
from streams.errors import (
    CheckTimeout,
    ConfigurationError,
    InvalidId,
    KafkaRefused,
    KafkaUnavailable,
    LedgerIntegrityError,
    LookupTimeout,
    MalformedJson,
    RedisUnavailable,
)
from streams.hashing import sha256_hex
from streams.settings import Settings
from streams.web.gateway import ErrorReason, bearer_token, create_gateway, is_loopback, openapi_document

TOKEN = "0123456789abcdef-test-token"
PROJECTION = '{"evidence_status":"NO_EVIDENCE","tool_call_id":"c1","query":"不存在","evidence":[]}'


def entry(status: str = "READY") -> dict[str, Any]:
    ready = status == "READY"
    return {
        "event_id": "e1",
        "run_id": "r1",
        "tool_call_id": "c1",
        "status": status,
        "evidence_status": "NO_EVIDENCE" if ready else None,
        "projection": PROJECTION if ready else None,
        "projection_sha256": sha256_hex(PROJECTION.encode()) if ready else None,
        "origin": {"topic": "raw-hits", "partition": 0, "offset": 1, "timestamp": 1},
        "source_timestamp": 1,
        "failure_reason": None if ready else "SCHEMA_VIOLATION",
        "written_at": 2,
        "expires_at": 3,
    }


class FakeChain(EvidenceChainClient):
    """The client's interface, answering what the test sets (or raising it); nothing is connected."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.answer: Any = LedgerReply(entry(), from_ledger=False)  # type: ignore[arg-type]
        self.bodies: list[bytes] = []
        self.ping_error: Exception | None = None
        self.asked: list[tuple[str, str]] = []

    def _give(self) -> Any:
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer

    async def lookup(self, record: Any, *, timeout_ms: int | None = None) -> LedgerReply:
        self.bodies.append(bytes(record))
        reply: LedgerReply = self._give()
        return reply

    async def check(self, draft: Any, *, timeout_ms: int | None = None) -> VerdictReply:
        self.bodies.append(bytes(draft))
        reply: VerdictReply = self._give()
        return reply

    async def entry(self, run_id: str, tool_call_id: str) -> LedgerReply | None:
        self.asked.append((run_id, tool_call_id))
        if run_id == "bad:id":
            raise InvalidId("bad run_id: must be 1-128 characters of [A-Za-z0-9._-]")
        reply: LedgerReply | None = self._give()
        return reply

    async def ping(self) -> None:
        if self.ping_error is not None:
            raise self.ping_error


Make = Callable[..., Any]


@pytest.fixture
async def make() -> AsyncIterator[Make]:
    clients: list[TestClient[web.Request, web.Application]] = []

    async def start(token: str | None = TOKEN, **overrides: Any) -> tuple[TestClient[Any, Any], FakeChain]:
        settings = Settings(gateway_token=SecretStr(token) if token is not None else None, **overrides)
        chain = FakeChain(settings)
        client: TestClient[Any, Any] = TestClient(TestServer(create_gateway(settings, chain)))
        await client.start_server()
        clients.append(client)
        return client, chain

    yield start
    for client in clients:
        await client.close()


AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


async def error_of(response: Any, status: int, reason: str) -> dict[str, Any]:
    assert response.status == status, await response.text()
    assert response.content_type == "application/json"
    body = await response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"reason", "message", "retriable"}
    assert body["error"]["reason"] == reason
    assert TOKEN not in await response.text()
    found: dict[str, Any] = body["error"]
    return found


# --- access -------------------------------------------------------------------------------------


async def test_v1_needs_the_bearer_token(make: Make) -> None:
    client, chain = await make()
    for headers in (
        {},
        {"Authorization": "Bearer wrong-token-0123456789"},
        {"Authorization": f"Basic {TOKEN}"},
    ):
        response = await client.post(
            "/v1/lookups", data=b"{}", headers={**headers, "Content-Type": "application/json"}
        )
        await error_of(response, 401, ErrorReason.UNAUTHORIZED)
        challenge = response.headers["WWW-Authenticate"]
        assert challenge.startswith("Bearer ")
        assert ('error="invalid_token"' in challenge) == bool(headers)
    assert chain.bodies == []  # nothing reached the client
    response = await client.get("/v1/ledger/r1/c1")
    await error_of(response, 401, ErrorReason.UNAUTHORIZED)
    response = await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    assert response.status == 200
    response = await client.post(
        "/v1/lookups", data=b"{}", headers={**AUTH, "Authorization": f"bearer  {TOKEN}"}
    )
    assert response.status == 200  # the scheme is case-insensitive (RFC 7235)


async def test_probes_metrics_and_the_document_need_no_token(make: Make) -> None:
    client, _ = await make()
    for path in ("/livez", "/readyz", "/metrics", "/openapi.yaml", "/schemas/ledger.schema.json"):
        response = await client.get(path)
        assert response.status == 200, path
    response = await client.get("/openapi.yaml")
    assert await response.read() == openapi_document()
    assert response.content_type == "application/yaml"


async def test_without_a_token_v1_answers_loopback_host_names_only(make: Make) -> None:
    client, _ = await make(token=None)
    response = await client.post("/v1/lookups", data=b"{}", headers={"Content-Type": "application/json"})
    assert response.status == 200
    for host in ("localhost:8080", "[::1]:8080", "127.0.0.1"):
        response = await client.get("/v1/ledger/r1/c1", headers={"Host": host})
        assert response.status == 200, host
    response = await client.get("/v1/ledger/r1/c1", headers={"Host": "attacker.example:8080"})
    await error_of(response, 403, ErrorReason.HOST_NOT_LOOPBACK)


def test_the_token_is_refused_when_it_cannot_work_and_required_off_loopback() -> None:
    assert bearer_token(Settings()) is None
    assert bearer_token(Settings(gateway_token=SecretStr(""))) is None  # EC_GATEWAY_TOKEN= is unset
    assert bearer_token(Settings(gateway_token=SecretStr(TOKEN)), "0.0.0.0") == TOKEN.encode()
    exposed = ("0.0.0.0", "::", "", "10.1.2.3", "gateway.internal", "::ffff:127.0.0.1", "[::ffff:127.0.0.1]")
    for host in exposed:
        with pytest.raises(ConfigurationError, match="EC_GATEWAY_TOKEN") as refused:
            bearer_token(Settings(), host)
        assert "\n" not in str(refused.value)
    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert bearer_token(Settings(), host) is None
        assert is_loopback(host)
    assert bearer_token(Settings(gateway_token=SecretStr("short"))) == b"short"  # works, warned about
    for bad in ("has a space in it, sixteen+", "naïve-but-long-enough-token"):
        with pytest.raises(ConfigurationError, match="EC_GATEWAY_TOKEN") as refused:
            bearer_token(Settings(gateway_token=SecretStr(bad)))
        assert bad not in str(refused.value)


# --- bodies -------------------------------------------------------------------------------------


async def test_without_a_token_a_browser_form_post_is_refused(make: Make) -> None:
    client, chain = await make(token=None)
    for label in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        response = await client.post("/v1/drafts", data=b"{}", headers={"Content-Type": label})
        await error_of(response, 415, ErrorReason.UNSUPPORTED_MEDIA_TYPE)
    assert chain.bodies == []


async def test_unlabelled_or_any_body_with_a_token_is_read(make: Make) -> None:
    client, chain = await make()
    chain.answer = VerdictReply(b'{"verdict":"PASS"}', {"verdict": "PASS"})
    for headers in ({}, {"Content-Type": "text/plain"}, {"Content-Type": "application/octet-stream"}):
        bearer = {"Authorization": AUTH["Authorization"]}
        response = await client.post("/v1/drafts", data=b"{}", headers={**bearer, **headers})
        assert response.status == 200, await response.text()
    assert len(chain.bodies) == 3


async def test_bodies_above_the_route_limit_are_413_and_never_reach_the_client(make: Make) -> None:
    client, chain = await make(topic_max_message_bytes=64 * 1024, input={"max_message_bytes": 4096})
    response = await client.post("/v1/lookups", data=b"x" * 4097, headers=AUTH)
    await error_of(response, 413, "OVERSIZED")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted while read
        for _ in range(10):
            yield b"y" * 1000

    response = await client.post("/v1/lookups", data=chunks(), headers=AUTH)
    await error_of(response, 413, "OVERSIZED")
    response = await client.post("/v1/drafts", data=b"z" * (63 * 1024 + 1), headers=AUTH)
    await error_of(response, 413, "OVERSIZED")
    assert chain.bodies == []
    response = await client.post("/v1/lookups", data=b"x" * 4096, headers=AUTH)
    assert response.status == 200
    response = await client.post("/v1/drafts", data=b"z" * (63 * 1024), headers=AUTH)
    chain.answer = VerdictReply(b'{"verdict":"REJECT"}', {"verdict": "REJECT"})
    response = await client.post("/v1/drafts", data=b"z" * (63 * 1024), headers=AUTH)
    assert response.status == 200
    assert [len(b) for b in chain.bodies] == [4096, 63 * 1024, 63 * 1024]


# --- answers ------------------------------------------------------------------------------------


async def test_a_lookup_answers_the_entry_with_the_projection_as_one_string(make: Make) -> None:
    client, chain = await make()
    response = await client.post("/v1/lookups", data=b'{"run_id":"r1"}', headers=AUTH)
    raw = await response.read()
    answer = codec.loads(raw)
    assert answer == {
        "run_id": "r1",
        "tool_call_id": "c1",
        "status": "READY",
        "projection_sha256": sha256_hex(PROJECTION.encode()),
        "projection": PROJECTION,
    }
    assert "不存在".encode() in raw  # non-ASCII unescaped: the string is the ledger's text
    assert response.headers["Cache-Control"] == "no-store"
    chain.answer = LedgerReply(entry("FAILED"), from_ledger=True)  # type: ignore[arg-type]
    response = await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    assert await response.json() == {
        "run_id": "r1",
        "tool_call_id": "c1",
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
    }
    metrics = (await (await client.get("/metrics")).read()).decode()
    assert 'evidence_chain_gateway_lookups_total{answered_from="pipeline"} 1.0' in metrics
    assert 'evidence_chain_gateway_lookups_total{answered_from="ledger"} 1.0' in metrics
    assert 'evidence_chain_gateway_requests_total{route="/v1/lookups",status="200"} 2.0' in metrics


async def test_a_check_answers_the_verdict_bytes_as_they_are(make: Make) -> None:
    client, chain = await make()
    raw = b'{"event_id":"v1",  "verdict":"PASS"}'  # not how codec.dumps would write it
    chain.answer = VerdictReply(raw, codec.loads(raw))
    response = await client.post("/v1/drafts", data=b"not json at all", headers=AUTH)
    assert response.status == 200
    assert await response.read() == raw
    assert response.content_type == "application/json"
    assert chain.bodies == [b"not json at all"]


async def test_the_ledger_route_answers_the_entry_404_or_400(make: Make) -> None:
    client, chain = await make()
    chain.answer = LedgerReply(entry(), from_ledger=True)  # type: ignore[arg-type]
    response = await client.get("/v1/ledger/r1/c1", headers=AUTH)
    assert await response.json() == entry()
    chain.answer = None
    response = await client.get("/v1/ledger/r1/c2", headers=AUTH)
    await error_of(response, 404, ErrorReason.NOT_FOUND)
    response = await client.get("/v1/ledger/bad:id/c1", headers=AUTH)
    await error_of(response, 400, "INVALID_ID")
    # The valid ids "." and "..", percent-encoded so that no client removes them as dot segments.
    response = await client.get(URL("/v1/ledger/%2E/%2E%2E", encoded=True), headers=AUTH)
    await error_of(response, 404, ErrorReason.NOT_FOUND)
    assert chain.asked[-1] == (".", "..")


@pytest.mark.parametrize(
    ("error", "status", "reason", "retriable"),
    [
        (MalformedJson("unexpected end of data"), 400, "MALFORMED_JSON", False),
        (InvalidId("bad run_id"), 400, "INVALID_ID", False),
        (
            LookupTimeout("no ledger entry within 10 ms; retrying the same record is safe"),
            504,
            "TIMEOUT",
            True,
        ),
        (KafkaUnavailable("producing to raw-hits[0]: KafkaConnectionError"), 503, "UNAVAILABLE", True),
        (RedisUnavailable("reading the ledger: ConnectionError"), 503, "UNAVAILABLE", True),
        (LedgerIntegrityError("does not hash to its projection_sha256"), 502, "LEDGER_INTEGRITY", False),
        (KafkaRefused("TopicAuthorizationFailedError"), 502, "REFUSED", False),
        (RuntimeError("a bug"), 500, "INTERNAL_ERROR", False),
    ],
)
async def test_each_error_of_the_tree_has_its_status(
    make: Make, error: Exception, status: int, reason: str, retriable: bool
) -> None:
    client, chain = await make()
    chain.answer = error
    response = await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    found = await error_of(response, status, reason)
    assert found["retriable"] is retriable
    if status == 503:
        assert int(response.headers["Retry-After"]) >= 1
    if status == 504:
        assert "safe" in found["message"]
    if status == 500:
        assert "a bug" not in found["message"]  # the log has it, not the answer


async def test_timeouts_are_counted_by_kind(make: Make) -> None:
    client, chain = await make()
    chain.answer = CheckTimeout("no verdict")
    await client.post("/v1/drafts", data=b"{}", headers=AUTH)
    chain.answer = LookupTimeout("no entry")
    await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    metrics = (await (await client.get("/metrics")).read()).decode()
    assert 'evidence_chain_gateway_timeouts_total{kind="check"} 1.0' in metrics
    assert 'evidence_chain_gateway_timeouts_total{kind="lookup"} 2.0' in metrics
    assert 'evidence_chain_gateway_requests_total{route="/v1/lookups",status="504"} 2.0' in metrics


async def test_refusals_are_counted_by_door_and_reason_from_zero(make: Make) -> None:
    """``evidence_chain_door_refusals_total``: what the LEDGER_INTEGRITY alert reads (deploy/prometheus)."""
    client, chain = await make()
    metrics = (await (await client.get("/metrics")).read()).decode()
    integrity = 'evidence_chain_door_refusals_total{door="gateway",reason="LEDGER_INTEGRITY"}'
    assert f"{integrity} 0.0" in metrics  # shown before the first, so the first is an increase
    chain.answer = LedgerIntegrityError("does not hash to its projection_sha256")
    await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    await client.post("/v1/lookups", data=b"{}", headers=AUTH)
    await client.post("/v1/lookups", data=b"{}")  # no token: 401
    await client.get("/livez")  # answered: not a refusal
    metrics = (await (await client.get("/metrics")).read()).decode()
    assert f"{integrity} 2.0" in metrics
    assert 'evidence_chain_door_refusals_total{door="gateway",reason="UNAUTHORIZED"} 1.0' in metrics
    assert 'evidence_chain_door_refusals_total{door="gateway",reason="INTERNAL_ERROR"} 0.0' in metrics


async def test_unknown_routes_and_methods_have_the_error_shape(make: Make) -> None:
    client, _ = await make()
    await error_of(await client.get("/nope"), 404, ErrorReason.NOT_FOUND)
    response = await client.get("/v1/lookups", headers=AUTH)
    await error_of(response, 405, ErrorReason.METHOD_NOT_ALLOWED)
    assert "POST" in response.headers["Allow"]
    await error_of(await client.get("/schemas/nope.json"), 404, ErrorReason.NOT_FOUND)
    metrics = (await (await client.get("/metrics")).read()).decode()
    assert 'evidence_chain_gateway_requests_total{route="unmatched",status="404"} 1.0' in metrics


async def test_readyz_says_which_service_does_not_answer(make: Make) -> None:
    client, chain = await make()
    response = await client.get("/readyz")
    assert (response.status, await response.json()) == (200, {"ready": True, "problems": {}})
    client, chain = await make()
    chain.ping_error = RedisUnavailable("PING: ConnectionError")
    response = await client.get("/readyz")
    body = await response.json()
    assert response.status == 503 and not body["ready"] and "redis" in body["problems"]
    client, chain = await make()
    chain.ping_error = KafkaUnavailable("topic raw-hits has no partitions yet")
    body = await (await client.get("/readyz")).json()
    assert set(body["problems"]) == {"kafka"}
    assert (await client.get("/livez")).status == 200
