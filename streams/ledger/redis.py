"""The Redis edge: the write-once ledger, batched reads for the guard, error mapping, durability.

Layout (``streams.ledger.keys``, SPEC 3.6): a hash per entry at ``<ns>:ledger:{<tool_call_id>}:<run_id>``
(a null field is absent, ``origin`` is JSON, integers are decimal strings) and a sorted set
``<ns>:owners:{<tool_call_id>}`` of the run ids owning an entry with that tool call id, scored by
the entry's expiry (epoch ms). Writes trim expired members; readers ignore them.

The ledger agent is the only writer of entries. Every write is one Lua script (atomic): no entry → WRITTEN,
stamped with ``written_at``/``expires_at`` from Redis ``TIME``; the same sha256 and status →
DUPLICATE; anything else → CONFLICT. The stored entry is returned in every case, so the ``ledger``
topic repeats exactly what Redis holds. A batch of writes is one pipeline (one round trip); the
batch is acknowledged only once Redis has made it durable as ``EC_REDIS_DURABILITY`` asks:

- ``fsync`` (default): on Redis 7.2+ the pipeline ends with ``WAITAOF 1 0``; on older servers the
  server must run ``appendonly yes`` with ``appendfsync always`` (checked once with ``CONFIG GET``),
  which fsyncs before it replies. The local stack and ``docker-compose.yml`` run Redis that way.
- ``replica``: the pipeline ends with ``WAIT <EC_REDIS_REPLICAS> <EC_REDIS_WAIT_TIMEOUT_MS>``; fewer
  acknowledgements hold and retry the batch (the writes are idempotent).
- ``none``: acknowledged when Redis replies (up to a second of entries can be lost in a crash).

A pipeline that times out (``EC_REDIS_TIMEOUT_MS``: a slow or lossy link cannot carry it in time) is
sent again in halves, down to one entry a pipeline, and the span doubles back with each pipeline that
goes through until one times out again: sending the same too-large pipeline again would time out
again, forever (a stall). What was written before a failure is kept by the caller (``written``), not
sent again.

The guard keeps one more kind of key, in a key space of its own (SPEC 1, 4.3): the write-once claim on
each draft's report, ``<ns>:report:{<run_id>}:<draft_id>:<attempt>`` holding ``<draft_sha256> <verdict
event_id>`` for the ledger's TTL (:meth:`RedisLedgerStore.claim_reports`: ``SET NX GET``, a pipeline per
batch, ended with the same durability wait as the entries).

Every ``redis`` exception is translated here, once, by :func:`redis_errors`.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

import redis.asyncio as aioredis
from redis import exceptions as redis_errors_mod

from models.events import Origin
from models.ledger import LEDGER_ENTRY_FIELDS, SIGNATURE_FIELDS, LedgerEntry, WriteResult
from models.vocab import LedgerOutcome
from streams import codec
from streams.envelope import read_origin
from streams.errors import RedisRefused, RedisUnavailable
from streams.ledger.client import close_client, open_client
from streams.ledger.keys import (
    judgement_key,
    ledger_key,
    ledger_pattern,
    owners_key,
    parse_ledger_key,
    report_claim_key,
    run_pattern,
)
from streams.settings import Settings
from streams.stations.ledger_view import LedgerKey, LedgerLookup
from streams.stations.publish import ReportClaim

log = logging.getLogger(__name__)

# The "same entry?" comparison below is streams.ledger.store.write_outcome (SPEC 3.6: projection_sha256
# and status; an absent field is false here, None there, so null equals only null). Lua cannot call it:
# tests/integration/test_same_entry.py runs this script over a table of cases against the rule.
_WRITE_ONCE = """
local fields = cjson.decode(ARGV[5])
local stored = redis.call('HGETALL', KEYS[1])
if #stored > 0 then
  local sha, status, new_sha, new_status = false, false, false, false
  for i = 1, #stored, 2 do
    if stored[i] == 'projection_sha256' then sha = stored[i + 1] end
    if stored[i] == 'status' then status = stored[i + 1] end
  end
  for i = 1, #fields, 2 do
    if fields[i] == 'projection_sha256' then new_sha = fields[i + 1] end
    if fields[i] == 'status' then new_status = fields[i + 1] end
  end
  if sha == new_sha and status == new_status then return {'DUPLICATE', stored} end
  return {'CONFLICT', stored}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local written, expires = now, now + tonumber(ARGV[1])
if tonumber(ARGV[3]) > 0 then
  written, expires = tonumber(ARGV[4]), tonumber(ARGV[3])
  if expires <= now then return {'EXPIRED', {}} end
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HSET', KEYS[1], 'written_at', string.format('%d', written),
  'expires_at', string.format('%d', expires))
redis.call('PEXPIREAT', KEYS[1], expires)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], expires, ARGV[2])
local newest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[2], newest[2])
return {'WRITTEN', {'written_at', string.format('%d', written), 'expires_at', string.format('%d', expires)}}
"""
"""ARGV: ttl ms, run id, restore expiry ms (0 for a new write), restore write time ms, then the fields
as one JSON array of strings, name, value, name, value, … in :func:`to_hash`'s order (:func:`packed`).

One JSON argument instead of an argument per name and per value: redis-py encodes and packs every
argument in Python (~25 an entry), which cost 35-44 µs an entry on the benchmark machine against
~16 µs for one ``orjson`` text (issue 42); Redis's own ``cjson`` unpacks it. Every item is a string,
so nothing in it is a JSON number or null that ``cjson`` would read otherwise.

Returns the outcome and the stored hash; for WRITTEN only the stamps it added to the fields it was
given (the hash is exactly those), so a first write does not carry its projection back."""

# Retriable: Redis is (for now) unable to take or answer the request; the batch is held.
_UNAVAILABLE: tuple[type[BaseException], ...] = (
    redis_errors_mod.TimeoutError,
    redis_errors_mod.BusyLoadingError,  # LOADING: the dataset is being loaded after a restart
    redis_errors_mod.ReadOnlyError,  # READONLY: we reached a replica, e.g. right after a failover
    redis_errors_mod.OutOfMemoryError,  # OOM at maxmemory: entries cannot be evicted, only waited out
    redis_errors_mod.TryAgainError,  # TRYAGAIN: a cluster slot is being migrated
    redis_errors_mod.AskError,  # ASK / MOVED: cluster redirects (MovedError is an AskError)
    redis_errors_mod.ClusterDownError,  # CLUSTERDOWN / MASTERDOWN
    redis_errors_mod.NoScriptError,  # the script cache was flushed between load and call
    OSError,
)
# A write span this large is a whole batch again (no batch is that large).
_SPAN_UNBOUNDED = 1 << 16
# Not retriable: a wrong password, missing permissions: the worker exits and says what to fix.
_REFUSED: tuple[type[BaseException], ...] = (
    redis_errors_mod.AuthenticationError,
    redis_errors_mod.AuthorizationError,
    redis_errors_mod.NoPermissionError,
)


_KEY_REFUSED = re.compile(
    r"permissions to access .*keys?|can't access at least one of the keys", re.IGNORECASE
)
_COMMAND_REFUSED = re.compile(r"permissions to run the '([^']+)' command", re.IGNORECASE)


def refusal_advice(error: str, ns: str | None) -> str:
    """What to change, for a Redis refusal (NOPERM, WRONGPASS) of ``error``'s text. Pure.

    The users of ``deploy/redis/users.acl`` may touch only the key namespaces they were rendered for
    (``~ec:*`` by default) and database 0 (no SELECT); a worker whose ``EC_NS`` is another namespace is
    refused every key, which no password or command list fixes.
    """
    if _KEY_REFUSED.search(error):
        shown = ns if ns is not None and re.fullmatch(r"[A-Za-z0-9._-]{1,64}", ns) else "<EC_NS>"
        return (
            f"the key is outside this Redis user's key pattern: EC_NS is {shown!r}, and the users of "
            "deploy/redis/users.acl may touch only the namespaces they were rendered for (~ec:* by "
            f"default). Render the users for this namespace — the local stack: `EC_NS={shown} make up`; "
            f"elsewhere: `deploy/redis/acl.sh rules ec-ledger <redis version> {shown}` (and ec-guard, "
            "ec-reader) for ACL SETUSER, or "
            f"`deploy/redis/acl.sh aclfile <redis version> <password dir> {shown}` for an aclfile "
            "(deploy/k8s: EC_NS in configmap.yaml, then deploy/k8s/secrets.sh) — or set EC_NS to the "
            "namespace the users were rendered for"
        )
    command = _COMMAND_REFUSED.search(error)
    if command is not None and command.group(1).lower() == "select":
        return (
            "EC_REDIS_URL selects a database other than 0 (its path /N or ?db=N), and the users of "
            "deploy/redis/users.acl may not SELECT: the ledger lives in database 0; end EC_REDIS_URL "
            "with /0 (or drop the database number)"
        )
    if command is not None:
        return (
            f"this Redis user may not run {command.group(1).upper()}: the ledger agent (and `ledger "
            "rebuild`) logs in as ec-ledger, the guard as ec-guard, everything else as ec-reader "
            "(deploy/redis/users.acl; render them with `make up` or deploy/redis/acl.sh)"
        )
    return (
        "check the password in EC_REDIS_URL / EC_REDIS_PASSWORD and the user's ACL (the ledger agent's "
        "user needs HGETALL, EVALSHA, SCRIPT, ZRANGEBYSCORE, ZADD, WAIT: deploy/redis/users.acl)"
    )


@contextlib.contextmanager
def redis_errors(what: str, *, ns: str | None = None) -> Iterator[None]:
    """Translate ``redis`` exceptions raised inside the block into the project's error tree.

    ``ns``: the key namespace in use (``EC_NS``), named when a key is refused.

    Raises:
        RedisRefused: credentials, permissions or a command error that retrying cannot fix; the
            message says what to change (:func:`refusal_advice`).
        RedisUnavailable: Redis is unreachable, timed out, loading, read-only, out of memory or
            redirecting; the caller holds and retries.
    """
    try:
        yield
    except _REFUSED as exc:
        raise RedisRefused(
            f"{what}: Redis refused ({type(exc).__name__}: {exc}); {refusal_advice(str(exc), ns)}"
        ) from exc
    except redis_errors_mod.ConnectionError as exc:  # after the refused ones: AuthenticationError is one too
        raise RedisUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
    except _UNAVAILABLE as exc:
        raise RedisUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
    except redis_errors_mod.RedisError as exc:
        raise RedisRefused(f"{what}: {type(exc).__name__}: {exc}") from exc


def _as_bytes(value: Any) -> bytes:
    """A reply as bytes, whether the client decodes responses or not."""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def to_hash(entry: LedgerEntry) -> dict[str, str]:
    """The hash fields of an entry a station asks to write (null values and the store's stamps left out)."""
    out: dict[str, str] = {}
    for name in LEDGER_ENTRY_FIELDS:
        value = entry.get(name)
        if value is None or name in ("written_at", "expires_at"):
            continue
        out[name] = codec.dumps(value).decode("utf-8") if name == "origin" else str(value)
    return out


def packed(fields: Mapping[str, str]) -> bytes:
    """The write-once script's last argument: ``fields`` as one JSON array, name, value, name, value, …"""
    return codec.dumps([item for pair in fields.items() for item in pair])


_INTEGER = re.compile(r"-?[0-9]+")


def _int_or_none(text: str | None) -> int | None:
    """An integer field as stored, or None when it is not one (ASCII digits only: ``"²".isdigit()``
    is true, and ``int("²")`` raises, so a rewritten entry must not reach ``int``)."""
    return int(text) if text and len(text) <= 19 and _INTEGER.fullmatch(text) else None


def from_hash(fields: Mapping[bytes, bytes] | Mapping[str, str]) -> LedgerEntry:
    """An entry from its hash fields, as stored (a missing field is null)."""
    text = {
        (k.decode("utf-8", "replace") if isinstance(k, bytes) else k): (
            v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        )
        for k, v in fields.items()
    }
    origin: Origin | None = None
    if "origin" in text:
        try:
            origin = read_origin(codec.loads(text["origin"]))
        except codec.JSONDecodeError:
            origin = None
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
            "source_timestamp": _int_or_none(text.get("source_timestamp")),
            "failure_reason": text.get("failure_reason"),
            **{name: text[name] for name in SIGNATURE_FIELDS if name in text},
            "written_at": _int_or_none(text.get("written_at")),
            "expires_at": _int_or_none(text.get("expires_at")),
        },
    )


class RedisLedgerStore:
    """Redis: a pipeline per batch of writes (durability wait included), two per batch of reads."""

    def __init__(
        self,
        client: aioredis.Redis,
        *,
        ns: str,
        ttl_seconds: int,
        durability: str = "fsync",
        replicas: int = 1,
        wait_timeout_ms: int = 1000,
    ) -> None:
        self.client = client
        self.ns = ns
        self.ttl_ms = ttl_seconds * 1000
        self.durability = durability
        self.replicas = replicas
        self.wait_timeout_ms = wait_timeout_ms
        self._script = client.register_script(_WRITE_ONCE)
        self._waitaof: bool | None = None  # decided once, on the first write
        self.span: int | None = None
        """Entries a write pipeline carries at most (None: a whole batch); halved on a timeout."""
        self.round_trips = 0

    @classmethod
    def from_settings(cls, settings: Settings) -> RedisLedgerStore:
        """The store the settings describe (URL, password, TLS, namespace, TTL, durability, timeout)."""
        return cls(
            open_client(settings),
            ns=settings.ns,
            ttl_seconds=settings.ledger_ttl_seconds,
            durability=settings.redis_durability,
            replicas=settings.redis_replicas,
            wait_timeout_ms=settings.redis_wait_timeout_ms,
        )

    async def close(self) -> None:
        """Close the client's connections (and the sentinels')."""
        await close_client(self.client)

    async def ping(self) -> None:
        """One round trip, for readiness checks.

        Raises:
            RedisUnavailable, RedisRefused: as :func:`redis_errors` maps them.
        """
        with redis_errors("ping", ns=self.ns):
            await self.client.ping()

    async def _prepare_durability(self) -> None:
        """Decide once how ``fsync`` durability is obtained from this server; refuse if it cannot be."""
        if self._waitaof is not None or self.durability != "fsync":
            return
        with redis_errors("checking Redis persistence", ns=self.ns):
            info = await self.client.info("server")
            version = tuple(int(p) for p in str(info.get("redis_version", "0")).split(".")[:2] if p.isdigit())
            if version >= (7, 2):
                self._waitaof = True
                return
            try:
                config = await self.client.config_get("append*")
            except redis_errors_mod.ResponseError as exc:
                raise RedisRefused(
                    "EC_REDIS_DURABILITY=fsync needs Redis 7.2+ (WAITAOF) or CONFIG GET to check "
                    "appendfsync "
                    f"on Redis {info.get('redis_version')}: {exc}; allow CONFIG GET, upgrade Redis, or set "
                    "EC_REDIS_DURABILITY=replica|none"
                ) from exc
        decoded = {
            (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
            for k, v in config.items()
        }
        if decoded.get("appendonly") != "yes" or decoded.get("appendfsync") != "always":
            raise RedisRefused(
                f"EC_REDIS_DURABILITY=fsync: Redis {info.get('redis_version')} runs appendonly="
                f"{decoded.get('appendonly')} appendfsync={decoded.get('appendfsync')}; without WAITAOF "
                "(7.2+) an acknowledged entry is durable only with 'appendonly yes' and 'appendfsync "
                "always'. Configure "
                "Redis so, or set EC_REDIS_DURABILITY=replica (WAIT) or none"
            )
        self._waitaof = False

    async def write_many(
        self,
        entries: Sequence[LedgerEntry],
        *,
        restore: bool = False,
        written: list[WriteResult] | None = None,
    ) -> list[WriteResult]:
        """Write-once each entry, a pipeline per :attr:`span` entries, each ending with the durability wait.

        ``restore`` (``ledger rebuild``): each entry keeps its own ``written_at`` and ``expires_at``;
        an entry whose expiry has passed comes back as outcome ``EXPIRED`` and is not written.
        ``written``: each durable pipeline's results are appended to it as it completes, so a caller
        retrying after a failure sends only the rest.

        A pipeline that times out is sent again at half the span, at once, when the one before it went
        through; two timeouts in a row raise (Redis may be gone: the caller holds). Each pipeline that
        goes through doubles the span, until the first timeout of the call.
        """
        if not entries:
            return []
        await self._prepare_durability()
        results: list[WriteResult] = [] if written is None else written
        first = len(results)  # the caller's results of earlier attempts stay ahead of ours
        timed_out = slowed = False
        while (sent := len(results) - first) < len(entries):
            part = entries[sent : sent + (self.span or len(entries))]
            try:
                done = await self._write_pipeline(part, restore=restore)
            except RedisUnavailable as exc:
                if not isinstance(exc.__cause__, redis_errors_mod.TimeoutError) or len(part) == 1:
                    raise
                self.span = len(part) // 2
                if timed_out:
                    raise
                timed_out = slowed = True
                log.warning("%s; sending %d entries a pipeline from now on", exc, self.span)
                continue
            timed_out = False
            results += done
            if self.span is not None and not slowed:  # no timeout in this call yet: grow back
                self.span = None if self.span * 2 >= _SPAN_UNBOUNDED else self.span * 2
        return results[first:]

    async def _write_pipeline(self, entries: Sequence[LedgerEntry], *, restore: bool) -> list[WriteResult]:
        keys = [ledger_key(self.ns, e["run_id"], e["tool_call_id"]) for e in entries]
        hashes = [to_hash(e) for e in entries]
        with redis_errors(f"ledger write of {len(entries)} entries", ns=self.ns):
            try:
                replies = await self._send_writes(keys, entries, hashes, restore=restore)
            except redis_errors_mod.NoScriptError:  # a new server, or its script cache flushed: load, again
                await self.client.script_load(self._script.script)
                replies = await self._send_writes(keys, entries, hashes, restore=restore)
            self.round_trips += 1
        self._check_durable(replies, "the ledger write")
        results = []
        for key, fields, (outcome, flat) in zip(keys, hashes, replies, strict=True):
            pairs: dict[Any, Any] = dict(zip(flat[0::2], flat[1::2], strict=True))
            name = outcome.decode() if isinstance(outcome, bytes) else str(outcome)
            if name == LedgerOutcome.WRITTEN:
                pairs = {**fields, **{k.decode(): v.decode() for k, v in pairs.items()}}
            stored = from_hash(pairs)
            results.append(WriteResult(LedgerOutcome(name), stored, key))
        return results

    async def _send_writes(
        self,
        keys: Sequence[str],
        entries: Sequence[LedgerEntry],
        hashes: Sequence[dict[str, str]],
        *,
        restore: bool,
    ) -> list[Any]:
        """One pipeline: EVALSHA of the write-once script per entry, then the durability wait.

        EVALSHA, not the registered script called on the pipeline: redis-py asks ``SCRIPT EXISTS``
        before every pipeline that holds a script (a round trip per batch); a missing script is
        ``NoScriptError`` here instead, and the caller loads it and sends the pipeline again (each
        write is write-once, so a write that went through answers DUPLICATE the second time).
        """
        async with self.client.pipeline(transaction=False) as pipe:
            for key, entry, fields in zip(keys, entries, hashes, strict=True):
                expires = entry.get("expires_at") if restore else None
                args = (
                    self.ttl_ms,
                    entry["run_id"],
                    expires or 0,
                    entry.get("written_at") or 0,
                    packed(fields),
                )
                pipe.evalsha(self._script.sha, 2, key, owners_key(self.ns, entry["tool_call_id"]), *args)
            self._wait_durable(pipe)
            replies: list[Any] = await pipe.execute()
            return replies

    def _wait_durable(self, pipe: Any) -> None:
        """End a write pipeline with the wait ``EC_REDIS_DURABILITY`` asks for (none on an fsync server
        without WAITAOF: it fsyncs before it replies)."""
        if self.durability == "replica":
            pipe.execute_command("WAIT", self.replicas, self.wait_timeout_ms)
        elif self.durability == "fsync" and self._waitaof:
            pipe.execute_command("WAITAOF", 1, 0, self.wait_timeout_ms)

    def _check_durable(self, replies: list[Any], what: str) -> None:
        """Pop the durability wait's reply off ``replies`` and hold the batch when it fell short.

        Raises:
            RedisUnavailable: fewer replicas than ``EC_REDIS_REPLICAS``, or no fsync in time.
        """
        if self.durability == "replica":
            acked = replies.pop()
            if int(acked) < self.replicas:
                raise RedisUnavailable(
                    f"only {acked} of EC_REDIS_REPLICAS={self.replicas} replicas acknowledged {what} "
                    f"within {self.wait_timeout_ms} ms"
                )
        elif self.durability == "fsync" and self._waitaof:
            local = replies.pop()
            if not local or int(local[0]) < 1:
                raise RedisUnavailable(f"WAITAOF: {what} was not fsynced to the AOF in time")

    async def _set_once(self, items: Sequence[tuple[str, str | bytes]], what: str, durable: str) -> list[Any]:
        """``SET <key> <value> NX GET PX <ledger TTL>`` of each item, in one pipeline ended by the
        durability wait; what each key held before (None: this write took it), in order. No items: no
        round trip.

        Raises:
            RedisUnavailable: the writes are not known to be durable (``durable`` names them).
            RedisRefused: the user may not write those keys (``what`` says what was written, and by whom).
        """
        if not items:
            return []
        await self._prepare_durability()
        with redis_errors(what, ns=self.ns):
            async with self.client.pipeline(transaction=False) as pipe:
                for key, value in items:
                    pipe.set(key, value, nx=True, get=True, px=self.ttl_ms)
                self._wait_durable(pipe)
                replies: list[Any] = await pipe.execute()
            self.round_trips += 1
        self._check_durable(replies, durable)
        return replies

    async def claim_reports(self, claims: Sequence[ReportClaim]) -> list[str | None]:
        """Write-once each draft's claim on its report (SPEC 4.3), in order, in one pipeline ended by the
        durability wait: ``SET <key> <owner> NX GET PX <ledger TTL>``. Returns what each triple's claim
        held before (None: this claim took it), so a repeat in the same batch sees the first.

        Raises:
            RedisUnavailable: the claims are not known to be durable; retry them all (a claim already
                taken answers its own owner: the same outcome).
            RedisRefused: the user may not write ``<ns>:report:*`` (the guard's user, ``ec-guard``).
        """
        replies = await self._set_once(
            [
                (report_claim_key(self.ns, claim.run_id, claim.draft_id, claim.attempt), claim.owner)
                for claim in claims
            ],
            f"claiming the reports of {len(claims)} drafts in {self.ns}:report:* (the guard logs in as "
            "ec-guard, the one user that may write them; ec-reader may not)",
            "the report claims",
        )
        return [
            held if held is None or isinstance(held, str) else bytes(held).decode("utf-8", "replace")
            for held in replies
        ]

    async def recorded_judgements(self, keys: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """The semantic review's recorded judgement of each ``(run_id, digest)`` (SPEC 4.4), in one round
        trip; None where none is recorded.

        Raises:
            RedisUnavailable: Redis cannot be reached; the caller holds and retries.
        """
        if not keys:
            return []
        with redis_errors(f"looking up {len(keys)} recorded judgements in {self.ns}:judgement:*", ns=self.ns):
            async with self.client.pipeline(transaction=False) as pipe:
                for run_id, digest in keys:
                    pipe.get(judgement_key(self.ns, run_id, digest))
                replies: list[Any] = await pipe.execute()
            self.round_trips += 1
        return [None if reply is None else _as_bytes(reply) for reply in replies]

    async def record_judgements(self, records: Sequence[tuple[str, str, bytes]]) -> list[bytes]:
        """Write-once each ``(run_id, digest, value)`` (SPEC 4.4), in one pipeline ended by the durability
        wait: ``SET <key> <value> NX GET PX <ledger TTL>``. Returns what each key holds after: the value
        recorded first, so two workers that asked the judge about one draft emit the same judgement.

        Raises:
            RedisUnavailable: not known to be durable; retry them all (the writes are write-once).
            RedisRefused: the user may not write ``<ns>:judgement:*`` (the guard's user, ``ec-guard``).
        """
        replies = await self._set_once(
            [(judgement_key(self.ns, run_id, digest), value) for run_id, digest, value in records],
            f"recording {len(records)} judgements in {self.ns}:judgement:* (the semantic review logs in as "
            "ec-guard, the one user that may write them)",
            "the recorded judgements",
        )
        return [
            value if held is None else _as_bytes(held)
            for (_, _, value), held in zip(records, replies, strict=True)
        ]

    async def entries_of_run(self, run_id: str) -> list[LedgerEntry]:
        """Every live entry of one run (SCAN, for export and inspection; not a hot path)."""
        with redis_errors(f"scanning the entries of run {run_id}", ns=self.ns):
            keys = sorted(
                [key async for key in self.client.scan_iter(match=run_pattern(self.ns, run_id), count=1000)]
            )
            async with self.client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.hgetall(key)
                hashes = await pipe.execute()
        entries = [from_hash(h) for h in hashes if h]
        return sorted((e for e in entries if e["run_id"] == run_id), key=lambda e: e["tool_call_id"])

    async def ledger_keys(self) -> set[LedgerKey]:
        """The key of every entry in the namespace (SCAN, for ``ledger check``; not a hot path).

        Raises:
            RedisUnavailable, RedisRefused: as :func:`redis_errors` maps them.
        """
        with redis_errors(f"scanning the ledger keys of namespace {self.ns}", ns=self.ns):
            names = [key async for key in self.client.scan_iter(match=ledger_pattern(self.ns), count=1000)]
        parsed = (parse_ledger_key(self.ns, name.decode("utf-8", "replace")) for name in names)
        return {key for key in parsed if key is not None}

    async def read_many(self, keys: Sequence[LedgerKey]) -> dict[LedgerKey, LedgerLookup]:
        """Entries in one pipeline; owners, only for the missing ones, in a second."""
        unique = list(dict.fromkeys(keys))
        if not unique:
            return {}
        owners: dict[str, set[str]] = {}
        entries = await self.read_entries(unique)
        found = {k: e for k, e in zip(unique, entries, strict=True) if e is not None}
        missing = [k for k in unique if k not in found]
        if missing:
            with redis_errors(f"ledger owners of {len(missing)} missing entries", ns=self.ns):
                now_ms = int(time.time() * 1000)
                tool_calls = list(dict.fromkeys(t for _, t in missing))
                async with self.client.pipeline(transaction=False) as pipe:
                    for tool_call_id in tool_calls:
                        pipe.zrangebyscore(owners_key(self.ns, tool_call_id), f"({now_ms}", "+inf")
                    members = await pipe.execute()
                self.round_trips += 1
                owners = {
                    t: {m.decode("utf-8") for m in ms} for t, ms in zip(tool_calls, members, strict=True)
                }
        out: dict[LedgerKey, LedgerLookup] = {}
        for run_id, tool_call_id in unique:
            entry = found.get((run_id, tool_call_id))
            if entry is not None:
                out[(run_id, tool_call_id)] = LedgerLookup(entry)
            else:
                foreign = bool(owners.get(tool_call_id, set()) - {run_id})
                out[(run_id, tool_call_id)] = LedgerLookup(None, foreign)
        return out

    async def read_entries(self, keys: Sequence[LedgerKey]) -> list[LedgerEntry | None]:
        """Entries as stored, one per key (None where there is none), in one pipeline.

        Raises:
            RedisUnavailable, RedisRefused: as :func:`redis_errors` maps them.
        """
        if not keys:
            return []
        with redis_errors(f"reading {len(keys)} ledger entries", ns=self.ns):
            async with self.client.pipeline(transaction=False) as pipe:
                for run_id, tool_call_id in keys:
                    pipe.hgetall(ledger_key(self.ns, run_id, tool_call_id))
                hashes = await pipe.execute()
        self.round_trips += 1
        return [from_hash(fields) if fields else None for fields in hashes]
