"""What a worker and the audit sink tell Prometheus: one registry per process, Prometheus naming.

The worker's metrics (served at ``GET /metrics`` on ``EC_WEB_PORT`` when ``EC_WEB_ENABLED``):

- ``evidence_chain_records_total{agent,outcome}``: every consumed record, once, by what became of
  it: ``ok``, ``dead_letter``, ``duplicate`` / ``conflict`` (ledger), ``pass`` / ``reject`` /
  ``fallback`` (guard). Per agent, the outcomes add up to the records the agent processed.
- ``evidence_chain_dead_letters_total{agent,reason}``: dead letters by the spec's reason.
- ``evidence_chain_batch_seconds{agent}``: histogram of a batch's time, gap checks to acks.
- ``evidence_chain_redis_round_trips_total{agent}``: Redis round trips (ledger, guard).
- ``evidence_chain_consumer_lag{topic,partition}``: records on an assigned input partition not yet
  processed (high watermark − processed position), refreshed on each scrape.
- ``evidence_chain_held_seconds{agent}``: how long the agent's current batch has been held for an
  outage (0 when none).
- ``evidence_chain_commits_total{agent}``: offset commits that went through (an agent that has
  finished records commits within ``EC_BROKER_COMMIT_INTERVAL_SECONDS``).
- ``evidence_chain_ready``: 1 while ``/readyz`` would answer 200, else 0 (probed on each scrape).
- ``evidence_chain_violations_total{code}``: judged drafts whose verdict carries the code (once per
  draft and code); ``evidence_chain_review_refusals_total``: judged drafts the review of claims
  (SPEC 4.2, the ``CLAIM_*`` codes) found an unsupported specific in;
  ``evidence_chain_review_rules_info{version}``: 1 for the version of the review's rules
  (docs/review-rules.md) a guard agent judges by, shown when the guard agent starts.
- ``evidence_chain_event_loop_lag_seconds``: histogram of how late the event loop woke a probe that
  sleeps every ``LOOP_PROBE_SECONDS`` (everything of a worker shares that one loop: a long station
  run, a blocking call or a garbage collection shows here).
- ``process_*``: the process's CPU, memory, open files and start time (prometheus_client's).

The gateway's metrics (``evidence-chain gateway``, served at its own ``GET /metrics``):

- ``evidence_chain_gateway_requests_total{route,status}``: every answered request, by route template
  (``/v1/lookups``, ``/v1/ledger/{run_id}/{tool_call_id}``, ...; ``unmatched`` for no route) and status.
- ``evidence_chain_gateway_request_seconds{route}``: histogram of the time to answer.
- ``evidence_chain_gateway_lookups_total{answered_from}``: READY or FAILED entries handed out, from
  the ``ledger`` (Redis held the entry: nothing produced) or the ``pipeline`` (a record was produced).
- ``evidence_chain_gateway_timeouts_total{kind}``: lookups and checks that got no reply in time (504).
- ``evidence_chain_door_refusals_total{door,reason}``: answers that refused a request, by the door
  (``gateway``) and the ``error.reason`` of the answer; ``LEDGER_INTEGRITY`` is an entry that did not
  hold where an agent asked for it (SPEC 3.7), which no other cause produces.

Counters live in the process: they start at 0 when a worker starts (Prometheus ``rate()``/``increase()``
handle restarts). Every label set an alert or a panel reads is shown at 0 before its first event, so
the first event is an increase and not a new series (``deploy/prometheus``, ``deploy/grafana``).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter as Tally
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from models.vocab import DeadLetterReason, LedgerOutcome, Station, ViolationCode
from streams.pipeline import Outcome
from streams.stations.review import RULES_VERSION

__all__ = ["CONTENT_TYPE_LATEST", "AuditSinkMetrics", "GatewayMetrics", "WorkerMetrics", "outcome_label"]

OUTCOMES = ("ok", "dead_letter", "duplicate", "conflict", "pass", "reject", "fallback")
BATCH_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
LOOP_LAG_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
LOOP_PROBE_SECONDS = 0.5
"""How often the event-loop probe sleeps (two wake-ups a second: nothing next to a batch)."""
REVIEW_CODES = frozenset(code for code in ViolationCode if code.startswith("CLAIM_"))
"""The codes of the review of claims (SPEC 4.2, D): what ``evidence_chain_review_refusals_total`` counts."""


def outcome_label(outcome: Outcome[Any]) -> str:
    """What became of one record at its station, as the ``outcome`` label."""
    if outcome.station == Station.LEDGER:
        written = outcome.audit.get("outcome")
        if written == LedgerOutcome.CONFLICT:
            return "conflict"
        if written == LedgerOutcome.DUPLICATE:
            return "duplicate"
    if outcome.rejection is not None:
        return "dead_letter"
    if outcome.station == Station.GUARD:
        verdict = outcome.audit.get("verdict")
        if isinstance(verdict, str) and verdict.lower() in OUTCOMES:
            return verdict.lower()
    return "ok"


def set_lag(gauge: Gauge, lags: Mapping[tuple[str, int], int]) -> None:
    """One lag gauge set to exactly these partitions: a partition no longer assigned disappears."""
    gauge.clear()
    for (topic, partition), lag in lags.items():
        gauge.labels(topic, str(partition)).set(lag)


PHASES = ("records", "settle", "station", "redis", "acks")
"""Where an agent's own path spends its wall time (``evidence_chain_agent_seconds_total``): waiting
on an empty channel; settling before a thin batch; running its station (its gap check and handing
messages to the producer included, and whatever other agents run on the event loop meanwhile);
its Redis round trips (the guard's judging between its two reads included); blocked on batches in
flight (the window full, or batch by batch with ``EC_BATCHES_IN_FLIGHT=1``). Acks that arrive while
the agent does other work cost it nothing."""


JUDGE_OUTCOMES = ("answered", "unavailable", "declined", "refused")
"""How a call to the semantic judge ended (``evidence_chain_judge_calls_total``)."""
JUDGEMENT_SOURCES = ("recorded", "called", "not_asked")
"""Where a draft's judgement came from (``evidence_chain_judgements_total``)."""


class _Registry:
    """A process's own Prometheus registry (never the library's global one); :meth:`render` is what its
    ``/metrics`` serves."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)


class WorkerMetrics(_Registry):
    """The worker's registry; the agents record into it, ``render`` is what ``/metrics`` serves."""

    def __init__(self) -> None:
        super().__init__()
        r = self.registry
        self.records = Counter(
            "evidence_chain_records",
            "Records consumed, by agent and outcome.",
            ["agent", "outcome"],
            registry=r,
        )
        self.dead_letters = Counter(
            "evidence_chain_dead_letters",
            "Dead letters produced, by agent and reason.",
            ["agent", "reason"],
            registry=r,
        )
        self.batch_seconds = Histogram(
            "evidence_chain_batch_seconds",
            "Time of one batch, by agent.",
            ["agent"],
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.redis_round_trips = Counter(
            "evidence_chain_redis_round_trips", "Redis round trips, by agent.", ["agent"], registry=r
        )
        self.lag = Gauge(
            "evidence_chain_consumer_lag",
            "Unprocessed records per assigned input partition.",
            ["topic", "partition"],
            registry=r,
        )
        self.phase_seconds = Counter(
            "evidence_chain_agent_seconds",
            "Wall seconds an agent spent, by phase: waiting for records, settling (letting a thin next "
            "batch grow while one is in flight), its station, Redis, waiting on the broker's acks.",
            ["agent", "phase"],
            registry=r,
        )
        self.held = Gauge(
            "evidence_chain_held_seconds",
            "How long the current batch has been held for an outage.",
            ["agent"],
            registry=r,
        )
        self.commits = Counter(
            "evidence_chain_commits", "Offset commits that went through, by agent.", ["agent"], registry=r
        )
        self.ready = Gauge(
            "evidence_chain_ready", "1 while the worker is ready (what /readyz says), else 0.", registry=r
        )
        self.violations = Counter(
            "evidence_chain_violations",
            "Judged drafts whose verdict carries the violation code (once per draft and code).",
            ["code"],
            registry=r,
        )
        self.review_refusals = Counter(
            "evidence_chain_review_refusals",
            "Judged drafts in which the review of claims found an unsupported number, identifier or quote.",
            registry=r,
        )
        self.review_rules = Gauge(
            "evidence_chain_review_rules_info",
            "The version of the review of claims' rules (docs/review-rules.md) the guard judges by.",
            ["version"],
            registry=r,
        )
        self.judge_calls = Counter(
            "evidence_chain_judge_calls",
            "Calls to the semantic judge (SPEC 4.4), by outcome: answered (a judgement), unavailable (down, "
            "slow, 429, 5xx or an answer that is not a judgement: asked again), declined (400, 413, 422: it "
            "cannot judge that case, which is not asked), refused (a setting is wrong: the worker exits).",
            ["outcome"],
            registry=r,
        )
        self.judge_seconds = Histogram(
            "evidence_chain_judge_call_seconds",
            "Time of one call to the semantic judge, whatever its outcome.",
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.judge_in_flight = Gauge(
            "evidence_chain_judge_calls_in_flight", "Calls to the semantic judge open now.", registry=r
        )
        self.judgements = Counter(
            "evidence_chain_judgements",
            "Drafts the semantic review judged, by where the judgement came from: recorded (a replay: no "
            "call), called (asked now), not_asked (over EC_SEMANTIC__MAX_CHARS_PER_DRAFT).",
            ["source"],
            registry=r,
        )
        self.judgement_records_invalid = Counter(
            "evidence_chain_judgement_records_invalid",
            "Values stored for a case's judgement (<ns>:judgement:*) that are not one: not JSON, another "
            "digest or model, an answer that does not judge the case. Never taken: the judge is asked again.",
            registry=r,
        )
        self.loop_lag = Histogram(
            "evidence_chain_event_loop_lag_seconds",
            f"How much later than asked the event loop woke a probe sleeping {LOOP_PROBE_SECONDS:g}s.",
            buckets=LOOP_LAG_BUCKETS,
            registry=r,
        )
        ProcessCollector(registry=r)

    def start_agent(self, agent: Station) -> None:
        """Show an agent's series at 0 before its first batch."""
        for outcome in OUTCOMES:
            self.records.labels(agent, outcome)
        for reason in DeadLetterReason:
            self.dead_letters.labels(agent, reason)
        self.batch_seconds.labels(agent)
        self.redis_round_trips.labels(agent)
        for phase in PHASES:
            self.phase_seconds.labels(agent, phase)
        self.held.labels(agent).set(0)
        self.commits.labels(agent)
        if agent == Station.SEMANTIC:
            for outcome in JUDGE_OUTCOMES:
                self.judge_calls.labels(outcome)
            for source in JUDGEMENT_SOURCES:
                self.judgements.labels(source)
        if agent == Station.GUARD:
            for code in ViolationCode:
                self.violations.labels(code)
            self.review_rules.labels(RULES_VERSION).set(1)

    def batch(
        self, agent: Station, outcomes: Sequence[Outcome[Any]], seconds: float, round_trips: int
    ) -> None:
        """One finished batch of ``agent``."""
        counted = Tally(outcome_label(outcome) for outcome in outcomes)  # one labels() per label
        for label, count in counted.items():
            self.records.labels(agent, label).inc(count)
        for outcome in outcomes:
            if outcome.rejection is not None:
                self.dead_letters.labels(agent, outcome.rejection["reason"]).inc()
            judged = outcome.station == Station.GUARD or (
                outcome.station == Station.SEMANTIC and outcome.audit.get("verdict") is not None
            )
            codes = outcome.audit.get("violation_codes") if judged else None
            if isinstance(codes, list | tuple):
                self._judged(str(code) for code in codes)
        self.batch_seconds.labels(agent).observe(seconds)
        if round_trips:
            self.redis_round_trips.labels(agent).inc(round_trips)

    def _judged(self, codes: Iterable[str]) -> None:
        """One judged draft's violation codes."""
        found = set(codes)
        for code in found:
            self.violations.labels(code).inc()
        if found & REVIEW_CODES:
            self.review_refusals.inc()

    def judge_call(self, outcome: str, seconds: float) -> None:
        """One call to the semantic judge ended: ``answered``, ``unavailable``, ``declined``, ``refused``."""
        self.judge_calls.labels(outcome).inc()
        self.judge_seconds.observe(seconds)

    def judged(self, source: str) -> None:
        """One draft's judgement: ``recorded``, ``called`` or ``not_asked``."""
        self.judgements.labels(source).inc()

    def judgement_record_invalid(self) -> None:
        """A value stored for a case's judgement was not one (the judge is asked again)."""
        self.judgement_records_invalid.inc()

    def committed(self, agent: Station) -> None:
        """One offset commit of ``agent`` went through."""
        self.commits.labels(agent).inc()

    def set_ready(self, ready: bool) -> None:
        self.ready.set(1 if ready else 0)

    async def watch_loop(
        self, interval: float = LOOP_PROBE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """Until cancelled: sleep ``interval``, observe how much later than that the loop woke us."""
        while True:
            started = clock()
            await asyncio.sleep(interval)
            self.loop_lag.observe(max(0.0, clock() - started - interval))

    def spent(self, agent: Station, phase: str, seconds: float) -> None:
        """``seconds`` of ``agent``'s own path in ``phase`` (one of :data:`PHASES`)."""
        if seconds > 0:
            self.phase_seconds.labels(agent, phase).inc(seconds)

    def set_lag(self, lags: Mapping[tuple[str, int], int]) -> None:
        """The lag of every assigned input partition (partitions no longer assigned disappear)."""
        set_lag(self.lag, lags)

    def set_held(self, agent: Station, seconds: float) -> None:
        self.held.labels(agent).set(seconds)


class AuditSinkMetrics(_Registry):
    """The audit sink's registry (served on ``EC_AUDIT_SINK_PORT``)."""

    def __init__(self) -> None:
        super().__init__()
        r = self.registry
        self.records = Counter(
            "evidence_chain_audit_records",
            "Audit records read, by outcome (stored, duplicate, malformed).",
            ["outcome"],
            registry=r,
        )
        self.batches = Counter("evidence_chain_audit_batches", "Batches committed to the store.", registry=r)
        self.batch_seconds = Histogram(
            "evidence_chain_audit_batch_seconds",
            "Time of one audit batch.",
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.lag = Gauge(
            "evidence_chain_consumer_lag",
            "Unstored records per assigned audit partition.",
            ["topic", "partition"],
            registry=r,
        )
        for outcome in ("stored", "duplicate", "malformed"):
            self.records.labels(outcome)

    def set_lag(self, lags: Mapping[tuple[str, int], int]) -> None:
        """Records not yet stored per assigned partition (partitions no longer assigned disappear)."""
        set_lag(self.lag, lags)

    def batch(self, read: int, stored: int, malformed: int, seconds: float) -> None:
        self.records.labels("stored").inc(stored)
        self.records.labels("malformed").inc(malformed)
        self.records.labels("duplicate").inc(max(0, read - stored - malformed))
        self.batches.inc()
        self.batch_seconds.observe(seconds)


REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Seconds to answer one gateway request: a ledger hit takes milliseconds, a pipeline round trip more."""


class GatewayMetrics(_Registry):
    """The gateway's registry; its middleware and routes record into it, ``render`` is ``/metrics``."""

    def __init__(self) -> None:
        super().__init__()
        r = self.registry
        self.requests = Counter(
            "evidence_chain_gateway_requests",
            "Requests answered, by route template and HTTP status.",
            ["route", "status"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "evidence_chain_gateway_request_seconds",
            "Time to answer one request, by route template.",
            ["route"],
            buckets=REQUEST_BUCKETS,
            registry=r,
        )
        self.lookups = Counter(
            "evidence_chain_gateway_lookups",
            "Ledger entries handed out, by source (ledger: already in Redis; pipeline: produced now).",
            ["answered_from"],
            registry=r,
        )
        self.timeouts = Counter(
            "evidence_chain_gateway_timeouts",
            "Lookups and checks with no reply within EC_GATEWAY_TIMEOUT_MS, by kind.",
            ["kind"],
            registry=r,
        )
        self.door_refusals = Counter(
            "evidence_chain_door_refusals",
            "Requests a door refused, by door and the error.reason of the answer.",
            ["door", "reason"],
            registry=r,
        )
        for source in ("ledger", "pipeline"):
            self.lookups.labels(source)
        for kind in ("lookup", "check"):
            self.timeouts.labels(kind)

    def start_door(self, door: str, reasons: Iterable[str]) -> None:
        """Show a door's refusals at 0 for each reason it can answer with."""
        for reason in reasons:
            self.door_refusals.labels(door, reason)

    def request(self, route: str, status: int, seconds: float) -> None:
        """One answered request."""
        self.requests.labels(route, str(status)).inc()
        self.request_seconds.labels(route).observe(seconds)

    def refused(self, door: str, reason: str) -> None:
        """One request refused at ``door`` with ``reason`` (the answer's ``error.reason``)."""
        self.door_refusals.labels(door, reason).inc()
