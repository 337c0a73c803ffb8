"""The stream figures of BENCHMARKS.md, measured side by side in one run on the local stack.

    make bench                                    # everything, 3 runs, writes BENCHMARKS.md
    .venv/bin/python benchmarks/stream.py --only p2,p4 --runs 3 --records 4000
    .venv/bin/python benchmarks/stream.py --smoke --out /tmp/bench-smoke.md   # what CI runs

Figures (each the min / median / max over ``--runs`` runs; pipelines interleave within a run):
- P2  throughput raw-hits → ledger of the worker (all four agents, one process) and of the anchors
      (``anchor_aiokafka.py`` with its default and 1 MiB producer batches, ``anchor_quix.py`` in its own
      virtualenv): ``--records`` preloaded records, timed from the first ledger event to the last by the
      events' own timestamps; CPU per record = the process's CPU over that span ÷ records.
- P2b the worker's CPU per record ÷ ``evidence-chain pipe``'s on the same records (its start-up cost
      subtracted: a run on 20 records is taken off a run on all of them).
- P3  guard drafts/s with 1, 5 and 20 citations (a worker with only the guard agent, ledger preloaded),
      and Redis round trips per guard batch (the batch runner in-process, counted by the store).
- P4  latency from a raw-hits record's create time to its ledger event, records offered at half the
      pipeline's own P2 median for ``--latency-seconds``, for the worker and the Quix anchor.
- P5  worker RSS after ``--memory-records`` small records ÷ after a tenth of them (one run).
- scale-out: records/s with 1, 2 and 3 worker processes in one group on 6 partitions (started and
      settled in the group before the records are produced).

``--profile`` samples the worker with py-spy during P2's first run: ``EC_BENCH_PROFILE_SECONDS``
(default 6), ``EC_BENCH_PROFILE_RATE`` (Hz, default 100) and ``EC_BENCH_PROFILE_GIL=1`` (only samples
of a thread running Python: CPU, not waits) set how.

Nothing here is a timed assertion: the figures are ratios and ranges to read, measured in one run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import platform
import re
import resource
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import flames  # noqa: E402
import harness  # noqa: E402
from harness import ROOT, Events, Process, Watcher, fresh_settings, pipeline_env, start, topics  # noqa: E402

from models.limits import GuardSettings  # noqa: E402
from models.vocab import Station, Topic  # noqa: E402
from streams.kafka.offsets import group_members  # noqa: E402
from streams.ledger.redis import RedisLedgerStore  # noqa: E402
from streams.messages import Output, Record  # noqa: E402
from streams.observe.metrics import PHASES  # noqa: E402
from streams.pipeline import PendingWrite, StationRules, chain  # noqa: E402
from streams.settings import Settings, load_settings  # noqa: E402
from streams.trust import generate_key_pair, load_signer  # noqa: E402
from streams.worker.runner import BatchRunner, RunnerConfig  # noqa: E402

console = Console(stderr=True)
PROFILE_SECONDS = int(os.environ.get("EC_BENCH_PROFILE_SECONDS", "6"))
PROFILE_RATE = int(os.environ.get("EC_BENCH_PROFILE_RATE", "100"))
PROFILE_GIL = os.environ.get("EC_BENCH_PROFILE_GIL", "") == "1"
FINDINGS = (ROOT / "benchmarks" / "findings.md", ROOT / "benchmarks" / "chain-findings.md")
"""Written by people and appended as is: what each change bought, which targets are missed and why;
the station chain's own figures (``benchmarks/chain.py``, ``breakdown.py``)."""
PROFILE_OUT = ROOT / ".local" / "bench" / "profile-worker.txt"


@dataclass(frozen=True)
class Pipeline:
    """A way to run raw-hits → ledger: how to start it in an environment."""

    name: str
    argv: Callable[[], list[str]]
    env: dict[str, str] = field(default_factory=dict)
    redis_config: dict[str, str] = field(default_factory=dict)
    """Redis settings (CONFIG SET) for this pipeline's runs only, restored afterwards."""

    @property
    def log(self) -> str:
        return "-".join(self.name.split()[:2]).strip(",()").replace("/", "")


def signing_env() -> dict[str, str]:
    """A key pair for the signed worker under .local/bench/keys, made once (SPEC 3.7)."""
    folder = ROOT / ".local" / "bench" / "keys"
    if not (folder / "bench.key").exists():
        generate_key_pair(folder, "bench", "ledger")
    # one process runs every agent: its key signs entries and verdicts, so it is trusted in both roles
    public_hex = load_signer(folder / "bench.key").public_hex
    trusted = folder / "bench.trusted"
    trusted.write_text(f"ledger {public_hex}\nguard {public_hex}\n", encoding="utf-8")
    return {
        "EC_SIGNING_KEY_FILE": str(folder / "bench.key"),
        "EC_TRUSTED_KEYS_FILE": str(trusted),
    }


def rdkafka_worker_argv() -> list[str]:
    """The worker with librdkafka on its wire (``benchmarks/rdkafka_worker.py``; a measurement)."""
    return [sys.executable, str(ROOT / "benchmarks" / "rdkafka_worker.py"), "worker", "--loglevel", "warning"]


PIPELINES = {
    "worker": Pipeline("evidence-chain worker (4 agents, 1 process)", harness.worker_argv),
    "worker-signed": Pipeline(
        "worker signing entries (EC_SIGNING_KEY_FILE, EC_TRUSTED_KEYS_FILE)",
        harness.worker_argv,
        signing_env(),
    ),
    "worker-serial": Pipeline(
        "worker one batch at a time (EC_BATCHES_IN_FLIGHT=1)",
        harness.worker_argv,
        {"EC_BATCHES_IN_FLIGHT": "1"},
    ),
    "worker-thread": Pipeline(
        "worker with Faust's consumer in a thread of its own (EC_CONSUMER_THREAD=true)",
        harness.worker_argv,
        {"EC_CONSUMER_THREAD": "true"},
    ),
    "worker-asyncio": Pipeline(
        "worker with the stock asyncio loop (EC_EVENT_LOOP=asyncio)",
        harness.worker_argv,
        {"EC_EVENT_LOOP": "asyncio"},
    ),
    "worker-16k": Pipeline(
        "worker with 16 KiB producer batches (EC_PRODUCER_BATCH_BYTES=16384)",
        harness.worker_argv,
        {"EC_PRODUCER_BATCH_BYTES": "16384"},
    ),
    "worker-no-fsync": Pipeline(
        "worker without durable ledger writes (EC_REDIS_DURABILITY=none, Redis appendfsync everysec)",
        harness.worker_argv,
        {"EC_REDIS_DURABILITY": "none"},
        {"appendfsync": "everysec"},
    ),
    "worker-zstd": Pipeline(
        "worker with zstd batches (EC_PRODUCER_COMPRESSION=zstd)",
        harness.worker_argv,
        {"EC_PRODUCER_COMPRESSION": "zstd"},
    ),
    "worker-rdkafka": Pipeline(
        "worker fetching and producing through librdkafka (benchmarks/rdkafka_worker.py; a measurement)",
        rdkafka_worker_argv,
        {"EC_RDKAFKA_FETCH": "1", "EC_RDKAFKA_PRODUCE": "1"},
    ),
    "worker-rdkafka-produce": Pipeline(
        "worker producing through librdkafka, fetching through aiokafka (benchmarks/rdkafka_worker.py)",
        rdkafka_worker_argv,
        {"EC_RDKAFKA_FETCH": "0", "EC_RDKAFKA_PRODUCE": "1"},
    ),
    "aiokafka": Pipeline(
        "plain aiokafka pipeline, default producer batch",
        lambda: [sys.executable, str(ROOT / "benchmarks" / "anchor_aiokafka.py")],
    ),
    "aiokafka-1m": Pipeline(
        "plain aiokafka pipeline, 1 MiB producer batches",
        lambda: [
            sys.executable,
            str(ROOT / "benchmarks" / "anchor_aiokafka.py"),
            "--producer-batch-bytes",
            str(1 << 20),
        ],
    ),
    "aiokafka-3hop": Pipeline(
        "plain aiokafka, the product's three hops (a group each, audit records), 1 MiB producer batches",
        lambda: [
            sys.executable,
            str(ROOT / "benchmarks" / "anchor_aiokafka.py"),
            "--hops",
            "3",
            "--producer-batch-bytes",
            str(1 << 20),
        ],
    ),
    "quix": Pipeline(
        "Quix Streams application (librdkafka), at-least-once",
        lambda: [str(harness.QUIX_PYTHON), str(ROOT / "benchmarks" / "anchor_quix.py")],
        {"PYTHONPATH": str(ROOT)},
    ),
}


@dataclass
class Run:
    """One pipeline over one preloaded set of records."""

    rate: float
    cpu_ms: float
    events: int
    phases: dict[tuple[str, str], float] = field(default_factory=dict)
    """A worker's agents: share of the measured span in each phase (``evidence_chain_agent_seconds``)."""
    steady_rate: float = float("nan")
    steady_cpu_ms: float = float("nan")
    """The same two figures between the ledger events at 25 % and at 90 % of the run: a pipeline of
    several hops has its first stations at work before the first ledger event (a head start the
    first-to-last span does not count), so on a long run this middle window is its steady state."""
    drain_rate: float = float("nan")
    drain_cpu_ms: float = float("nan")
    """A backlog as its user feels it (issue 42): records ÷ the span from the create time of the first
    record the pipeline wrote to any topic but ``audit`` (postprocessed for the worker, projected for a
    one-hop pipeline) to that of its last ledger event; the pipeline's CPU over that span per record."""
    firsts: dict[Topic, int] = field(default_factory=dict)
    """The create time (epoch ms) of the first record in each topic the pipeline wrote."""
    last_ms: int = 0
    """The create time (epoch ms) of the last ledger event."""
    fill_busy: float = float("nan")
    after_fill_busy: float = float("nan")
    """Cores the pipeline used (CPU seconds ÷ wall seconds) during its fill, and from its first ledger
    event to its last: a fill that uses as much CPU as the rest is work done, not time lost."""

    @property
    def fill_ms(self) -> float:
        """From the pipeline's first write to its first ledger event: the hops filling one after another."""
        if Topic.LEDGER not in self.firsts or not self.firsts:
            return float("nan")
        return float(self.firsts[Topic.LEDGER] - min(self.firsts.values()))

    def first_of(self, topic: Topic) -> float:
        """Milliseconds from the pipeline's first write to ``topic``'s first record (nan: none)."""
        if topic not in self.firsts:
            return float("nan")
        return float(self.firsts[topic] - min(self.firsts.values()))


WRITTEN = tuple(t for t in Topic if t not in (Topic.RAW_HITS, Topic.DIAGNOSIS_DRAFTS, Topic.AUDIT))
"""The topics a drain's first write is looked for in: all but the inputs and ``audit`` (issue 42)."""


STEADY_WINDOW = (0.25, 0.90)
"""Shares of a run's ledger events between which :attr:`Run.steady_rate` and ``steady_cpu_ms`` are read."""

PHASE_LINE = re.compile(r'^evidence_chain_agent_seconds_total\{agent="([^"]+)",phase="([^"]+)"\} (\S+)$')


def agent_seconds(port: int) -> tuple[float, dict[tuple[str, str], float]]:
    """The worker's ``evidence_chain_agent_seconds`` from its ``/metrics``, with when they were read."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:  # noqa: S310
        text = answer.read().decode()
    found = (PHASE_LINE.match(line) for line in text.splitlines())
    return time.monotonic(), {(m[1], m[2]): float(m[3]) for m in found if m}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spread(values: Sequence[float], fmt: str = "{:,.0f}") -> str:
    """min / median / max."""
    if not values:
        return "—"
    if len(values) == 1:
        return fmt.format(values[0])
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


async def throughput(
    pipeline: Pipeline, values: list[bytes], partitions: int, patience: float, profile_to: Path | None = None
) -> Run:
    """Preload, start the pipeline, time its ledger events, stop it (sampled by py-spy if asked)."""
    async with (
        topics(fresh_settings("p2", partitions)) as settings,
        harness.redis_config(settings, pipeline.redis_config),
    ):
        await harness.preload(settings, values)
        port = free_port() if pipeline.argv is harness.worker_argv else None
        web = {"EC_WEB_ENABLED": "true", "EC_WEB_PORT": str(port)} if port else {}
        process = start(pipeline.log, pipeline.argv(), pipeline_env(settings, **pipeline.env, **web))
        try:
            return await measured(process, settings, len(values), patience, profile_to, port)
        finally:
            process.stop()


async def measured(
    process: Process,
    settings: Settings,
    count: int,
    patience: float,
    profile_to: Path | None = None,
    port: int | None = None,
) -> Run:
    """Ledger events of ``process`` until ``count``; its CPU from the first event to the last (and, for
    a worker serving ``/metrics`` on ``port``, where its agents spent that span)."""
    marks: dict[str, float] = {}
    sampler: list[subprocess.Popen[bytes]] = []
    first: list[asyncio.Future[tuple[float, dict[tuple[str, str], float]]]] = []

    def on_event(seen: int) -> None:
        for share in STEADY_WINDOW:
            if seen >= share * count and f"cpu{share}" not in marks:
                marks[f"cpu{share}"], marks[f"seen{share}"] = process.cpu_seconds(), seen
                marks[f"t{share}"] = time.monotonic()
        if seen and "cpu0" not in marks:
            marks["cpu0"], marks["seen0"] = process.cpu_seconds(), seen
            if profile_to is not None:
                sampler.append(
                    flames.record(process.pid, PROFILE_SECONDS, profile_to, PROFILE_RATE, gil=PROFILE_GIL)
                )
            if port is not None:
                first.append(asyncio.ensure_future(asyncio.to_thread(agent_seconds, port)))

    with harness.CpuTrace(process) as trace:
        async with Watcher(settings) as watcher:
            events = await watcher.until(count, patience, on_event)
    cpu = process.cpu_seconds() - marks.get("cpu0", 0.0)
    phases: dict[tuple[str, str], float] = {}
    if first:
        (t0, before), (t1, after) = await first[0], await asyncio.to_thread(agent_seconds, port or 0)
        phases = {k: (v - before.get(k, 0.0)) / (t1 - t0) for k, v in after.items()} if t1 > t0 else {}
    for p in sampler:
        p.wait()
    counted = len(events.timestamps) - marks.get("seen0", 0)
    if len(events.timestamps) < count:
        raise RuntimeError(
            f"{process.name}: {len(events.timestamps)} of {count} ledger events in {patience:.0f} s; "
            f"see {harness.LOGS / (process.name + '.log')}"
        )
    run = Run(events.rate, cpu * 1000 / counted if counted else float("nan"), len(events.timestamps), phases)
    run.firsts = await harness.first_writes(settings, WRITTEN)
    run.last_ms = max(events.timestamps)
    if run.firsts:
        start_ms = min(run.firsts.values())
        span = max(run.last_ms - start_ms, 1) / 1000
        run.drain_rate = len(events.timestamps) / span
        run.drain_cpu_ms = trace.between(start_ms, run.last_ms) * 1000 / len(events.timestamps)
        first_ledger = run.firsts.get(Topic.LEDGER)
        if first_ledger is not None:
            run.fill_busy = trace.cores(start_ms, first_ledger)
            run.after_fill_busy = trace.cores(first_ledger, run.last_ms)
    a, b = STEADY_WINDOW
    if f"seen{b}" in marks and marks[f"seen{b}"] > marks[f"seen{a}"] and marks[f"t{b}"] > marks[f"t{a}"]:
        steady = marks[f"seen{b}"] - marks[f"seen{a}"]
        run.steady_rate = steady / (marks[f"t{b}"] - marks[f"t{a}"])
        run.steady_cpu_ms = (marks[f"cpu{b}"] - marks[f"cpu{a}"]) * 1000 / steady
    return run


def pipe_cpu_ms(values: list[bytes]) -> float:
    """CPU per record of ``evidence-chain pipe`` on ``values`` (repeated to at least 2,000 lines), its
    start-up cost taken off (a run on 20 lines is subtracted)."""
    cli = str(Path(sys.executable).with_name("evidence-chain"))
    lines = (values * (2000 // len(values) + 1))[: max(2000, len(values))]

    def cpu(chunk: list[bytes]) -> float:
        before = _children_cpu()
        subprocess.run([cli, "pipe"], input=b"\n".join(chunk) + b"\n", stdout=subprocess.DEVNULL, check=True)
        return _children_cpu() - before

    small = min(cpu(lines[:20]) for _ in range(2))
    return (cpu(lines) - small) * 1000 / (len(lines) - 20)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- P3: the guard ------------------------------------------------------------------------------


def _projections(raws: list[bytes]) -> dict[str, dict[str, Any]]:
    """The projection the chain makes of each raw-hits record, by tool call id (what the guard re-reads)."""
    rules = StationRules.from_settings(Settings())
    out: dict[str, dict[str, Any]] = {}
    for i, raw in enumerate(raws):
        step = chain(Record("raw-hits", 0, i, None, None, raw), rules, tuple(Station)[:3])
        if isinstance(step, PendingWrite) and step.entry["projection"] is not None:
            out[step.entry["tool_call_id"]] = orjson.loads(step.entry["projection"])
    return out


def _absent_number(near: int, evidence: str) -> str:
    """A number next to ``near`` that ``evidence`` holds nowhere (with no digit beside it)."""
    value = near + 7
    while re.search(rf"(?<![0-9]){value}(?![0-9])", evidence):
        value += 1
    return str(value)


def _absent_key(key: str, evidence: str) -> str:
    """A key an agent might write for ``key`` (first word dropped, or a suffix) that ``evidence`` lacks."""
    for wrong in (key.split("_", 1)[-1], f"{key}_max", f"{key}_limit_v2"):
        if wrong != key and "_" in wrong and wrong not in evidence.lower():
            return wrong
    raise ValueError(f"no absent key for {key}")


P3_UNSUPPORTED_EVERY = 4
"""One draft in this many states a number or a key its evidence does not hold (alternately)."""


def guard_draft(
    run: int, d: int, cited: list[str], projections: dict[str, dict[str, Any]], unsupported: str | None
) -> bytes:
    """An agent's draft citing ``cited`` (one or two tool calls per analysis item): each item names the
    config key, its default and advised value, the config file and a quoted rule from the first evidence
    item of each call it cites; the conclusion and the actions repeat the key, the values and the path on
    the items they build on. ``unsupported``: "number" or "key" makes the conclusion state a default or
    the first action a key that its evidence does not hold (a REJECT with 21 or 22); None: a PASS."""
    groups = [cited[i : i + 2] for i in range(0, len(cited), 2)]
    analysis = []
    first: tuple[str, ...] = ()
    evidence_text = ""
    for g, calls in enumerate(groups):
        sentences = []
        documents = []
        for k, tcid in enumerate(calls):
            item = projections[tcid]["evidence"][0]
            documents.append(item["document_id"])
            key, default, unit, advised, path, quote = corpus.runbook_facts(item["excerpt"])
            if g == 0 and k == 0:
                first = (key, default, unit, advised, path)
                evidence_text = "\n".join(orjson.dumps(projections[c]).decode() for c in calls)
            if k == 0:
                sentences.append(
                    f"{tcid} 的 runbook 指出 {key} 默认 {default}{unit}（见 {path}），高峰期可调到 "
                    f"{advised}{unit}；文档写明“{quote}”。"
                )
            else:
                sentences.append(f"另一份文档 {item['document_id']} 给出 {key} 默认 {default}{unit}。")
        analysis.append(
            {
                "id": f"a{g + 1}",
                "kind": "NORMAL",
                "content": "".join(sentences),
                "tool_call_ids": calls,
                # a realistic share of agents narrow to the passages they read: every other item
                **({"document_ids": documents} if g % 2 == 0 else {}),
            }
        )
    key, default, unit, advised, path = first
    if unsupported == "number":
        default = _absent_number(int(default), evidence_text)
    conclusion = {
        "content": f"网关超时的根因是 {key} 偏小：默认 {default}{unit}，高峰期上游响应更慢。",
        "based_on_analysis_ids": ["a1"],
    }
    shown_key = _absent_key(key, evidence_text) if unsupported == "key" else key
    actions = [
        {
            "id": "p1",
            "content": f"在 {path} 中把 {shown_key} 调到 {advised}{unit}，然后 reload。",
            "based_on_analysis_ids": ["a1"],
        },
        {
            "id": "p2",
            "content": "观察 p99 延迟，确认告警消失后再处理其余节点。",
            "based_on_analysis_ids": [a["id"] for a in analysis[:2]],
        },
    ]
    return orjson.dumps(
        {
            "run_id": f"run-{run}",
            "draft_id": f"draft-{d}",
            "analysis": analysis,
            "conclusion": conclusion,
            "action_plan": actions,
            "limitations": ["只看了最近一小时的日志"],
        }
    )


def guard_corpus(tool_calls: int, citations: int, drafts: int) -> tuple[list[bytes], list[bytes]]:
    """Runbook raw-hits records (:func:`corpus.runbook_records`) grouped 20 tool calls to a run, and
    drafts citing ``citations`` of a run (:func:`guard_draft`): three in four name only what their
    evidence holds, one in four a number or a key it does not, as an agent's drafts would."""
    raws = []
    for raw in corpus.runbook_records(tool_calls, seed=11):
        doc = orjson.loads(raw)
        n = int(doc["tool_call_id"].split("-")[1])
        doc["run_id"] = f"run-{n // 20}"
        raws.append(orjson.dumps(doc))
    projections = _projections(raws)
    runs = tool_calls // 20
    out = []
    for d in range(drafts):
        run = d % runs
        cited = [f"call-{run * 20 + (d + i) % 20}" for i in range(citations)]
        slot = d % (2 * P3_UNSUPPORTED_EVERY)
        unsupported = {P3_UNSUPPORTED_EVERY - 1: "number", 2 * P3_UNSUPPORTED_EVERY - 1: "key"}.get(slot)
        out.append(guard_draft(run, d, cited, projections, unsupported))
    return raws, out


async def write_ledger(settings: Settings, raws: list[bytes]) -> None:
    """The ledger entries the chain makes of ``raws``, written as the ledger agent writes them."""
    entries = []
    rules = StationRules.from_settings(settings)
    for i, raw in enumerate(raws):
        step = chain(Record("raw-hits", 0, i, None, None, raw), rules, tuple(Station)[:3])
        if isinstance(step, PendingWrite):
            entries.append(step.entry)
    store = RedisLedgerStore.from_settings(settings)
    try:
        for i in range(0, len(entries), 500):
            await store.write_many(entries[i : i + 500])
    finally:
        await store.close()


class NullSink:
    """Drops what a batch runner sends, counting the verdicts by kind."""

    def __init__(self) -> None:
        self.verdicts: Counter[str] = Counter()

    async def send_all(self, messages: Sequence[Output]) -> None:
        for m in messages:
            if m.topic is Topic.VERDICTS:
                self.verdicts[orjson.loads(m.value)["verdict"]] += 1


async def guard_round_trips(
    settings: Settings, drafts: list[bytes], batch: int
) -> tuple[float, Counter[str]]:
    """Redis round trips per guard batch of ``batch`` drafts (the store counts its own), and the
    verdicts by kind."""
    store = RedisLedgerStore.from_settings(settings)
    sink = NullSink()
    runner = BatchRunner(Station.GUARD, RunnerConfig.from_settings(settings), sink, store)
    batches = 0
    try:
        for i in range(0, len(drafts), batch):
            records = [Record("d", 0, i + j, None, None, v) for j, v in enumerate(drafts[i : i + batch])]
            await runner.run(records)
            batches += 1
    finally:
        await store.close()
    return store.round_trips / batches, sink.verdicts


P3_REVIEW = ("off", "enforce")
"""P3 runs the guard with the review of claims (SPEC 4.2) off and on, alternately first."""


@dataclass(frozen=True)
class GuardRun:
    rate: float
    round_trips: float
    verdicts: Counter[str]
    cpu_ms: float = float("nan")
    """The worker's CPU per draft from its first verdict to its last: on a shared machine the steadier
    figure (another process's load slows the rate more than it adds to this)."""


async def guard_rate(citations: int, drafts: int, patience: float, review: str) -> GuardRun:
    """Drafts/s of a worker with only the guard agent, ``EC_GUARD__REVIEW=review``."""
    async with topics(
        fresh_settings(f"p3c{citations}", 3).model_copy(update={"guard": GuardSettings(review=review)})
    ) as settings:
        raws, values = guard_corpus(100, citations, drafts)
        await write_ledger(settings, raws)
        trips, verdicts = await guard_round_trips(settings, values[:1000], 500)
        await harness.preload(settings, values, Topic.DIAGNOSIS_DRAFTS)
        env = pipeline_env(settings, EC_GUARD__REVIEW=review)
        process = start(f"worker-guard-{review}", harness.worker_argv("guard"), env)
        first: list[tuple[float, int]] = []

        def on_event(seen: int) -> None:
            if seen and not first:
                first.append((process.cpu_seconds(), seen))

        try:
            async with Watcher(settings, Topic.VERDICTS) as watcher:
                events = await watcher.until(drafts, patience, on_event)
            cpu = process.cpu_seconds()
        finally:
            process.stop()
        if len(events.timestamps) < drafts:
            raise RuntimeError(f"guard: {len(events.timestamps)} of {drafts} verdicts in {patience:.0f} s")
        cpu0, counted = first[0][0], len(events.timestamps) - first[0][1]
        return GuardRun(
            events.rate, trips, verdicts, (cpu - cpu0) * 1000 / counted if counted else float("nan")
        )


# --- P4: latency ---------------------------------------------------------------------------------


P4_RAMP_SECONDS = 2.0
"""How long records are offered at the measured rate, and not measured, before the measured ones."""


P4_SHARES = (0.25, 0.5)
"""P4 offers each pipeline these shares of its sustained rate: latency where users feel it, below the
backlog (issue 33: at half the rate, p50 ≤ 20 ms and p99 ≤ 100 ms)."""


def ramp_seconds(seconds: float) -> float:
    """P4's unmeasured lead-in for a run of ``seconds``: :data:`P4_RAMP_SECONDS`, a fifth of a short run."""
    return min(P4_RAMP_SECONDS, seconds / 5)


async def latency(pipeline: Pipeline, rate: float, seconds: float, warmup: list[bytes]) -> list[float]:
    """Latencies (ms) of records offered at ``rate``/s to a started, warmed-up pipeline: after
    ``warmup`` (preloaded) and :data:`P4_RAMP_SECONDS` of records at ``rate`` that are not measured,
    so the figure is the steady state at that rate, not the pipeline's first second under load."""
    count = max(10, int(rate * seconds))
    values = corpus.records(count, seed=23, start=100_000)
    ramp = corpus.records(max(1, int(rate * ramp_seconds(seconds))), seed=29, start=200_000)
    async with topics(fresh_settings("p4", 3)) as settings:
        process = start(pipeline.log, pipeline.argv(), pipeline_env(settings, **pipeline.env))
        try:
            async with Watcher(settings) as watcher:
                await harness.preload(settings, warmup)
                await watcher.until(len(warmup), 120)
                await harness.offer(settings, ramp, rate, harness.BATCHED_LINGER_MS)
                await watcher.until(len(warmup) + len(ramp), 120)
                sent = await harness.offer(settings, values, rate, harness.BATCHED_LINGER_MS)
                events = await watcher.until(len(warmup) + len(ramp) + count, 60)
        finally:
            process.stop()
    arrived = dict(zip(events.tool_call_ids, events.timestamps, strict=True))
    return [arrived[t] - sent[t] for t in sent if t in arrived]


# --- P5: memory ----------------------------------------------------------------------------------


def small_records(count: int, start_: int) -> list[bytes]:
    """Records of three hits (~2 KB), so hundreds of thousands pass through in minutes."""
    out = []
    for raw in corpus.records(count, seed=5, start=start_):
        doc = orjson.loads(raw)
        doc["response"]["hits"] = doc["response"]["hits"][:3]
        for hit in doc["response"]["hits"]:
            hit["excerpt"] = hit["excerpt"][:200]
        out.append(orjson.dumps(doc))
    return out


async def memory(total: int, progress: Progress) -> list[tuple[int, int]]:
    """Worker RSS after each of 20 chunks of ``total`` records: (records so far, bytes)."""
    task = progress.add_task("P5 memory", total=total)
    chunk = max(1, total // 20)
    async with topics(fresh_settings("p5", 3)) as settings:
        process = start("worker-p5", harness.worker_argv(), pipeline_env(settings))
        points = []
        try:
            async with Watcher(settings) as watcher:
                for first in range(0, total, chunk):
                    count = min(chunk, total - first)
                    await harness.preload(settings, small_records(count, first))
                    await watcher.until(first + count, 300, lambda n: progress.update(task, completed=n))
                    points.append((first + count, process.rss_bytes()))
        finally:
            process.stop()
    return points


# --- scale-out -----------------------------------------------------------------------------------


async def scale_out(workers: int, values: list[bytes], patience: float) -> float:
    async with topics(fresh_settings(f"so{workers}", 6)) as settings:
        env = pipeline_env(settings)
        processes = [start(f"worker-so{workers}-{i}", harness.worker_argv(), env) for i in range(workers)]
        try:
            deadline = time.monotonic() + 90
            while await group_members(settings, settings.app_id) < workers:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{workers} workers did not all join the group in 90 s")
                await asyncio.sleep(0.5)
            await asyncio.sleep(3)  # let the last rebalance settle before the records arrive
            await harness.preload(settings, values)
            async with Watcher(settings) as watcher:
                events: Events = await watcher.until(len(values), patience)
        finally:
            for p in processes:
                p.stop()
        if len(events.timestamps) < len(values):
            raise RuntimeError(f"scale-out {workers}: {len(events.timestamps)} of {len(values)} events")
        return events.rate


# --- the report ----------------------------------------------------------------------------------


@dataclass
class Figures:
    args: argparse.Namespace
    p2: dict[str, list[Run]] = field(default_factory=dict)
    p2l: dict[str, list[Run]] = field(default_factory=dict)
    """P2 again on ``--large-records`` preloaded records: does CPU per record stay flat?"""
    pipe_ms_large: list[float] = field(default_factory=list)
    pipe_ms: list[float] = field(default_factory=list)
    p3: dict[tuple[int, str], list[GuardRun]] = field(default_factory=dict)
    """Per (citations per draft, EC_GUARD__REVIEW): each run's guard figures."""
    p4: dict[tuple[str, float], list[list[float]]] = field(default_factory=dict)
    """Per (pipeline, fraction of its sustained rate offered): each run's latencies (ms)."""
    p5: list[tuple[int, int]] | None = None
    scale: dict[int, list[float]] = field(default_factory=dict)
    profile: Path | None = None


def sustained_rate(f: Figures, key: str) -> tuple[float, str]:
    """The rate P4 offers half of, and where it comes from: the pipeline's steady rate at
    ``--large-records`` when P2 at that size ran (every hop busy, no head start), else its P2 median."""
    steady = [r.steady_rate for r in f.p2l.get(key, []) if math.isfinite(r.steady_rate)]
    if steady:
        return statistics.median(steady), f"its steady rate in P2 at {f.args.large_records:,} records"
    return statistics.median(r.rate for r in f.p2[key]), "its P2 median"


def rate_basis(key: str) -> str:
    """Whose sustained rate P4 offers ``key`` a share of: a worker variant is offered the worker's, so
    the two are measured at the same rate."""
    return "worker" if key.startswith("worker") else key


BROKER_TOPICS: list[int] = []
"""The broker's topic count before the run (set by :func:`main`)."""


def machine() -> list[str]:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        platform.processor(),
    )
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    kafka = sorted((ROOT / ".local" / "kafka" / "libs").glob("kafka-clients-*.jar"))
    redis_v = subprocess.run(["redis-server", "--version"], capture_output=True, text=True).stdout.split()
    return [
        f"- {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.node()}",
        f"- CPU: {cpu}, {len(os.sched_getaffinity(0))} cores; memory {mem / 1024 / 1024:.0f} GiB",
        f"- Python {platform.python_version()}; Kafka {kafka[-1].stem.split('-')[-1] if kafka else '?'} "
        f"(KRaft, one broker on this machine); Redis {redis_v[2].split('=')[1] if len(redis_v) > 2 else '?'}"
        " (appendfsync always) on this machine",
        *(
            [f"- topics on the broker before the run: {BROKER_TOPICS[0]:,}"]
            + ([f"- **{note}**"] if (note := harness.crowded_broker(BROKER_TOPICS[0])) else [])
            if BROKER_TOPICS
            else []
        ),
    ]


def markdown(f: Figures) -> str:
    a = f.args
    lines = [
        "# Benchmarks",
        "",
        "Produced by `make bench` (`benchmarks/stream.py`); rerun one figure with",
        "`.venv/bin/python benchmarks/stream.py --only p2` (p2, p2l, p3, p4, p5, scale). Each cell is",
        f"min / median / max over {a.runs} run(s). Nothing here is a timed assertion in a test.",
        "",
    ]
    lines += ["## Machine", "", *machine(), ""]
    if f.p2:
        size = sum(map(len, corpus.records(50))) / 50 / 1000
        lines += [
            "## P2 throughput, raw-hits → ledger",
            "",
            f"{a.records:,} preloaded records (~{size:.0f} KB, py-rag responses of 20 hits, mixed Chinese",
            "and English) on 3 partitions. *Drain*: from the create time of the first record the",
            "pipeline writes to any topic but `audit` (postprocessed for the worker, projected for a",
            "one-hop pipeline) to that of its last ledger event, records ÷ that span, and the pipeline's",
            "CPU over it per record (a backlog as its user feels it, issue 42). *Fill*: from that first",
            "write to the first ledger event. *First to last*: between the first and the last ledger",
            "event by their own timestamps, CPU over that span (the older figure, which leaves the fill",
            "out).",
            "",
            "| pipeline | drain records/s | drain CPU ms per record | fill ms | first-to-last records/s"
            " | first-to-last CPU ms per record |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for key, runs in f.p2.items():
            lines.append(
                f"| {PIPELINES[key].name} | {spread([r.drain_rate for r in runs])} | "
                f"{spread([r.drain_cpu_ms for r in runs], '{:.2f}')} | {spread([r.fill_ms for r in runs])} | "
                f"{spread([r.rate for r in runs])} | {spread([r.cpu_ms for r in runs], '{:.2f}')} |"
            )
        lines += fill_table(f.p2)
        one_hop = [k for k in f.p2 if not k.startswith("worker") and k != "aiokafka-3hop"]
        anchors = [statistics.median(r.rate for r in f.p2[k]) for k in one_hop]
        drains = [statistics.median(r.drain_rate for r in f.p2[k]) for k in one_hop]
        if "worker" in f.p2 and anchors:
            target = "(target ≥ 1.0×, aim 1.5×; issue 42)"
            drain = statistics.median(r.drain_rate for r in f.p2["worker"]) / max(drains)
            ratio = statistics.median(r.rate for r in f.p2["worker"]) / max(anchors)
            lines += [
                "",
                f"Worker ÷ the best one-hop peer by drain (medians): **{drain:.2f}×** {target}; by first to"
                f" last ledger event: {ratio:.2f}×.",
            ]
        if "worker" in f.p2 and "aiokafka-3hop" in f.p2:
            three = statistics.median(r.rate for r in f.p2["aiokafka-3hop"])
            ratio = statistics.median(r.rate for r in f.p2["worker"]) / three
            price = three / max(anchors) if anchors else float("nan")
            lines += [
                "",
                f"Worker ÷ the three-hop aiokafka anchor (medians): **{ratio:.2f}×**; the topology's own "
                f"price, three hops ÷ the fastest one-hop anchor: **{price:.2f}×**.",
            ]
        if "worker" in f.p2 and "worker-signed" in f.p2:
            signed = statistics.median(r.rate for r in f.p2["worker-signed"])
            ratio = signed / statistics.median(r.rate for r in f.p2["worker"])
            lines += ["", f"Signing on ÷ off (medians): **{ratio:.2f}×** (target ≥ 0.90×, issue 19)."]
        if "worker" in f.p2 and "worker-serial" in f.p2:
            serial = statistics.median(r.rate for r in f.p2["worker-serial"])
            ratio = statistics.median(r.rate for r in f.p2["worker"]) / serial
            lines += ["", f"Batches in flight ÷ one at a time (medians): **{ratio:.2f}×**."]
        lines.append("")
    lines += phase_table(f)
    lines += large_table(f)
    if f.pipe_ms and "worker" in f.p2:
        worker_ms = statistics.median(r.cpu_ms for r in f.p2["worker"])
        pipe = statistics.median(f.pipe_ms)
        lines += [
            "## P2b CPU per record: worker ÷ offline chain",
            "",
            "| what | CPU ms per record |",
            "| --- | --- |",
            f"| `evidence-chain pipe` (the stations alone) | {spread(f.pipe_ms, '{:.3f}')} |",
            f"| the worker (P2) | {spread([r.cpu_ms for r in f.p2['worker']], '{:.3f}')} |",
            "",
            f"Ratio (medians): **{worker_ms / pipe:.2f}×** (target ≤ 2×).",
            "",
        ]
    if f.p3:
        mix = Counter[str]()
        for (_, review), guard_runs in f.p3.items():
            mix.update(guard_runs[0].verdicts if review == "enforce" else {})
        shown_mix = ", ".join(
            f"{kind} {count / max(1, mix.total()):.0%}" for kind, count in sorted(mix.items())
        )
        lines += [
            "## P3 guard",
            "",
            f"{a.drafts:,} drafts preloaded, a worker with only the guard agent, the ledger written first;",
            "each citation count runs with the review of claims (SPEC 4.2) off and on, back to back,",
            "alternately first. The evidence is runbook text (`corpus.runbook_records`: config keys with",
            "defaults and advised values, paths, versions, error codes), the drafts name the key, the",
            "values, the file and a quoted rule of what they cite, one or two calls per analysis item,",
            "with a conclusion and two actions built on them; one in four states a default or a key its",
            f"evidence does not hold (verdicts in-process with the review on: {shown_mix}).",
            "Round trips: the guard's batch runner in-process over batches of 500 drafts (the store counts).",
            "",
            "| citations per draft | review | drafts/s | worker CPU ms per draft | Redis round trips per"
            " batch |",
            "| --- | --- | --- | --- | --- |",
        ]
        for (n, review), guard_runs in f.p3.items():
            lines.append(
                f"| {n} | {review} | {spread([r.rate for r in guard_runs])} | "
                f"{spread([r.cpu_ms for r in guard_runs], '{:.3f}')} | "
                f"{spread([r.round_trips for r in guard_runs], '{:.1f}')} |"
            )
        lines.append("")
        for n in dict.fromkeys(n for n, _ in f.p3):
            if (n, "off") in f.p3 and (n, "enforce") in f.p3:
                on = statistics.median(r.rate for r in f.p3[(n, "enforce")])
                off = statistics.median(r.rate for r in f.p3[(n, "off")])
                target = " (target ≥ 0.90×, issue 31)" if n == 5 else ""
                paired = [
                    e.rate / o.rate for o, e in zip(f.p3[(n, "off")], f.p3[(n, "enforce")], strict=False)
                ]
                cpu_on = statistics.median(r.cpu_ms for r in f.p3[(n, "enforce")])
                cpu_off = statistics.median(r.cpu_ms for r in f.p3[(n, "off")])
                lines.append(
                    f"Review on ÷ off, {n} citations (medians): **{on / off:.2f}×**{target}; each run's pair"
                    f" (on and off back to back): {', '.join(f'{r:.2f}×' for r in paired)}; by the worker's"
                    f" CPU per draft (off ÷ on, the throughput a busy core would give):"
                    f" **{cpu_off / cpu_on:.2f}×**."
                )
                lines.append("")
    if f.p4:
        ramp = ramp_seconds(a.latency_seconds)
        lines += [
            "## P4 latency at a quarter and at half the sustained rate",
            "",
            (
                f"Records offered at {a.latency_rate:,.0f}/s"
                if a.latency_rate
                else "Records offered at a quarter and at half each pipeline's sustained rate ("
                + "; ".join(
                    f"{k}: {sustained_rate(f, k)[1]}" for k in dict.fromkeys(rate_basis(k) for k, _ in f.p4)
                )
                + "; a variant of the worker is offered the worker's)"
            )
            + f" for {a.latency_seconds:.0f} s, after 20 preloaded records and {ramp:g} s of",
            "records at the same rate that are not counted (the steady state, not the first second",
            "under load); latency = ledger event time − the raw-hits record's create time (one clock),",
            f"which includes up to {harness.BATCHED_LINGER_MS} ms in the offering producer's linger",
            "(its sends are batched, to spare the shared cores).",
            "",
            "| pipeline | share of its sustained rate | offered/s | p50 ms | p99 ms |",
            "| --- | --- | --- | --- | --- |",
        ]
        for (key, share), runs in f.p4.items():
            rate = a.latency_rate or sustained_rate(f, rate_basis(key))[0] * share
            p50 = [harness.percentile(r, 0.5) for r in runs]
            p99 = [harness.percentile(r, 0.99) for r in runs]
            shown = "—" if a.latency_rate else f"{share:g}"
            lines.append(f"| {PIPELINES[key].name} | {shown} | {rate:,.0f} | {spread(p50)} | {spread(p99)} |")
        lines += ["", "Targets for the worker at half its sustained rate: p50 ≤ 20 ms, p99 ≤ 100 ms.", ""]
    if f.p5:
        points = dict(f.p5)
        tenth = next(rss for n, rss in f.p5 if n >= a.memory_records // 10)
        warm = next(rss for n, rss in f.p5 if n >= a.memory_records * 3 // 10)
        half = next(rss for n, rss in f.p5 if n >= a.memory_records // 2)
        full = f.p5[-1][1]
        shown = [n for n, _ in f.p5][1::4] + [f.p5[-1][0]]
        lines += [
            "## P5 memory",
            "",
            f"One worker, {a.memory_records:,} small records (3 hits, ~2 KB) offered in 20 chunks; one run.",
            "",
            "| after records | RSS MiB |",
            "| --- | --- |",
            *(f"| {n:,} | {points[n] / 2**20:.0f} |" for n in dict.fromkeys(shown)),
            "",
            f"Ratio after {a.memory_records:,} ÷ after {a.memory_records // 10:,}: **{full / tenth:.3f}** "
            f"(target ≤ 1.05); after warm-up, after {a.memory_records:,} ÷ after "
            f"{a.memory_records * 3 // 10:,} (the buffers Faust and aiokafka keep are full by then): "
            f"**{full / warm:.3f}**; after {a.memory_records:,} ÷ after {a.memory_records // 2:,}: "
            f"**{full / half:.3f}**.",
            "",
        ]
    if f.scale:
        lines += [
            "## Scale-out",
            "",
            f"{a.records:,} records on 6 partitions, 1-3 worker processes (all four agents each) in one",
            "group, joined and settled before the records are produced. This machine has 2 cores shared",
            "with the broker and Redis, so a third worker can only share them: the figure shows the",
            "group spreading the work, not the speed-up more machines would give.",
            "",
            "| workers | records/s |",
            "| --- | --- |",
        ]
        lines += [f"| {n} | {spread(v)} |" for n, v in f.scale.items()]
        lines.append("")
    if f.profile is not None and f.profile.exists():
        lines += [
            "## Profile of the worker during P2",
            "",
            f"py-spy, 100 Hz, all threads, {PROFILE_SECONDS} s from the first ledger event of the first"
            " P2 run",
            f"(collapsed stacks in `{f.profile.relative_to(ROOT)}`; `benchmarks/flames.py` summarizes them).",
            "",
            *flames.summary(f.profile),
            "",
        ]
    for path in FINDINGS:
        text = path.read_text(encoding="utf-8").strip()
        lines += ["", "\n".join(line for line in text.splitlines() if not line.startswith("<!--")), ""]
    return "\n".join(lines)


def large_table(f: Figures) -> list[str]:
    """P2 on the large preload beside P2: CPU per record as the backlog grows (target: flat within 15 %)."""
    if not f.p2l:
        return []
    a = f.args
    pipe_small = statistics.median(f.pipe_ms) if f.pipe_ms else None
    pipe_large = statistics.median(f.pipe_ms_large) if f.pipe_ms_large else None
    rows = []
    for key, runs in f.p2l.items():
        cpu_large = statistics.median(r.drain_cpu_ms for r in runs)
        small = f.p2.get(key)
        cpu_small = statistics.median(r.drain_cpu_ms for r in small) if small else None
        growth = f"{cpu_large / cpu_small:.2f}×" if cpu_small else "—"
        to_chain = f"{cpu_large / pipe_large:.2f}×" if pipe_large else "—"
        rows.append(
            f"| {PIPELINES[key].name} | {spread([r.drain_rate for r in runs])} | "
            f"{spread([r.drain_cpu_ms for r in runs], '{:.2f}')} | {growth} | {to_chain} | "
            f"{spread([r.fill_ms for r in runs])} | {spread([r.rate for r in runs])} | "
            f"{spread([r.steady_rate for r in runs])} | {spread([r.steady_cpu_ms for r in runs], '{:.2f}')} |"
        )
    chain_row = (
        f"| `evidence-chain pipe` (the stations alone) | — | {pipe_large:.3f} | "
        f"{pipe_large / pipe_small:.2f}× | 1.00× | — | — | — | {pipe_large:.3f} |"
        if pipe_small and pipe_large
        else ""
    )
    lines = [
        f"### P2 at {a.large_records:,} preloaded records",
        "",
        f"The same, on {a.large_records:,} records preloaded instead of {a.records:,}:",
        f"does a pipeline do more per record when more is waiting? *Growth* is drain CPU per record here ÷"
        f" at {a.records:,} (issue 42: within 15 %); *÷ chain* is ÷ the offline chain's CPU per"
        " record on the same records. *Steady* is the same pipeline between its ledger"
        f" events at {STEADY_WINDOW[0]:.0%} and at {STEADY_WINDOW[1]:.0%} of the run (every hop busy).",
        "",
        "| pipeline | drain records/s | drain CPU ms per record | growth | ÷ chain | fill ms"
        " | first-to-last records/s | steady records/s | steady CPU ms per record |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        *([chain_row] if chain_row else []),
        "",
    ]
    one_hop = [k for k in f.p2l if not k.startswith("worker") and k != "aiokafka-3hop"]
    if "worker" in f.p2l and one_hop:
        best = max(statistics.median(r.drain_rate for r in f.p2l[k]) for k in one_hop)
        ratio = statistics.median(r.drain_rate for r in f.p2l["worker"]) / best
        lines += [f"Worker ÷ the best one-hop peer by drain (medians): **{ratio:.2f}×**.", ""]
    lines += fill_table(f.p2l)
    return lines


def _median_of(values: Iterable[float]) -> float:
    """The median of the figures that were measured (nan when none was)."""
    known = [v for v in values if not math.isnan(v)]
    return statistics.median(known) if known else float("nan")


def fill_table(p2: dict[str, list[Run]]) -> list[str]:
    """When each hop's first record came, from the pipeline's first write (medians, ms): the fill."""
    shown = (Topic.POSTPROCESSED, Topic.PROJECTED, Topic.LEDGER)
    rows = [
        f"| {PIPELINES[key].name} | "
        + " | ".join(f"{statistics.median(r.first_of(t) for r in runs):,.0f}" for t in shown)
        + f" | {statistics.median((r.last_ms - min(r.firsts.values())) for r in runs if r.firsts):,.0f}"
        + f" | {_median_of(r.fill_busy for r in runs):.2f}"
        + f" | {_median_of(r.after_fill_busy for r in runs):.2f} |"
        for key, runs in p2.items()
        if any(r.firsts for r in runs)
    ]
    if not rows:
        return []
    return [
        "",
        "Each topic's first record, and the last ledger event, in ms after the pipeline's first write"
        " (medians; nan: the pipeline does not write it), and the cores the pipeline's process used"
        " during the fill and after it (CPU seconds ÷ wall seconds; a fill as busy as the rest is work"
        " done, not time lost):",
        "",
        "| pipeline | first postprocessed | first projected | first ledger | last ledger"
        " | cores busy in the fill | after it |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
    ]


def phase_table(f: Figures) -> list[str]:
    """Where each agent of the worker pipelines spent P2's span, from their own counters."""
    rows = []
    for key in ("worker", "worker-serial"):  # the other worker variants differ in one setting each
        measured_ = [r.phases for r in f.p2.get(key, []) if r.phases]
        agents = dict.fromkeys(agent for phases in measured_ for agent, _ in phases)
        for agent in agents:
            shares = [statistics.median(p.get((agent, phase), 0.0) for p in measured_) for phase in PHASES]
            if not any(shares):  # an agent with nothing to do in P2 (the guard)
                continue
            cells = " | ".join(f"{s:.0%}" for s in shares)
            rows.append(f"| {PIPELINES[key].name} | {agent} | {cells} | {1 - sum(shares):.0%} |")
    if not rows:
        return []
    return [
        "### Where each agent's time goes (P2)",
        "",
        "Each agent's own path over P2's measured span, from the worker's `evidence_chain_agent_seconds`",
        "(scraped from `/metrics` at the first ledger event and at the last; medians of the runs): waiting",
        "for records, settling before a thin batch, its station (with whatever else the event loop ran",
        "meanwhile), Redis, blocked on the broker's acks; *elsewhere* is the rest: the agent was ready",
        "and waited its turn on the one event loop (other agents, Faust's conductor, the producer).",
        "",
        "| pipeline | agent | records | settle | station | Redis | acks | elsewhere |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
    ]


async def collect(args: argparse.Namespace) -> Figures:
    figures = Figures(args)
    only = set(args.only.split(","))
    values = corpus.records(args.records)
    keys = [k for k in args.pipelines.split(",") if k]
    with Progress(console=console, transient=False, disable=args.smoke) as progress:
        if only & {"p2", "p4"}:
            task = progress.add_task("P2 throughput", total=args.runs * len(keys))
            for n in range(args.runs):
                for key in keys:
                    sample = args.profile and n == 0 and key == "worker"
                    figures.profile = PROFILE_OUT if sample else figures.profile
                    run = await throughput(
                        PIPELINES[key], values, 3, args.timeout, PROFILE_OUT if sample else None
                    )
                    figures.p2.setdefault(key, []).append(run)
                    progress.advance(task)
                figures.pipe_ms.append(pipe_cpu_ms(values))
        if "p2l" in only:
            large = corpus.records(args.large_records)
            targets = [k for k in ("worker", "aiokafka-1m", "quix") if k in keys]
            task = progress.add_task(f"P2 at {args.large_records:,}", total=len(targets))
            for key in targets:
                run = await throughput(PIPELINES[key], large, 3, args.timeout * 3)
                figures.p2l.setdefault(key, []).append(run)
                progress.advance(task)
            figures.pipe_ms_large.append(pipe_cpu_ms(large))
            del large
        if "p3" in only:
            counts = [int(n) for n in args.p3_citations.split(",")]
            task = progress.add_task("P3 guard", total=args.runs * len(counts) * len(P3_REVIEW))
            for turn in range(args.runs):
                for n in counts:
                    # off and on back to back, alternately first, so a busier minute weighs on both
                    for review in P3_REVIEW[:: 1 if turn % 2 == 0 else -1]:
                        guarded = await guard_rate(n, args.drafts, args.timeout, review)
                        figures.p3.setdefault((n, review), []).append(guarded)
                        progress.advance(task)
        if "p4" in only:
            targets = [k for k in ("worker", "worker-thread", "worker-rdkafka", "quix") if k in figures.p2]
            shares = (0.5,) if args.latency_rate else P4_SHARES  # a fixed rate (the smoke run): once
            task = progress.add_task("P4 latency", total=args.runs * len(targets) * len(shares))
            for _ in range(args.runs):
                for key in targets:
                    for share in shares:
                        rate = args.latency_rate or sustained_rate(figures, rate_basis(key))[0] * share
                        measured_ = await latency(PIPELINES[key], rate, args.latency_seconds, values[:20])
                        figures.p4.setdefault((key, share), []).append(measured_)
                        progress.advance(task)
        if "p5" in only:
            figures.p5 = await memory(args.memory_records, progress)
        if "scale" in only:
            sizes = (1, 2) if args.smoke else (1, 2, 3)  # the smoke run: two make it a group already
            task = progress.add_task("scale-out", total=args.runs * len(sizes))
            for _ in range(args.runs):
                for n in sizes:
                    figures.scale.setdefault(n, []).append(await scale_out(n, values, args.timeout))
                    progress.advance(task)
    return figures


def print_summary(markdown_text: str) -> None:
    table = Table(title="benchmark figures (see the report for all)", show_lines=False)
    table.add_column("line")
    for line in markdown_text.splitlines():
        if line.startswith("| ") and "---" not in line:
            table.add_row(line)
    Console().print(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--records", type=int, default=4000)
    parser.add_argument("--drafts", type=int, default=4000)
    parser.add_argument("--latency-seconds", type=float, default=20.0)
    parser.add_argument(
        "--latency-rate", type=float, default=None, help="P4's offered rate (default: half the sustained)"
    )
    parser.add_argument("--memory-records", type=int, default=200_000)
    parser.add_argument("--large-records", type=int, default=20_000, help="P2's second, larger preload (p2l)")
    parser.add_argument("--timeout", type=float, default=300.0, help="longest wait for one pipeline's events")
    parser.add_argument("--only", default="p2,p2l,p3,p4,p5,scale")
    parser.add_argument(
        "--p3-citations", default=None, help="P3's citations per draft (default: 1,5,20; the smoke run: 5)"
    )
    parser.add_argument("--pipelines", default=None, help=f"some of {','.join(PIPELINES)} (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--profile", action="store_true", help="sample the worker with py-spy during P2")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run: proves the benchmark runs")
    args = parser.parse_args(argv)
    if args.pipelines is None:  # the smoke run skips the worker's variants that start the same code
        args.pipelines = (
            "worker,worker-rdkafka,aiokafka,aiokafka-3hop,quix" if args.smoke else ",".join(PIPELINES)
        )
    if args.p3_citations is None:  # the smoke run: the acceptance's size, review off and on
        args.p3_citations = "5" if args.smoke else "1,5,20"
    if args.smoke:
        args.runs, args.records, args.drafts = 1, 60, 60
        args.latency_seconds, args.memory_records, args.timeout = 2.0, 400, 120.0
        args.latency_rate = args.latency_rate or 20.0  # 60 records can land in one millisecond
        args.large_records = 120
    if "quix" in args.pipelines and not harness.QUIX_PYTHON.exists():
        parser.error(
            f"{harness.QUIX_PYTHON} is missing: run `make bench-quix-venv` (or leave quix out of --pipelines)"
        )
    logging.getLogger("aiokafka").setLevel(logging.ERROR)  # fresh topics' leader elections are noise here
    BROKER_TOPICS[:] = [asyncio.run(harness.broker_topics(load_settings()))]
    if (crowded := harness.crowded_broker(BROKER_TOPICS[0])) is not None:
        console.print(f"[yellow]note:[/] {crowded}")
    text = markdown(asyncio.run(collect(args)))
    # Other benchmarks' sections (benchmarks/lookup.py's) stay: this report is rewritten, theirs is not.
    kept = harness.sections(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    args.out.write_text("\n\n".join([text, *kept.values()]).rstrip("\n") + "\n", encoding="utf-8")
    if args.smoke:
        print(harness.smoke_line("benchmarks/stream.py", args.only.upper().replace(",", ", "), args.out))
        return 0
    print_summary(text)
    console.print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
