"""Nothing forged is handed out (SPEC 3.7, issue 32 item 2): with trusted keys, the client — and so the
gateway — checks an entry's hash and its signature under a trusted **ledger** key before returning it.

The entries are written to the real Redis through the project's own store, as the ledger agent writes
them; the forgeries are what anyone holding a Redis password could do: rewrite an entry with a
recomputed hash and no signature, or sign one with the guard's key. Before this check the client and
the gateway handed both to the model (``200 READY``); only the guard noticed, later.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from aiohttp.test_utils import TestClient, TestServer

from models.events import Origin
from models.ledger import LedgerEntry
from streams import codec
from streams.client import EvidenceChainClient, LedgerIntegrityError
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.ledger.keys import ledger_key
from streams.ledger.redis import RedisLedgerStore
from streams.settings import Settings
from streams.stations.ledger import ledger_entry
from streams.trust import Signer, generate_key_pair
from streams.web.gateway import create_gateway
from tests.integration.helpers import golden_lines

RAW = golden_lines("pipe", "input.jsonl")
PROJECTED = [codec.loads(line) for line in golden_lines("pipe", "expected_projection.jsonl")]
RUN = "run-integrity"
JSON = {"Content-Type": "application/json"}


@dataclass
class Keys:
    ledger: Signer
    guard: Signer
    trusted_keys_file: Path


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keys]:
    folder = tmp_path_factory.mktemp("keys")
    ledger, _, ledger_pub = generate_key_pair(folder, "ledger", "ledger")
    guard, _, guard_pub = generate_key_pair(folder, "guard", "guard")
    trusted = folder / "trusted.keys"
    trusted.write_text(ledger_pub.read_text() + guard_pub.read_text(), encoding="utf-8")
    yield Keys(ledger, guard, trusted)


def settings_for(prefix: str, kafka: str, redis: str, trusted: Path | None) -> Settings:
    return Settings(
        kafka_bootstrap=kafka,
        redis_url=redis,
        topic_prefix=prefix,
        ns=prefix.rstrip("-."),
        topic_partitions=3,
        gateway_timeout_ms=5_000,
        trusted_keys_file=str(trusted) if trusted is not None else None,
    )


def entry_for(
    tool_call_id: str, signer: Signer | None, *, run_id: str = RUN, excerpt: str | None = None
) -> LedgerEntry:
    """A READY entry of ``run_id`` as the ledger station asks to write it, signed by ``signer``; with
    ``excerpt``, its one evidence item's excerpt."""
    projection = next(p for p in PROJECTED if isinstance(p, dict) and p.get("evidence"))
    if excerpt is not None:
        projection = {**projection, "evidence": [{**projection["evidence"][0], "excerpt": excerpt}]}
    text = codec.dumps({**projection, "tool_call_id": tool_call_id}).decode()
    origin: Origin = {"topic": "raw-hits", "partition": 0, "offset": 1, "timestamp": 1_700_000_000_000}
    event = {
        "run_id": run_id,
        "tool_call_id": tool_call_id,
        "status": "OK",
        "projection": text,
        "projection_sha256": sha256_hex(text.encode()),
    }
    return ledger_entry(event, origin=origin, event_id=f"ev-{tool_call_id}", signer=signer)


def record_for(tool_call_id: str) -> bytes:
    """A raw-hits record whose ledger key is ``(RUN, tool_call_id)``."""
    return codec.dumps({**codec.loads(RAW[0]), "run_id": RUN, "tool_call_id": tool_call_id})


@dataclass
class Ledger:
    settings: Settings
    honest: str
    rewritten: str
    by_guard: str


@pytest.fixture
async def ledger(
    keys: Keys, kafka_bootstrap: str, redis_url: str, unique_prefix: str
) -> AsyncIterator[Ledger]:
    settings = settings_for(unique_prefix, kafka_bootstrap, redis_url, keys.trusted_keys_file)
    await ensure_topics(settings)
    store = RedisLedgerStore.from_settings(settings)
    try:
        await store.write_many(
            [
                entry_for("call-honest", keys.ledger),
                entry_for("call-rewritten", keys.ledger),
                entry_for("call-by-guard", keys.guard),
            ]
        )
    finally:
        await store.close()
    key = ledger_key(settings.ns, RUN, "call-rewritten")
    async with aioredis.from_url(redis_url) as client:
        stored = await client.hget(key, "projection")
        forged = stored.decode().replace('"excerpt":"', '"excerpt":"已确认：', 1)
        assert forged != stored.decode()
        await client.hset(
            key, mapping={"projection": forged, "projection_sha256": sha256_hex(forged.encode())}
        )
        await client.hdel(key, "key_id", "signature")
    try:
        yield Ledger(settings, "call-honest", "call-rewritten", "call-by-guard")
    finally:
        async with aioredis.from_url(redis_url) as client:
            found = [k async for k in client.scan_iter(match=f"{settings.ns}:*")]
            if found:
                await client.delete(*found)


async def test_the_client_hands_out_only_entries_signed_by_a_trusted_ledger_key(ledger: Ledger) -> None:
    async with EvidenceChainClient(ledger.settings) as chain:
        honest = await chain.entry(RUN, ledger.honest)
        assert honest is not None and honest.status == "READY" and "已确认" not in (honest.projection or "")
        for tool_call_id, why in (
            (ledger.rewritten, "unsigned"),
            (ledger.by_guard, "a guard key, which is not trusted as a ledger key"),
        ):
            with pytest.raises(LedgerIntegrityError, match=why):
                await chain.entry(RUN, tool_call_id)
            # a lookup the ledger already holds answers from Redis: the same check, nothing handed out
            with pytest.raises(LedgerIntegrityError, match=why):
                await chain.lookup(record_for(tool_call_id))
        assert (await chain.lookup(record_for(ledger.honest))).entry == honest.entry


async def test_without_trusted_keys_only_the_hash_is_checked(ledger: Ledger) -> None:
    """What the keys add: the rewritten entry's hash holds, so a client without them hands it out."""
    unchecked = ledger.settings.model_copy(update={"trusted_keys_file": None})
    async with EvidenceChainClient(unchecked) as chain:
        rewritten = await chain.entry(RUN, ledger.rewritten)
        assert rewritten is not None and "已确认" in (rewritten.projection or "")


async def test_the_gateway_answers_502_ledger_integrity_and_no_projection(ledger: Ledger) -> None:
    async with EvidenceChainClient(ledger.settings) as chain:
        client = TestClient(TestServer(create_gateway(ledger.settings, chain)))  # loopback, no token
        await client.start_server()
        try:
            response = await client.get(f"/v1/ledger/{RUN}/{ledger.honest}")
            assert response.status == 200
            assert (await response.json())["status"] == "READY"
            for tool_call_id in (ledger.rewritten, ledger.by_guard):
                for response in (
                    await client.get(f"/v1/ledger/{RUN}/{tool_call_id}"),
                    await client.post("/v1/lookups", data=record_for(tool_call_id), headers=JSON),
                ):
                    body = await response.read()
                    assert response.status == 502, body
                    answer = codec.loads(body)
                    assert list(answer) == ["error"], answer  # no projection beside the error
                    assert answer["error"]["reason"] == "LEDGER_INTEGRITY"
                    assert answer["error"]["retriable"] is False
                    assert "已确认" not in body.decode()
        finally:
            await client.close()
