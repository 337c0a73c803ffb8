"""The HTTP gateway on the real broker, Redis and a real worker: ``evidence-chain gateway`` in a subprocess.

The module's gateway listens on 0.0.0.0 with a token, as it does in a container; what it answers is
checked against the golden cases and against docs/openapi.yaml. A second gateway, in-process on a
prefix no worker serves, shows the 504.
"""

from __future__ import annotations

import asyncio
import io
import os
import select
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from models.schemas import topic_schema
from models.vocab import Topic
from streams import codec
from streams.client import EvidenceChainClient
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.settings import Settings
from streams.web.gateway import create_gateway
from tests.contracts import validate
from tests.integration.helpers import CLI, Stack, golden_lines, load_golden_ledger, new_prefix
from tests.openapi_contract import OPENAPI, validate_answer

RAW = golden_lines("pipe", "input.jsonl")
EXPECTED = golden_lines("pipe", "expected_projection.jsonl")
DRAFTS = golden_lines("guard", "drafts.jsonl")
VERDICTS = golden_lines("guard", "expected_verdicts.jsonl")
UNSTAMPED = ("event_id", "origin", "source_timestamp")
TOKEN = f"gw-{uuid.uuid4().hex}"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def _comparable(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict without its stamps and free-text messages (the golden messages are the reference's)."""
    out = {k: v for k, v in verdict.items() if k not in UNSTAMPED}
    out["violations"] = [(v["code"], v["path"]) for v in out["violations"]]
    return out


@dataclass
class GatewayProcess:
    """``evidence-chain gateway`` in a subprocess: its URL (from the line it prints) and its log."""

    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def stop(self) -> int:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
            raise
        finally:
            if self.process.stdout is not None:
                self.process.stdout.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_gateway(env: dict[str, str], log_path: Path, *args: str, timeout_s: float = 30) -> GatewayProcess:
    """Start a gateway on a free port (``--port 0``) and read the address it prints."""
    log = log_path.open("ab")
    process = subprocess.Popen(  # noqa: S603 - our own console script
        [CLI, "gateway", "--port", "0", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        start_new_session=True,
    )
    log.close()
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        readable, _, _ = select.select([process.stdout], [], [], 0.5)
        if readable:
            line = process.stdout.readline().decode()
            if "listening on " not in line:
                process.kill()
                process.stdout.close()
                pytest.fail(f"the gateway printed {line!r}, exit {process.wait()}:\n{log_path.read_text()}")
            port = line.split("listening on http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]
            return GatewayProcess(process, f"http://127.0.0.1:{port}", log_path)
        if process.poll() is not None:
            break
    process.kill()
    process.stdout.close()
    pytest.fail(f"the gateway did not start (exit {process.wait()}):\n{log_path.read_text()}")


@pytest.fixture(scope="module")
def gateway(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    """``evidence-chain gateway`` over the module's worker, listening on 0.0.0.0 with a token."""
    process = start_gateway(
        {**stack.env, "EC_GATEWAY_TOKEN": TOKEN, "EC_GATEWAY_TIMEOUT_MS": "30000"},
        tmp_path_factory.mktemp("gateway") / "gateway.log",
        "--host",
        "0.0.0.0",  # noqa: S104 - with a token, as in a container
    )
    try:
        yield process
    finally:
        code = process.stop()
        log = process.log()
        assert TOKEN not in log, "the token was logged"
        assert code == 0 and "gateway: stopped" in log, log[-2000:]


@pytest.fixture
async def http(gateway: GatewayProcess) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(gateway.url) as session:
        deadline = time.monotonic() + 60
        while True:  # ready once the client has connected to Kafka and Redis answers
            async with session.get("/readyz") as response:
                if response.status == 200:
                    break
                if time.monotonic() > deadline:
                    pytest.fail(f"/readyz: {await response.text()}\n{gateway.log()[-2000:]}")
            await asyncio.sleep(0.2)
        yield session


async def post(http: aiohttp.ClientSession, path: str, body: bytes) -> tuple[int, bytes, Any]:
    async with http.post(path, data=io.BytesIO(body), headers=AUTH) as response:
        raw = await response.read()
        return response.status, raw, response.headers


def error_of(raw: bytes) -> dict[str, Any]:
    body = codec.loads(raw)
    validate_answer("Error", body)
    found: dict[str, Any] = body["error"]
    return found


async def test_golden_lookups_answer_the_exact_ledger_bytes(http: aiohttp.ClientSession) -> None:
    first: dict[tuple[str, str], bytes] = {}
    for raw, expected in zip(RAW, EXPECTED, strict=True):
        want = codec.loads(expected)
        status, body, _ = await post(http, "/v1/lookups", raw)
        if isinstance(want, dict) and "dead_letter" in want and want["dead_letter"]["run_id"] is None:
            assert status == 400, body
            assert error_of(body)["reason"] == want["dead_letter"]["reason"]
            continue
        assert status == 200, body
        answer = codec.loads(body)
        validate_answer("LookupAnswer", answer)
        key = (answer["run_id"], answer["tool_call_id"])
        if "dead_letter" in want:
            assert answer["status"] == "FAILED"
            assert answer["failure_reason"] == want["dead_letter"]["reason"]
            continue
        assert answer["status"] == "READY"
        projection = answer["projection"].encode("utf-8")
        # A key seen before keeps its first entry (write-once); otherwise the exact golden bytes.
        assert projection == first.setdefault(key, expected)
        assert answer["projection_sha256"] == sha256_hex(projection)
        # Non-ASCII is unescaped (as in the ledger), so the string carries the same characters.
        assert all(char.encode() in body for char in answer["projection"] if ord(char) > 127)


async def test_golden_drafts_get_the_reference_verdicts_as_on_the_topic(
    stack: Stack, http: aiohttp.ClientSession
) -> None:
    await load_golden_ledger(stack.settings.redis_url.get_secret_value(), stack.settings.ns)
    for draft, expected in zip(DRAFTS, VERDICTS, strict=True):
        status, body, headers = await post(http, "/v1/drafts", draft)
        assert status == 200, body
        assert headers["Content-Type"] == "application/json"
        validate(Topic.VERDICTS, body)  # the verdict's own bytes, as the topic's contract says
        verdict = codec.loads(body)
        assert _comparable(verdict) == _comparable(codec.loads(expected))
        assert verdict["draft_sha256"] == sha256_hex(draft)
        assert verdict["origin"]["topic"] == stack.settings.topic(Topic.DIAGNOSIS_DRAFTS)


async def test_retries_answer_the_same(http: aiohttp.ClientSession) -> None:
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-gw-retry", "tool_call_id": "call-gw-retry"})
    answers = [await post(http, "/v1/lookups", record) for _ in range(3)]
    assert {status for status, _, _ in answers} == {200}
    entries = [codec.loads(body) for _, body, _ in answers]
    assert [entry.pop("outcome") for entry in entries] == ["WRITTEN", "DUPLICATE", "DUPLICATE"]
    assert len({codec.dumps(entry) for entry in entries}) == 1  # the same entry, byte for byte
    draft = DRAFTS[0]
    verdicts = [await post(http, "/v1/drafts", draft) for _ in range(2)]
    assert [status for status, _, _ in verdicts] == [200, 200]
    first, again = (codec.loads(body) for _, body, _ in verdicts)
    assert _comparable(first) == _comparable(again)
    assert first["origin"]["offset"] != again["origin"]["offset"]  # judged twice, judged the same


async def test_the_ledger_route_answers_the_entry_as_stored_404_or_400(http: aiohttp.ClientSession) -> None:
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-gw-entry", "tool_call_id": "call-gw-entry"})
    status, body, _ = await post(http, "/v1/lookups", record)
    assert status == 200
    async with http.get("/v1/ledger/run-gw-entry/call-gw-entry", headers=AUTH) as response:
        assert response.status == 200
        stored = await response.read()
    validate(Topic.LEDGER, stored)
    entry = codec.loads(stored)
    assert entry["projection"] == codec.loads(body)["projection"]
    assert (entry["run_id"], entry["tool_call_id"], entry["status"]) == (
        "run-gw-entry",
        "call-gw-entry",
        "READY",
    )
    async with http.get("/v1/ledger/run-gw-entry/call-never", headers=AUTH) as response:
        assert response.status == 404
        assert error_of(await response.read())["reason"] == "NOT_FOUND"
    for path in (
        "/v1/ledger/run:1/call-gw-entry",
        f"/v1/ledger/{'r' * 129}/c",
        "/v1/ledger/run-gw-entry/c%20d",
    ):
        async with http.get(path, headers=AUTH) as response:
            assert response.status == 400, path
            assert error_of(await response.read())["reason"] == "INVALID_ID"


async def test_v1_without_the_token_or_with_another_is_401(http: aiohttp.ClientSession) -> None:
    for headers in (
        {"Content-Type": "application/json"},
        {**AUTH, "Authorization": "Bearer not-the-token-0123"},
    ):
        async with http.post("/v1/lookups", data=RAW[0], headers=headers) as response:
            assert response.status == 401
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            assert error_of(await response.read())["reason"] == "UNAUTHORIZED"
        async with http.get("/v1/ledger/run-golden-4/call_c", headers=headers) as response:
            assert response.status == 401


async def test_bodies_above_the_spec_sizes_are_413_and_large_drafts_get_a_verdict(
    stack: Stack, http: aiohttp.ClientSession
) -> None:
    base = codec.loads(RAW[0])
    huge = codec.dumps({**base, "run_id": "run-gw-huge", "pad": "x" * stack.settings.input.max_message_bytes})
    status, body, _ = await post(http, "/v1/lookups", huge)
    assert status == 413 and error_of(body)["reason"] == "OVERSIZED"
    async with http.get("/v1/ledger/run-gw-huge/call_x1", headers=AUTH) as response:
        assert response.status == 404  # nothing was produced
    large = codec.dumps({"run_id": "run-gw-large", "draft_id": "d-large", "pad": "y" * 300 * 1024})
    status, body, _ = await post(http, "/v1/drafts", large)
    assert status == 200, body
    verdict = codec.loads(body)
    assert [v["code"] for v in verdict["violations"]] == ["DRAFT_TOO_LARGE"]
    assert verdict["draft_sha256"] == sha256_hex(large)
    too_large = b'{"pad": "' + b"z" * stack.settings.topic_max_message_bytes + b'"}'
    status, body, _ = await post(http, "/v1/drafts", too_large)
    assert status == 413 and error_of(body)["reason"] == "OVERSIZED"


async def test_probes_metrics_and_the_document(stack: Stack, http: aiohttp.ClientSession) -> None:
    async with http.get("/livez") as response:
        assert (response.status, await response.json()) == (200, {"live": True})
    async with http.get("/readyz") as response:
        assert (response.status, await response.json()) == (200, {"ready": True, "problems": {}})
    async with http.get("/openapi.yaml") as response:
        assert await response.read() == OPENAPI.read_bytes()
    async with http.get("/schemas/ledger.schema.json") as response:
        assert codec.loads(await response.read()) == topic_schema(Topic.LEDGER)
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-gw-metrics", "tool_call_id": "call-1"})
    await post(http, "/v1/lookups", record)
    await post(http, "/v1/lookups", record)
    async with http.get("/metrics") as response:
        text = await response.text()
    lines = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line[:1] != "#"
    }
    assert lines['evidence_chain_gateway_lookups_total{answered_from="ledger"}'] >= 1
    assert lines['evidence_chain_gateway_lookups_total{answered_from="pipeline"}'] >= 1
    assert lines['evidence_chain_gateway_requests_total{route="/v1/lookups",status="200"}'] >= 2
    assert 'evidence_chain_gateway_request_seconds_bucket{le="0.1",route="/v1/lookups"}' in lines
    assert 'evidence_chain_gateway_timeouts_total{kind="lookup"}' in lines


async def test_no_entry_in_time_is_504_and_says_a_retry_is_safe(kafka_bootstrap: str, redis_url: str) -> None:
    prefix = new_prefix()  # no worker serves these topics
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap,
        redis_url=redis_url,
        topic_prefix=prefix,
        ns=prefix.rstrip("-."),
        topic_partitions=3,
        gateway_timeout_ms=500,
        gateway_token=SecretStr(TOKEN),
    )
    await ensure_topics(settings)
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-gw-504", "tool_call_id": "call-504"})
    async with EvidenceChainClient(settings) as chain:
        client = TestClient(TestServer(create_gateway(settings, chain)))
        await client.start_server()
        try:
            started = time.monotonic()
            response = await client.post("/v1/lookups", data=record, headers=AUTH)
            assert response.status == 504
            found = error_of(await response.read())
            assert found["reason"] == "TIMEOUT" and found["retriable"] is True
            assert "safe" in found["message"]
            response = await client.post("/v1/drafts", data=DRAFTS[0], headers=AUTH)
            assert response.status == 504
            assert time.monotonic() - started < 10
            assert all(reader.waiting == 0 for reader in chain.readers)  # nothing left behind
            metrics = await (await client.get("/metrics")).text()
            assert 'evidence_chain_gateway_timeouts_total{kind="lookup"} 1.0' in metrics
            assert 'evidence_chain_gateway_timeouts_total{kind="check"} 1.0' in metrics
        finally:
            await client.close()


def test_it_refuses_every_address_without_a_token(kafka_bootstrap: str, redis_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "EC_GATEWAY_TOKEN"}
    env.update(EC_KAFKA_BOOTSTRAP=kafka_bootstrap, EC_REDIS_URL=redis_url)
    for args, extra in ((["--host", "0.0.0.0"], {}), ([], {"EC_GATEWAY_HOST": "0.0.0.0"})):  # noqa: S104
        done = subprocess.run(  # noqa: S603 - our own console script
            [CLI, "gateway", *args], env={**env, **extra}, capture_output=True, timeout=60, check=False
        )
        assert done.returncode == 2
        assert done.stdout == b""
        lines = done.stderr.decode().splitlines()
        assert len(lines) == 1, lines
        assert lines[0].startswith("evidence-chain gateway: ") and "EC_GATEWAY_TOKEN" in lines[0]
        assert "Traceback" not in lines[0]


async def test_redis_down_is_503_with_retry_after_and_not_ready(kafka_bootstrap: str, redis_url: str) -> None:
    prefix = new_prefix()
    settings = Settings(
        kafka_bootstrap=kafka_bootstrap,
        redis_url="redis://127.0.0.1:1/0",  # nothing listens there
        redis_timeout_ms=500,
        topic_prefix=prefix,
        ns=prefix.rstrip("-."),
        topic_partitions=3,
        gateway_timeout_ms=5000,
    )
    await ensure_topics(settings)
    record = codec.dumps({**codec.loads(RAW[0]), "run_id": "run-gw-503", "tool_call_id": "call-503"})
    async with EvidenceChainClient(settings) as chain:
        client = TestClient(TestServer(create_gateway(settings, chain)))  # no token: loopback, open
        await client.start_server()
        try:
            response = await client.get("/readyz")
            body = await response.json()
            assert response.status == 503 and body["ready"] is False and set(body["problems"]) == {"redis"}
            response = await client.post(
                "/v1/lookups", data=record, headers={"Content-Type": "application/json"}
            )
            assert response.status == 503
            assert int(response.headers["Retry-After"]) >= 1
            found = error_of(await response.read())
            assert found["reason"] == "UNAVAILABLE" and found["retriable"] is True
            assert (await client.get("/livez")).status == 200
        finally:
            await client.close()
