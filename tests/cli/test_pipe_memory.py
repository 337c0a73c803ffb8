"""``pipe`` holds a bounded part of each line, whatever its length (issue 23, item 4).

It once read a whole line before its size check and copied it: a 50 MB line took 216 MB of RSS,
200 MB of valid JSON 654 MB. The console script runs under a small probe process that writes the
lines into its stdin in 1 MiB pieces (nothing this large is held anywhere) and reports the peak RSS
of its one child. The probe, not pytest, is the parent: a child started with vfork inherits its
parent's peak RSS figure (Linux records the old address space's peak at exec), and pytest's is large.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from streams import codec
from tests.console import CLI, clean_env
from tests.golden import GOLDEN

CAP = 1024 * 1024  # EC_INPUT__MAX_MESSAGE_BYTES's default

PROBE = r"""
import json, resource, subprocess, sys, threading

cli, spec = sys.argv[1], json.loads(sys.stdin.read())
child = subprocess.Popen([cli, "pipe"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def feed():
    piece = 1024 * 1024
    for parts in spec:
        for text, times in parts:
            unit = text.encode("latin-1")
            per_piece = max(1, piece // len(unit))
            while times > 0:
                n = min(times, per_piece)
                child.stdin.write(unit * n)
                times -= n
    child.stdin.close()

writer = threading.Thread(target=feed)
writer.start()
out = child.stdout.read()
writer.join()
child.wait()
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": child.returncode, "peak_kib": peak_kib, "out": out.decode("utf-8")}))
"""

Line = list[tuple[str, int]]
"""One input line as pieces: ``(text, times)`` repeated; its ``\\n`` is a piece too."""


def run_probe(lines: list[Line]) -> dict[str, Any]:
    env = clean_env()
    done = subprocess.run(  # noqa: S603 - our own interpreter and console script
        [sys.executable, "-c", PROBE, CLI],
        input=codec.dumps(lines),
        capture_output=True,
        env=env,
        timeout=120,
        check=True,
    )
    result: dict[str, Any] = codec.loads(done.stdout)
    return result


def good_line() -> str:
    return (GOLDEN / "pipe" / "input.jsonl").read_bytes().split(b"\n", 1)[0].decode("latin-1")


def hits_json(total_bytes: int) -> Line:
    """A valid raw-hits record of about ``total_bytes``: its ids first, then many hits."""
    hit = codec.dumps(
        {
            "evidence_key": "d#chunk-1",
            "document_id": "d",
            "source": "s",
            "excerpt": "e" * 900,
            "quality_score": 0.5,
        }
    ).decode("latin-1")
    head = (
        '{"run_id":"run-200","tool_call_id":"call-200",'
        '"response":{"query":"q","evidence_status":"supported","hits":['
    )
    return [(head + hit, 1), ("," + hit, total_bytes // (len(hit) + 1)), ("]}}\n", 1)]


@pytest.mark.timeout(120)
def test_peak_memory_stays_bounded_and_every_line_gets_one_output_line() -> None:
    baseline = run_probe([[(good_line() + "\n", 1)]])
    assert baseline["rc"] == 0 and len(baseline["out"].splitlines()) == 1

    lines: list[Line] = [
        [(good_line() + "\n", 1)],
        [
            ('{"run_id":"run-50","tool_call_id":"call-50","response":{"query":"', 1),
            ("x", 50_000_000),
            ('"}}\n', 1),
        ],
        [(good_line() + "\n", 1)],
        hits_json(200_000_000),
        [("\xff not json at all ", 3_000_000), ("\n", 1)],
        [(good_line(), 1)],  # the last line, without its "\n"
    ]
    big = run_probe(lines)
    assert big["rc"] == 0
    out = [codec.loads(line) for line in big["out"].splitlines()]
    assert len(out) == len(lines)
    letters = [line.get("dead_letter") for line in out]
    assert letters[0] is None and letters[2] is None and letters[5] is None
    assert [(d["reason"], d["run_id"], d["tool_call_id"]) for d in (letters[1], letters[3], letters[4])] == [
        ("OVERSIZED", "run-50", "call-50"),
        ("OVERSIZED", "run-200", "call-200"),
        ("OVERSIZED", None, None),
    ]
    length = sum(len(text) * times for text, times in lines[1]) - 1
    assert f"value is {length} bytes, over max_message_bytes={CAP};" in letters[1]["error"]

    grown_kib = big["peak_kib"] - baseline["peak_kib"]
    assert grown_kib < 8 * CAP // 1024, (
        f"pipe's peak RSS grew by {grown_kib} KiB over {baseline['peak_kib']} KiB for lines of up to 200 MB"
    )
