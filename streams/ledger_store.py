"""The Redis ledger: write-once entries, an owners index, and batched reads for the guard (SPEC 3.6).

Layout (``ns`` default ``ec``; the braces are a Redis Cluster hash tag, so an entry and its owners
index share a slot):

- ``<ns>:ledger:{<tool_call_id>}:<run_id>`` — hash with the entry's fields; a null field is absent,
  ``origin`` is JSON, ``source_timestamp`` a decimal string. Expires after ``ledger_ttl_seconds``.
- ``<ns>:owners:{<tool_call_id>}`` — sorted set of the run ids owning an entry with that tool call
  id, scored by the entry's expiry (epoch ms). Writes trim expired members; readers ignore them;
  the set lives as long as its newest member.

The ledger agent is the only writer. Every write is one Lua script (atomic): no entry → WRITTEN;
the same sha256 and status → DUPLICATE; anything else → CONFLICT. The stored entry is returned in
every case, so the ``ledger`` topic repeats exactly what Redis holds.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import redis.asyncio as aioredis
from redis import exceptions as redis_errors

from models.events import Origin
from models.ledger import LEDGER_ENTRY_FIELDS, LedgerEntry
from models.vocab import LedgerOutcome
from streams import json
from streams.envelope import read_origin
from streams.errors import RedisUnavailable
from streams.settings import Settings
from streams.stations.ledger_view import LedgerLookup

_WRITE_ONCE = """
local stored = redis.call('HGETALL', KEYS[1])
if #stored > 0 then
  local sha, status, new_sha, new_status = false, false, false, false
  for i = 1, #stored, 2 do
    if stored[i] == 'projection_sha256' then sha = stored[i + 1] end
    if stored[i] == 'status' then status = stored[i + 1] end
  end
  for i = 3, #ARGV, 2 do
    if ARGV[i] == 'projection_sha256' then new_sha = ARGV[i + 1] end
    if ARGV[i] == 'status' then new_status = ARGV[i + 1] end
  end
  if sha == new_sha and status == new_status then return {'DUPLICATE', stored} end
  return {'CONFLICT', stored}
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
local ttl = tonumber(ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[2])
local newest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], newest[2])
return {'WRITTEN', redis.call('HGETALL', KEYS[1])}
"""

_REDIS_DOWN = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.BusyLoadingError,
    OSError,
)


def entry_key(ns: str, tool_call_id: str, run_id: str) -> str:
    """The hash key of one entry."""
    return f"{ns}:ledger:{{{tool_call_id}}}:{run_id}"


def owners_key(ns: str, tool_call_id: str) -> str:
    """The sorted set of run ids owning an entry with this tool call id."""
    return f"{ns}:owners:{{{tool_call_id}}}"


def to_hash(entry: LedgerEntry) -> dict[str, str]:
    """The hash fields of an entry; null values are left out."""
    out: dict[str, str] = {}
    for name in LEDGER_ENTRY_FIELDS:
        value = entry[name]  # type: ignore[literal-required]
        if value is None:
            continue
        if name == "origin":
            out[name] = json.dumps(value).decode("utf-8")
        else:
            out[name] = str(value)
    return out


def from_hash(fields: Mapping[bytes, bytes] | Mapping[str, str]) -> LedgerEntry:
    """An entry from its hash fields (as stored: a missing field is null)."""
    text = {
        (k.decode("utf-8", "replace") if isinstance(k, bytes) else k): (
            v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        )
        for k, v in fields.items()
    }
    origin: Origin | None = None
    if "origin" in text:
        try:
            origin = read_origin(json.loads(text["origin"]))
        except json.JSONDecodeError:
            origin = None
    timestamp = text.get("source_timestamp")
    return cast(
        LedgerEntry,
        {
            "event_id": text.get("event_id"),
            "run_id": text.get("run_id", ""),
            "tool_call_id": text.get("tool_call_id", ""),
            "status": text.get("status"),
            "evidence_status": text.get("evidence_status"),
            "projection": text.get("projection"),
            "projection_sha256": text.get("projection_sha256"),
            "origin": origin,
            "source_timestamp": int(timestamp) if timestamp and timestamp.lstrip("-").isdigit() else None,
            "failure_reason": text.get("failure_reason"),
        },
    )


@dataclass(frozen=True, slots=True)
class WriteResult:
    """The outcome of one write-once attempt and the entry as stored afterwards."""

    outcome: LedgerOutcome
    stored: LedgerEntry
    key: str


class LedgerStore(Protocol):
    """The ledger as the agents use it; Redis in production, memory in tests."""

    async def write_many(self, entries: Sequence[LedgerEntry]) -> list[WriteResult]:
        """Write-once each entry, in order.

        Raises:
            RedisUnavailable: nothing is known to be written; retry the whole batch (idempotent).
        """
        ...

    async def read_many(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], LedgerLookup]:
        """Look up ``(run_id, tool_call_id)`` pairs in at most two round trips.

        Raises:
            RedisUnavailable: Redis cannot be reached; the caller holds and retries.
        """
        ...


class RedisLedgerStore:
    """The ledger in Redis: one pipelined Lua call per batch of writes, two pipelines per batch of reads."""

    def __init__(self, client: aioredis.Redis, *, ns: str, ttl_seconds: int) -> None:
        self.client = client
        self.ns = ns
        self.ttl_ms = ttl_seconds * 1000
        self._script = client.register_script(_WRITE_ONCE)

    @classmethod
    def from_url(
        cls, url: str, *, ns: str, ttl_seconds: int, password: str | None = None, timeout_ms: int = 2000
    ) -> RedisLedgerStore:
        """A store on a new client for ``url``."""
        client = aioredis.Redis.from_url(
            url, password=password, socket_timeout=timeout_ms / 1000, socket_connect_timeout=timeout_ms / 1000
        )
        return cls(client, ns=ns, ttl_seconds=ttl_seconds)

    @classmethod
    def from_settings(cls, settings: Settings) -> RedisLedgerStore:
        """The store the settings describe (URL, password, namespace, TTL, timeout)."""
        password = settings.redis_password.get_secret_value() if settings.redis_password else None
        return cls.from_url(
            settings.redis_url,
            ns=settings.ns,
            ttl_seconds=settings.ledger_ttl_seconds,
            password=password,
            timeout_ms=settings.redis_timeout_ms,
        )

    async def close(self) -> None:
        """Close the client's connections."""
        await self.client.aclose()

    async def write_many(
        self, entries: Sequence[LedgerEntry], ttl_ms: Sequence[int] | None = None
    ) -> list[WriteResult]:
        """Write-once each entry; all scripts go in one pipeline (one round trip).

        ``ttl_ms`` gives each entry its own lifetime (a rebuild restores the remaining one);
        by default every entry lives ``ledger_ttl_seconds``.
        """
        if not entries:
            return []
        keys = [entry_key(self.ns, e["tool_call_id"], e["run_id"]) for e in entries]
        ttls = list(ttl_ms) if ttl_ms is not None else [self.ttl_ms] * len(entries)
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for key, entry, ttl in zip(keys, entries, ttls, strict=True):
                    args: list[Any] = [max(1, ttl), entry["run_id"]]
                    for name, value in to_hash(entry).items():
                        args += [name, value]
                    await self._script(
                        keys=[key, owners_key(self.ns, entry["tool_call_id"])], args=args, client=pipe
                    )
                replies = await pipe.execute()
        except _REDIS_DOWN as exc:
            raise RedisUnavailable(f"ledger write of {len(entries)} entries: {exc}") from exc
        results = []
        for key, (outcome, flat) in zip(keys, replies, strict=True):
            pairs = dict(zip(flat[0::2], flat[1::2], strict=True))
            results.append(WriteResult(LedgerOutcome(outcome.decode()), from_hash(pairs), key))
        return results

    async def entries_of_run(self, run_id: str) -> list[LedgerEntry]:
        """Every live entry of one run (SCAN, for export and inspection; not a hot path).

        Raises:
            RedisUnavailable: Redis cannot be reached.
        """
        pattern = f"{self.ns}:ledger:{{*}}:{run_id}"
        try:
            keys = sorted([key async for key in self.client.scan_iter(match=pattern, count=1000)])
            async with self.client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.hgetall(key)
                hashes = await pipe.execute()
        except _REDIS_DOWN as exc:
            raise RedisUnavailable(f"scanning the entries of run {run_id}: {exc}") from exc
        entries = [from_hash(h) for h in hashes if h]
        return sorted((e for e in entries if e["run_id"] == run_id), key=lambda e: e["tool_call_id"])

    async def read_many(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], LedgerLookup]:
        """Entries in one pipeline; owners, only for the missing ones, in a second."""
        unique = list(dict.fromkeys(keys))
        if not unique:
            return {}
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for run_id, tool_call_id in unique:
                    pipe.hgetall(entry_key(self.ns, tool_call_id, run_id))
                hashes = await pipe.execute()
            found = {k: from_hash(h) for k, h in zip(unique, hashes, strict=True) if h}
            missing = [k for k in unique if k not in found]
            owners: dict[str, set[str]] = {}
            if missing:
                now_ms = int(time.time() * 1000)
                tool_calls = list(dict.fromkeys(t for _, t in missing))
                async with self.client.pipeline(transaction=False) as pipe:
                    for tool_call_id in tool_calls:
                        pipe.zrangebyscore(owners_key(self.ns, tool_call_id), f"({now_ms}", "+inf")
                    members = await pipe.execute()
                owners = {
                    t: {m.decode("utf-8") for m in ms} for t, ms in zip(tool_calls, members, strict=True)
                }
        except _REDIS_DOWN as exc:
            raise RedisUnavailable(f"ledger read of {len(unique)} entries: {exc}") from exc
        out: dict[tuple[str, str], LedgerLookup] = {}
        for run_id, tool_call_id in unique:
            entry = found.get((run_id, tool_call_id))
            if entry is not None:
                out[(run_id, tool_call_id)] = LedgerLookup(cast(Mapping[str, Any], entry))
            else:
                foreign = bool(owners.get(tool_call_id, set()) - {run_id})
                out[(run_id, tool_call_id)] = LedgerLookup(None, foreign)
        return out


class MemoryLedgerStore:
    """The same write-once semantics in memory (no TTL): for tests and offline runs."""

    def __init__(self, ns: str = "ec") -> None:
        self.ns = ns
        self.entries: dict[tuple[str, str], LedgerEntry] = {}
        self.reads = 0
        self.down = False

    async def write_many(self, entries: Sequence[LedgerEntry]) -> list[WriteResult]:
        """Write-once each entry."""
        if self.down:
            raise RedisUnavailable("memory ledger marked down")
        results = []
        for entry in entries:
            key = (entry["run_id"], entry["tool_call_id"])
            redis_key = entry_key(self.ns, entry["tool_call_id"], entry["run_id"])
            stored = self.entries.get(key)
            if stored is None:
                self.entries[key] = from_hash(to_hash(entry))
                results.append(WriteResult(LedgerOutcome.WRITTEN, self.entries[key], redis_key))
            elif (stored["projection_sha256"], stored["status"]) == (
                entry["projection_sha256"],
                entry["status"],
            ):
                results.append(WriteResult(LedgerOutcome.DUPLICATE, stored, redis_key))
            else:
                results.append(WriteResult(LedgerOutcome.CONFLICT, stored, redis_key))
        return results

    async def read_many(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], LedgerLookup]:
        """Look up pairs; counts one read per call."""
        if self.down:
            raise RedisUnavailable("memory ledger marked down")
        self.reads += 1
        out: dict[tuple[str, str], LedgerLookup] = {}
        for run_id, tool_call_id in keys:
            entry = self.entries.get((run_id, tool_call_id))
            owners = {r for (r, t) in self.entries if t == tool_call_id}
            out[(run_id, tool_call_id)] = LedgerLookup(
                cast(Mapping[str, Any], entry) if entry else None, entry is None and bool(owners - {run_id})
            )
        return out
