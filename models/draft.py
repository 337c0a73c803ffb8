"""The agent's diagnosis draft, as the guard reads it (SPEC 4).

Types are strict: a field of the wrong type makes the draft ``DRAFT_UNPARSABLE``. Missing or null
lists count as empty and unknown fields are ignored.
"""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import ConfigDict, Strict, StringConstraints, TypeAdapter, with_config
from typing_extensions import TypedDict

_Str = Annotated[str, Strict()]
_StrList = list[_Str] | None


@with_config(ConfigDict(extra="ignore"))
class AnalysisItem(TypedDict):
    """One finding, citing the tool calls (and optionally the documents) it rests on."""

    id: _Str
    kind: NotRequired[_Str | None]
    content: NotRequired[_Str | None]
    tool_call_ids: NotRequired[_StrList]
    document_ids: NotRequired[_StrList]


@with_config(ConfigDict(extra="ignore"))
class Conclusion(TypedDict):
    """The conclusion, based on analysis items."""

    content: NotRequired[_Str | None]
    based_on_analysis_ids: NotRequired[_StrList]


@with_config(ConfigDict(extra="ignore"))
class ActionItem(TypedDict):
    """One step of the action plan, based on analysis items."""

    id: _Str
    content: NotRequired[_Str | None]
    based_on_analysis_ids: NotRequired[_StrList]


@with_config(ConfigDict(extra="ignore"))
class DiagnosisDraft(TypedDict):
    """The structured draft an agent submits on ``diagnosis-drafts``."""

    run_id: NotRequired[_Str | None]
    draft_id: Annotated[str, Strict(), StringConstraints(min_length=1)]
    attempt: NotRequired[Annotated[int, Strict()] | None]
    analysis: NotRequired[list[AnalysisItem] | None]
    conclusion: NotRequired[Conclusion | None]
    action_plan: NotRequired[list[ActionItem] | None]
    limitations: NotRequired[_StrList]


DIAGNOSIS_DRAFT_ADAPTER: TypeAdapter[DiagnosisDraft] = TypeAdapter(DiagnosisDraft)
