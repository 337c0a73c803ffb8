"""The review of claims against people's labels, and what it costs on hostile text (BENCHMARKS.md, "Review").

    .venv/bin/python benchmarks/review_score.py            # the tables, into its BENCHMARKS.md section
    .venv/bin/python benchmarks/review_score.py --smoke    # one line, nothing written

The labelled sets (tests/data/review-set: the product's, 200 drafts; tests/data/review-set-own: the
project's own, 175 drafts written apart from the rules) go through the guard station as
``evidence-chain verify`` runs it (:mod:`tests.review_set`). A GROUNDED draft refused is a false REJECT,
an UNGROUNDED draft passed a miss; both are printed by category with the draft ids. The goal (issue 39):
at most 2 % false REJECTs, at most 5 % misses, no disguise passed.

Cost: the review of one draft whose only text is 256 KiB of hostile characters (quotation marks, digits,
dashes, number words, invisible characters, markdown), in CPU milliseconds, median of 5 seeds; the goal
is under 100 ms. Throughput with the review on against off is P3 of ``benchmarks/stream.py``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from streams.stations import review  # noqa: E402
from tests.review_set import SETS, Score, score  # noqa: E402

SECTION = "review-score"
HOSTILE_PIECES = [
    *"“”\"'「」『』‘’«»《》`0123456789-–—~/,. \n",
    " one ",
    " twenty ",
    "forty-five",
    "十",
    "五",
    "六十",
    "百分之",
    "twice",
    " half ",
    "9\u200b0",
    "٩",
    "O",
    "**",
    "```",
]


def hostile_text(seed: int, size: int = 256 * 1024) -> str:
    """``size`` bytes (UTF-8) of quotation marks, digits, dashes and number words, at random."""
    chooser = random.Random(seed)
    out: list[str] = []
    total = 0
    while total < size:
        piece = chooser.choice(HOSTILE_PIECES)
        out.append(piece)
        total += len(piece.encode())
    return "".join(out)


def hostile_cpu_ms(seeds: int = 5) -> list[float]:
    """CPU milliseconds of reviewing one 256 KiB hostile text, per seed (caches emptied before each)."""
    projection = {
        "evidence_status": "EVIDENCE_FOUND",
        "tool_call_id": "c1",
        "query": "网关超时怎么排查",
        "evidence": [
            {
                "document_id": "d#1",
                "source": "s",
                "title": None,
                "breadcrumb": None,
                "excerpt": "proxy_read_timeout 默认 60s，超过即返回 504。" * 20,
            }
        ],
        "returned_count": 1,
        "relevance_level": "PRECISE",
        "truncated": False,
    }
    warm = {"run_id": "warm", "analysis": [{"id": "a1", "content": "٩O “x” 六十", "tool_call_ids": ["c1"]}]}
    review.review(warm, [True], {"c1": projection})  # a worker's one-time tables (look-alikes, digits)
    out = []
    for seed in range(seeds):
        text = hostile_text(seed)
        draft = {"run_id": f"r{seed}", "analysis": [{"id": "a1", "content": text, "tool_call_ids": ["c1"]}]}
        started = time.process_time()
        review.review(draft, [True], {"c1": projection})
        out.append((time.process_time() - started) * 1000)
    return out


def table(scored: Score) -> list[str]:
    lines = [
        f"**{scored.name}**: GROUNDED refused {len(scored.false_rejects)}/{len(scored.of('GROUNDED'))}, "
        f"UNGROUNDED passed {len(scored.misses)}/{len(scored.of('UNGROUNDED'))}",
        "",
        "| label | category | drafts | wrong | ids |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for (label, category), (count, wrong) in scored.by_category().items():
        lines.append(f"| {label} | {category} | {count} | {len(wrong)} | {' '.join(wrong)} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="one line, nothing written")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args(argv)
    scores = [score(name) for name in sorted(SETS)]
    cpu = hostile_cpu_ms(1 if args.smoke else 5)
    if args.smoke:
        figures = ", ".join(
            f"{s.name} {len(s.false_rejects)}/{len(s.of('GROUNDED'))} refused, "
            f"{len(s.misses)}/{len(s.of('UNGROUNDED'))} passed"
            for s in scores
        )
        print(f"benchmarks/review_score.py --smoke: {figures}; hostile 256 KiB {cpu[0]:.0f} ms CPU")
        return 0
    body = [
        "## Review of claims against people's labels",
        "",
        f"Rules version {review.RULES_VERSION} (docs/review-rules.md), `benchmarks/review_score.py`, "
        f"{time.strftime('%Y-%m-%d')}. Goal: at most 2 % of GROUNDED drafts refused, at most 5 % of "
        "UNGROUNDED drafts passed, no disguise passed.",
        "",
    ]
    for scored in scores:
        body += [*table(scored), ""]
    body += [
        f"A 256 KiB hostile draft (quotation marks, digits, dashes, number words, invisible characters, "
        f"markdown) is reviewed in {statistics.median(cpu):.0f} ms of CPU (median of {len(cpu)} seeds: "
        f"{', '.join(f'{c:.0f}' for c in cpu)}; goal under 100 ms).",
    ]
    text = "\n".join(body)
    print(text)
    harness.write_section(args.out, SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
