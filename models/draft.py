"""The agent's diagnosis draft, as the guard reads it (SPEC 4).

Types are strict: a field of the wrong type makes the draft ``DRAFT_UNPARSABLE``. Missing or null
lists count as empty and unknown fields are ignored.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Strict, StringConstraints, TypeAdapter
from typing_extensions import NotRequired, TypedDict

_Str = Annotated[str, Strict()]
_StrList = list[_Str] | None


class AnalysisItem(TypedDict):
    """One finding, citing the tool calls (and optionally the documents) it rests on."""

    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]

    id: _Str
    kind: NotRequired[_Str | None]
    content: NotRequired[_Str | None]
    tool_call_ids: NotRequired[_StrList]
    document_ids: NotRequired[_StrList]


class Conclusion(TypedDict):
    """The conclusion, based on analysis items."""

    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]

    content: NotRequired[_Str | None]
    based_on_analysis_ids: NotRequired[_StrList]


class ActionItem(TypedDict):
    """One step of the action plan, based on analysis items."""

    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]

    id: _Str
    content: NotRequired[_Str | None]
    based_on_analysis_ids: NotRequired[_StrList]


class DiagnosisDraft(TypedDict):
    """The structured draft an agent submits on ``diagnosis-drafts``."""

    __pydantic_config__ = ConfigDict(extra="ignore")  # type: ignore[misc]

    run_id: NotRequired[_Str | None]
    draft_id: Annotated[str, Strict(), StringConstraints(min_length=1)]
    attempt: NotRequired[Annotated[int, Strict()] | None]
    analysis: NotRequired[list[AnalysisItem] | None]
    conclusion: NotRequired[Conclusion | None]
    action_plan: NotRequired[list[ActionItem] | None]
    limitations: NotRequired[_StrList]


DIAGNOSIS_DRAFT_ADAPTER: TypeAdapter[DiagnosisDraft] = TypeAdapter(DiagnosisDraft)
