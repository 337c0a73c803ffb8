"""The agent harness's client: a tool call's ledger entry and a draft's verdict, over Kafka.

``lookup`` produces one ``raw-hits`` record and returns the ledger entry for its
``(run_id, tool_call_id)`` **as stored** — the exact projection bytes the model must be shown, or
FAILED with the reason. ``check`` produces one draft and returns its verdict as on the ``verdicts``
topic. Replies are read from the partition the request's key maps to (:mod:`streams.client.readers`),
with no consumer group and no commits.

Retries are safe by construction: the ledger is write-once, so a second record for a key the ledger
holds ends as DUPLICATE (same bytes) or CONFLICT (no change), and the entry that comes back is
always the first one. A lookup first asks Redis and returns at once when the entry is there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NotRequired, cast

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import DefaultPartitioner
from typing_extensions import TypedDict

from models.ids import is_valid_id
from models.ledger import LedgerEntry, as_stored
from models.verdict import ReportEvent, Verdict
from models.vocab import LedgerOutcome, LedgerStatus, RecordStatus, Station, Topic
from streams import codec
from streams.client.readers import PartitionReader, ReaderPool, Reply, Waiter, read_key_from_start
from streams.codec import JSONObject
from streams.errors import (
    CheckTimeout,
    InvalidId,
    KafkaUnavailable,
    LedgerIntegrityError,
    LookupTimeout,
    OversizedInput,
    RejectedInput,
    ReportIntegrityError,
    ReportTimeout,
    VerdictIntegrityError,
)
from streams.hashing import sha256_hex
from streams.kafka.config import kafka_errors, new_producer
from streams.ledger.redis import RedisLedgerStore
from streams.ledger.store import WriteOnceFields, write_outcome
from streams.messages import Record
from streams.pipeline import Outcome, Projected, StationRules, chain
from streams.search import (
    DEFAULT_MODE,
    Filters,
    KnowledgeSearchPort,
    PyRagSearch,
    SearchMode,
    raw_hits_record,
)
from streams.settings import Settings, get_settings
from streams.stations.adapt import validate_raw_hits
from streams.stations.guard import EvidenceGuard
from streams.stations.ledger_view import LedgerKey
from streams.trust.integrity import check_entry, check_verdict, distinct_reports
from streams.trust.keys import TrustedKeys, load_trusted_keys

log = logging.getLogger(__name__)


class LookupAnswer(TypedDict):
    """The gateway's answer to a lookup (``LookupAnswer`` in docs/openapi.yaml): READY with the
    projection and its hash, or FAILED with the reason; ``outcome`` for a lookup, not for a plain read."""

    run_id: str
    tool_call_id: str
    status: str
    outcome: NotRequired[str]
    projection_sha256: NotRequired[str | None]
    projection: NotRequired[str | None]
    failure_reason: NotRequired[str | None]


@dataclass(frozen=True, slots=True)
class LedgerReply:
    """One ledger entry as stored: what the model must be shown for one tool call."""

    entry: LedgerEntry
    from_ledger: bool
    """True when Redis already held the entry (no record was produced)."""
    outcome: LedgerOutcome | None = None
    """For a lookup: what write-once made of *this* record (SPEC 3.6). ``WRITTEN``: it wrote the
    entry; ``DUPLICATE``: the entry was there and equals what this record makes; ``CONFLICT``: the
    entry was there and differs — show the model the stored entry (this reply's) and alert.
    None for a plain read (:meth:`EvidenceChainClient.entry`)."""

    @property
    def run_id(self) -> str:
        return self.entry["run_id"]

    @property
    def tool_call_id(self) -> str:
        return self.entry["tool_call_id"]

    @property
    def status(self) -> str:
        """``READY`` or ``FAILED``."""
        return str(self.entry["status"])

    @property
    def projection(self) -> str | None:
        """The exact text the model must be shown (never re-serialized); None when FAILED."""
        return self.entry["projection"]

    @property
    def projection_bytes(self) -> bytes | None:
        """:attr:`projection` as the UTF-8 bytes ``projection_sha256`` is computed over."""
        return None if self.entry["projection"] is None else self.entry["projection"].encode("utf-8")

    @property
    def projection_sha256(self) -> str | None:
        return self.entry["projection_sha256"]

    @property
    def failure_reason(self) -> str | None:
        return None if self.entry["failure_reason"] is None else str(self.entry["failure_reason"])

    def as_answer(self) -> LookupAnswer:
        """The gateway's answer: ids, status, and the projection with its hash or the failure reason."""
        answer: LookupAnswer = {
            "run_id": self.run_id,
            "tool_call_id": self.tool_call_id,
            "status": self.status,
        }
        if self.outcome is not None:
            answer["outcome"] = str(self.outcome)
        if self.status == LedgerStatus.READY:
            answer["projection_sha256"] = self.projection_sha256
            answer["projection"] = self.projection
        else:
            answer["failure_reason"] = self.failure_reason
        return answer


@dataclass(frozen=True, slots=True)
class VerdictReply:
    """A draft's verdict: its exact bytes on the ``verdicts`` topic and their decoded value."""

    raw: bytes
    verdict: Verdict

    @property
    def kind(self) -> str:
        """``PASS``, ``REJECT`` or ``FALLBACK``."""
        return str(self.verdict["verdict"])


def _as_bytes(value: bytes | bytearray | memoryview | str | JSONObject) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return codec.dumps(value)


def stored_entry(value: JSONObject) -> LedgerEntry:
    """An entry with exactly the ledger fields, in their order (a ledger event or a Redis hash)."""
    return as_stored(value)


def check_integrity(entry: LedgerEntry, key: tuple[str, str], trusted: TrustedKeys | None = None) -> None:
    """Refuse to hand out an entry that does not hold (SPEC 3.7): first one that is not ``key``'s (its
    stored ``run_id`` and ``tool_call_id``, signed or not), then bytes that do not hash to its
    ``projection_sha256`` and, with ``trusted`` keys, an entry not signed by a trusted ledger key
    (:func:`streams.trust.integrity.check_entry`, the one check).

    Raises:
        LedgerIntegrityError: another key's entry (copied under this key in Redis, or produced under
            this run's key on the ``ledger`` topic), a READY entry without a projection, bytes altered
            after they were written, or (with trusted keys) a missing, untrusted or failing signature.
    """
    held = check_entry(entry, trusted, key)
    if not held.holds:
        raise LedgerIntegrityError(
            f"the ledger entry read for {key[0]}/{key[1]} does not hold ({held.detail}): it was altered, "
            "moved or forged after it was written; do not show it, report it"
        )


GRACE_SECONDS = 2.0
"""How long a waiter that passed over a reply that does not hold still waits for one that does: the
genuine reply follows a forged one by the workers' own latency."""


class PassedOver:
    """A waiter's test that takes only a reply that holds, and remembers why it passed one over.

    A reply that is the one asked for (same draft hash, same tool call) but does not hold — forged,
    unsigned, another run's entry under this run's key — is not the answer: a writer to the topic must
    not be able to answer first and so block the genuine reply that follows it (nor, over MCP, spend the
    agent's attempts). It is logged and skipped; only when nothing that holds came does the caller say
    so (an integrity error in place of a timeout)."""

    def __init__(self, what: str, grace_seconds: float = GRACE_SECONDS) -> None:
        self.what = what
        self.grace_seconds = grace_seconds
        self.detail: str | None = None
        """Why the first reply passed over did not hold (None: none was)."""
        self._passed = asyncio.Event()

    async def reply(self, future: asyncio.Future[Reply]) -> Reply:
        """The waiter's reply; once one was passed over, for at most ``grace_seconds`` more (a forged
        reply is answered with an integrity error soon, not at the caller's whole timeout).

        Raises:
            TimeoutError: a reply was passed over and none that holds came within the grace.
        """
        passed = asyncio.ensure_future(self._passed.wait())
        try:
            await asyncio.wait((future, passed), return_when=asyncio.FIRST_COMPLETED)
        finally:
            passed.cancel()
        if not future.done():
            await asyncio.wait((future,), timeout=self.grace_seconds)
            if not future.done():
                raise TimeoutError
        return future.result()

    def over(self, test: Callable[[object], str | None | bool]) -> Callable[[object], bool]:
        """``test`` answers False (not the reply asked for), None (it is, and it holds) or why it does
        not hold."""

        def match(value: object) -> bool:
            found = test(value)
            if found is False:
                return False
            if found is None:
                return True
            self._passed.set()
            if self.detail is None:
                log.warning(
                    "passed over a %s that does not hold (%s); waiting for one that does", self.what, found
                )
            self.detail = self.detail or str(found)
            return False

        return match


def _entry_of(
    run_id: str, tool_call_id: str, trusted: TrustedKeys | None
) -> Callable[[object], str | None | bool]:
    """A ledger event's answer to :class:`PassedOver`: False unless it names ``tool_call_id``; then
    None when it holds as ``(run_id, tool_call_id)``'s entry, else why not."""

    def test(value: object) -> str | None | bool:
        if not isinstance(value, dict) or value.get("tool_call_id") != tool_call_id:
            return False
        held = check_entry(stored_entry(value), trusted, (run_id, tool_call_id))
        return None if held.holds else held.detail

    return test


def _verdict_of(digest: str, trusted: TrustedKeys | None) -> Callable[[object], str | None | bool]:
    """A verdict's answer to :class:`PassedOver`: False unless it is the draft ``digest``'s; then None
    when it holds, else why not."""

    def test(value: object) -> str | None | bool:
        if not isinstance(value, dict) or value.get("draft_sha256") != digest:
            return False
        held = check_verdict(cast(Verdict, value), trusted, draft_sha256=digest)
        return None if held.holds else held.detail

    return test


def intended_entry(raw: bytes, rules: StationRules) -> WriteOnceFields:
    """The ``status`` and ``projection_sha256`` the ledger station would write for this raw-hits record.

    Computed in process by the workers' own stations (postprocess, project: :func:`streams.pipeline.chain`),
    so a lookup answered from an existing entry can say whether that entry is this record's.
    A record the stations reject with valid ids is a FAILED entry (no hash), as in the worker.
    """
    step = chain(Record.offline(raw), rules, (Station.POSTPROCESS, Station.PROJECT))
    projected = step.detail if isinstance(step, Outcome) else None
    event = projected.event if isinstance(projected, Projected) else None
    if event is None or event["status"] != RecordStatus.OK:
        return {"status": LedgerStatus.FAILED, "projection_sha256": None}
    return {"status": LedgerStatus.READY, "projection_sha256": event["projection_sha256"]}


def lookup_outcome(
    raw: bytes, rules: StationRules, stored: LedgerEntry, written_at: tuple[str, int, int] | None
) -> LedgerOutcome:
    """SPEC 3.6's outcome for this record given the entry as stored.

    ``written_at`` is ``(topic, partition, offset)`` of this request's own ``raw-hits`` record (None
    when it was not produced): the stored entry is this record's write when its origin is that record.
    """
    if written_here(stored, written_at):
        return LedgerOutcome.WRITTEN
    found = write_outcome(stored, intended_entry(raw, rules))
    return LedgerOutcome.CONFLICT if found == LedgerOutcome.CONFLICT else LedgerOutcome.DUPLICATE


def written_here(stored: LedgerEntry, written_at: tuple[str, int, int] | None) -> bool:
    """Whether the stored entry is the write of the record produced at ``written_at`` (its origin)."""
    origin = stored.get("origin")
    where = (None, None, None) if origin is None else (origin["topic"], origin["partition"], origin["offset"])
    return written_at is not None and where == written_at


def draft_key(raw: bytes, guard: EvidenceGuard) -> bytes:
    """The key a draft is produced under, so its verdict comes back on the same partition.

    The guard keys a verdict by the run_id it read when that is a valid id, else by the draft
    record's own key; so a draft is keyed by the run_id the guard's own first step reads, or by its
    SHA-256 when that is not a valid id.
    """
    run_id = guard.plan(raw).run_id
    if run_id is not None and is_valid_id(run_id):
        return run_id.encode("ascii")
    return sha256_hex(raw).encode("ascii")


class EntryReads:
    """Ledger reads of concurrent requests coalesced: one pipeline per turn of the event loop.

    Hundreds of lookups in flight cost a handful of Redis round trips and connections, not one each.
    """

    def __init__(self, store: Callable[[], RedisLedgerStore]) -> None:
        self._store = store
        self._pending: list[tuple[LedgerKey, asyncio.Future[LedgerEntry | None]]] = []
        self._flushing: asyncio.Task[None] | None = None

    async def read(self, key: LedgerKey) -> LedgerEntry | None:
        """The entry as stored, or None.

        Raises:
            RedisUnavailable, RedisRefused: Redis does not answer or refused.
        """
        future: asyncio.Future[LedgerEntry | None] = asyncio.get_running_loop().create_future()
        self._pending.append((key, future))
        if self._flushing is None:
            self._flushing = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # let the requests of this turn join the pipeline
        batch, self._pending, self._flushing = self._pending, [], None
        try:
            found = await self._store().read_entries([key for key, _ in batch])
        except Exception as exc:  # noqa: BLE001 - handed to every caller of this batch
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), entry in zip(batch, found, strict=True):
            if not future.done():
                future.set_result(entry)


class EvidenceChainClient:
    """Lookups and checks against a running evidence-chain, from the same settings as the workers.

    Use it as an async context manager (or call :meth:`start` and :meth:`close`)::

        async with EvidenceChainClient() as client:
            shown = await client.lookup(raw_hits_record)     # show shown.projection to the model
            verdict = await client.check(draft)              # PASS / REJECT / FALLBACK
    """

    reply_grace_seconds: float = GRACE_SECONDS
    """How long :meth:`lookup` and :meth:`check` still wait for a reply that holds once one that does not
    (forged, unsigned, another run's) came first (:class:`PassedOver`)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        timeout_ms: int | None = None,
        search: KnowledgeSearchPort | None = None,
    ) -> None:
        self.settings = settings or get_settings()
        self.timeout_ms = timeout_ms or self.settings.gateway_timeout_ms
        self._search = search
        """The knowledge engine of :meth:`lookup_knowledge`; py-rag (``EC_PYRAG_URL``) when not given."""
        self._producer: AIOKafkaProducer | None = None
        self._store: RedisLedgerStore | None = None
        self._readers = ReaderPool(self.settings)
        self._partitioner = DefaultPartitioner()
        self._rules = StationRules.without_keys(self.settings)
        """The stations before the ledger, as :func:`intended_entry` runs them (they read no key)."""
        self._guard = self._rules.guard
        self.trusted: TrustedKeys | None = (
            load_trusted_keys(self.settings.trusted_keys_file) if self.settings.trusted_keys_file else None
        )
        """``EC_TRUSTED_KEYS_FILE``, read once: with it, no entry is handed out unless signed by a trusted
        ledger key (SPEC 3.7); a bad file raises ConfigurationError here."""
        self._entries = EntryReads(lambda: self.store)
        self._partitions: dict[str, list[int]] = {}

    async def __aenter__(self) -> EvidenceChainClient:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def start(self) -> None:
        """Connect to Kafka and Redis.

        Raises:
            KafkaUnavailable: the broker cannot be reached.
        """
        if self._producer is None:
            producer = new_producer(self.settings, linger_ms=0)
            with kafka_errors(f"starting the client's producer on {self.settings.kafka_bootstrap}"):
                await producer.start()
            self._producer = producer
        if self._store is None:
            self._store = RedisLedgerStore.from_settings(self.settings)

    async def close(self) -> None:
        """Stop the readers and close the connections."""
        await self._readers.stop()
        if self._producer is not None:
            producer, self._producer = self._producer, None
            await producer.stop()
        if self._store is not None:
            store, self._store = self._store, None
            await store.close()
        if self._search is not None:
            await self._search.close()

    @property
    def readers(self) -> list[PartitionReader]:
        """The partition readers started so far (one per topic partition in use)."""
        return self._readers.readers

    @property
    def producer(self) -> AIOKafkaProducer:
        if self._producer is None:
            raise RuntimeError("EvidenceChainClient.start() was not awaited")
        return self._producer

    @property
    def store(self) -> RedisLedgerStore:
        if self._store is None:
            raise RuntimeError("EvidenceChainClient.start() was not awaited")
        return self._store

    async def ping(self) -> None:
        """One round trip to Redis and one metadata request to Kafka (readiness).

        Raises:
            KafkaUnavailable, RedisUnavailable: one of them does not answer.
        """
        await self.store.ping()
        with kafka_errors("asking Kafka for the topics"):
            await self._partition_of(Topic.RAW_HITS, b"-", refresh=True)

    async def entry(self, run_id: str, tool_call_id: str) -> LedgerReply | None:
        """The entry the ledger holds for one tool call, as stored, or None.

        Raises:
            RejectedInput: an id that is not valid (it can have no entry).
            LedgerIntegrityError: the stored entry does not hold (:func:`check_integrity`).
            RedisUnavailable: Redis does not answer.
        """
        for name, value in (("run_id", run_id), ("tool_call_id", tool_call_id)):
            if not is_valid_id(value):
                raise InvalidId(f"bad {name}: must be 1-128 characters of [A-Za-z0-9._-]")
        found = await self._entries.read((run_id, tool_call_id))
        if found is None:
            return None
        entry = stored_entry(found)
        check_integrity(entry, (run_id, tool_call_id), self.trusted)
        return LedgerReply(entry, from_ledger=True)

    async def lookup(
        self,
        record: bytes | bytearray | memoryview | str | JSONObject,
        *,
        timeout_ms: int | None = None,
    ) -> LedgerReply:
        """Produce one ``raw-hits`` record (unless the ledger holds its key) and return its entry.

        A record with valid ids always gets an entry: READY with the projection, or FAILED with
        the reason (a schema violation, an oversized value, ...). A retried lookup returns the same
        entry: the ledger is write-once.

        Raises:
            RejectedInput: the record's ids cannot be read or are not valid (its ``reason`` is the
                dead-letter reason, MALFORMED_JSON or INVALID_ID): it could never have an entry.
            LookupTimeout: no entry within the timeout; nothing is left waiting, a retry is safe.
            LedgerIntegrityError: the stored entry does not hold: it is not this key's entry, its
                projection does not match its hash or, with trusted keys, it is not signed by a trusted
                ledger key.
            KafkaUnavailable, RedisUnavailable: a service does not answer.
        """
        raw = _as_bytes(record)
        run_id, tool_call_id = self._ids_of(raw)
        key = run_id.encode("ascii")
        timeout_s = (timeout_ms or self.timeout_ms) / 1000
        passed = PassedOver(f"ledger event for {run_id}/{tool_call_id}", self.reply_grace_seconds)
        try:
            async with asyncio.timeout(timeout_s):
                partition = await self._partition_of(Topic.RAW_HITS, key)
                match = passed.over(_entry_of(run_id, tool_call_id, self.trusted))
                async with self._waiting(Topic.LEDGER, partition, key, match) as waiter:
                    # Registered first, then asked: an entry written before the waiter is in Redis.
                    held = await self.entry(run_id, tool_call_id)
                    if held is not None:
                        outcome = await self._outcome(raw, held.entry, None)
                        return LedgerReply(held.entry, from_ledger=True, outcome=outcome)
                    offset = await self._send(Topic.RAW_HITS, raw, key, partition)
                    reply = await passed.reply(waiter.future)
        except TimeoutError as exc:
            if passed.detail is not None:
                raise LedgerIntegrityError(
                    f"the ledger event for {run_id}/{tool_call_id} does not hold ({passed.detail}), and none "
                    "that holds followed: it was moved or forged; do not show it, report it"
                ) from exc
            raise LookupTimeout(
                f"no ledger entry for {run_id}/{tool_call_id} within {timeout_s * 1000:.0f} ms; "
                "the workers may be behind or stopped — retrying the same record is safe"
            ) from exc
        # The topic's record key is the run; the entry must be this key's too (SPEC 3.7): the waiter
        # took only an entry that holds (another run's entry produced under this run's key, or a forged
        # one, is passed over while the genuine one may still come).
        entry = stored_entry(reply.value)
        written_at = (self.settings.topic(Topic.RAW_HITS), partition, offset)
        outcome = await self._outcome(raw, entry, written_at)
        return LedgerReply(entry, from_ledger=False, outcome=outcome)

    async def _outcome(
        self, raw: bytes, stored: LedgerEntry, written_at: tuple[str, int, int] | None
    ) -> LedgerOutcome:
        """:func:`lookup_outcome`: at once when the entry is this request's own write (the usual
        answer, nothing to compute), else in a thread (it runs the stations on the record, up to
        milliseconds for a large one, off the event loop). Handing the usual answer to a thread as well
        put a thread switch into every lookup's latency (BENCHMARKS.md, "The gateway's answer off the
        thread")."""
        if written_here(stored, written_at):
            return LedgerOutcome.WRITTEN
        return await asyncio.to_thread(lookup_outcome, raw, self._rules, stored, written_at)

    async def lookup_knowledge(
        self,
        run_id: str,
        tool_call_id: str,
        query: str,
        filters: Filters | None = None,
        mode: SearchMode = DEFAULT_MODE,
        *,
        timeout_ms: int | None = None,
    ) -> LedgerReply:
        """Ask the knowledge engine (py-rag) and return the ledger entry of its answer, as :meth:`lookup`.

        The answer's bytes become one raw-hits record (:func:`~streams.search.raw_hits_record`), so
        whatever py-rag said ends as an entry: READY with the projection, or FAILED with the reason.
        py-rag is asked every time; when the ledger already holds ``(run_id, tool_call_id)`` the
        stored entry is what comes back (a retried tool call shows the model what it was shown the
        first time), with the ``outcome`` :meth:`lookup` gives this answer's record.

        Raises:
            InvalidId: an id is not valid (nothing is asked or produced).
            SearchUnavailable: py-rag cannot be reached or kept failing; nothing was produced (retriable).
            SearchRefused: py-rag refused (3xx, 4xx) or answered more than a raw-hits record may hold
                (its answer, or the record it makes: nothing is produced).
            ConfigurationError: no ``EC_PYRAG_URL`` and no search port was given.
            LookupTimeout, LedgerIntegrityError, KafkaUnavailable, RedisUnavailable: as :meth:`lookup`.
        """
        for name, value in (("run_id", run_id), ("tool_call_id", tool_call_id)):
            if not is_valid_id(value):
                raise InvalidId(f"bad {name}: must be 1-128 characters of [A-Za-z0-9._-]")
        if self._search is None:
            self._search = PyRagSearch(self.settings)
        answer = await self._search.search(query, filters, mode)
        cap = self.settings.input.max_message_bytes
        record = raw_hits_record(run_id, tool_call_id, answer, max_bytes=cap)
        return await self.lookup(record, timeout_ms=timeout_ms)

    async def check(
        self,
        draft: bytes | bytearray | memoryview | str | JSONObject,
        *,
        timeout_ms: int | None = None,
    ) -> VerdictReply:
        """Produce one draft and return its verdict as on the ``verdicts`` topic.

        The verdict is found by ``draft_sha256``, the hash of the exact bytes sent. Every draft gets
        one, an unparsable one too. With trusted keys it is handed out only when a trusted guard key
        signed it (SPEC 4.3).

        Raises:
            CheckTimeout: no verdict within the timeout; nothing is left waiting, a retry is safe.
            VerdictIntegrityError: the verdict that came does not hold (with trusted keys: unsigned, or
                not signed by a trusted guard key): it is not handed out.
            KafkaUnavailable: the broker does not answer.
        """
        raw = _as_bytes(draft)
        digest = sha256_hex(raw)
        key = draft_key(raw, self._guard)
        timeout_s = (timeout_ms or self.timeout_ms) / 1000
        passed = PassedOver(f"verdict for draft {digest[:12]}…", self.reply_grace_seconds)
        try:
            async with asyncio.timeout(timeout_s):
                partition = await self._partition_of(Topic.DIAGNOSIS_DRAFTS, key)
                match = passed.over(_verdict_of(digest, self.trusted))
                async with self._waiting(Topic.VERDICTS, partition, key, match) as waiter:
                    await self._send(Topic.DIAGNOSIS_DRAFTS, raw, key, partition)
                    reply = await passed.reply(waiter.future)
        except TimeoutError as exc:
            if passed.detail is not None:
                raise VerdictIntegrityError(
                    f"the verdict for draft {digest[:12]}… does not hold ({passed.detail}), and none that "
                    "holds followed: something other than the guard wrote it to the verdicts topic; do not "
                    "act on it, report it"
                ) from exc
            raise CheckTimeout(
                f"no verdict for draft {digest[:12]}… within {timeout_s * 1000:.0f} ms; the guard may be "
                "behind or stopped — sending the same draft again is safe"
            ) from exc
        return VerdictReply(reply.raw, reply.value)  # the waiter took only a verdict that holds

    async def reports(
        self,
        run_id: str,
        *,
        verdict_event_id: str | None = None,
        timeout_ms: int | None = None,
    ) -> list[ReportEvent]:
        """The reports published for one run (SPEC 4.3), as the ``reports`` topic carries them.

        Reads the run's partition of ``reports`` from its first offset up to its end at the time of the
        call and keeps, in offset order, the run's reports that hold — with trusted keys, only those a
        trusted guard key signed — each once by its signed fields, never by ``event_id`` alone, and one
        per ``(run_id, draft_id, attempt)``, the first (:func:`streams.trust.integrity.distinct_reports`):
        a re-delivered draft publishes the same event again, and a copy re-sent under a new
        ``event_id`` is the same report. That is what downstream systems may use: a PASS's
        reviewed fields or a FALLBACK's fixed report, never a raw draft. A report's ``limitations``
        (:class:`models.verdict.Report`) are the agent's own words: the review does not judge them, so
        show them as the agent's, never as checked (SPEC 4.3). With ``verdict_event_id`` (a
        PASS or FALLBACK verdict's ``event_id``, from :meth:`check`) it also waits for that verdict's
        report, which the guard produces in the verdict's batch but may become readable just after it;
        a REJECT publishes nothing, so never wait for one. Events older than the topic's retention are
        gone.

        Raises:
            InvalidId: ``run_id`` is not a valid id.
            ReportTimeout: ``verdict_event_id``'s report did not appear within the timeout.
            ReportIntegrityError: reports naming ``verdict_event_id`` came, and none holds.
            KafkaUnavailable: the broker does not answer.
        """
        if not is_valid_id(run_id):
            raise InvalidId("run_id must be 1-128 characters of [A-Za-z0-9._-]")
        key = run_id.encode("ascii")
        timeout_s = (timeout_ms or self.timeout_ms) / 1000
        wanted = verdict_event_id

        def published(value: Any) -> bool:
            return isinstance(value, dict) and value.get("verdict_event_id") == wanted

        try:
            async with asyncio.timeout(timeout_s):
                partition = await self._partition_of(Topic.REPORTS, key)
                values = await read_key_from_start(
                    self.settings,
                    self.settings.topic(Topic.REPORTS),
                    partition,
                    key,
                    until=published if wanted is not None else None,
                )
        except TimeoutError as exc:
            raise ReportTimeout(
                f"no report for verdict {wanted} on {self.settings.topic(Topic.REPORTS)} within "
                f"{timeout_s * 1000:.0f} ms; is the guard running, and was that verdict a PASS or FALLBACK?"
            ) from exc
        kept = distinct_reports(values, self.trusted, run_id=run_id)
        for why in kept.refused:
            log.warning("a report on %s for run %s was not handed out: %s", Topic.REPORTS, run_id, why)
        if wanted is not None and not any(r.get("verdict_event_id") == wanted for r in kept.reports):
            if any(isinstance(v, dict) and v.get("verdict_event_id") == wanted for v in values):
                raise ReportIntegrityError(
                    f"the report of verdict {wanted} does not hold "
                    f"({'; '.join(kept.refused) or 'another report owns its draft'}); "
                    "it is not handed out"
                )
        return kept.reports

    # --- internals ---------------------------------------------------------------------------------

    def _ids_of(self, raw: bytes) -> tuple[str, str]:
        """The record's ids, as the postprocess station reads them; refuse one that has none."""
        try:
            record = validate_raw_hits(raw, self.settings.input)
        except OversizedInput as exc:
            if exc.run_id is None or exc.tool_call_id is None:
                raise
            return exc.run_id, exc.tool_call_id
        except RejectedInput as exc:
            refused = exc.as_rejection()
            if refused["run_id"] is None or refused["tool_call_id"] is None:
                raise
            return refused["run_id"], refused["tool_call_id"]
        return record["run_id"], record["tool_call_id"]

    @contextlib.asynccontextmanager
    async def _waiting(
        self, topic: Topic, partition: int, key: bytes, match: Callable[[object], bool]
    ) -> AsyncIterator[Waiter]:
        """A waiter for the reply with ``key`` that ``match`` takes on one partition of ``topic``,
        registered before the request is sent and forgotten on the way out, answered or not (nothing
        stays behind).

        Raises:
            KafkaUnavailable, KafkaRefused: the partition's reader could not start.
        """
        reader = await self._readers.reader(self.settings.topic(topic), partition)
        waiter = reader.add(key, match)
        try:
            yield waiter
        finally:
            reader.discard(waiter)

    async def _partition_of(self, topic: Topic, key: bytes, *, refresh: bool = False) -> int:
        """The partition the producer's own partitioner (murmur2 of the key) picks."""
        name = self.settings.topic(topic)
        known = None if refresh else self._partitions.get(name)
        if known is None:
            with kafka_errors(f"asking Kafka for the partitions of {name}"):
                found = await self.producer.partitions_for(name)
            if not found:
                raise KafkaUnavailable(f"topic {name} has no partitions yet; is the worker running?")
            known = self._partitions[name] = sorted(found)
        return int(self._partitioner(key, known, known))

    async def _send(self, topic: Topic, raw: bytes, key: bytes, partition: int) -> int:
        """Produce one record; its offset."""
        name = self.settings.topic(topic)
        with kafka_errors(f"producing to {name}[{partition}]"):
            delivered = await self.producer.send(name, raw, key=key, partition=partition)
            metadata = await delivered
        return int(metadata.offset)
