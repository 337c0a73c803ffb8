"""Realistic raw-hits records for the stream benchmarks: py-rag responses of ~23 KB on average.

Each record is one py-rag hybrid-search response with 20 hits over 7 documents (2-4 chunks each,
one repeated evidence key), excerpts of 350-680 characters mixing Chinese and English runbook text,
and a small retrieval trace. ``run_id`` repeats every 500 records, as many tool calls share a run.
Deterministic for a seed, so every pipeline in one run reads the very same bytes.

:func:`runbook_records` is the same shape with excerpts as a runbook writes them: config keys with
their defaults and advised values, file paths, versions, error codes, a sentence an agent would quote
(P3's drafts name them, so the review of claims, SPEC 4.2, has specifics to look for). ``records``
keeps its plain text, so the P2/P4/P5 figures stay comparable with the ones measured before.

    .venv/bin/python benchmarks/corpus.py 4000 > raw-hits.jsonl
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable

import orjson

TEXT_ZH = (
    "网关超时先检查上游配置，再看连接池与保活设置。数据库慢查询会导致接口延迟升高，需要结合监控指标排查。"
)
TEXT_EN = "Check proxy_read_timeout and upstream latency; inspect connection pool saturation and keepalive. "


def plain_excerpt(rng: random.Random, target: int) -> str:
    parts: list[str] = []
    while sum(len(p) for p in parts) < target:
        parts.append(rng.choice((TEXT_ZH, TEXT_EN)))
    return "".join(parts)


KEYS = (
    ("proxy_read_timeout", "s"),
    ("proxy_connect_timeout", "s"),
    ("keepalive_timeout", "s"),
    ("upstream_keepalive", ""),
    ("max_connections", ""),
    ("worker_connections", ""),
    ("pool_size", ""),
    ("idle_timeout_ms", "ms"),
    ("retry_budget_percent", ""),
    ("client_body_timeout", "s"),
)
SERVICES = ("nginx", "envoy", "pgbouncer", "haproxy", "gateway")
QUOTES = (
    "drain the node before restarting it",
    "never reload all gateway pods at once",
    "raise the timeout only after the upstream is healthy",
    "check the connection pool before blaming the database",
)
KEY_SENTENCE = "{key} 默认 {a}{unit}，高峰期建议调到 {b}{unit}。"
PATH_SENTENCE = "配置文件在 /etc/{svc}/conf.d/{file}.conf，修改后执行 systemctl reload {svc}。"
QUOTE_SENTENCE = "Runbook rule: {quote}. "
KEY_FACT = re.compile(r"([a-z_]+) 默认 ([0-9]+)(s|ms|)，高峰期建议调到 ([0-9]+)(?:s|ms|)。")
PATH_FACT = re.compile(r"配置文件在 (/etc/[a-z]+/conf\.d/[a-z_]+\.conf)，")
QUOTE_FACT = re.compile(r"Runbook rule: ([a-z ]+)\. ")


def _filler(rng: random.Random) -> str:
    key, unit = rng.choice(KEYS)
    svc = rng.choice(SERVICES)
    return rng.choice(
        (
            TEXT_ZH,
            TEXT_EN,
            f"错误码 {rng.choice((499, 502, 504))} 表示上游在 {rng.randrange(10, 90)}s 内没有响应，"
            f"参见 runbooks/{svc}-timeouts.md 第 {rng.randrange(2, 9)} 节。",
            f"Version v1.{rng.randrange(10, 27)}.{rng.randrange(0, 9)} fixed {key} not taking effect after"
            f" a reload; check the dashboard {svc}-latency-{rng.randrange(10, 99)}. ",
            f"连接数超过 {rng.randrange(60, 95)}% 时告警，{key} 过小会让请求在队列中等待 "
            f"{rng.randrange(100, 3000)}ms 以上。",
            KEY_SENTENCE.format(key=key, a=rng.randrange(10, 600), b=rng.randrange(600, 1800), unit=unit),
        )
    )


def runbook_excerpt(rng: random.Random, target: int) -> str:
    """A runbook passage of about ``target`` characters: a config key with its default and advised
    value, the file it is set in and a rule worth quoting first (:func:`runbook_facts` reads them
    back), then more of the same kind of text."""
    key, unit = rng.choice(KEYS)
    svc = rng.choice(SERVICES)
    parts = [
        KEY_SENTENCE.format(key=key, a=rng.randrange(10, 600), b=rng.randrange(600, 1800), unit=unit),
        PATH_SENTENCE.format(svc=svc, file=rng.choice(("upstream", "timeouts", "pool", "listeners"))),
        QUOTE_SENTENCE.format(quote=rng.choice(QUOTES)),
    ]
    while sum(len(p) for p in parts) < target:
        parts.append(_filler(rng))
    return "".join(parts)


def runbook_facts(excerpt: str) -> tuple[str, str, str, str, str, str]:
    """What a :func:`runbook_excerpt` states first: key, default, unit, advised value, path, quotable rule."""
    key = KEY_FACT.search(excerpt)
    path = PATH_FACT.search(excerpt)
    quote = QUOTE_FACT.search(excerpt)
    if key is None or path is None or quote is None:
        raise ValueError("not a runbook_excerpt")
    return key[1], key[2], key[3], key[4], path[1], quote[1]


def raw_hits(
    n: int, rng: random.Random, excerpt: Callable[[random.Random, int], str] = plain_excerpt
) -> bytes:
    """Record number ``n``."""
    hits: list[dict[str, object]] = []
    for rank in range(20):
        doc = f"doc-{n % 97}-{rank % 7}-md"
        chunk = rank // 7
        key = f"{doc}#chunk-{chunk}" if rank != 19 else hits[0]["evidence_key"]
        target = rng.randrange(350, 680)
        hits.append(
            {
                "evidence_key": key,
                "document_id": doc,
                "source": f"runbooks/{doc}.md",
                "title": f"{doc} 标题",
                "breadcrumb": f"{doc} > 处理步骤",
                "excerpt": excerpt(rng, target),
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


def runbook_records(count: int, seed: int = 7, start: int = 0) -> list[bytes]:
    """Like :func:`records`, with :func:`runbook_excerpt` passages."""
    rng = random.Random(seed * 1_000_003 + start)
    return [raw_hits(start + i, rng, runbook_excerpt) for i in range(count)]


if __name__ == "__main__":
    out = records(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
    sys.stderr.write(f"{len(out)} records, {sum(map(len, out)) / len(out) / 1024:.1f} KiB on average\n")
    sys.stdout.buffer.write(b"\n".join(out) + b"\n")
