"""A py-rag stand-in: an aiohttp app serving recorded answers, with switches for the ways py-rag fails.

``POST /search`` with ``{"query", "mode", "filters"}`` answers the recorded answer of that query,
byte for byte (the golden raw-hits responses by default), and a NO_EVIDENCE answer for any other.
The switches say what the next requests get instead: ``fail`` (that many 500s), ``slow`` (that many
answers held ``slow_seconds`` first), ``not_json`` (that many HTML pages), ``oversized`` (that many
answers of ``oversized_bytes``). Every request is recorded in :attr:`FakePyRag.requests`.

    python -m tests.pyrag --port 8700     # for make run-mcp: serves until interrupted
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from streams import codec

GOLDEN_INPUT = Path(__file__).resolve().parent / "data" / "golden" / "pipe" / "input.jsonl"


def recorded_answers(path: Path = GOLDEN_INPUT) -> dict[str, bytes]:
    """py-rag's answers as recorded in raw-hits lines, by query (the first of each query), as bytes."""
    answers: dict[str, bytes] = {}
    for line in path.read_bytes().splitlines():
        try:
            record = codec.loads(line)
        except codec.JSONDecodeError:
            continue
        response = record.get("response") if isinstance(record, dict) else None
        if isinstance(response, dict) and isinstance(response.get("query"), str):
            answers.setdefault(response["query"], codec.dumps(response))
    return answers


def no_evidence(query: str, mode: str) -> bytes:
    """What py-rag answers when nothing was found."""
    return codec.dumps(
        {
            "query": query,
            "mode": mode,
            "hits": [],
            "relevance_level": None,
            "evidence_status": "no_evidence",
            "retrieval_trace": {"mode": mode, "recall_count": 0, "no_evidence_basis": "nothing recalled"},
        }
    )


@dataclass
class FakePyRag:
    """The app's state: the answers, the switches, and what was asked."""

    answers: dict[str, bytes] = field(default_factory=recorded_answers)
    fail: int = 0
    slow: int = 0
    slow_seconds: float = 5.0
    not_json: int = 0
    oversized: int = 0
    oversized_bytes: int = 2 * 1024 * 1024
    token: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=1024 * 1024)
        app.add_routes([web.post("/search", self.search)])
        return app

    async def search(self, request: web.Request) -> web.Response:
        if self.token is not None and request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.Response(status=401, text="unauthorized")
        asked = codec.loads(await request.read())
        self.requests.append(asked)
        if self.fail > 0:
            self.fail -= 1
            return web.Response(status=500, text="internal error")
        if self.slow > 0:
            self.slow -= 1
            await asyncio.sleep(self.slow_seconds)
        if self.not_json > 0:
            self.not_json -= 1
            return web.Response(body=b"<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if self.oversized > 0:
            self.oversized -= 1
            return web.Response(body=b" " * self.oversized_bytes, content_type="application/json")
        query, mode = str(asked.get("query")), str(asked.get("mode") or "hybrid")
        body = self.answers.get(query) or no_evidence(query, mode)
        return web.Response(body=body, content_type="application/json")


async def _serve(port: int) -> None:
    runner = web.AppRunner(FakePyRag().app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"fake py-rag: http://127.0.0.1:{port}/search (recorded answers)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8700)
    try:
        asyncio.run(_serve(parser.parse_args().port))
    except KeyboardInterrupt:
        pass
