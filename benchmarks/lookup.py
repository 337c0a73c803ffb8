"""The agent's lookup round trip, side by side with the pipeline it rides on (BENCHMARKS.md, "Lookups").

    make bench                                     # after stream.py; writes its section of BENCHMARKS.md
    .venv/bin/python benchmarks/lookup.py --seconds 10 --runs 1 --rates 50,100,200 --load-rate 50
    .venv/bin/python benchmarks/lookup.py --smoke --out .local/bench/smoke.md     # what `make test` runs

Open loop: request i is issued at ``start + i / rate`` whatever the earlier ones are doing, and its
latency runs from that scheduled time to its answer, so a slow answer cannot hold back the load it is
measured under (no coordinated omission). Each column is one offered rate (by default 50, 100 and
200 lookups/s, and 100/s beside ``--load-rate``/s of other raw-hits records); each run starts a fresh
worker (all four agents, one process, default settings) with its own topic prefix and namespace, and
measures on it, one after the other, each path on records of its own:

- stations in-process: ``process_raw_hits`` + the projector (``process_lookup``) on the same records —
  the floor: the CPU a lookup needs with no Kafka, no Redis and no waiting;
- pipeline: raw-hits records produced directly, each sent as it is offered (``harness.offer``, linger
  0, as the client sends a lookup), latency to the ledger event (its own timestamp, read by the same
  ``Watcher`` as ``stream.py``'s P4);
- client: ``EvidenceChainClient.lookup`` (produce, then the ledger event read from its partition);
- gateway: ``POST /v1/lookups`` on ``evidence-chain gateway`` (a subprocess with the same settings);
- quix: the pipeline path on the Quix Streams anchor (``anchor_quix.py``: the same stations in one
  Quix application, librdkafka underneath) in place of the worker, on topics of its own, at the same
  offered rates: what a mature stream-processing library gives for the same one-at-a-time traffic;
- more paths can be added to :data:`EXTRA_PATHS` (a name, a title, and an async function measuring it
  on a running worker), e.g. a tool server's lookups (issue 34), without touching the rest.

The acceptance figure is 100 lookups/s (p50 ≤ 15 ms, p99 ≤ 60 ms), alone and while other raw-hits
records arrive at ``--load-rate``/s (another agent's lookups, produced directly) through the same worker.
Nothing here is a timed assertion: the figures are read, not checked.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import harness  # noqa: E402
from harness import LOGS, ROOT, Process, Watcher, fresh_settings, percentile, pipeline_env  # noqa: E402

from models.vocab import Topic  # noqa: E402
from streams import codec  # noqa: E402
from streams.client import EvidenceChainClient  # noqa: E402
from streams.pipeline import StationRules, process_lookup, process_raw_hits  # noqa: E402
from streams.settings import Settings  # noqa: E402

console = Console(stderr=True)
CLI = str(Path(sys.executable).with_name("evidence-chain"))
SECTION = "lookup.py"
FINDINGS = ROOT / "benchmarks" / "lookup-findings.md"
"""Written by people and appended to the section as is: what the figures mean, which targets are missed."""
TOKEN = "bench-token-0123456789abcdef"  # noqa: S105 - a throwaway token for a loopback gateway
WARMUP = 24
"""Lookups before each measurement: every partition's reader started, the worker's batches flowing."""
PATHS = ("floor", "pipeline", "client", "gateway", "quix")
PATH_NAMES = {
    "floor": "stations in-process (`process_raw_hits` + projector): the floor",
    "pipeline": "pipeline: raw-hits produced → ledger event",
    "client": "client: `EvidenceChainClient.lookup`",
    "gateway": "gateway: `POST /v1/lookups`",
    "quix": "Quix Streams anchor in place of the worker: raw-hits produced → ledger event",
}


@dataclass(frozen=True)
class Column:
    """One offered load: lookups per second, and raw-hits records per second produced beside them."""

    rate: float
    load: float = 0.0

    @property
    def title(self) -> str:
        return f"{self.rate:.0f}/s" + (f" + {self.load:.0f}/s load" if self.load else "")


@dataclass
class Sample:
    """Latencies (ms) of one path in one run, and the requests that got no answer."""

    latencies: list[float] = field(default_factory=list)
    failed: int = 0


# --- the paths ---------------------------------------------------------------------------------------


def floor(values: Sequence[bytes], settings: Settings) -> Sample:
    """CPU per lookup with no I/O: the postprocess and project stations on each record."""
    out = Sample()
    rules = StationRules.from_settings(settings)  # once, as the worker builds them
    for value in values:
        started = time.perf_counter()
        done = process_raw_hits(value, rules)
        process_lookup(codec.dumps(done.lookup), rules)
        out.latencies.append((time.perf_counter() - started) * 1000)
    return out


async def open_loop(
    values: Sequence[bytes], rate: float, request: Callable[[bytes], Awaitable[object]]
) -> Sample:
    """Issue ``request(value)`` for each value on a fixed schedule; latency from the scheduled time."""
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.05

    async def one(index: int, value: bytes) -> float:
        scheduled = start + index / rate
        await asyncio.sleep(max(0.0, scheduled - loop.time()))
        await request(value)
        return (loop.time() - scheduled) * 1000

    results = await asyncio.gather(*(one(i, v) for i, v in enumerate(values)), return_exceptions=True)
    out = Sample([r for r in results if isinstance(r, float)])
    out.failed = len(results) - len(out.latencies)
    for error in {type(r).__name__: r for r in results if isinstance(r, BaseException)}.values():
        console.print(f"  a request failed: {type(error).__name__}: {error}", markup=False)
    return out


async def arrivals(watcher: Watcher, tool_call_ids: set[str], seconds: float) -> dict[str, int]:
    """The ledger event time (ms) of each of ``tool_call_ids`` seen within ``seconds`` (others skipped)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        events = watcher.events
        if tool_call_ids <= set(events.tool_call_ids):
            break
        await watcher.until(len(events.timestamps) + 1, 0.2)
    found = zip(watcher.events.tool_call_ids, watcher.events.timestamps, strict=True)
    return {t: ts for t, ts in found if t in tool_call_ids}


Begin = Callable[[], Awaitable[None]]
"""Called by a path when its warm-up is done and the measured requests start."""


async def pipeline(settings: Settings, values: Sequence[bytes], rate: float, begin: Begin) -> Sample:
    """Records produced at ``rate``; latency = ledger event time − create time (stream.py's P4)."""
    async with Watcher(settings) as watcher:
        warmup = corpus.records(WARMUP, seed=31, start=_next_start())
        await harness.preload(settings, warmup)
        await arrivals(watcher, {codec.loads(v)["tool_call_id"] for v in warmup}, 120)
        await begin()
        sent = await harness.offer(settings, values, rate)
        arrived = await arrivals(watcher, set(sent), 60)
    return Sample([float(arrived[t] - sent[t]) for t in sent if t in arrived], len(sent) - len(arrived))


async def client(settings: Settings, values: Sequence[bytes], rate: float, begin: Begin) -> Sample:
    async with EvidenceChainClient(settings, timeout_ms=30_000) as chain:
        await asyncio.gather(*(chain.lookup(v) for v in corpus.records(WARMUP, seed=31, start=_next_start())))
        await begin()
        return await open_loop(values, rate, chain.lookup)


async def gateway(base_url: str, values: Sequence[bytes], rate: float, begin: Begin) -> Sample:
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(base_url, headers=headers, connector=connector) as session:

        async def lookup(value: bytes) -> None:
            async with session.post("/v1/lookups", data=value) as answer:
                body = await answer.read()
                if answer.status != 200:
                    raise RuntimeError(f"{answer.status}: {body[:200]!r}")

        await asyncio.gather(*(lookup(v) for v in corpus.records(WARMUP, seed=31, start=_next_start())))
        await begin()
        return await open_loop(values, rate, lookup)


async def background(settings: Settings, rate: float, stop: asyncio.Event) -> None:
    """Raw-hits records produced at ``rate``/s (another agent's lookups) until ``stop`` is set."""
    producer = harness.producer(settings)
    await producer.start()
    try:
        loop = asyncio.get_running_loop()
        first = _next_start()
        pool = corpus.records(200, seed=37, start=first)  # cycled, each under a tool call id of its own
        start, sent = loop.time(), 0
        while not stop.is_set():
            await asyncio.sleep(max(0.0, start + sent / rate - loop.time()))
            n = first + sent % len(pool)
            value = pool[sent % len(pool)].replace(b'"call-%d"' % n, b'"load-%d"' % (first + sent), 1)
            await producer.send(settings.topic(Topic.RAW_HITS), value, key=harness.key_of(value))
            sent += 1
    finally:
        await producer.stop()


_starts = iter(range(1_000_000, 1_000_000_000, 100_000))


def _next_start() -> int:
    """A block of record numbers no other measurement of this process uses (fresh ledger keys)."""
    return next(_starts)


# --- paths added by other benchmarks ----------------------------------------------------------------

Measure = Callable[["Settings", Sequence[bytes], float, "Begin"], Awaitable["Sample"]]
"""A path measured on a running worker: ``(settings, values, rate, begin) -> Sample``; it calls
``begin()`` once its warm-up is done (the worker's CPU and batches are read from then on) and issues
``values`` at ``rate`` per second, open loop (:func:`open_loop`), latency from each scheduled time."""


@dataclass(frozen=True)
class ExtraPath:
    """A lookup path measured beside the others (its own row), on the same worker and load."""

    title: str
    measure: Measure
    rates: tuple[float, ...] | None = None
    """Only at these offered rates (None: at every column's)."""


EXTRA_PATHS: dict[str, ExtraPath] = {}
"""Paths registered by name, e.g. ``EXTRA_PATHS["mcp"] = ExtraPath("MCP tool server: lookup_knowledge",
measure_mcp, rates=(20.0,))`` (issue 34, the tool server's lookup latency at 20 lookups/s); choose
them with ``--paths`` like the built-in ones. See :func:`register_path`."""


def register_path(name: str, path: ExtraPath) -> None:
    """Add a path (see :data:`EXTRA_PATHS`); ``--paths`` then accepts ``name``."""
    EXTRA_PATHS[name] = path
    PATH_NAMES[name] = path.title


async def quix(values: Sequence[bytes], column: Column) -> Sample:
    """The pipeline path with the Quix Streams anchor in place of the worker, on topics of its own
    (and the column's background load there too)."""
    label = f"lkq{column.rate:.0f}" + ("l" if column.load else "")
    async with harness.topics(fresh_settings(label, 3)) as own:
        argv = [str(harness.QUIX_PYTHON), str(ROOT / "benchmarks" / "anchor_quix.py")]
        process = harness.start(f"quix-{label}", argv, pipeline_env(own, PYTHONPATH=str(ROOT)))
        stop = asyncio.Event()
        load = asyncio.create_task(background(own, column.load, stop)) if column.load else None
        try:
            return await pipeline(own, values, column.rate, _nothing)
        finally:
            stop.set()
            if load is not None:
                await load
            process.stop()


async def _nothing() -> None:
    return None


# --- one run -------------------------------------------------------------------------------------


def gateway_available() -> bool:
    """Whether this checkout's command has ``gateway``."""
    done = subprocess.run([CLI, "gateway", "--help"], capture_output=True, check=False)
    return done.returncode == 0


def start_gateway(settings: Settings, name: str) -> tuple[Process, str]:
    """``evidence-chain gateway`` on a free loopback port; returns it and its base URL once ready."""
    env = pipeline_env(settings, EC_GATEWAY_TOKEN=TOKEN, EC_GATEWAY_TIMEOUT_MS="30000")
    process = harness.start(name, [CLI, "gateway", "--port", "0", "--loglevel", "warning"], env)
    log = LOGS / f"{name}.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in log.read_text(errors="replace").splitlines():
            if "listening on http://" in line:
                return process, line.split("listening on ", 1)[1].split()[0].rstrip("/")
        if not process.alive():
            break
        time.sleep(0.2)
    process.stop()
    raise RuntimeError(f"the gateway did not start; see {log}")


async def wait_ready(base_url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            try:
                async with session.get(f"{base_url}/readyz") as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.3)
    raise RuntimeError(f"{base_url}/readyz did not say ready in {seconds:.0f} s")


AGENTS = ("postprocess", "project", "ledger")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def batch_totals(port: int) -> dict[str, tuple[float, float, float]]:
    """Per agent, from the worker's /metrics: (records, batches, seconds spent in batches)."""
    values = await harness.worker_metrics(port)
    out = {}
    for agent in AGENTS:
        records = sum(
            v for k, v in values.items() if k.startswith(f'evidence_chain_records_total{{agent="{agent}"')
        )
        batches = values.get(f'evidence_chain_batch_seconds_count{{agent="{agent}"}}', 0.0)
        busy = values.get(f'evidence_chain_batch_seconds_sum{{agent="{agent}"}}', 0.0)
        out[agent] = (records, batches, busy)
    return out


@dataclass
class Window:
    """The worker's CPU and batches over the measured part of each path (warm-ups and drains left out)."""

    worker: Process
    port: int
    cpu: float = 0.0
    wall: float = 0.0
    batches: dict[str, list[float]] = field(default_factory=lambda: {a: [0.0, 0.0, 0.0] for a in AGENTS})
    _started: tuple[float, float, dict[str, tuple[float, float, float]]] | None = None

    async def begin(self) -> None:
        self._started = (self.worker.cpu_seconds(), time.monotonic(), await batch_totals(self.port))

    async def end(self) -> None:
        if self._started is None:
            return
        cpu, wall, before = self._started
        after = await batch_totals(self.port)
        self.cpu += self.worker.cpu_seconds() - cpu
        self.wall += time.monotonic() - wall
        for agent in AGENTS:
            for i in range(3):
                self.batches[agent][i] += after[agent][i] - before[agent][i]
        self._started = None

    def record(self, column: Column) -> None:
        if self.wall:
            WORKER_CPU.setdefault(column, []).append(self.cpu / self.wall)
        for agent, (records, batches, busy) in self.batches.items():
            if batches:
                BATCHES.setdefault(column, {}).setdefault(agent, []).append(
                    (records / batches, busy * 1000 / batches)
                )


async def run(column: Column, seconds: float, paths: Sequence[str]) -> dict[str, Sample]:
    """One fresh worker (and gateway), each path measured on it in turn at ``column``'s load."""
    count = max(10, int(column.rate * seconds))
    out: dict[str, Sample] = {}
    label = f"lk{column.rate:.0f}" + ("l" if column.load else "")
    records = {path: corpus.records(count, seed=29, start=_next_start()) for path in paths if path != "floor"}
    async with harness.topics(fresh_settings(label, 3)) as settings:
        if "floor" in paths:  # on the records the client is measured on, before the worker starts
            out["floor"] = floor(records.get("client") or corpus.records(count, seed=29), settings)
        port = free_port()  # the worker's /metrics: how large its batches are and how long they take
        env = pipeline_env(settings, EC_WEB_ENABLED="true", EC_WEB_PORT=str(port))
        worker = harness.start(f"worker-{label}", harness.worker_argv(), env)
        window = Window(worker, port)
        front: Process | None = None
        try:
            if "gateway" in paths:
                front, base_url = start_gateway(settings, f"gateway-{label}")
                await wait_ready(base_url)
            for path, values in records.items():
                stop = asyncio.Event()
                beside = column.load and path != "quix"  # quix runs on topics of its own, its load too
                load = asyncio.create_task(background(settings, column.load, stop)) if beside else None
                try:
                    if path == "pipeline":
                        out[path] = await pipeline(settings, values, column.rate, window.begin)
                    elif path == "client":
                        out[path] = await client(settings, values, column.rate, window.begin)
                    elif path == "gateway":
                        out[path] = await gateway(base_url, values, column.rate, window.begin)
                    elif path == "quix":  # the worker idles meanwhile: its window is not opened
                        out[path] = await quix(values, column)
                    else:
                        extra = EXTRA_PATHS[path]
                        if extra.rates is not None and column.rate not in extra.rates:
                            continue
                        out[path] = await extra.measure(settings, values, column.rate, window.begin)
                    await window.end()
                finally:
                    stop.set()
                    if load is not None:
                        await load
                await asyncio.sleep(1)  # let the worker drain before the next path
            window.record(column)
        finally:
            if front is not None:
                front.stop()
            worker.stop()
    return out


# --- the report ----------------------------------------------------------------------------------


def ms(value: float) -> str:
    """Milliseconds with the digits that mean something at that size."""
    return f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def cell(samples: Sequence[Sample]) -> str:
    """p50 / p99 in ms: the median over runs of each run's figure."""
    runs = [s for s in samples if s.latencies]
    if not runs:
        return "—"
    p50 = statistics.median(percentile(s.latencies, 0.5) for s in runs)
    p99 = statistics.median(percentile(s.latencies, 0.99) for s in runs)
    failed = sum(s.failed for s in samples)
    return f"{ms(p50)} / {ms(p99)}" + (f" ({failed} failed)" if failed else "")


BATCHES: dict[Column, dict[str, list[tuple[float, float]]]] = {}
"""Per column, agent and run: the worker's mean records per batch and milliseconds per batch."""
WORKER_CPU: dict[Column, list[float]] = {}
"""Per column and run: the worker's CPU while the paths were measured, as a share of one core."""
LOADS: list[float] = []
"""The machine's 1-minute load average, read before and after each run."""


def load_average() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def markdown(
    figures: dict[Column, dict[str, list[Sample]]], args: argparse.Namespace, paths: Sequence[str]
) -> str:
    columns = list(figures)
    cores = len(os.sched_getaffinity(0))
    lines = [
        "## Lookups: the agent's round trip",
        "",
        "`benchmarks/lookup.py`: open loop (request *i* issued at start + *i* / rate, latency from",
        f"that scheduled time), {args.seconds:g} s per path and rate, {args.runs} run(s) (the median",
        "of each run's figure). A fresh worker (all four agents, one process, default settings) per",
        "rate and run; on it each path in turn, on records of its own (the ~23 KB py-rag responses of",
        "20 hits that P2 uses, 3 partitions). The background load is raw-hits records produced directly",
        "beside the lookups, through the same worker. The floor is CPU only: what any path costs at least.",
        "",
        f"Machine: {platform.node()}, {cores} cores shared with the broker, Redis and any other work; the",
        f"1-minute load average during the runs was {min(LOADS, default=0):.1f}–{max(LOADS, default=0):.1f}.",
        "",
        "p50 / p99 ms:",
        "",
        "| path | " + " | ".join(c.title for c in columns) + " |",
        "| --- |" + " --- |" * len(columns),
    ]
    for path in paths:
        lines.append(
            f"| {PATH_NAMES[path]} | " + " | ".join(cell(figures[c].get(path, [])) for c in columns) + " |"
        )
    lines.append(
        "| worker CPU while measured (share of one core) | "
        + " | ".join(f"{statistics.median(WORKER_CPU[c]):.0%}" if WORKER_CPU.get(c) else "—" for c in columns)
        + " |"
    )
    for agent in AGENTS:
        cells = []
        for c in columns:
            runs = BATCHES.get(c, {}).get(agent, [])
            size = statistics.median(r for r, _ in runs) if runs else None
            took = statistics.median(t for _, t in runs) if runs else None
            cells.append("—" if size is None or took is None else f"{size:.1f} in {took:.1f} ms")
        lines.append(
            f"| worker's {agent} agent: records per batch, time per batch | " + " | ".join(cells) + " |"
        )
    for column in (c for c in columns if c.rate == 100):
        verdicts = []
        for path in ("client", "gateway"):
            runs = [s for s in figures[column].get(path, []) if s.latencies]
            if not runs:
                continue
            p50 = statistics.median(percentile(s.latencies, 0.5) for s in runs)
            p99 = statistics.median(percentile(s.latencies, 0.99) for s in runs)
            met = p50 <= 15 and p99 <= 60 and not sum(s.failed for s in runs)
            verdicts.append(f"{path} {ms(p50)} / {ms(p99)} ms: **{'met' if met else 'missed'}**")
        lines += ["", f"Target at {column.title} (p50 ≤ 15 ms, p99 ≤ 60 ms): " + "; ".join(verdicts) + "."]
    if FINDINGS.exists():  # written by people: why the figures are what they are
        text = FINDINGS.read_text(encoding="utf-8").strip()
        lines += ["", "\n".join(line for line in text.splitlines() if not line.startswith("<!--"))]
    return "\n".join(lines)


def columns_of(args: argparse.Namespace) -> list[Column]:
    out = [Column(float(r)) for r in args.rates.split(",") if r]
    if args.load_rate > 0:
        out.append(Column(100.0, args.load_rate))
    return out


async def collect(args: argparse.Namespace, paths: Sequence[str]) -> dict[Column, dict[str, list[Sample]]]:
    figures: dict[Column, dict[str, list[Sample]]] = {c: {} for c in columns_of(args)}
    with Progress(console=console, transient=False, disable=args.smoke) as progress:
        task = progress.add_task("lookups", total=args.runs * len(figures))
        for _ in range(args.runs):
            for column in figures:
                progress.update(task, description=f"lookups at {column.title}")
                LOADS.append(load_average())
                measured = await run(column, args.seconds, paths)
                LOADS.append(load_average())
                for path, sample in measured.items():
                    figures[column].setdefault(path, []).append(sample)
                progress.advance(task)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=10.0, help="per path and rate")
    parser.add_argument("--rates", default="50,100,200", help="lookups/s, comma-separated")
    parser.add_argument(
        "--load-rate", type=float, default=50.0, help="raw-hits/s beside 100 lookups/s (0: no such column)"
    )
    parser.add_argument("--paths", default=",".join(PATHS), help=f"some of {','.join(PATHS)}")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny counts, one run: proves the benchmark runs"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        # One column, the one with everything in it: every path, and the background load.
        args.runs, args.seconds, args.rates, args.load_rate = 1, 0.5, "", 20.0
    paths = [p for p in args.paths.split(",") if p]
    if "quix" in paths and not harness.QUIX_PYTHON.exists():
        console.print(f"{harness.QUIX_PYTHON} is missing (`make bench-quix-venv`): the quix row is left out")
        paths.remove("quix")
    unknown = [p for p in paths if p not in PATH_NAMES]
    if unknown:
        parser.error(f"unknown --paths {unknown}: choose among {', '.join(PATH_NAMES)}")
    if "gateway" in paths and not gateway_available():
        console.print("`evidence-chain gateway` is not in this checkout: the gateway row is left out")
        paths.remove("gateway")
    logging.getLogger("aiokafka").setLevel(logging.ERROR)  # fresh topics' leader elections are noise here
    figures = asyncio.run(collect(args, paths))
    text = markdown(figures, args, paths)
    harness.write_section(args.out, SECTION, text)
    if args.smoke:
        print(harness.smoke_line("benchmarks/lookup.py", f"lookups through {', '.join(paths)}", args.out))
        return 0
    table = Table(title="lookup round trips, p50 / p99 ms")
    for line in text.splitlines():
        if line.startswith("| ") and "---" not in line:
            table.add_row(line)
    Console().print(table)
    console.print(f"wrote the {SECTION} section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
