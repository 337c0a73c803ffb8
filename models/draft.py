"""The agent's diagnosis draft, as the guard reads it (SPEC 4).

Types are strict: a field of the wrong type makes the draft ``DRAFT_UNPARSABLE``, and so do the
SPEC's bounds on hostile input (ids over 128 characters, ``attempt`` over 1,000,000). Missing or null
lists count as empty and unknown fields are ignored.
"""

from __future__ import annotations

from typing import Annotated, NotRequired

from pydantic import ConfigDict, Field, Strict, StringConstraints, TypeAdapter, with_config
from typing_extensions import TypedDict

MAX_ID_CHARS = 128
"""``draft_id`` and every analysis/action ``id`` are at most this long (SPEC 4 A.1)."""

MAX_ATTEMPT = 1_000_000
"""The largest ``attempt`` a draft may carry (SPEC 4 A.1); below 1 reads as 1."""

_Str = Annotated[str, Strict()]
_StrList = list[_Str] | None
_ItemId = Annotated[str, Strict(), StringConstraints(max_length=MAX_ID_CHARS)]


@with_config(ConfigDict(extra="ignore"))
class AnalysisItem(TypedDict):
    """One finding, citing the tool calls (and optionally the documents) it rests on."""

    id: _ItemId
    kind: NotRequired[_Str | None]
    content: NotRequired[_Str | None]
    tool_call_ids: NotRequired[_StrList]
    document_ids: NotRequired[
        Annotated[
            _StrList,
            Field(
                description="Each a document_id in the ledger projection of one of this item's tool calls."
            ),
        ]
    ]


@with_config(ConfigDict(extra="ignore"))
class Conclusion(TypedDict):
    """The conclusion, based on analysis items."""

    content: NotRequired[_Str | None]
    based_on_analysis_ids: NotRequired[_StrList]


@with_config(ConfigDict(extra="ignore"))
class ActionItem(TypedDict):
    """One step of the action plan, based on analysis items."""

    id: _ItemId
    content: NotRequired[_Str | None]
    based_on_analysis_ids: NotRequired[_StrList]


@with_config(ConfigDict(extra="ignore"))
class DiagnosisDraft(TypedDict):
    """The structured draft an agent submits on ``diagnosis-drafts``."""

    run_id: NotRequired[
        Annotated[
            _Str | None,
            Field(description="Must be a valid id (1-128 of [A-Za-z0-9._-]), else RUN_ID_MISSING."),
        ]
    ]
    draft_id: Annotated[str, Strict(), StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]
    attempt: NotRequired[
        Annotated[
            Annotated[int, Strict(), Field(le=MAX_ATTEMPT)] | None,
            Field(description="Stamped by the agent harness; absent, null or below 1 reads as 1."),
        ]
    ]
    analysis: NotRequired[list[AnalysisItem] | None]
    conclusion: NotRequired[Conclusion | None]
    action_plan: NotRequired[list[ActionItem] | None]
    limitations: NotRequired[_StrList]


DIAGNOSIS_DRAFT_ADAPTER: TypeAdapter[DiagnosisDraft] = TypeAdapter(DiagnosisDraft)
