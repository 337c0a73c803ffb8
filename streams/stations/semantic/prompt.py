"""The judge's prompt: a versioned template in the repository, in zh and en, and the case as JSON.

``prompts/<PROMPT_VERSION>.<language>.txt`` is the instruction (the system message); the case follows
as one compact JSON document (the user message), so nothing a draft or an excerpt holds can pass for
the prompt's own text. Changing a template's words means a new :data:`PROMPT_VERSION` (a new file):
the version is part of every digest, so recorded judgements are never read as answers to another
prompt.
"""

from __future__ import annotations

import functools
from importlib import resources

from models.semantic import JudgeCase
from streams import codec

PROMPT_VERSION = "semantic-v1"
"""The prompt templates' version: the files ``prompts/semantic-v1.{zh,en}.txt``."""

LANGUAGES = ("zh", "en")

_CASE_HEADINGS = {
    "en": "The claims and their evidence, as JSON:",
    "zh": "论断及其证据（JSON）：",
}


@functools.cache
def instruction(version: str, language: str) -> str:
    """The template of one prompt version and language, read once from the package.

    Raises:
        FileNotFoundError: no such version or language (a caller's bug: the case names them).
    """
    folder = resources.files(__package__).joinpath("prompts")
    return folder.joinpath(f"{version}.{language}.txt").read_text(encoding="utf-8").strip()


def messages(case: JudgeCase) -> list[dict[str, str]]:
    """The chat messages of one case: the instruction, then the case as JSON."""
    body = {"claims": case["claims"], "evidence": case["evidence"]}
    heading = _CASE_HEADINGS[case["language"]]
    return [
        {"role": "system", "content": instruction(case["prompt_version"], case["language"])},
        {"role": "user", "content": f"{heading}\n{codec.dumps(body).decode('utf-8')}"},
    ]
