"""The review of claims against people's labels (docs/review-rules.md §11; issue 39's acceptance).

Two labelled sets (:mod:`tests.review_set`): the product's (`tests/data/review-set/`) and the project's own,
written apart from the rules (`tests/data/review-set-own/`). The figures recorded here are what the rules
reach today; a change that refuses one more GROUNDED draft, passes one more UNGROUNDED draft, or lets a
disguise through fails, and so does a repair prompt that does not name what it refuses as the draft wrote
it. Lower the recorded figures when a change earns it; never raise them to let a change in.
"""

from __future__ import annotations

import pytest

from models.limits import GuardSettings
from tests.review_set import SETS, Score, names_as_written, score

RECORDED = {"review-set": (0, 0), "review-set-own": (0, 0), "review-set-blind": (0, 0)}
"""(GROUNDED drafts refused, UNGROUNDED drafts passed) per set: the most the rules may get wrong."""


@pytest.fixture(scope="module", params=sorted(SETS))
def scored(request: pytest.FixtureRequest) -> Score:
    return score(request.param)


def _report(ids: list[str], score_: Score) -> str:
    return f"{score_.name}: {len(ids)} wrong: " + ", ".join(
        f"{j.label['draft_id']} ({j.label['category']}: {j.label['why']})"
        for j in score_.judged
        if j.label["draft_id"] in ids
    )


def test_good_drafts_pass_as_people_judge_them(scored: Score) -> None:
    refused = [j.label["draft_id"] for j in scored.false_rejects]
    assert len(refused) <= RECORDED[scored.name][0], _report(refused, scored)
    assert len(scored.of("GROUNDED")) >= 50  # the set is there, whole


def test_invented_specifics_do_not_pass(scored: Score) -> None:
    passed = [j.label["draft_id"] for j in scored.misses]
    assert len(passed) <= RECORDED[scored.name][1], _report(passed, scored)
    assert len(scored.of("UNGROUNDED")) >= 50


def test_no_disguised_specific_passes(scored: Score) -> None:
    disguises = [j for j in scored.of("UNGROUNDED") if j.label["category"] == "disguise"]
    assert len(disguises) >= 5
    assert not [j.label["draft_id"] for j in disguises if j.verdict["verdict"] == "PASS"]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_refused_draft_is_told_its_unsupported_specifics_as_written(
    scored: Score, language: str
) -> None:
    """Acceptance 3: the repair prompt of every refused UNGROUNDED draft names each specific its label says
    the evidence does not state, as the draft wrote it (escaped, at most 80 characters)."""
    unnamed = {
        j.label["draft_id"]: missing
        for j in scored.of("UNGROUNDED")
        if j.verdict["verdict"] != "PASS" and (missing := names_as_written(j, language))
    }
    assert not unnamed


def test_the_review_off_passes_every_draft(scored: Score) -> None:
    """Every labelled draft is structurally valid and cites real READY entries of its run (A-C pass):
    only the review decides, so with it off every verdict is PASS."""
    off = score(scored.name, GuardSettings(review="off"))
    assert {j.verdict["verdict"] for j in off.judged} == {"PASS"}


def test_verdicts_do_not_depend_on_what_was_remembered(scored: Score) -> None:
    """The review remembers texts and indexes across drafts; judged again, every verdict has the same
    bytes (violations, messages, order)."""
    again = score(scored.name)
    assert [j.verdict for j in again.judged] == [j.verdict for j in scored.judged]
