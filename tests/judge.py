"""A semantic judge stand-in: an aiohttp app speaking the OpenAI chat-completions API, with scripted
answers and switches for the ways a judge fails.

``POST /v1/chat/completions`` reads the case the station sent (the JSON document in the user message)
and answers one label per claim: ``unsupported`` for a claim whose text holds a phrase of
:attr:`FakeJudge.unsupported` (``the root cause is``, ``根因是``, ``OVERCLAIM``), ``contradicted`` for
one holding a phrase of :attr:`FakeJudge.contradicted` (``REVERSED``), else ``supported``; a case with a
claim holding a phrase of :attr:`FakeJudge.declined` (``DECLINE``) is answered 400 as vLLM answers a
prompt over the model's context (every time: it is the case, not the judge). The switches say what
the next calls get instead: ``fail`` (that many 500s), ``rate_limited`` (that many 429s with
``Retry-After: retry_after``), ``garbage`` (that many answers that are not JSON), ``not_completion``
(that many bodies that are not chat completions); ``down`` answers 503 to every call while set;
``latency_seconds`` holds every answer that long. Every call is counted.

Run as a process (the fault tests and the benchmark): ``python -m tests.judge --port 8790
[--latency 0.3]``; ``POST /control`` with a JSON object sets switches, ``GET /stats`` tells the counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

GOLDEN_DRAFTS = Path(__file__).resolve().parent / "data" / "golden" / "guard" / "drafts.jsonl"
UNSUPPORTED = ("the root cause is", "根因是", "OVERCLAIM")
CONTRADICTED = ("REVERSED",)
DECLINED = ("DECLINE",)
TOO_LONG = {
    "object": "error",
    "message": "This model's maximum context length is 8192 tokens. However, you requested 9120 tokens.",
    "type": "BadRequestError",
    "code": 400,
}
"""What vLLM answers (400) for a prompt over the model's context."""
SWITCHES = (
    "fail",
    "rate_limited",
    "garbage",
    "not_completion",
    "down",
    "latency_seconds",
    "retry_after",
    "vary",
)


@dataclass
class FakeJudge:
    """The app's state: the scripted phrases, the switches, the counts."""

    unsupported: tuple[str, ...] = UNSUPPORTED
    contradicted: tuple[str, ...] = CONTRADICTED
    declined: tuple[str, ...] = DECLINED
    latency_seconds: float = 0.0
    fail: int = 0
    rate_limited: int = 0
    retry_after: float = 1.0
    garbage: int = 0
    not_completion: int = 0
    down: bool = False
    vary: bool = False
    """Each answer's reasons name the call that gave them: a model that never answers twice alike, so a
    judgement asked again would show in its bytes."""
    calls: int = 0
    """Calls received (every try)."""
    declines: int = 0
    """Calls answered 400 (a case with a :attr:`declined` phrase)."""
    answered: int = 0
    """Calls answered with a judgement."""
    in_flight: int = 0
    most_in_flight: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)

    def label(self, text: str) -> str:
        if any(phrase in text for phrase in self.contradicted):
            return "contradicted"
        if any(phrase in text for phrase in self.unsupported):
            return "unsupported"
        return "supported"

    def declines_case(self, body: dict[str, Any]) -> bool:
        """Whether the case in the request's user message has a claim with a :attr:`declined` phrase."""
        user = body["messages"][-1]["content"]
        case = json.loads(user[user.index("{") :])
        return any(phrase in claim["text"] for claim in case["claims"] for phrase in self.declined)

    def answer(self, body: dict[str, Any]) -> str:
        """The judgement of the case in the request's user message."""
        user = body["messages"][-1]["content"]
        case = json.loads(user[user.index("{") :])
        said = f" (call {self.calls})" if self.vary else ""
        claims = [
            {
                "path": claim["path"],
                "label": (label := self.label(claim["text"])),
                "evidence": claim["evidence"][:1],
                "reason": ("the evidence states it" if label == "supported" else f"fake judge: {label}")
                + said,
            }
            for claim in case["claims"]
        ]
        return json.dumps({"claims": claims}, ensure_ascii=False)

    def stats(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "answered": self.answered,
            "declines": self.declines,
            "most_in_flight": self.most_in_flight,
        }


def distinct_drafts(
    count: int, *, seed: int = 41, overclaim_every: int = 0, last_attempt_every: int = 0
) -> list[bytes]:
    """``count`` copies of the golden d-pass (run ``run-g``: load the golden guard ledger), each with its own
    conclusion (letters only, so the review of claims passes it): each its own case for the judge. Every
    ``overclaim_every``-th says "the root cause is" (the fake judge: unsupported), every
    ``last_attempt_every``-th is attempt 2 (a semantic REJECT there is a FALLBACK)."""
    base = json.loads(next(d for d in GOLDEN_DRAFTS.read_bytes().splitlines() if b'"d-pass"' in d))
    rng = random.Random(seed)
    out = []
    for i in range(count):
        word = "".join(rng.choices(string.ascii_lowercase, k=12))
        draft = {**base, "draft_id": f"d-judged-{i}", "conclusion": {**base["conclusion"]}}
        overclaims = overclaim_every and i % overclaim_every == 0
        draft["conclusion"]["content"] = (
            f"{'the root cause is ' if overclaims else ''}调大 upstream 超时 ({word})"
        )
        if last_attempt_every and i % last_attempt_every == 0:
            draft["attempt"] = 2
        out.append(json.dumps(draft, ensure_ascii=False).encode())
    return out


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "fake",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }


def create_app(judge: FakeJudge) -> web.Application:
    async def chat(request: web.Request) -> web.Response:
        judge.calls += 1
        judge.in_flight += 1
        judge.most_in_flight = max(judge.most_in_flight, judge.in_flight)
        try:
            body = await request.json()
            judge.requests.append(body)
            if judge.latency_seconds:
                await asyncio.sleep(judge.latency_seconds)
            if judge.down:
                return web.json_response({"error": "down"}, status=503)
            if judge.fail:
                judge.fail -= 1
                return web.json_response({"error": "boom"}, status=500)
            if judge.rate_limited:
                judge.rate_limited -= 1
                return web.json_response(
                    {"error": "slow down"}, status=429, headers={"Retry-After": f"{judge.retry_after:g}"}
                )
            if judge.garbage:
                judge.garbage -= 1
                return web.json_response(completion("Sure! Here is my judgement: everything looks fine."))
            if judge.not_completion:
                judge.not_completion -= 1
                return web.json_response({"unexpected": True})
            if judge.declines_case(body):
                judge.declines += 1
                return web.json_response(TOO_LONG, status=400)
            judge.answered += 1
            return web.json_response(completion(judge.answer(body)))
        finally:
            judge.in_flight -= 1

    async def control(request: web.Request) -> web.Response:
        changes = await request.json()
        for name, value in changes.items():
            if name in SWITCHES:
                setattr(judge, name, value)
        return web.json_response(judge.stats())

    async def stats(request: web.Request) -> web.Response:
        return web.json_response(judge.stats())

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/control", control)
    app.router.add_get("/stats", stats)
    return app


async def serve(judge: FakeJudge, port: int = 0, host: str = "127.0.0.1") -> tuple[web.AppRunner, int]:
    """Start the app; returns its runner (``await runner.cleanup()`` stops it) and its port."""
    runner = web.AppRunner(create_app(judge), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    server: Any = site._server  # the bound port when port=0
    return runner, server.sockets[0].getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8790)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds every answer is held")
    args = parser.parse_args()
    web.run_app(
        create_app(FakeJudge(latency_seconds=args.latency)), host="127.0.0.1", port=args.port, print=None
    )


if __name__ == "__main__":
    main()
