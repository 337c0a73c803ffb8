"""What a lookup through the MCP server adds to the pipeline's own latency (issue 34: ≤ 5 ms at p50, 20/s).

    make bench                                     # after lookup.py; writes its own section of BENCHMARKS.md
    .venv/bin/python benchmarks/mcp_lookup.py --seconds 20 --runs 3
    .venv/bin/python benchmarks/mcp_lookup.py --smoke --out .local/bench/smoke.md     # make test

Per run, one fresh worker (all four agents, default settings) and, on it, one path after the other at
the same offered rate, open loop (``lookup.open_loop``: latency from each request's scheduled time), on
records of their own (P2's ~23 KB py-rag responses of 20 hits):

- pipeline: raw-hits records produced directly, latency to the ledger event (``lookup.pipeline``);
- gateway: ``POST /v1/lookups`` (``lookup.gateway``), the figure the MCP lookup is read beside;
- MCP: ``lookup_knowledge`` called by the official SDK's client over stdio on ``evidence-chain mcp``,
  whose py-rag is a stand-in (:mod:`tests.pyrag`) in this process answering each query with one of
  the records' responses: the whole tool call (JSON-RPC, the py-rag round trip, the raw-hits record,
  the ledger entry, the projection text back).

"Added" is the MCP path's p50 minus the pipeline path's p50 in the same run (the median over runs).
Nothing here is a timed assertion: the figures are read, not checked.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import statistics
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path

from aiohttp import web
from mcp import Client, StdioServerParameters
from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import harness  # noqa: E402
import lookup  # noqa: E402
from harness import ROOT, fresh_settings, percentile, pipeline_env  # noqa: E402
from lookup import WARMUP, Sample, ms  # noqa: E402

sys.path.insert(0, str(ROOT))  # the py-rag stand-in lives with the tests

from streams import codec  # noqa: E402
from streams.settings import Settings  # noqa: E402
from tests.pyrag import FakePyRag  # noqa: E402

console = Console(stderr=True)
SECTION = "mcp_lookup.py"
CLI = str(Path(sys.executable).with_name("evidence-chain"))
PATHS = {
    "pipeline": "pipeline: raw-hits produced → ledger event",
    "gateway": "gateway: `POST /v1/lookups`",
    "mcp": "MCP: `lookup_knowledge` over stdio (py-rag stand-in in-process)",
}


LOADS: list[float] = []
"""The machine's 1-minute load average, read before and after each run."""


def queries(values: Sequence[bytes], answers: dict[str, bytes]) -> list[str]:
    """One query per record, answered by the stand-in with that record's py-rag response."""
    asked = []
    for value in values:
        query = f"bench-{uuid.uuid4().hex}"
        answers[query] = codec.dumps(codec.loads(value)["response"])
        asked.append(query)
    return asked


async def mcp(settings: Settings, values: Sequence[bytes], rate: float, begin: lookup.Begin) -> Sample:
    """``lookup_knowledge`` at ``rate`` through ``evidence-chain mcp`` on the running worker (``begin``
    is called when the warm-up is done: lookup.py's :class:`~lookup.ExtraPath` protocol)."""
    fake = FakePyRag(answers={})
    runner = web.AppRunner(fake.app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    env = pipeline_env(
        settings, EC_PYRAG_URL=f"http://127.0.0.1:{port}/search", EC_GATEWAY_TIMEOUT_MS="30000"
    )
    warmup = queries(corpus.records(WARMUP, seed=31, start=lookup._next_start()), fake.answers)
    measured = queries(values, fake.answers)
    try:
        # The server's stderr goes to a log of its own, as every process the benchmarks start does.
        harness.LOGS.mkdir(parents=True, exist_ok=True)
        log = str(harness.LOGS / f"mcp-{settings.topic_prefix.rstrip('-')}.log")
        server = StdioServerParameters(command="sh", args=["-c", 'exec "$0" mcp 2>>"$1"', CLI, log], env=env)
        async with Client(server) as session:

            async def call(query: str) -> None:
                result = await session.call_tool("lookup_knowledge", {"query": query})
                if result.is_error:
                    raise RuntimeError(str(result.content)[:200])

            await asyncio.gather(*(call(q) for q in warmup))
            await begin()
            return await lookup.open_loop([q.encode() for q in measured], rate, lambda q: call(q.decode()))
    finally:
        await runner.cleanup()


async def run(rate: float, seconds: float) -> dict[str, Sample]:
    """One fresh worker and gateway; the three paths measured on them in turn at ``rate``."""
    count = max(10, int(rate * seconds))
    records = {path: corpus.records(count, seed=29, start=lookup._next_start()) for path in PATHS}
    out: dict[str, Sample] = {}
    async with harness.topics(fresh_settings(f"mcp{rate:.0f}", 3)) as settings:
        worker = harness.start(f"worker-mcp{rate:.0f}", harness.worker_argv(), pipeline_env(settings))
        front, base_url = lookup.start_gateway(settings, f"gateway-mcp{rate:.0f}")
        try:
            await lookup.wait_ready(base_url)
            out["pipeline"] = await lookup.pipeline(settings, records["pipeline"], rate, lookup._nothing)
            await asyncio.sleep(1)
            out["gateway"] = await lookup.gateway(base_url, records["gateway"], rate, lookup._nothing)
            await asyncio.sleep(1)
            out["mcp"] = await mcp(settings, records["mcp"], rate, lookup._nothing)
        finally:
            front.stop()
            worker.stop()
    return out


# The same path in lookup.py's own table too, when this module is loaded there (its --paths mcp).
lookup.register_path("mcp", lookup.ExtraPath(PATHS["mcp"], mcp, rates=(20.0,)))


def p50(sample: Sample) -> float:
    return percentile(sample.latencies, 0.5)


def markdown(runs: list[dict[str, Sample]], rate: float, seconds: float) -> str:
    lines = [
        "## Lookups through the MCP server (`evidence-chain mcp`)",
        "",
        f"`benchmarks/mcp_lookup.py`: {rate:g} lookups/s, open loop, {seconds:g} s per path, "
        f"{len(runs)} run(s)",
        "(the median of each run's figure), each on a fresh worker; p50 / p99 ms:",
        "",
        "| path | p50 / p99 |",
        "| --- | --- |",
    ]
    for path, title in PATHS.items():
        lines.append(f"| {title} | {lookup.cell([r[path] for r in runs if path in r])} |")
    complete = [r for r in runs if all(r.get(p) is not None and r[p].latencies for p in PATHS)]
    if complete:
        each = ", ".join(ms(p50(r["mcp"]) - p50(r["pipeline"])) for r in complete)
        lines += [
            "",
            f"Machine: {os.cpu_count()} cores shared with the broker, Redis and any other work; the 1-minute "
            f"load average during the runs was {min(LOADS, default=0):.1f}–{max(LOADS, default=0):.1f}. "
            f"Added at p50 in each run (ms): {each}.",
        ]
        added = statistics.median(p50(r["mcp"]) - p50(r["pipeline"]) for r in complete)
        over_gateway = statistics.median(p50(r["mcp"]) - p50(r["gateway"]) for r in complete)
        met = "met" if added <= 5 else "missed"
        lines += [
            "",
            f"Added by the MCP lookup at p50 over the pipeline's own: **{ms(added)} ms** (target ≤ 5 ms: "
            f"**{met}**); over the gateway's `POST /v1/lookups`: {ms(over_gateway)} ms. The MCP figure also "
            "holds the py-rag stand-in's round trip (in this process, loopback HTTP) and the JSON-RPC hop "
            "over stdio, which a gateway lookup does not.",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="per path")
    parser.add_argument("--rate", type=float, default=20.0, help="lookups/s")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    parser.add_argument(
        "--smoke", action="store_true", help="tiny counts, one run: proves the benchmark runs"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.runs, args.seconds = 1, 0.5
    logging.getLogger("aiokafka").setLevel(logging.ERROR)

    async def collect() -> list[dict[str, Sample]]:
        runs = []
        for _ in range(args.runs):
            LOADS.append(lookup.load_average())
            runs.append(await run(args.rate, args.seconds))
            LOADS.append(lookup.load_average())
        return runs

    runs = asyncio.run(collect())
    text = markdown(runs, args.rate, args.seconds)
    harness.write_section(args.out, SECTION, text)
    if args.smoke:
        print(harness.smoke_line("benchmarks/mcp_lookup.py", f"lookups through {', '.join(PATHS)}", args.out))
        return 0
    console.print(text, markup=False)
    console.print(f"wrote the {SECTION} section of {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
