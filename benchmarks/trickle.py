"""The fixed cost of a batch: the worker's CPU per record and its latency when records trickle in.

    make bench                                                     # writes its section of BENCHMARKS.md
    .venv/bin/python benchmarks/trickle.py --rates 20,100,500 --seconds 15
    .venv/bin/python benchmarks/trickle.py --rates 100 --profile py-spy   # + a py-spy profile of the window
    .venv/bin/python benchmarks/trickle.py --smoke --out .local/bench/smoke.md

Under a backlog (``stream.py``'s P2) an agent's batches are full and their fixed cost (a fetch, a
produce request, an offset commit, the hand-overs between Faust's consumer thread and the agents'
event loop) is shared by a hundred records. An agent's lookups come one at a time: then every record
pays it alone, at every hop. Here raw-hits records are offered at a steady rate (open loop, each
stamped when produced) to a fresh worker with all four agents, and over the measured window this
reads the worker's CPU (``/proc``) per record, the raw-hits → ledger latency (the ledger event's own
timestamp − the record's create time), and, from ``/metrics``, each agent's batches and where its
wall time went. With ``--profile`` py-spy samples the worker over the window (``flames.py`` summary).

The machine is shared: read the figures of one run against each other (ratios, CPU per record), not
against another day's.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import flames  # noqa: E402
import harness  # noqa: E402
from harness import LOGS, ROOT, Watcher, fresh_settings, percentile, pipeline_env  # noqa: E402

from models.vocab import Topic  # noqa: E402

console = Console(stderr=True)
SECTION = "trickle.py"
AGENTS = ("postprocess", "project", "ledger")
PHASES = ("records", "settle", "station", "redis", "acks")
WARMUP_SECONDS = 2.0
"""Records at the measured rate before the window (not counted): the worker's first second under load
(assignments, first fetches, JIT-less warm-up of every path) is not the steady state."""


@dataclass
class Figures:
    """One rate, one run."""

    rate: float
    records: int = 0
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    hops: dict[str, list[float]] = field(default_factory=dict)
    """Per hop (the topic it ends on): each record's ms from the event before it to its event there."""
    missing: int = 0
    batches: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Per agent: (records, batches) over the window."""
    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per agent and phase: seconds over the window."""
    profile: list[str] = field(default_factory=list)

    @property
    def cpu_ms_per_record(self) -> float:
        return self.cpu_seconds * 1000 / self.records if self.records else float("nan")

    @property
    def cpu_ms_per_batch(self) -> float:
        """The worker's CPU ÷ the batches its three chain agents took: the fixed cost, whatever the
        batch sizes (on a busy machine records queue, batches grow and CPU per record falls)."""
        batches = sum(b for _, b in self.batches.values())
        return self.cpu_seconds * 1000 / batches if batches else float("nan")


def agent_figures(before: dict[str, float], after: dict[str, float]) -> tuple[dict, dict]:
    def delta(name: str) -> float:
        return after.get(name, 0.0) - before.get(name, 0.0)

    batches, phases = {}, {}
    for agent in AGENTS:
        records = sum(
            delta(k) for k in after if k.startswith(f'evidence_chain_records_total{{agent="{agent}"')
        )
        batches[agent] = (records, delta(f'evidence_chain_batch_seconds_count{{agent="{agent}"}}'))
        phases[agent] = {
            phase: delta(f'evidence_chain_agent_seconds_total{{agent="{agent}",phase="{phase}"}}')
            for phase in PHASES
        }
    return batches, phases


async def measure(rate: float, seconds: float, profile: str | None, env_extra: dict[str, str]) -> Figures:
    """A fresh worker, records offered at ``rate`` for ``seconds`` after a warm-up; its figures."""
    figures = Figures(rate)
    count = max(5, int(rate * seconds))
    warm = max(3, int(rate * WARMUP_SECONDS))
    start = 2_000_000 + int(rate) * 10_000
    values = corpus.records(warm + count, seed=41, start=start)
    label = f"tr{rate:.0f}"
    async with harness.topics(fresh_settings(label, 3)) as settings:
        port = harness.free_port()
        env = pipeline_env(settings, EC_WEB_ENABLED="true", EC_WEB_PORT=str(port), **env_extra)
        worker = harness.start(f"worker-{label}", harness.worker_argv(), env)
        sampler: subprocess.Popen[bytes] | None = None
        try:
            async with (
                Watcher(settings) as watcher,
                Watcher(settings, Topic.POSTPROCESSED) as postprocessed,
                Watcher(settings, Topic.PROJECTED) as projected,
            ):
                primer = corpus.records(6, seed=43, start=start + 900_000)
                await harness.preload(settings, primer)
                await watcher.until(len(primer), 120)
                await harness.offer(settings, values[:warm], rate)
                await watcher.until(len(primer) + warm, 30)
                measured = values[warm:]
                before = await harness.worker_metrics(port)
                cpu0, wall0 = worker.cpu_seconds(), time.monotonic()
                out = LOGS / f"profile-{label}.txt"
                if profile == "py-spy":
                    sampler = flames.record(worker.pid, max(1.0, count / rate), out, gil=True)
                elif profile == "perf":
                    sampler = perf_record(worker.pid, max(1.0, count / rate), out.with_suffix(".perf"))
                sent = await harness.offer(settings, measured, rate)
                total = len(primer) + warm + len(measured)
                await watcher.until(total, 30)
                cpu1, wall1 = worker.cpu_seconds(), time.monotonic()
                after = await harness.worker_metrics(port)
                arrived = dict(zip(watcher.events.tool_call_ids, watcher.events.timestamps, strict=True))
                on_the_way = [await w.until(total, 30) for w in (postprocessed, projected)]
        finally:
            if sampler is not None:
                sampler.wait(60)
            worker.stop()
    figures.records = len(sent)
    figures.cpu_seconds, figures.wall_seconds = cpu1 - cpu0, wall1 - wall0
    figures.latencies = [float(arrived[t] - sent[t]) for t in sent if t in arrived]
    between = [dict(zip(e.tool_call_ids, e.timestamps, strict=True)) for e in on_the_way]
    figures.hops = hop_latencies(sent, between, arrived)
    figures.missing = len(sent) - len(figures.latencies)
    figures.batches, figures.phases = agent_figures(before, after)
    if profile == "py-spy" and out.exists():
        figures.profile = flames.summary(out)
    elif profile == "perf" and out.with_suffix(".perf").exists():
        figures.profile = perf_summary(out.with_suffix(".perf"))
    return figures


HOPS = ("postprocessed", "projected", "ledger")


def hop_latencies(
    sent: dict[str, int], between: list[dict[str, int]], arrived: dict[str, int]
) -> dict[str, list[float]]:
    """Each hop's ms per record (the create time of its event on the hop's topic − the one before it),
    for the records seen on every topic of the way."""
    hops: dict[str, list[float]] = {hop: [] for hop in HOPS}
    for call, offered in sent.items():
        times = [offered, *(seen.get(call) for seen in between), arrived.get(call)]
        if None in times:
            continue
        for hop, before, after in zip(HOPS, times, times[1:], strict=False):
            hops[hop].append(float(after - before))  # type: ignore[operator]
    return hops


def perf_record(pid: int, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    """``perf record`` of ``pid`` (all threads, kernel included) for ``seconds``: CPU, not wall time."""
    argv = ["perf", "record", "-F", "499", "-p", str(pid), "-o", str(out), "--", "sleep", str(seconds)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def perf_summary(path: Path, top: int = 14) -> list[str]:
    """Where the worker's CPU went, by shared object (the interpreter, the kernel, uvloop, orjson ...)."""
    done = subprocess.run(
        ["perf", "report", "-i", str(path), "--stdio", "--sort", "dso", "--percent-limit", "0.5"],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = ["| where the worker's CPU went (perf, by shared object) | share |", "| --- | --- |"]
    for line in done.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].endswith("%"):
            lines.append(f"| `{parts[-1]}` | {parts[0]} |")
    return lines[: top + 2]


def ms(value: float) -> str:
    return f"{value:.2f}" if value < 1 else f"{value:.1f}" if value < 10 else f"{value:,.0f}"


def markdown(runs: dict[float, list[Figures]], args: argparse.Namespace) -> str:
    rates = sorted(runs)
    lines = [
        "## The fixed cost of a batch: records that trickle in",
        "",
        "`benchmarks/trickle.py`: raw-hits records (the ~23 KB py-rag responses P2 uses, 3 partitions)",
        f"offered at a steady rate to a fresh worker (all four agents, one process) for {args.seconds:g} s",
        f"after {WARMUP_SECONDS:g} s at that rate not counted; {args.runs} run(s), medians. CPU per record",
        "is the worker's CPU (`/proc`) over the window ÷ the records offered in it: every hop of each record",
        "and whatever the worker did meanwhile. Latency: ledger event time − the raw-hits record's create",
        "time (one clock; each record sent as offered, linger 0). Each hop's p50: its event's create time",
        "− the one before it on the way. Batches and phases from the worker's `/metrics` over the window.",
        "",
        "| offered records/s | worker CPU ms per record | CPU ms per batch (3 agents) "
        "| worker CPU (share of a core) | raw-hits → ledger p50 / p99 ms "
        "| p50 of each hop ms: → postprocessed / → projected / → ledger |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rate in rates:
        figs = runs[rate]
        cpu = statistics.median(f.cpu_ms_per_record for f in figs)
        share = statistics.median(f.cpu_seconds / f.wall_seconds for f in figs if f.wall_seconds)
        p50 = statistics.median(percentile(f.latencies, 0.5) for f in figs)
        p99 = statistics.median(percentile(f.latencies, 0.99) for f in figs)
        missing = sum(f.missing for f in figs)
        late = f" ({missing} not arrived)" if missing else ""
        per_batch = statistics.median(f.cpu_ms_per_batch for f in figs)
        hops = " / ".join(
            ms(statistics.median(percentile(f.hops[hop], 0.5) for f in figs))
            if all(f.hops.get(hop) for f in figs)
            else "—"
            for hop in HOPS
        )
        lines.append(
            f"| {rate:,.0f} | {cpu:.2f} | {per_batch:.2f} | {share:.0%} "
            f"| {ms(p50)} / {ms(p99)}{late} | {hops} |"
        )
    lines += [
        "",
        "Per agent: records per batch, and its wall time by phase (share of the window).",
        "",
        "| offered/s | agent | records per batch | " + " | ".join(PHASES) + " |",
        "| --- | --- | --- |" + " --- |" * len(PHASES),
    ]
    for rate in rates:
        last = runs[rate][-1]
        for agent in AGENTS:
            records, batches = last.batches.get(agent, (0.0, 0.0))
            size = f"{records / batches:.1f}" if batches else "—"
            spent = last.phases.get(agent, {})
            shares = [
                f"{spent.get(p, 0.0) / last.wall_seconds:.0%}" if last.wall_seconds else "—" for p in PHASES
            ]
            lines.append(f"| {rate:,.0f} | {agent} | {size} | " + " | ".join(shares) + " |")
    for rate in rates:
        profile = runs[rate][-1].profile
        if profile:
            lines += [
                "",
                f"sampled over the window at {rate:,.0f} records/s (worker, all threads):",
                "",
                *profile,
            ]
    target = [r for r in rates if r == 100]
    if target:
        cpu = statistics.median(f.cpu_ms_per_record for f in runs[100])
        verdict = "met" if cpu <= 2 else "missed"
        lines += ["", f"Target at 100 records/s offered: CPU per record ≤ 2 ms: {cpu:.2f} ms, **{verdict}**."]
    return "\n".join(lines)


async def collect(args: argparse.Namespace) -> dict[float, list[Figures]]:
    runs: dict[float, list[Figures]] = {}
    extra = dict(pair.split("=", 1) for pair in args.env)
    for _ in range(args.runs):
        for rate in (float(r) for r in args.rates.split(",") if r):
            console.print(f"trickle: {rate:g} records/s for {args.seconds:g} s")
            figures = await measure(rate, args.seconds, args.profile, extra)
            console.print(
                f"  CPU {figures.cpu_ms_per_record:.2f} ms/record, {figures.cpu_ms_per_batch:.2f} ms/batch, "
                f"p50 "
                f"{percentile(figures.latencies, 0.5):.0f} p99 {percentile(figures.latencies, 0.99):.0f} ms"
            )
            runs.setdefault(rate, []).append(figures)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rates", default="20,100,500", help="records/s offered, comma-separated")
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument(
        "--profile",
        choices=("py-spy", "perf"),
        help="sample the worker over each window (py-spy: wall time "
        "of Python frames; perf: CPU by shared object, the kernel included)",
    )
    parser.add_argument("--env", action="append", default=[], metavar="EC_X=V", help="worker setting")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument("--json", type=Path, help="also write the raw figures here")
    parser.add_argument("--smoke", action="store_true", help="tiny counts: proves the benchmark runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rates, args.seconds, args.runs = "20", 1.0, 1
    logging.getLogger("aiokafka").setLevel(logging.ERROR)
    runs = asyncio.run(collect(args))
    text = markdown(runs, args)
    harness.write_section(args.out, SECTION, text)
    if args.json:
        raw = {
            str(rate): [
                {"cpu_ms_per_record": f.cpu_ms_per_record, "latencies": f.latencies, "phases": f.phases}
                for f in figs
            ]
            for rate, figs in runs.items()
        }
        args.json.write_bytes(orjson.dumps(raw))
    if args.smoke:
        print(harness.smoke_line("benchmarks/trickle.py", f"{args.rates} records/s and each hop", args.out))
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
