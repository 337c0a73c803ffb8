"""The judge over an OpenAI-compatible chat-completions API (vLLM, Ollama, llama.cpp's server, hosted
APIs), with aiohttp — the HTTP client the project already uses for py-rag.

``POST <EC_SEMANTIC__JUDGE_URL>/chat/completions`` with ``{"model", "messages", "temperature": 0,
"response_format": {"type": "json_object"}}`` and, when ``EC_SEMANTIC__JUDGE_TOKEN_FILE`` is set,
``Authorization: Bearer <the file's first line>``; each call bounded by
``EC_SEMANTIC__TIMEOUT_SECONDS``. aiohttp's errors are translated here, once:

- a connection error, a timeout, 408, 429 (with its ``Retry-After``, in seconds or as an HTTP date),
  a 5xx, or a body that is not a chat completion → :class:`~streams.errors.JudgeUnavailable`: the
  station holds the draft and asks again;
- 400, 413 or 422 → :class:`~streams.errors.JudgeDeclined`: the judge cannot judge this one case (the
  prompt is over the model's context, as vLLM and hosted APIs answer; the body is over a proxy's limit;
  the input is one it rejects, a moderation filter's 400): asking again gets the same answer, and the
  next draft may be judged, so the station records the case as not asked (SPEC 4.4) and goes on;
- a redirect (never followed: the drafts and the token go to the judge's URL and nowhere else), 401,
  403, 404 or another 4xx → :class:`~streams.errors.JudgeRefused`: a setting is wrong (the URL, the token,
  the model), the worker exits.

No message shows the URL's secrets or the token.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

import aiohttp

from models.limits import SemanticSettings
from streams import codec
from streams.errors import ConfigurationError, JudgeDeclined, JudgeRefused, JudgeUnavailable
from streams.outbound import READ_CHUNK_BYTES, JsonApi
from streams.redaction import redact_in

MAX_BODY_BYTES = 4 * 1024 * 1024
"""A chat completion larger than this is not read (no judgement of a capped draft needs one)."""

DECLINED = frozenset({400, 413, 422})
"""What a judge answers about one case it cannot judge (over the model's context, a body too large, an
input it rejects), not about the settings: the draft is not asked, the worker goes on."""

SAID_CHARS = 200
"""At most this much of a declining judge's error is quoted in the log (it says why: a context length)."""


def completions_url(base: str) -> str:
    """``<base>/chat/completions``, unless ``base`` already ends with it."""
    trimmed = base.rstrip("/")
    return trimmed if trimmed.endswith("/chat/completions") else f"{trimmed}/chat/completions"


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """A ``Retry-After`` header in seconds from now: delay-seconds or an HTTP date; None when absent or
    unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def read_token(path: str | None) -> str:
    """The bearer token in ``path`` (its first line), or "" without a file.

    Raises:
        ConfigurationError: the file cannot be read or is empty.
    """
    if not path:
        return ""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(
            f"EC_SEMANTIC__JUDGE_TOKEN_FILE={path} cannot be read ({type(exc).__name__})"
        ) from None
    token = lines[0].strip() if lines else ""
    if not token:
        raise ConfigurationError(f"EC_SEMANTIC__JUDGE_TOKEN_FILE={path} holds no token on its first line")
    return token


def completion_text(body: bytes) -> str:
    """The answer of a chat completion: ``choices[0].message.content``.

    Raises:
        JudgeUnavailable: the body is not a chat completion with a text answer.
    """
    try:
        doc: Any = codec.loads(body)
        content = doc["choices"][0]["message"]["content"]
    except (codec.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise JudgeUnavailable(
            f"the judge's answer is not a chat completion ({type(exc).__name__})"
        ) from None
    if not isinstance(content, str):
        raise JudgeUnavailable("the judge's chat completion holds no text answer")
    return content


class OpenAIChatJudge(JsonApi):
    """The judge at ``EC_SEMANTIC__JUDGE_URL``; one connection pool per instance, opened on first use.

    Raises (at construction):
        ConfigurationError: the URL or the model is not set, the URL is not http(s), or the token file
            cannot be read.
    """

    def __init__(self, settings: SemanticSettings) -> None:
        if not settings.judge_url:
            raise ConfigurationError(
                "EC_SEMANTIC__JUDGE_URL is not set: give the base URL of an OpenAI-compatible API, e.g. "
                "http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:8000/v1 (vLLM)"
            )
        if not settings.judge_url.startswith(("http://", "https://")):
            raise ConfigurationError("EC_SEMANTIC__JUDGE_URL must be an http:// or https:// URL")
        if not settings.judge_model:
            raise ConfigurationError("EC_SEMANTIC__JUDGE_MODEL is not set: name the model the judge runs")
        url = completions_url(settings.judge_url)
        token = read_token(settings.judge_token_file)
        super().__init__(url, settings.timeout_seconds, token)
        self._token = token

    def __repr__(self) -> str:  # the token stays out of every repr and log line
        return f"OpenAIChatJudge(url={self.shown!r})"

    async def ask(self, messages: Sequence[dict[str, str]], *, model: str) -> str:
        """One chat completion: the model's answer as text (see the module's docstring for errors)."""
        body = codec.dumps(
            {
                "model": model,
                "messages": list(messages),
                "temperature": 0,
                "response_format": {"type": "json_object"},
            }
        )
        session = self._session_for_use()
        try:
            async with session.post(self.url, data=body, headers=self._headers, allow_redirects=False) as got:
                status = got.status
                if status == 429 or status == 408 or status >= 500:
                    wait = retry_after(got.headers.get("Retry-After"))
                    raise JudgeUnavailable(
                        f"the judge at {self.shown} answered {status}", retry_after_seconds=wait
                    )
                if 300 <= status < 400:
                    raise JudgeRefused(
                        f"the judge at {self.shown} answered a redirect ({status}), which is not followed; "
                        "set EC_SEMANTIC__JUDGE_URL to the address the API answers at"
                    )
                if status in DECLINED:
                    said = await self._said(got)
                    raise JudgeDeclined(
                        f"the judge at {self.shown} cannot judge this case ({status}"
                        f"{': ' + redact_in(said, self.url) if said else ''})",
                        status=status,
                    )
                if status >= 400:
                    raise JudgeRefused(
                        f"the judge at {self.shown} refused the call ({status}); check "
                        "EC_SEMANTIC__JUDGE_URL, EC_SEMANTIC__JUDGE_MODEL and EC_SEMANTIC__JUDGE_TOKEN_FILE"
                    )
                too_large = JudgeUnavailable(f"the judge's answer is larger than {MAX_BODY_BYTES} bytes")
                return completion_text(await self._read_capped(got, MAX_BODY_BYTES, too_large))
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            described = self._failure(exc, "timed out (EC_SEMANTIC__TIMEOUT_SECONDS)")
            raise JudgeUnavailable(f"the judge at {self.shown} did not answer: {described}") from exc

    async def _said(self, response: aiohttp.ClientResponse) -> str:
        """What an error answer says, for the log: its ``error.message`` (the OpenAI shape), or ``error``
        or ``message`` or ``detail`` when a string, else the text (of its first :data:`READ_CHUNK_BYTES`);
        one line of at most :data:`SAID_CHARS` characters, "" when it cannot be read."""
        chunks: list[bytes] = []
        try:
            async for chunk in response.content.iter_chunked(READ_CHUNK_BYTES):
                chunks.append(chunk)
                if sum(map(len, chunks)) >= READ_CHUNK_BYTES:
                    break
        except (aiohttp.ClientError, TimeoutError, OSError):
            return ""
        body = b"".join(chunks)[:READ_CHUNK_BYTES]
        text = body.decode("utf-8", "replace")
        try:
            doc: Any = codec.loads(body)
        except codec.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            error = doc.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                text = error["message"]
            else:
                text = next(
                    (doc[name] for name in ("error", "message", "detail") if isinstance(doc.get(name), str)),
                    text,
                )
        line = " ".join(text.split())
        if self._token:  # a server that quotes the request's headers back never puts the token in a log
            line = line.replace(self._token, "****")
        return line if len(line) <= SAID_CHARS else f"{line[: SAID_CHARS - 1]}…"
