"""The periodic tail: the slowest 1 % of records at a steady rate, and what the worker did meanwhile.

    .venv/bin/python benchmarks/stages.py --rate 600 --seconds 15            # prints the tables
    .venv/bin/python benchmarks/stages.py --rate 600 --seconds 15 --write    # and its BENCHMARKS.md section

A fresh worker that stamps each stage of its records' way (``benchmarks/stamped_worker.py``: each
agent's batches taken, begun (station done, Redis durable, handed to the producer) and acknowledged,
every ledger write, commit and fetch with its duration, and every stall of the event loop) is offered
raw-hits records at ``--rate`` for ``--seconds`` after 20 preloaded and 2 s at the rate. Latency is
the ledger event's create time − the record's. The slowest 1 % are grouped by when they were offered
(records offered within 300 ms of each other), and for each group the stamps between its first record's
offer and its last ledger event say what the worker was doing: the longest ledger write and its batch,
the stalls, the commits, the longest fetch, the garbage collections. The stamped worker does what the
worker does; stamping costs it some CPU, so read its latencies beside a plain run's (``stream.py``'s
P4), not as the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import harness  # noqa: E402
from harness import LOGS, ROOT, Watcher, fresh_settings, percentile, pipeline_env  # noqa: E402

SECTION = "stages.py"
GROUP_GAP_MS = 300
SLOWEST = 0.01


@dataclass(frozen=True)
class Stamp:
    at: float
    kind: str
    fields: tuple[str, ...]

    def ms(self) -> float:
        """The duration a ``redis``, ``commit``, ``fetch`` or ``stall`` stamp carries last."""
        return float(self.fields[-1].removesuffix("ms"))


def read_stamps(path: Path) -> list[Stamp]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        at, kind, *fields = line.split()
        out.append(Stamp(float(at), kind, tuple(fields)))
    return out


async def run(rate: float, seconds: float, stamps: Path) -> tuple[dict[str, tuple[int, int]], float]:
    """Each measured record's (offered, ledger) create times by tool call id, and the load average."""
    argv = [sys.executable, str(ROOT / "benchmarks" / "stamped_worker.py"), "worker", "--loglevel", "warning"]
    async with harness.topics(fresh_settings("stages", 3)) as settings:
        worker = harness.start("worker-stages", argv, pipeline_env(settings, EC_STAMPS=str(stamps)))
        try:
            async with Watcher(settings) as watcher:
                warm = corpus.records(20, seed=43, start=3_000_000)
                await harness.preload(settings, warm)
                await watcher.until(len(warm), 120)
                ramp = corpus.records(max(1, int(rate * 2)), seed=29, start=3_100_000)
                await harness.offer(settings, ramp, rate, harness.BATCHED_LINGER_MS)  # as P4 offers it
                await watcher.until(len(warm) + len(ramp), 120)
                values = corpus.records(max(10, int(rate * seconds)), seed=23, start=3_200_000)
                sent = await harness.offer(settings, values, rate, harness.BATCHED_LINGER_MS)
                events = await watcher.until(len(warm) + len(ramp) + len(values), 120)
        finally:
            worker.stop()
    arrived = dict(zip(events.tool_call_ids, events.timestamps, strict=True))
    return {t: (sent[t], arrived[t]) for t in sent if t in arrived}, os.getloadavg()[0]


def groups(slow: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The slowest records, grouped by offer time (a gap of more than :data:`GROUP_GAP_MS` starts one)."""
    out: list[list[tuple[int, int]]] = []
    for offered, done in sorted(slow):
        if out and offered - out[-1][-1][0] <= GROUP_GAP_MS:
            out[-1].append((offered, done))
        else:
            out.append([(offered, done)])
    return out


def report(times: dict[str, tuple[int, int]], stamps: list[Stamp], rate: float, load: float) -> str:
    latencies = sorted(done - offered for offered, done in times.values())
    cut = latencies[int(len(latencies) * (1 - SLOWEST))]
    slow = [t for t in times.values() if t[1] - t[0] >= cut]
    start = min(offered for offered, _ in times.values())
    rows = []
    for group in groups(slow):
        first, last = group[0][0], max(done for _, done in group)
        inside = [s for s in stamps if first <= s.at <= last]
        writes = [s for s in inside if s.kind == "redis"]
        longest = max(writes, key=Stamp.ms, default=None)
        stalls = [s.ms() for s in inside if s.kind == "stall"]
        commits = [s for s in inside if s.kind == "commit"]
        fetch = max((s.ms() for s in inside if s.kind == "fetch"), default=0.0)
        collected = [s.ms() for s in inside if s.kind == "gc"]
        rows.append(
            f"| {(first - start) / 1000:.2f}–{(group[-1][0] - start) / 1000:.2f} | {len(group)} | "
            f"{min(d - o for o, d in group)}–{max(d - o for o, d in group)} | "
            + (f"{longest.ms():.0f} ms ({longest.fields[0]} entries)" if longest else "—")
            + f" | {len(stalls)}{f' (longest {max(stalls):.0f} ms)' if stalls else ''} | "
            + (", ".join(f"{c.fields[0]} at {(c.at - start) / 1000:.2f} s" for c in commits) or "—")
            + f" | {fetch:.0f} ms | {len(collected)}{f' ({sum(collected):.0f} ms)' if collected else ''} |"
        )
    writes = [s for s in stamps if s.kind == "redis" and s.at >= start]
    by_size: dict[str, list[float]] = {}
    for s in writes:
        n = int(s.fields[0])
        bucket = "1–4" if n < 5 else "5–15" if n < 16 else "16–31" if n < 32 else "32+"
        by_size.setdefault(bucket, []).append(s.ms())
    commit_ms = [s.ms() for s in stamps if s.kind == "commit" and s.at >= start]
    stall_ms = [s.ms() for s in stamps if s.kind == "stall" and s.at >= start]
    gc_ms = [s.ms() for s in stamps if s.kind == "gc" and s.at >= start]
    lines = [
        "## The slowest 1 %: what each stage waited for (`benchmarks/stages.py`)",
        "",
        f"A stamped worker (`benchmarks/stamped_worker.py`) offered {rate:,.0f} raw-hits records/s for "
        f"{len(latencies):,} records; 1-minute load average {load:.1f} at the end. Latency p50 "
        f"{percentile(latencies, 0.5):.0f} ms, p99 {percentile(latencies, 0.99):.0f} ms (stamping costs "
        "some CPU: read P4 for the figure). The slowest 1 %, grouped by when they were offered, and what "
        "the worker did between the first one's offer and the last one's ledger event:",
        "",
        "| offered (s into the window) | records | latency ms | longest ledger write | loop stalls > 15 ms"
        " | commits | longest fetch | collections > 2 ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
        "Over the whole window: ledger writes (durable) by batch size, median / longest ms: "
        + "; ".join(
            f"{k} entries {percentile(v, 0.5):.0f} / {max(v):.0f} ({len(v)})"
            for k, v in sorted(by_size.items(), key=lambda kv: int(kv[0].split("–")[0].rstrip("+")))
        )
        + f"; commits {len(commit_ms)}, median {percentile(commit_ms, 0.5):.0f} ms"
        + f"; loop stalls over 15 ms: {len(stall_ms)}"
        + (f", longest {max(stall_ms):.0f} ms" if stall_ms else "")
        + f"; garbage collections over 2 ms: {len(gc_ms)}"
        + (f", longest {max(gc_ms):.0f} ms." if gc_ms else "."),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rate", type=float, default=600.0)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--write", action="store_true", help="put the section into BENCHMARKS.md")
    args = parser.parse_args(argv)
    logging.getLogger("aiokafka").setLevel(logging.ERROR)
    LOGS.mkdir(parents=True, exist_ok=True)
    stamps = LOGS / f"stamps-{args.rate:.0f}.log"
    times, load = asyncio.run(run(args.rate, args.seconds, stamps))
    text = report(times, read_stamps(stamps), args.rate, load)
    if args.write:
        harness.write_section(ROOT / "BENCHMARKS.md", SECTION, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
