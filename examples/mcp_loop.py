"""The agent loop through the MCP server: a scripted model calls ``evidence-chain mcp`` as a host would.

    python -m examples.mcp_loop                    # against running workers (the EC_* settings)
    evidence-chain demo --mode mcp                 # starts a worker on a fresh prefix, then runs this
    make run                                       # the sample's tables, the agent loop, then this one

What it shows (design note §9, with the tool the model calls being ours):

1. A py-rag stand-in serves recorded answers (:mod:`tests.pyrag`, the golden pipe cases) on a free port.
2. The "host" spawns ``evidence-chain mcp`` over stdio with ``EC_PYRAG_URL`` pointing at it — the same
   command, arguments and environment as the README's MCP host configuration — and opens one session
   with the official MCP SDK's client. One session is one run; the server's instructions name it.
3. The scripted model calls ``lookup_knowledge`` twice and is shown the ledger's exact projection text,
   under the tool call ids the server chose; it cites a lookup that found nothing as a finding, gets
   REJECT with the repair prompt from ``check_diagnosis``, fixes it, and gets PASS with the report's id.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

from aiohttp import web
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent
from rich.panel import Panel
from rich.text import Text

from streams import codec
from streams.cli.display import console
from tests.pyrag import FakePyRag

FOUND = "网关超时怎么排查"
"""Recorded: py-rag found runbook excerpts."""
NOTHING = "数据库连接池应该调多大"
"""Not recorded: py-rag finds nothing (NO_EVIDENCE)."""
CLI = str(Path(sys.executable).with_name("evidence-chain"))
VERDICT_STYLE = {"PASS": "green", "REJECT": "yellow", "FALLBACK": "red"}


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def draft(found: dict[str, Any], nothing: dict[str, Any], *, repaired: bool) -> dict[str, Any]:
    """The scripted model's draft: its words are the excerpt it was shown; before the repair it also
    presents the lookup that found nothing as a finding (NORMAL), after it as a NEGATIVE_OBSERVATION."""
    shown = found["evidence"][0]
    return {
        "analysis": [
            {
                "id": "a1",
                "kind": "NORMAL",
                "content": shown["excerpt"],
                "tool_call_ids": [found["tool_call_id"]],
                "document_ids": [shown["document_id"]],
            },
            {
                "id": "a2",
                "kind": "NEGATIVE_OBSERVATION" if repaired else "NORMAL",
                "content": "知识库中没有关于连接池大小的资料。" if repaired else "连接池应该调大。",
                "tool_call_ids": [nothing["tool_call_id"]],
            },
        ],
        "conclusion": {"content": shown["excerpt"], "based_on_analysis_ids": ["a1"]},
        "action_plan": [{"id": "p1", "content": shown["excerpt"], "based_on_analysis_ids": ["a1"]}],
        "limitations": ["只依据知识库检索到的摘录。"],
    }


async def run_loop(width: int | None, timeout_ms: int | None = None) -> int:
    out = console(width=width)
    fake = FakePyRag()
    runner = web.AppRunner(fake.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    env = {**os.environ, "EC_PYRAG_URL": f"http://127.0.0.1:{port}/search"}
    if timeout_ms:
        env["EC_GATEWAY_TIMEOUT_MS"] = str(timeout_ms)
    out.rule("the agent loop through the MCP server (evidence-chain mcp over stdio)")
    out.print(f"py-rag stand-in on :{port} with {len(fake.answers)} recorded answers; host: {CLI} mcp")
    try:
        async with Client(StdioServerParameters(command=CLI, args=["mcp"], env=env)) as mcp:
            run = re.search(r"for run (\S+)\.", mcp.instructions or "")
            out.print(Text.assemble("session run: ", (run.group(1) if run else "?", "bold")))
            tools = [tool.name for tool in (await mcp.list_tools()).tools]
            out.print(f"tools: {', '.join(tools)}")
            shown: list[dict[str, Any]] = []
            for query in (FOUND, NOTHING):
                result = await mcp.call_tool("lookup_knowledge", {"query": query})
                [text] = texts(result)
                if result.is_error:
                    out.print(Panel(text, title=f"lookup_knowledge({query!r}) failed", border_style="red"))
                    return 1
                projection = codec.loads(text)
                shown.append(projection)
                called = f"{projection['tool_call_id']}: {projection['evidence_status']}"
                title = f"lookup_knowledge({query!r}) → {called}"
                subtitle = "the ledger's bytes, as the model sees them"
                out.print(Panel(Text(text), title=title, subtitle=subtitle))
            for repaired in (False, True):
                result = await mcp.call_tool("check_diagnosis", {"draft": draft(*shown, repaired=repaired)})
                verdict_text, follow_up = texts(result)
                verdict = codec.loads(verdict_text)
                kind = verdict["verdict"]
                codes = ", ".join(v["code"] for v in verdict["violations"]) or "no violations"
                title = f"check_diagnosis (attempt {verdict['attempt']}) → {kind}: {codes}"
                out.print(Panel(Text(follow_up), title=title, border_style=VERDICT_STYLE.get(kind, "white")))
                if kind != "REJECT":
                    return 0 if kind == "PASS" else 1
            return 1
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="The agent loop through evidence-chain mcp.")
    parser.add_argument("--width", type=int, default=None, help="console width (default: the terminal's)")
    parser.add_argument("--timeout-ms", type=int, default=None, help="how long a lookup or check may wait")
    args = parser.parse_args(argv)
    return asyncio.run(run_loop(args.width, args.timeout_ms))


if __name__ == "__main__":
    sys.exit(main())
