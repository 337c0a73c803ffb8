"""Realistic raw-hits records for the stream benchmarks: py-rag responses of ~23 KB on average.

Each record is one py-rag hybrid-search response with 20 hits over 7 documents (2-4 chunks each,
one repeated evidence key), excerpts of 350-680 characters mixing Chinese and English runbook text,
and a small retrieval trace. ``run_id`` repeats every 500 records, as many tool calls share a run.
Deterministic for a seed, so every pipeline in one run reads the very same bytes.

    .venv/bin/python benchmarks/corpus.py 4000 > raw-hits.jsonl
"""

from __future__ import annotations

import random
import sys

import orjson

TEXT_ZH = (
    "网关超时先检查上游配置，再看连接池与保活设置。数据库慢查询会导致接口延迟升高，需要结合监控指标排查。"
)
TEXT_EN = "Check proxy_read_timeout and upstream latency; inspect connection pool saturation and keepalive. "


def raw_hits(n: int, rng: random.Random) -> bytes:
    """Record number ``n``."""
    hits: list[dict[str, object]] = []
    for rank in range(20):
        doc = f"doc-{n % 97}-{rank % 7}-md"
        chunk = rank // 7
        key = f"{doc}#chunk-{chunk}" if rank != 19 else hits[0]["evidence_key"]
        target = rng.randrange(350, 680)
        parts: list[str] = []
        while sum(len(p) for p in parts) < target:
            parts.append(rng.choice((TEXT_ZH, TEXT_EN)))
        hits.append(
            {
                "evidence_key": key,
                "document_id": doc,
                "source": f"runbooks/{doc}.md",
                "title": f"{doc} 标题",
                "breadcrumb": f"{doc} > 处理步骤",
                "excerpt": "".join(parts),
                "quality_score": round(0.95 - rank * 0.03 + rng.random() * 0.01, 4),
                "relevance_level": "PRECISE",
            }
        )
    return orjson.dumps(
        {
            "run_id": f"run-{n % 500}",
            "tool_call_id": f"call-{n}",
            "response": {
                "query": "网关超时怎么排查",
                "mode": "hybrid",
                "hits": hits,
                "relevance_level": "PRECISE",
                "evidence_status": "supported",
                "retrieval_trace": {"mode": "hybrid", "recall_count": 20, "rerank_model": "bge"},
            },
        }
    )


def records(count: int, seed: int = 7, start: int = 0) -> list[bytes]:
    """``count`` records numbered from ``start``; the same bytes for the same arguments."""
    rng = random.Random(seed * 1_000_003 + start)
    return [raw_hits(start + i, rng) for i in range(count)]


if __name__ == "__main__":
    out = records(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
    sys.stderr.write(f"{len(out)} records, {sum(map(len, out)) / len(out) / 1024:.1f} KiB on average\n")
    sys.stdout.buffer.write(b"\n".join(out) + b"\n")
