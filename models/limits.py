"""The numbers the stations obey, as frozen settings objects (defaults are the SPEC's).

They live in ``models`` so the pure stations can take them without importing the environment
loader; ``streams.settings.Settings`` composes them and fills them from ``EC_*`` variables.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InputLimits(_Frozen):
    """Caps on a raw-hits record (SPEC 2)."""

    max_message_bytes: int = Field(1024 * 1024, ge=1, description="Largest raw-hits value accepted.")
    max_hits: int = Field(1000, ge=0, description="Most hits one py-rag response may carry.")


class PostprocessSettings(_Frozen):
    """Governance of the hits and the context pack (SPEC 3.2, 3.3)."""

    max_chunks_per_doc: int = Field(2, ge=1, description="Distinct blocks kept per document.")
    return_n: int = Field(5, ge=0, description="Blocks kept in all.")
    precise_threshold: float = Field(0.75, description="Top score at or above which the level is PRECISE.")
    reference_threshold: float = Field(0.5, description="Top score at or above which the level is REFERENCE.")
    char_budget: int = Field(4000, ge=0, description="Code points of the packed context text.")


class ToolProjectionLimits(_Frozen):
    """The three budgets of every tool projection the agent is shown (SPEC 3.5).

    One object shared by every tool projection the project may add later.
    """

    max_query_chars: int = Field(500, ge=0, description="Code points of the echoed query.")
    max_items: int = Field(8, ge=0, description="Evidence items shown.")
    max_excerpt_chars: int = Field(1200, ge=0, description="Code points of one excerpt.")
    max_bytes: int = Field(16384, ge=1, description="Bytes of the canonical projection.")


class GuardSettings(_Frozen):
    """Limits and policy of the evidence guard (SPEC 4)."""

    max_draft_bytes: int = Field(256 * 1024, ge=1, description="Largest draft parsed at all.")
    max_items: int = Field(100, ge=0, description="Most items in analysis or in action_plan.")
    max_list_entries: int = Field(
        50, ge=0, description="Most entries in one tool_call_ids, document_ids or based_on_analysis_ids."
    )
    max_cited_tool_calls: int = Field(50, ge=0, description="Most distinct tool calls cited in one draft.")
    max_violations: int = Field(200, ge=0, description="Violations listed in a verdict (all are counted).")
    max_attempts: int = Field(2, ge=1, description="Attempt from which a rejected draft falls back.")
    review: Literal["enforce", "off"] = Field(
        "enforce",
        description="Review of claims (SPEC 4.2): every number, identifier and quotation of a text must be "
        "in the evidence it cites (enforce), or skip it (off).",
    )


class DeadLetterSettings(_Frozen):
    """How much of a rejected record a dead letter carries (SPEC 5)."""

    dead_letter_max_value_bytes: int = Field(64 * 1024, ge=0, description="Bytes of the original value kept.")


class SemanticSettings(_Frozen):
    """The semantic review after the guard (SPEC 4.4, issue 41): a model judges each claim of a draft
    that passed A-D against the evidence it cites. Off by default: publishing is then exactly what it
    is without it."""

    mode: Literal["off", "advise", "enforce"] = Field(
        "off",
        description="off: no semantic review; advise: judge and record, the verdict stays the guard's; "
        "enforce: a draft that passes A-D gets its verdict from the judge.",
    )
    judge_url: str = Field(
        "",
        description="Base URL of an OpenAI-compatible chat-completions API (vLLM, Ollama, llama.cpp's "
        "server, a hosted API), e.g. http://127.0.0.1:11434/v1; /chat/completions is added.",
    )
    judge_model: str = Field("", description="The model the judge is asked to use (part of every digest).")
    judge_token_file: str | None = Field(
        None,
        description="A file holding the bearer token of the judge's API, if it needs one; never printed.",
    )
    max_in_flight: int = Field(16, ge=1, le=1024, description="Judge calls one worker has open at once.")
    timeout_seconds: float = Field(60.0, gt=0, description="Longest one judge call may take (then retried).")
    calls_per_second: float = Field(
        50.0, gt=0, description="Most judge calls one worker starts per second (retries included)."
    )
    max_chars_per_draft: int = Field(
        48_000,
        ge=1,
        description="Most characters of claims and evidence sent for one draft; a draft above it is not "
        "sent (SEMANTIC_INPUT_TOO_LARGE) — a flood of drafts cannot become a bill.",
    )
