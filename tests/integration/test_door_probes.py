"""Issue 38's door probes on the real broker and Redis, with trusted keys: nothing that does not hold is
handed out by the client, the gateway (``/v1/ledger``, ``/v1/lookups``, ``/v1/search``, ``/v1/drafts``)
or the MCP tools (``get_evidence``, ``lookup_knowledge``, ``check_diagnosis``). (``serve`` and
``inspect``: ``tests/cli/test_serve_signed.py``.)

- **H1, a transplanted entry**: run A's genuine signed entry copied under run B's Redis key. It verifies;
  it is not B's evidence (SPEC 3.7), so every door answers LEDGER_INTEGRITY.
- **M1, topic-forged**: while a lookup for run B waits on the ``ledger`` topic, run A's genuine entry for
  the same tool call id is produced under B's record key.
- **M2, an unsigned verdict**: while a check waits on ``verdicts``, an unsigned PASS with the draft's
  hash is produced (and one signed by the ledger key).
- **M3, reports**: an unsigned forged report, a genuine one re-sent under a new ``event_id`` and another
  run's report under this run's key: ``client.reports`` hands out the genuine one, once.

The forgeries are what anyone who may write Redis or a reply topic could do; no worker runs, so what the
test produces is the only reply. Each probe has its control: the genuine thing through the same door is
handed out.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
import redis.asyncio as aioredis
from aiohttp.test_utils import TestClient, TestServer
from mcp.server.mcpserver.exceptions import ToolError

from models.ledger import LedgerEntry, as_stored
from models.vocab import Topic
from streams import codec
from streams.client import EvidenceChainClient, LedgerIntegrityError
from streams.errors import ReportIntegrityError, VerdictIntegrityError
from streams.hashing import sha256_hex
from streams.kafka.admin import ensure_topics
from streams.ledger.keys import ledger_key
from streams.ledger.redis import RedisLedgerStore
from streams.mcp.run import McpRun, McpRuns
from streams.mcp.server import EvidenceTools
from streams.search import DEFAULT_MODE, Filters, SearchMode
from streams.settings import Settings
from streams.trust import Signer
from streams.web.gateway import create_gateway
from tests.integration.helpers import golden_lines, isolated_settings
from tests.integration.test_client_integrity import Keys, keys  # noqa: F401 - keys: a fixture
from tests.integration.test_client_integrity import entry_for as signed_entry
from tests.pyrag import recorded_answers
from tests.trust.support import report_event

pytestmark = pytest.mark.timeout(120)

RAW = golden_lines("pipe", "input.jsonl")
RUN_A, RUN_B = "run-a", "run-b"
QUERY = "网关超时怎么排查"
SECRET = "RUN-A-ONLY EXCERPT"
JSON = {"Content-Type": "application/json"}


def entry_for(run_id: str, tool_call_id: str, signer: Signer, excerpt: str = SECRET) -> LedgerEntry:
    """A READY entry as the ledger station asks to write it, its one excerpt ``excerpt``, signed."""
    return signed_entry(tool_call_id, signer, run_id=run_id, excerpt=excerpt)


def record_for(run_id: str, tool_call_id: str) -> bytes:
    """A raw-hits record whose ledger key is ``(run_id, tool_call_id)``."""
    return codec.dumps({**codec.loads(RAW[0]), "run_id": run_id, "tool_call_id": tool_call_id})


class Answers:
    """A knowledge engine that answers every query with a recorded py-rag answer (no HTTP)."""

    async def search(
        self, query: str, filters: Filters | None = None, mode: SearchMode = DEFAULT_MODE
    ) -> bytes:
        return recorded_answers()[QUERY]

    async def close(self) -> None:
        return None


Reply = Callable[[bytes], bytes | list[bytes]]
"""What the forger produces on the reply topic for a request's bytes."""


class Forger(EvidenceChainClient):
    """The real client; beside it, someone who may write the reply topics. Right after a request is
    produced, :attr:`replies` (by request topic) puts a reply on the partition and under the key the
    client reads — where the worker's would land."""

    REPLY_TOPIC = {Topic.RAW_HITS: Topic.LEDGER, Topic.DIAGNOSIS_DRAFTS: Topic.VERDICTS}

    reply_grace_seconds = 0.3  # a forged reply alone is refused this soon (the tests make many)

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings, search=Answers())
        self.replies: dict[Topic, Reply] = {}

    async def _send(self, topic: Topic, raw: bytes, key: bytes, partition: int) -> int:
        offset = await super()._send(topic, raw, key, partition)
        reply = self.replies.get(topic)
        if reply is not None:
            name = self.settings.topic(self.REPLY_TOPIC[topic])
            made = reply(raw)
            for value in [made] if isinstance(made, bytes) else made:  # several: in this order
                await (await self.producer.send(name, value, key=key, partition=partition))
        return offset


@dataclass
class Doors:
    settings: Settings
    client: Forger
    http: TestClient[Any, Any]
    admin: aioredis.Redis
    keys: Keys

    def tools(self, run_id: str, tag: str) -> EvidenceTools:
        """The MCP tools of a stdio server whose run is ``run_id``; its n-th lookup is ``call-<tag>-<n>``."""
        return EvidenceTools(self.client, McpRuns.of_one(McpRun(run_id, tag=tag)))

    async def write(self, *entries: LedgerEntry) -> None:
        store = RedisLedgerStore.from_settings(self.settings)
        try:
            await store.write_many(list(entries))
        finally:
            await store.close()

    async def transplant(self, tool_call_id: str) -> None:
        """Run A's stored entry copied, field for field, under run B's key (a Redis writer's forgery)."""
        stored = await self.admin.hgetall(ledger_key(self.settings.ns, RUN_A, tool_call_id))
        assert stored, "run A's entry was not written"
        await self.admin.hset(ledger_key(self.settings.ns, RUN_B, tool_call_id), mapping=stored)


@pytest.fixture
async def doors(
    keys: Keys,  # noqa: F811 - the fixture of test_client_integrity, imported above
    kafka_bootstrap: str,
    redis_url: str,
    unique_prefix: str,
) -> AsyncIterator[Doors]:
    settings = isolated_settings(
        unique_prefix,
        kafka_bootstrap,
        redis_url,
        gateway_timeout_ms=8_000,
        trusted_keys_file=str(keys.trusted_keys_file),
    )
    await ensure_topics(settings)
    admin = aioredis.Redis.from_url(redis_url)
    client = Forger(settings)
    await client.start()
    http: TestClient[Any, Any] = TestClient(TestServer(create_gateway(settings, client)))  # loopback
    await http.start_server()
    try:
        yield Doors(settings, client, http, admin, keys)
    finally:
        await http.close()
        await client.close()
        found = [k async for k in admin.scan_iter(match=f"{settings.ns}:*")]
        if found:
            await admin.delete(*found)
        await admin.aclose()


async def refused_502(answer: Any, reason: str) -> None:
    body = await answer.read()
    assert answer.status == 502, body
    assert codec.loads(body)["error"]["reason"] == reason
    assert SECRET.encode() not in body and b"projection" not in body.lower().replace(
        b"projection_sha256", b""
    )


# --- H1 ------------------------------------------------------------------------------------------------


async def test_a_transplanted_signed_entry_is_refused_through_every_door(doors: Doors) -> None:
    ledger = doors.keys.ledger
    mcp_call = "call-h1-1"  # the MCP tools' first lookup under tag h1
    await doors.write(entry_for(RUN_A, "call-1", ledger), entry_for(RUN_A, mcp_call, ledger))
    await doors.transplant("call-1")
    await doors.transplant(mcp_call)
    # the client
    genuine = await doors.client.entry(RUN_A, "call-1")
    assert genuine is not None and SECRET in (genuine.projection or "")  # control: A's entry is A's
    with pytest.raises(LedgerIntegrityError, match="not the key it was read under"):
        await doors.client.entry(RUN_B, "call-1")
    with pytest.raises(LedgerIntegrityError, match="not the key it was read under"):
        await doors.client.lookup(record_for(RUN_B, "call-1"))
    with pytest.raises(LedgerIntegrityError):
        await doors.client.lookup_knowledge(RUN_B, "call-1", QUERY)
    # the gateway
    await refused_502(await doors.http.get(f"/v1/ledger/{RUN_B}/call-1"), "LEDGER_INTEGRITY")
    await refused_502(
        await doors.http.post("/v1/lookups", data=record_for(RUN_B, "call-1"), headers=JSON),
        "LEDGER_INTEGRITY",
    )
    search = {"run_id": RUN_B, "tool_call_id": "call-1", "query": QUERY}
    await refused_502(await doors.http.post("/v1/search", json=search), "LEDGER_INTEGRITY")
    assert (await doors.http.get(f"/v1/ledger/{RUN_A}/call-1")).status == 200  # control
    # MCP
    tools = doors.tools(RUN_B, "h1")
    for call in (tools.get_evidence("call-1"), tools.get_evidence(mcp_call), tools.lookup_knowledge(QUERY)):
        with pytest.raises(ToolError) as refused:
            await call
        assert "LedgerIntegrityError" in str(refused.value) or "does not hold" in str(refused.value)
        assert SECRET not in str(refused.value)


# --- M1 ------------------------------------------------------------------------------------------------


async def test_another_runs_entry_on_the_ledger_topic_is_refused_through_every_door(doors: Doors) -> None:
    ledger = doors.keys.ledger

    def run_a_entry(raw: bytes) -> bytes:
        """Run A's genuine entry for the tool call this raw-hits record asked for, under B's record key."""
        asked = codec.loads(raw)
        return codec.dumps(as_stored(entry_for(RUN_A, asked["tool_call_id"], ledger)))

    doors.client.replies[Topic.RAW_HITS] = run_a_entry
    with pytest.raises(LedgerIntegrityError, match="not the key it was read under"):
        await doors.client.lookup(record_for(RUN_B, "call-2"))
    await refused_502(
        await doors.http.post("/v1/lookups", data=record_for(RUN_B, "call-3"), headers=JSON),
        "LEDGER_INTEGRITY",
    )
    search = {"run_id": RUN_B, "tool_call_id": "call-4", "query": QUERY}
    await refused_502(await doors.http.post("/v1/search", json=search), "LEDGER_INTEGRITY")
    with pytest.raises(ToolError) as refused:
        await doors.tools(RUN_B, "m1").lookup_knowledge(QUERY)
    assert SECRET not in str(refused.value)
    # control: B's own genuine entry on the topic is handed out
    doors.client.replies[Topic.RAW_HITS] = lambda raw: codec.dumps(
        as_stored(entry_for(RUN_B, codec.loads(raw)["tool_call_id"], ledger, excerpt="B's own"))
    )
    shown = await doors.client.lookup(record_for(RUN_B, "call-5"))
    assert shown.run_id == RUN_B and "B's own" in (shown.projection or "")
    # A's entry first, B's own right behind it: the forged reply is passed over, not the answer (it
    # must not block the genuine one, nor spend an MCP attempt)
    doors.client.replies[Topic.RAW_HITS] = lambda raw: [
        run_a_entry(raw),
        codec.dumps(as_stored(entry_for(RUN_B, codec.loads(raw)["tool_call_id"], ledger, excerpt="B's own"))),
    ]
    shown = await doors.client.lookup(record_for(RUN_B, "call-6"))
    assert shown.run_id == RUN_B and "B's own" in (shown.projection or "")


# --- M2 ------------------------------------------------------------------------------------------------


def verdict_for(raw: bytes, signer: Signer | None) -> bytes:
    """A PASS verdict on these draft bytes, as the guard would write it, signed by ``signer`` (or not)."""
    draft = codec.loads(raw)
    verdict: dict[str, Any] = {
        "event_id": "guard:forged:0:1:1",
        "origin": {"topic": "diagnosis-drafts", "partition": 0, "offset": 1, "timestamp": 1},
        "run_id": draft.get("run_id"),
        "draft_id": draft.get("draft_id"),
        "draft_sha256": sha256_hex(raw),
        "attempt": draft.get("attempt", 1),
        "verdict": "PASS",
        "violation_count": 0,
        "violations_truncated": False,
        "violations": [],
        "evidence_snapshot": [],
        "fallback_report": None,
        "source_timestamp": 1,
    }
    if signer is not None:
        verdict["signature"] = signer.sign_verdict(verdict)
    return codec.dumps(verdict)


DRAFT = {
    "run_id": RUN_B,
    "draft_id": "d-1",
    "attempt": 1,
    "analysis": [{"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": ["call-1"]}],
    "conclusion": None,
    "limitations": ["l"],
}


async def test_a_verdict_no_guard_key_signed_is_refused_through_every_door(doors: Doors) -> None:
    for signer, why in ((None, "unsigned"), (doors.keys.ledger, "a ledger key")):
        doors.client.replies[Topic.DIAGNOSIS_DRAFTS] = lambda raw, s=signer: verdict_for(raw, s)  # type: ignore[misc]
        with pytest.raises(VerdictIntegrityError, match=why):
            await doors.client.check(DRAFT)
        await refused_502(await doors.http.post("/v1/drafts", json=DRAFT), "VERDICT_INTEGRITY")
        with pytest.raises(ToolError, match="VerdictIntegrityError"):
            await doors.tools(RUN_B, "m2").check_diagnosis({k: v for k, v in DRAFT.items() if k != "run_id"})
    # control: the guard's signature is what makes a verdict handed out
    doors.client.replies[Topic.DIAGNOSIS_DRAFTS] = lambda raw: verdict_for(raw, doors.keys.guard)
    assert (await doors.client.check(DRAFT)).kind == "PASS"
    answer = await doors.http.post("/v1/drafts", json=DRAFT)
    assert answer.status == 200 and (await answer.json())["verdict"] == "PASS"
    # an unsigned verdict written first does not block the guard's right behind it
    doors.client.replies[Topic.DIAGNOSIS_DRAFTS] = lambda raw: [
        verdict_for(raw, None),
        verdict_for(raw, doors.keys.guard),
    ]
    shown = await doors.client.check(DRAFT)
    assert shown.kind == "PASS" and b'"signature"' in shown.raw


# --- M3 ------------------------------------------------------------------------------------------------


async def test_client_reports_hands_out_only_genuine_reports_once(doors: Doors) -> None:
    guard = doors.keys.guard
    genuine = report_event(guard, run_id=RUN_B)
    copy = genuine | {"event_id": "publish:elsewhere:0:99:9"}
    forged = report_event(
        None,
        run_id=RUN_B,
        event_id="publish:t.diagnosis-drafts:0:8:1",
        verdict_event_id="guard:t.diagnosis-drafts:0:8:1",
        draft_id="d-2",
        report={
            **genuine["report"],
            "conclusion": {"content": "FORGED CONCLUSION", "based_on_analysis_ids": []},
        },
    )
    other_run = report_event(guard, run_id=RUN_A, draft_id="d-3")
    key = RUN_B.encode()
    name = doors.settings.topic(Topic.REPORTS)
    partition = await doors.client._partition_of(Topic.REPORTS, key)  # noqa: SLF001 - where the run's reports land
    for event in (copy, forged, genuine, other_run):
        await (await doors.client.producer.send(name, codec.dumps(event), key=key, partition=partition))
    reports = await doors.client.reports(RUN_B)
    assert reports == [genuine]  # the original, though its copy came first; no forgery, no other run's
    with pytest.raises(ReportIntegrityError, match="unsigned"):
        await doors.client.reports(RUN_B, verdict_event_id=forged["verdict_event_id"])
    assert await doors.client.reports(RUN_B, verdict_event_id=genuine["verdict_event_id"]) == [genuine]
