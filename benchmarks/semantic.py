"""Judged throughput of the semantic review (BENCHMARKS.md, "Semantic review"; issue 41 acceptance 1).

    make bench                                                  # writes its section of BENCHMARKS.md
    .venv/bin/python benchmarks/semantic.py --drafts 2000 --latency 0.3 --in-flight 16
    .venv/bin/python benchmarks/semantic.py --smoke --out .local/bench/smoke.md   # what `make test` runs

One worker runs the guard and the semantic agent (``EC_SEMANTIC__MODE=enforce``) against the fake judge
server (``tests/judge.py``, a subprocess answering every call after ``--latency`` seconds). ``--drafts``
drafts are produced first, each a different case (so each needs its own call), then the worker starts;
the figure is final verdicts per second by the verdicts' own timestamps, first to last. The calls
overlap: at ``EC_SEMANTIC__MAX_IN_FLIGHT`` calls of ``--latency`` seconds the ceiling is in-flight ÷
latency (16 ÷ 0.3 s ≈ 53 drafts/s). The acceptance figure is at least 30 drafts/s with 300 ms. Nothing
here is a timed assertion: the figures are read, not checked.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from harness import ROOT, Watcher, fresh_settings, pipeline_env  # noqa: E402

sys.path.insert(0, str(ROOT))

from models.vocab import Topic  # noqa: E402
from tests.integration.helpers import load_golden_ledger  # noqa: E402
from tests.judge import distinct_drafts  # noqa: E402

console = Console(stderr=True)
SECTION = "semantic.py"


async def judge_stats(port: int) -> dict[str, float]:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/stats") as got:
        stats: dict[str, float] = await got.json()
        return stats


async def measure(count: int, latency: float, in_flight: int) -> dict[str, float]:
    settings = fresh_settings("semantic", 3)
    port = harness.free_port()
    judge = subprocess.Popen(  # noqa: S603, ASYNC220 - the tests' fake judge, started once
        [sys.executable, "-m", "tests.judge", "--port", str(port), "--latency", str(latency)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        async with harness.topics(settings):
            await load_golden_ledger(settings.redis_url.get_secret_value(), settings.ns)
            await harness.preload(settings, distinct_drafts(count), Topic.DIAGNOSIS_DRAFTS)
            env = pipeline_env(
                settings,
                EC_SEMANTIC__MODE="enforce",
                EC_SEMANTIC__JUDGE_URL=f"http://127.0.0.1:{port}/v1",
                EC_SEMANTIC__JUDGE_MODEL="fake-judge",
                EC_SEMANTIC__MAX_IN_FLIGHT=str(in_flight),
                EC_SEMANTIC__CALLS_PER_SECOND="1000",
            )
            started = time.monotonic()
            worker = harness.start("semantic-worker", harness.worker_argv("guard,semantic"), env)
            try:
                async with Watcher(settings, Topic.VERDICTS) as watcher:
                    events = await watcher.until(count, 60 + count / 5)
                wall = time.monotonic() - started
                async with Watcher(settings, Topic.SEMANTIC_REVIEW) as watcher:
                    handed = await watcher.until(count, 30)
                stats = await judge_stats(port)
                cpu = worker.cpu_seconds()
            finally:  # before the topics are deleted: a worker still fetching would create them again
                worker.stop()
    finally:
        judge.terminate()
        judge.wait(10)
    return {
        "verdicts": len(events.timestamps),
        # first hand-over to last verdict, by the events' own timestamps: the semantic stage's throughput
        # (a batch's verdicts are produced together, so verdicts alone would time one batch's send)
        "rate": len(events.timestamps) / max((max(events.timestamps) - min(handed.timestamps)) / 1000, 0.001),
        "wall": wall,
        "calls": stats["calls"],
        "most_in_flight": stats["most_in_flight"],
        "cpu_ms": 1000 * cpu / max(len(events.timestamps), 1),
    }


def section(figures: dict[str, float], count: int, latency: float, in_flight: int) -> str:
    ceiling = in_flight / latency
    return "\n".join(
        [
            "## Semantic review: judged throughput (issue 41, acceptance 1)",
            "",
            f"`benchmarks/semantic.py --drafts {count} --latency {latency:g} --in-flight {in_flight}`: "
            "one worker (guard + semantic, `EC_SEMANTIC__MODE=enforce`) against the fake judge answering "
            f"every call after {latency * 1000:.0f} ms; {count} drafts produced first, each its own case; "
            "drafts judged per second from the first hand-over to the last final verdict, by their own "
            "timestamps.",
            "",
            "| drafts | judge latency | calls in flight (max seen) | judge calls | drafts judged/s "
            "| ceiling (in flight ÷ latency) | worker CPU per draft |",
            "| --- | --- | --- | --- | --- | --- | --- |",
            f"| {figures['verdicts']:.0f} | {latency * 1000:.0f} ms "
            f"| {in_flight} ({figures['most_in_flight']:.0f}) | {figures['calls']:.0f} "
            f"| **{figures['rate']:.1f}** | {ceiling:.1f} | {figures['cpu_ms']:.2f} ms |",
            "",
            "Acceptance 1 asks for at least 30 drafts/s with a 300 ms judge: the calls overlap across "
            "batches "
            "(`EC_SEMANTIC__MAX_IN_FLIGHT`), so the rate is bounded by in-flight ÷ latency, not by the "
            "latency alone (one call at a time would be 3.3 drafts/s).",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drafts", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--smoke", action="store_true", help="toy sizes: 40 drafts, 50 ms")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args()
    count, latency = (40, 0.05) if args.smoke else (args.drafts, args.latency)
    figures = asyncio.run(measure(count, latency, args.in_flight))
    harness.write_section(args.out, SECTION, section(figures, count, latency, args.in_flight))
    if args.smoke:
        print(harness.smoke_line("semantic.py", "the judged-throughput run", args.out))
    else:
        console.print(section(figures, count, latency, args.in_flight))


if __name__ == "__main__":
    main()
