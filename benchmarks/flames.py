"""Flame-graph summaries for BENCHMARKS.md: where a sampled process spends its time.

py-spy records collapsed stacks (``frame;frame;... count`` per line); this reads them and tells
(a) which parts of the code hold the time inclusively (the product's stations, Faust, aiokafka's
consumer and producer, the Redis client, the event loop) and (b) the hottest functions by own time.

    .venv/bin/python benchmarks/flames.py .local/bench/profile-worker.txt
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

PARTS = [
    (
        "stations and JSON (streams/stations, codec, models)",
        ("streams/stations/", "streams/codec", "models/"),
    ),
    (
        "envelope, audit and dead letters (streams/)",
        ("streams/pipeline", "streams/envelope", "streams/hashing", "streams/trust", "streams/audit/"),
    ),
    (
        "agent loop, runner, sink (streams/worker, kafka, retry)",
        ("streams/worker/", "streams/kafka", "streams/retry", "streams/app"),
    ),
    ("Faust (consumer, conductor, channels)", ("faust/", "mode/")),
    ("aiokafka consumer (fetch, decode)", ("aiokafka/consumer/", "aiokafka/record/")),
    ("aiokafka producer (batches, sender)", ("aiokafka/producer/",)),
    (
        "aiokafka protocol and connection",
        ("aiokafka/conn", "aiokafka/protocol", "aiokafka/client", "aiokafka/cluster"),
    ),
    ("Redis client and ledger store", ("redis/", "streams/ledger/")),
    ("asyncio (socket writes, event loop)", ("asyncio/",)),
]
"""Each sample counts for the innermost frame that names one of these parts."""


def record(
    pid: int, seconds: float, out: Path, rate: int = 100, *, gil: bool = False
) -> subprocess.Popen[bytes]:
    """Start sampling ``pid`` for ``seconds`` into ``out`` (collapsed stacks, all threads).

    ``gil``: only samples of a thread holding the interpreter lock, i.e. running Python (a socket
    write that waits on the kernel, or a thread preempted there, releases it): CPU, not wall time.
    """
    py_spy = Path(sys.executable).with_name("py-spy")
    argv = [str(py_spy), "record", "-p", str(pid), "-r", str(rate), "-d", str(int(seconds))]
    argv += ["-f", "raw", "-o", str(out), "--nonblocking", "--threads"] + (["--gil"] if gil else [])
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stacks(path: Path) -> list[tuple[list[str], int]]:
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        frames, _, count = line.rpartition(" ")
        if frames and count.isdigit():
            out.append((frames.split(";"), int(count)))
    return out


def _part(frames: list[str]) -> str:
    leaf = frames[-1]
    if any(x in leaf for x in ("select (", "epoll", "poll (", "wait (", "acquire (")):
        return "waiting (select/epoll, idle threads)"
    for frame in reversed(frames):
        for name, needles in PARTS:
            if any(n in frame for n in needles):
                return name
    return "other"


def summary(path: Path, top: int = 12) -> list[str]:
    """Markdown tables: inclusive share per part, and the hottest functions by own time."""
    samples = stacks(path)
    total = sum(c for _, c in samples) or 1
    parts: Counter[str] = Counter()
    own: Counter[str] = Counter()
    for frames, count in samples:
        parts[_part(frames)] += count
        own[frames[-1]] += count
    lines = [f"{total:,} samples, each counted for the innermost frame of a known part.", ""]
    lines += ["| part | share of samples |", "| --- | --- |"]
    lines += [f"| {name} | {count / total:.0%} |" for name, count in parts.most_common()]
    lines.append("")
    lines += ["| hottest functions (own time) | share |", "| --- | --- |"]
    lines += [f"| `{name[:100]}` | {count / total:.1%} |" for name, count in own.most_common(top)]
    return lines


if __name__ == "__main__":
    print("\n".join(summary(Path(sys.argv[1]))))
