"""The judge's adapter for the OpenAI-compatible API, against the fake judge server, and its pacing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from models.limits import SemanticSettings
from streams.errors import ConfigurationError, JudgeDeclined, JudgeRefused, JudgeUnavailable
from streams.judge.openai import OpenAIChatJudge, completions_url, retry_after
from streams.judge.pacing import Pacing
from tests.judge import FakeJudge, serve

CASE = {
    "claims": [
        {"path": "analysis[0].content", "kind": "NORMAL", "text": "the root cause is X", "evidence": ["E1"]}
    ],
    "evidence": [],
}
MESSAGES = [{"role": "system", "content": "judge"}, {"role": "user", "content": f"case:\n{json.dumps(CASE)}"}]


@pytest.fixture
async def fake() -> AsyncIterator[tuple[FakeJudge, OpenAIChatJudge]]:
    judge = FakeJudge()
    runner, port = await serve(judge)
    client = OpenAIChatJudge(
        SemanticSettings(judge_url=f"http://127.0.0.1:{port}/v1", judge_model="m", timeout_seconds=2)
    )
    try:
        yield judge, client
    finally:
        await client.close()
        await runner.cleanup()


async def test_a_scripted_answer_comes_back_as_text(fake: tuple[FakeJudge, OpenAIChatJudge]) -> None:
    judge, client = fake
    answer = json.loads(await client.ask(MESSAGES, model="m"))
    assert answer["claims"][0]["label"] == "unsupported"
    sent = judge.requests[0]
    assert (
        sent["model"] == "m"
        and sent["temperature"] == 0
        and sent["response_format"] == {"type": "json_object"}
    )


@pytest.mark.parametrize(
    ("switch", "retry"),
    [
        ({"fail": 1}, None),
        ({"rate_limited": 1, "retry_after": 7}, 7.0),
        ({"not_completion": 1}, None),
        ({"down": True}, None),
    ],
    ids=["5xx", "429", "not-a-completion", "down"],
)
async def test_a_judge_that_fails_is_unavailable_never_an_answer(
    fake: tuple[FakeJudge, OpenAIChatJudge], switch: dict[str, Any], retry: float | None
) -> None:
    judge, client = fake
    for name, value in switch.items():
        setattr(judge, name, value)
    with pytest.raises(JudgeUnavailable) as raised:
        await client.ask(MESSAGES, model="m")
    assert raised.value.retry_after_seconds == retry


async def test_a_slow_judge_times_out_as_unavailable(fake: tuple[FakeJudge, OpenAIChatJudge]) -> None:
    judge, client = fake
    judge.latency_seconds = 0.5
    client.timeout = type(client.timeout)(total=0.1)
    await client.close()
    with pytest.raises(JudgeUnavailable, match="timed out"):
        await client.ask(MESSAGES, model="m")


async def answering(
    status: int, body: Any, headers: dict[str, str] | None = None
) -> tuple[web.AppRunner, int]:
    """A judge that answers every call ``status`` with ``body`` (JSON, or text when a string)."""

    async def answer(request: web.Request) -> web.Response:
        if isinstance(body, str):
            return web.Response(text=body, status=status, headers=headers)
        return web.json_response(body, status=status, headers=headers)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("status", "headers"),
    [(401, None), (403, None), (404, None), (405, None), (302, {"Location": "http://elsewhere/"})],
)
async def test_a_refusal_is_for_good(status: int, headers: dict[str, str] | None) -> None:
    """A setting is wrong (the token, the model, the URL): the worker exits for the operator to fix it."""
    runner, port = await answering(status, {"error": "bad token"}, headers)
    client = OpenAIChatJudge(SemanticSettings(judge_url=f"http://127.0.0.1:{port}/v1", judge_model="m"))
    try:
        with pytest.raises(JudgeRefused, match=str(status)):
            await client.ask(MESSAGES, model="m")
    finally:
        await client.close()
        await runner.cleanup()


VLLM_TOO_LONG = {
    "object": "error",
    "message": "This model's maximum context length is 8192 tokens. However, you requested 9120 tokens.",
    "type": "BadRequestError",
    "code": 400,
}
OPENAI_TOO_LONG = {
    "error": {
        "message": "This model's maximum context length is 8192 tokens.",
        "code": "context_length_exceeded",
    }
}


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (400, VLLM_TOO_LONG, "maximum context length is 8192 tokens. However"),
        (400, OPENAI_TOO_LONG, "maximum context length is 8192 tokens."),
        (413, "<html><body>413 Request Entity Too Large</body></html>", "413 Request Entity Too Large"),
        (422, {"detail": "input rejected"}, "input rejected"),
        (400, {"error": "x" * 1000}, "x" * 150),
    ],
    ids=["vllm-context", "openai-context", "proxy-413", "422", "long"],
)
async def test_a_case_the_judge_cannot_judge_is_declined_not_a_setting(
    status: int, body: Any, said: str
) -> None:
    """400 (over the model's context, a moderation filter), 413 (a proxy's body limit), 422 (an input it
    rejects) are about the case, not the settings: declined, and what the judge said is quoted, bounded."""
    runner, port = await answering(status, body)
    client = OpenAIChatJudge(SemanticSettings(judge_url=f"http://127.0.0.1:{port}/v1", judge_model="m"))
    try:
        with pytest.raises(JudgeDeclined) as raised:
            await client.ask(MESSAGES, model="m")
    finally:
        await client.close()
        await runner.cleanup()
    assert raised.value.status == status and not isinstance(raised.value, (JudgeRefused, JudgeUnavailable))
    assert said in str(raised.value) and len(str(raised.value)) < 400


async def test_a_key_in_the_judges_path_is_never_in_its_errors() -> None:
    # The red team's L5 after issue 38: "the judge at http://…/bad/sk-APIKEY123/v1/chat/completions refused"
    async def refuse(request: web.Request) -> web.Response:
        return web.json_response({"error": f"no such model at {request.path}"}, status=400)

    async def gone(request: web.Request) -> web.Response:
        return web.json_response({"error": f"no such model at {request.path}"}, status=404)

    app = web.Application()
    app.router.add_post("/bad/{key}/v1/chat/completions", refuse)
    app.router.add_post("/gone/{key}/v1/chat/completions", gone)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    for base, failure in (
        (f"http://127.0.0.1:{port}/bad/sk-APIKEY123/v1", JudgeDeclined),  # 400: and it quotes the path
        (f"http://127.0.0.1:{port}/gone/sk-APIKEY123/v1", JudgeRefused),
        ("http://127.0.0.1:9/bad/sk-APIKEY123/v1", JudgeUnavailable),  # nothing listens on port 9
    ):
        client = OpenAIChatJudge(SemanticSettings(judge_url=base, judge_model="m", timeout_seconds=2))
        try:
            with pytest.raises(failure) as raised:
                await client.ask(MESSAGES, model="m")
        finally:
            await client.close()
        said = str(raised.value)
        assert "APIKEY123" not in said and "/****/v1/chat/completions" in said, said
        assert "APIKEY123" not in repr(client)
    await runner.cleanup()


def test_settings_that_cannot_work_stop_at_once(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="JUDGE_URL"):
        OpenAIChatJudge(SemanticSettings(judge_model="m"))
    with pytest.raises(ConfigurationError, match="JUDGE_MODEL"):
        OpenAIChatJudge(SemanticSettings(judge_url="http://x/v1"))
    with pytest.raises(ConfigurationError, match="TOKEN_FILE"):
        OpenAIChatJudge(
            SemanticSettings(judge_url="http://x/v1", judge_model="m", judge_token_file=str(tmp_path / "no"))
        )
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    judge = OpenAIChatJudge(
        SemanticSettings(judge_url="http://u:pw@x/v1", judge_model="m", judge_token_file=str(token))
    )
    assert "s3cret" not in repr(judge) and "pw" not in repr(judge)


def test_urls_and_retry_after() -> None:
    assert completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert completions_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"
    assert retry_after("3") == 3.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0


async def test_pacing_caps_calls_in_flight_and_their_rate() -> None:
    pacing = Pacing(3, 1000.0)
    most = 0

    async def call() -> None:
        nonlocal most
        async with pacing.call():
            most = max(most, pacing.in_flight)
            await asyncio.sleep(0.02)

    await asyncio.gather(*(call() for _ in range(12)))
    assert most == 3 and pacing.started == 12

    slow = Pacing(100, 20.0)
    loop = asyncio.get_running_loop()
    started = loop.time()
    starts: list[float] = []

    async def mark() -> None:
        async with slow.call():
            starts.append(loop.time() - started)

    await asyncio.gather(*(mark() for _ in range(5)))
    # five starts at 20 per second: the last no sooner than four spacings after the first
    assert max(starts) - min(starts) >= 4 * 0.05 * 0.9
