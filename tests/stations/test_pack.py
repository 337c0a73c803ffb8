"""SPEC 3.3 (pack): one table or test per rule; ``block`` builds an evidence block.

Where the code disagrees with the SPEC the test says what the SPEC wants; the cases that once disagreed
keep the SPEC's words in their docstring.
"""

from __future__ import annotations

from models.limits import PostprocessSettings
from models.lookup import EvidenceBlock
from models.vocab import ATTEMPT_REASON
from streams.stations.pack import pack
from tests.stations.builders import (
    accepted,
    rules,
    seed_record,
)

# =============================================================================================
# SPEC 3.3: pack
# =============================================================================================


def block(
    source: str = "s", content: str = "body", *, breadcrumb: str | None = "b", rank: int = 1
) -> EvidenceBlock:
    return {
        "evidence_key": f"{source}#chunk-{rank}",
        "doc_id": source,
        "chunk_index": rank,
        "source": source,
        "title": None,
        "breadcrumb": breadcrumb,
        "content": content,
        "quality_score": 0.9,
        "original_rank": rank,
        "hit_reasons": [f"semantic_rank:{rank}", ATTEMPT_REASON],
    }


def header(i: int, b: EvidenceBlock) -> str:
    """SPEC 3.3's header, written out independently of the station."""
    return (
        f"[Evidence {i}]\nsource: {b['source']}\nbreadcrumb: {b['breadcrumb'] or ''}\n"
        f"reasons: {', '.join(b['hit_reasons'])}\ncontent:\n"
    )


def rendered(i: int, b: EvidenceBlock) -> str:
    return header(i, b) + b["content"]


def test_pack_renders_blocks_joined_by_a_blank_line() -> None:
    a, b = block("a", "first"), block("b", "second", breadcrumb=None, rank=2)
    packed = pack([a, b], 4000)
    assert packed["packed_text"] == (
        "[Evidence 1]\nsource: a\nbreadcrumb: b\n"
        "reasons: semantic_rank:1, attempt:UNFILTERED_VECTOR\ncontent:\nfirst"
        "\n\n"
        "[Evidence 2]\nsource: b\nbreadcrumb: \n"
        "reasons: semantic_rank:2, attempt:UNFILTERED_VECTOR\ncontent:\nsecond"
    )
    assert packed["strategy"] == "ranked_evidence_char_budget"
    assert (packed["char_budget"], packed["used_chars"]) == (4000, len(packed["packed_text"]))
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a", "b"], [])


def test_pack_separator_counts_against_the_budget() -> None:
    a, b = block("a", "x" * 10), block("b", "y" * 10, rank=2)
    exact = len(rendered(1, a)) + 2 + len(rendered(2, b))
    assert pack([a, b], exact)["packed_text"] == rendered(1, a) + "\n\n" + rendered(2, b)
    short = pack([a, b], exact - 1)
    assert short["packed_text"] == rendered(1, a) + "\n\n" + header(2, b) + "y" * 6 + "..."
    assert short["used_chars"] == exact - 1
    assert short["included_sources"] == ["a", "b"]


def test_pack_truncation_lands_exactly_on_the_budget() -> None:
    a = block("a", "0123456789" * 5)
    budget = len(header(1, a)) + 3 + 7
    packed = pack([a], budget)
    assert packed["packed_text"] == header(1, a) + "0123456" + "..."
    assert len(packed["packed_text"]) == packed["used_chars"] == budget


def test_pack_header_with_only_the_ellipsis_still_fits() -> None:
    a = block("a", "content")
    packed = pack([a], len(header(1, a)) + 3)
    assert packed["packed_text"] == header(1, a) + "..."
    assert packed["included_sources"] == ["a"]


def test_pack_header_that_does_not_fit_is_omitted() -> None:
    a, b = block("a", "x"), block("b", "y" * 50, rank=2)
    budget = len(rendered(1, a)) + 2 + len(header(2, b)) + 2  # no room for "..."
    packed = pack([a, b], budget)
    assert packed["packed_text"] == rendered(1, a)
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a"], ["b"])
    assert packed["used_chars"] == len(rendered(1, a))


def test_pack_omits_everything_after_the_first_block_that_does_not_fit() -> None:
    small, huge, tiny = block("a", "x"), block("b" * 300, "y", rank=2), block("c", "", rank=3)
    budget = len(rendered(1, small)) + 2 + len(rendered(3, tiny))  # the tiny third one would fit
    packed = pack([small, huge, tiny], budget)
    assert packed["packed_text"] == rendered(1, small)
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a"], ["b" * 300, "c"])


def test_pack_after_a_truncated_block_the_rest_is_omitted() -> None:
    a, b, c = block("a", "x" * 100), block("b", "y"), block("c", "z")
    packed = pack([a, b, c], len(header(1, a)) + 50)
    assert packed["packed_text"] == header(1, a) + "x" * 47 + "..."
    assert (packed["included_sources"], packed["omitted_sources"]) == (["a"], ["b", "c"])


def test_pack_counts_code_points_beyond_the_bmp() -> None:
    a = block("a", "😀" * 10)
    whole = pack([a], len(header(1, a)) + 10)
    assert whole["packed_text"] == rendered(1, a)
    assert whole["used_chars"] == len(header(1, a)) + 10
    cut = pack([a], len(header(1, a)) + 5)
    assert cut["packed_text"] == header(1, a) + "😀😀..."
    assert cut["used_chars"] == len(header(1, a)) + 5


def test_pack_zero_budget_and_no_blocks() -> None:
    packed = pack([block("a"), block("b", rank=2)], 0)
    assert (packed["packed_text"], packed["used_chars"]) == ("", 0)
    assert (packed["included_sources"], packed["omitted_sources"]) == ([], ["a", "b"])
    empty = pack([], 4000)
    assert (empty["packed_text"], empty["included_sources"], empty["omitted_sources"]) == ("", [], [])


def test_char_budget_setting_reaches_the_lookup() -> None:
    lookup = accepted(seed_record(), rules(postprocess=PostprocessSettings(char_budget=300)))
    pack_ = lookup["context_pack"]
    assert pack_ == pack(lookup["evidence_blocks"], 300)
    assert pack_["char_budget"] == 300
    assert 0 < pack_["used_chars"] <= 300
    assert len(pack_["included_sources"]) + len(pack_["omitted_sources"]) == 5
    assert pack_["omitted_sources"]
    assert accepted(seed_record())["context_pack"]["omitted_sources"] == []
