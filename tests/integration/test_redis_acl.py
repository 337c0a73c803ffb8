"""Least privilege around the ledger (issue 19, item 5): the Redis users of deploy/redis/users.acl.

Each test makes its own three users from that file, rendered by deploy/redis/acl.sh as the local stack
renders them (the rules are written once), restricted to the test's own key namespace, and deletes
them afterwards. The reader (the gateway, inspect, serve) reads with the project's own
``RedisLedgerStore`` and is refused every write; the writer (the ledger agent) runs the real write
path, durability check included, and is refused what an administrator does; the guard reads the ledger
and takes its write-once report claims (SPEC 4.3) in ``<ns>:report:*``, and writes nothing else.
"""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlsplit, urlunsplit

import pytest
import redis.asyncio as aioredis
from redis import exceptions as redis_errors

from models.ledger import LEDGER_ENTRY_FIELDS, LedgerEntry
from models.vocab import LedgerOutcome
from streams.errors import RedisRefused
from streams.hashing import sha256_hex
from streams.ledger.keys import judgement_key, ledger_key, owners_key, report_claim_key
from streams.ledger.redis import RedisLedgerStore
from streams.settings import Settings
from streams.stations.publish import ReportClaim

ROOT = Path(__file__).resolve().parents[2]
ACL = ROOT / "deploy" / "redis" / "acl.sh"
WRITER, READER, GUARD = "ec-ledger", "ec-reader", "ec-guard"
"""The roles of deploy/redis/users.acl."""

WRITING_SCRIPT = "return redis.call('HSET', KEYS[1], 'status', 'READY')"


@dataclass(frozen=True)
class Users:
    """This test's users: URLs that log in as each, and the namespace they are confined to."""

    ns: str
    writer_url: str
    reader_url: str
    guard_url: str


def rules(role: str, version: str, ns: str) -> list[str]:
    """The ACL rules of a role of users.acl for this server, as the stack renders them."""
    done = subprocess.run(  # noqa: S603 - our own script
        [str(ACL), "rules", role, version, ns], capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.split()


async def command(client: aioredis.Redis, *args: str) -> Any:
    """A command redis-py has no method for (ACL ...)."""
    return await client.execute_command(*args)  # type: ignore[no-untyped-call]


def login_url(url: str, user: str, password: str) -> str:
    """``url`` with ``user:password`` in place of whatever credentials it carried."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{quote(user, safe='')}:{password}@{host}"))


@pytest.fixture
async def admin(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """The session's Redis as the user the tests use (the stack's dev-only ``default``)."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture
async def users(admin: aioredis.Redis, redis_url: str, unique_prefix: str) -> AsyncIterator[Users]:
    """A writer, a reader and the guard made from users.acl for this test's namespace; deleted afterwards."""
    ns = unique_prefix.rstrip("-")
    version = str((await admin.info("server"))["redis_version"])
    made: dict[str, str] = {}
    try:
        for role in (WRITER, READER, GUARD):
            name, password = f"{unique_prefix}{role}", secrets.token_hex(16)
            await command(admin, "ACL", "SETUSER", name, *rules(role, version, ns), f">{password}")
            made[role] = login_url(redis_url, name, password)
        yield Users(ns, made[WRITER], made[READER], made[GUARD])
    finally:
        for role in made:
            await command(admin, "ACL", "DELUSER", f"{unique_prefix}{role}")
        keys = [key async for key in admin.scan_iter(match=f"{ns}:*")]
        if keys:
            await admin.delete(*keys)


def store(url: str, ns: str, durability: str = "fsync") -> RedisLedgerStore:
    """The project's own ledger store, logged in through ``url``."""
    return RedisLedgerStore.from_settings(Settings(redis_url=url, ns=ns, redis_durability=durability))


def entry(run_id: str, tool_call_id: str) -> LedgerEntry:
    """A READY entry as the ledger station asks to write it."""
    projection = f'{{"tool_call_id":"{tool_call_id}","items":[]}}'
    fields: dict[str, Any] = dict.fromkeys(LEDGER_ENTRY_FIELDS)
    fields.update(
        event_id=f"ev-{run_id}-{tool_call_id}",
        run_id=run_id,
        tool_call_id=tool_call_id,
        status="READY",
        evidence_status="EVIDENCE_FOUND",
        projection=projection,
        projection_sha256=sha256_hex(projection.encode("utf-8")),
        origin={"topic": "raw-hits", "partition": 0, "offset": 1, "timestamp": 1_700_000_000_000},
        source_timestamp=1_700_000_000_000,
    )
    return cast(LedgerEntry, fields)


async def refused(call: Awaitable[Any]) -> str:
    """Await ``call``; it must fail with Redis's NOPERM. Returns the message."""
    with pytest.raises(redis_errors.NoPermissionError) as caught:
        await call
    return str(caught.value)


async def test_the_reader_is_refused_every_write(users: Users, admin: aioredis.Redis) -> None:
    writer = store(users.writer_url, users.ns)
    try:
        await writer.write_many([entry("run-1", "call-1")])
    finally:
        await writer.close()
    key = ledger_key(users.ns, "run-1", "call-1")
    before = await admin.hgetall(key)
    sha = await admin.script_load(WRITING_SCRIPT)  # loaded by someone allowed to, then tried by the reader
    reader = aioredis.Redis.from_url(users.reader_url)
    try:
        assert (await reader.hgetall(key)) == before  # it logged in, and reads
        await refused(reader.hset(key, "status", "FAILED"))
        await refused(reader.delete(key))
        await refused(reader.zadd(owners_key(users.ns, "call-1"), {"run-x": 1}))
        await refused(reader.expire(key, 1))
        await refused(reader.eval(WRITING_SCRIPT, 1, key))
        await refused(reader.evalsha(sha, 1, key))
        await refused(reader.script_load(WRITING_SCRIPT))
        await refused(reader.script_flush())
        await refused(reader.flushall())
        await refused(reader.flushdb())
        await refused(reader.config_set("appendonly", "no"))
        await refused(command(reader, "ACL", "SETUSER", "intruder", "on", "+@all", "~*", ">pw"))
        # Read-only keys even for a read command it has, outside its namespace.
        await refused(reader.hgetall("elsewhere:ledger:{call-1}:run-1"))
    finally:
        await reader.aclose()
    assert await admin.hgetall(key) == before
    # The project's write path, as the guard's user: refused for good (not retried), named as such.
    as_reader = store(users.reader_url, users.ns, durability="none")
    try:
        with pytest.raises(RedisRefused, match="NoPermissionError"):
            await as_reader.write_many([entry("run-1", "call-2")])
    finally:
        await as_reader.close()
    assert not await admin.exists(ledger_key(users.ns, "run-1", "call-2"))


async def test_the_reader_reads_what_the_guard_the_gateway_and_inspect_read(users: Users) -> None:
    entries = [entry("run-1", "call-1"), entry("run-1", "call-2"), entry("run-2", "call-3")]
    writer = store(users.writer_url, users.ns)
    try:
        written = await writer.write_many(entries)
    finally:
        await writer.close()
    assert [r.outcome for r in written] == [LedgerOutcome.WRITTEN] * 3
    reader = store(users.reader_url, users.ns)
    try:
        await reader.ping()  # the workers' and the gateway's readiness
        # The guard and the client: entries in one pipeline, owners of the missing ones in a second.
        lookups = await reader.read_many(
            [("run-1", "call-1"), ("run-1", "call-2"), ("run-1", "call-3"), ("run-1", "call-none")]
        )
        assert lookups[("run-1", "call-1")].entry == written[0].stored
        assert lookups[("run-1", "call-2")].entry == written[1].stored
        other_run, nobody = lookups[("run-1", "call-3")], lookups[("run-1", "call-none")]
        assert other_run.entry is None and other_run.foreign_owner
        assert nobody.entry is None and not nobody.foreign_owner
        # The gateway's and the receipt's entries as stored.
        stored = await reader.read_entries([("run-2", "call-3"), ("run-2", "call-1")])
        assert stored == [written[2].stored, None]
        # ledger export and inspect: a run's entries by SCAN.
        assert await reader.entries_of_run("run-1") == [written[0].stored, written[1].stored]
    finally:
        await reader.close()


async def test_the_writer_runs_the_write_path_and_nothing_an_administrator_does(
    users: Users, admin: aioredis.Redis
) -> None:
    # The real path: the durability check (WAITAOF, or CONFIG GET before Redis 7.2), SCRIPT EXISTS /
    # SCRIPT LOAD and EVALSHA of the write-once script in one pipeline. (The script cache is shared,
    # so it may be loaded already: SCRIPT LOAD is tried on its own below, not flushed under others.)
    writer = store(users.writer_url, users.ns, durability="fsync")
    try:
        first = await writer.write_many([entry("run-1", "call-1")])
        again = await writer.write_many([entry("run-1", "call-1")])
        assert [r.outcome for r in first + again] == [LedgerOutcome.WRITTEN, LedgerOutcome.DUPLICATE]
        assert (await writer.read_many([("run-1", "call-1")]))[("run-1", "call-1")].entry == first[0].stored
    finally:
        await writer.close()
    key = ledger_key(users.ns, "run-1", "call-1")
    client = aioredis.Redis.from_url(users.writer_url)
    try:
        sha = await client.script_load("return 1")
        assert await client.script_exists(sha) == [True]
        await refused(client.flushall())
        await refused(client.flushdb())
        await refused(client.config_set("appendfsync", "no"))
        await refused(client.script_flush())
        await refused(command(client, "ACL", "SETUSER", "intruder", "on", "+@all", "~*", ">pw"))
        await refused(command(client, "ACL", "LIST"))
        await refused(client.delete(key))  # entries expire; nobody deletes one
        await refused(client.eval(WRITING_SCRIPT, 1, key))  # only the script it is given, by SHA
        await refused(client.hset("elsewhere:ledger:{call-1}:run-1", "status", "READY"))
    finally:
        await client.aclose()
    assert (await admin.hgetall(key))[b"status"] == b"READY"


async def test_the_guard_reads_the_ledger_and_claims_reports_and_writes_nothing_else(
    users: Users, admin: aioredis.Redis
) -> None:
    writer = store(users.writer_url, users.ns)
    try:
        (written,) = await writer.write_many([entry("run-1", "call-1")])
    finally:
        await writer.close()
    claim = ReportClaim("run-1", "d-1", 1, "ab" * 32, "guard:t.diagnosis-drafts:0:7:1")
    other = ReportClaim("run-1", "d-1", 1, "cd" * 32, "guard:t.diagnosis-drafts:0:8:1")
    guard = store(users.guard_url, users.ns, durability="fsync")  # the real path, durability check included
    try:
        await guard.ping()
        lookups = await guard.read_many([("run-1", "call-1"), ("run-1", "call-none")])
        assert lookups[("run-1", "call-1")].entry == written.stored
        assert await guard.claim_reports([claim, other]) == [None, claim.owner]
        assert await guard.claim_reports([claim]) == [claim.owner]  # the owner again: the same answer
    finally:
        await guard.close()
    key = report_claim_key(users.ns, "run-1", "d-1", 1)
    assert await admin.get(key) == claim.owner.encode()
    assert 0 < await admin.pttl(key) <= Settings().ledger_ttl_seconds * 1000  # expires with the ledger
    entry_key = ledger_key(users.ns, "run-1", "call-1")
    client = aioredis.Redis.from_url(users.guard_url)
    try:
        await refused(client.hset(entry_key, "status", "FAILED"))
        await refused(client.set(entry_key, "x"))  # SET, but only on its own claims
        await refused(client.zadd(owners_key(users.ns, "call-1"), {"run-x": 1}))
        await refused(client.set(f"{users.ns}:elsewhere", "x"))
        await refused(client.delete(key))  # a claim is write-once: nobody takes one back
        await refused(client.eval(WRITING_SCRIPT, 1, entry_key))
        await refused(client.flushall())
        await refused(client.config_set("appendonly", "no"))
    finally:
        await client.aclose()
    assert (await admin.hgetall(entry_key))[b"status"] == b"READY"
    # the reader (the gateway, any agent-facing door) cannot take a claim and so hold back a report
    as_reader = store(users.reader_url, users.ns, durability="none")
    try:
        with pytest.raises(RedisRefused, match="NoPermissionError"):
            await as_reader.claim_reports([ReportClaim("run-1", "d-2", 1, "ab" * 32, "guard:x:0:1:1")])
    finally:
        await as_reader.close()
    assert not await admin.exists(report_claim_key(users.ns, "run-1", "d-2", 1))


async def test_the_semantic_review_records_judgements_as_the_guard_and_the_reader_cannot(
    users: Users, admin: aioredis.Redis
) -> None:
    """SPEC 4.4: the semantic agent logs in as ec-guard, looks judgements up and records them write-once
    in <ns>:judgement:* (durably); ec-reader, the doors' user, may do neither (no door reads them: a
    judgement reaches people through the judgements topic, the audit store and receipts)."""
    guard = store(users.guard_url, users.ns, durability="fsync")
    try:
        assert await guard.recorded_judgements([("run-1", "d" * 64)]) == [None]
        assert await guard.record_judgements([("run-1", "d" * 64, b"first")]) == [b"first"]
        assert await guard.record_judgements([("run-1", "d" * 64, b"second")]) == [b"first"]  # write-once
        assert await guard.recorded_judgements([("run-1", "d" * 64)]) == [b"first"]
    finally:
        await guard.close()
    key = judgement_key(users.ns, "run-1", "d" * 64)
    assert 0 < await admin.pttl(key) <= Settings().ledger_ttl_seconds * 1000  # expires with the ledger
    client = aioredis.Redis.from_url(users.guard_url)
    try:
        await refused(client.delete(key))  # a judgement is write-once: nobody takes one back
    finally:
        await client.aclose()
    as_reader = store(users.reader_url, users.ns, durability="none")
    try:
        with pytest.raises(RedisRefused, match="NoPermissionError"):
            await as_reader.record_judgements([("run-1", "e" * 64, b"forged")])
        with pytest.raises(RedisRefused, match="NoPermissionError"):
            await as_reader.recorded_judgements([("run-1", "d" * 64)])
    finally:
        await as_reader.close()
    assert not await admin.exists(judgement_key(users.ns, "run-1", "e" * 64))


async def test_a_worker_in_another_namespace_is_told_to_render_the_users_for_it(users: Users) -> None:
    """Issue 32 item 9: EC_NS not the namespace the users were rendered for: every key is refused
    (NOPERM); the message said to check the password and the command list, which cannot fix it."""
    other = f"{users.ns}-other"
    for url in (users.writer_url, users.reader_url):
        refused_store = store(url, other, durability="none")
        try:
            with pytest.raises(RedisRefused) as caught:
                await refused_store.read_many([("run-1", "call-1")])
            if url == users.writer_url:
                with pytest.raises(RedisRefused) as written:
                    await refused_store.write_many([entry("run-1", "call-1")])
                assert "outside this Redis user's key pattern" in str(written.value)
        finally:
            await refused_store.close()
        message = str(caught.value)
        assert "outside this Redis user's key pattern" in message, message
        assert f"EC_NS is '{other}'" in message and f"`EC_NS={other} make up`" in message
        assert f"deploy/redis/acl.sh rules ec-ledger <redis version> {other}" in message
        assert "check the password" not in message


async def test_a_url_that_selects_another_database_is_told_to_use_database_0(users: Users) -> None:
    for url in (users.writer_url, users.reader_url):
        elsewhere = store(url.rsplit("/", 1)[0] + "/1", users.ns, durability="none")
        try:
            with pytest.raises(RedisRefused) as caught:
                await elsewhere.ping()
        finally:
            await elsewhere.close()
        message = str(caught.value)
        assert "may not SELECT" in message and "end EC_REDIS_URL with /0" in message, message
        assert "check the password" not in message
