"""Reading the judge's answer: strict JSON, one label per claim of the case, or no judgement at all.

An answer that cannot be read is never a pass: :func:`read_answer` raises :class:`AnswerInvalid`, and
the edge asks again (the draft is held; it is never published unjudged and never dead-lettered for the
judge's fault).

What is read: the whole answer is one JSON object (one surrounding Markdown code fence, which models
add out of habit, is taken off; nothing else is), with ``claims``: a list holding, for every claim of
the case and for nothing else, an object with ``path`` (as given), ``label`` (``supported``,
``unsupported`` or ``contradicted``), ``evidence`` (refs the case showed) and ``reason`` (a string).
Other keys are ignored. A reason is kept to :data:`MAX_REASON_CHARS` characters.
"""

from __future__ import annotations

import re
from typing import Any

from models.semantic import ClaimJudgement, JudgeCase
from models.vocab import ClaimLabel
from streams import codec
from streams.codec import JSONObject

MAX_REASON_CHARS = 500
"""A reason longer than this is cut (with ``…``): it is shown to people and signed, never a page."""

MAX_ANSWER_CHARS = 200_000
"""An answer longer than this is not read: no case of a capped draft needs one."""

_FENCE = re.compile(r"\A```[A-Za-z]*\n(.*)\n```\Z", re.DOTALL)
_LABELS = frozenset(ClaimLabel)


class AnswerInvalid(ValueError):
    """The judge's answer is not a judgement of this case; the message says what is wrong with it."""


def _field(entry: JSONObject, name: str, index: int) -> Any:
    if name not in entry:
        raise AnswerInvalid(f"claims[{index}] has no {name!r}")
    return entry[name]


def read_answer(answer: str, case: JudgeCase) -> list[ClaimJudgement]:
    """The labels of ``answer``, one per claim of ``case``, in the case's order.

    Raises:
        AnswerInvalid: not one JSON object, no ``claims`` list, an entry that is not an object, a path
            the case does not hold or one given twice, a claim left out, a label other than the three,
            an evidence ref the case did not show, a reason that is not a string.
    """
    if len(answer) > MAX_ANSWER_CHARS:
        raise AnswerInvalid(f"the answer holds {len(answer)} characters, more than {MAX_ANSWER_CHARS}")
    text = answer.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        doc = codec.loads_unique(text)
    except codec.JSONDecodeError as exc:
        raise AnswerInvalid(f"the answer is not one JSON object ({exc})") from None
    if not isinstance(doc, dict):
        raise AnswerInvalid("the answer is JSON but not an object")
    entries = doc.get("claims")
    if not isinstance(entries, list):
        raise AnswerInvalid("the answer has no 'claims' list")
    paths = {claim["path"]: i for i, claim in enumerate(case["claims"])}
    refs = {item["ref"] for item in case["evidence"]}
    found: dict[str, ClaimJudgement] = {}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise AnswerInvalid(f"claims[{index}] is not an object")
        path = _field(entry, "path", index)
        if not isinstance(path, str) or path not in paths:
            raise AnswerInvalid(f"claims[{index}].path names no claim of the case")
        if path in found:
            raise AnswerInvalid(f"claims[{index}] labels {path} a second time")
        label = _field(entry, "label", index)
        if label not in _LABELS:
            raise AnswerInvalid(f"claims[{index}].label is not supported, unsupported or contradicted")
        evidence = _field(entry, "evidence", index)
        if not isinstance(evidence, list) or not all(
            isinstance(ref, str) and ref in refs for ref in evidence
        ):
            raise AnswerInvalid(f"claims[{index}].evidence is not a list of the case's refs")
        reason = _field(entry, "reason", index)
        if not isinstance(reason, str):
            raise AnswerInvalid(f"claims[{index}].reason is not a string")
        reason = reason.strip()
        if len(reason) > MAX_REASON_CHARS:
            reason = f"{reason[: MAX_REASON_CHARS - 1]}…"
        found[path] = {
            "path": path,
            "label": ClaimLabel(label),
            "evidence": list(dict.fromkeys(evidence)),
            "reason": reason,
        }
    missing = [path for path in paths if path not in found]
    if missing:
        raise AnswerInvalid(
            f"the answer labels no {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}"
        )
    return [found[claim["path"]] for claim in case["claims"]]
