"""Guard check D: the review of claims against the evidence they cite (SPEC 4.2).

Every **specific** a reviewed text states — a number, a technical identifier, a quotation — must occur
in the evidence that text cites; plain words are never judged (no synonyms, no model). The guard runs
this after B and C, on the texts whose citations all passed, in the same verdict
(:meth:`streams.stations.guard.EvidenceGuard.judge`); the run page asks :func:`claims` which specific
was found in which evidence item.

Cost: a cited projection is put in normal form once per draft (and once per ``document_ids``
narrowing), and indexed once — the distinct words of its text for identifiers, the aligned digit
chains for numbers — so a text's specifics are set lookups, and only an identifier that is not a whole
evidence word, or a quotation, searches the text itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from models.draft import DiagnosisDraft
from models.verdict import Violation
from models.vocab import EvidenceStatus, ViolationCode
from streams.stations.blank import WHITE_SPACE

SpecificKind = Literal["number", "identifier", "quote"]

CODES: dict[SpecificKind, ViolationCode] = {
    "number": ViolationCode.CLAIM_NUMBER_UNSUPPORTED,
    "identifier": ViolationCode.CLAIM_IDENTIFIER_UNSUPPORTED,
    "quote": ViolationCode.CLAIM_QUOTE_UNSUPPORTED,
}

COMMON_TERMS = frozenset(
    "p50 p75 p90 p95 p99 p999 http/1.0 http/1.1 http/2 http/3 h2 h3 ipv4 ipv6 l4 l7 utf-8 utf8 utf-16 "
    "utf16 sha1 sha-1 sha256 sha-256 sha512 md5 base64 x86 x64 x86_64 amd64 arm64 aarch64 k8s k3s s3 ec2 "
    "e2e i18n l10n 2fa mfa oauth2 tls1.2 tls1.3 2xx 3xx 4xx 5xx".split()
)
"""Identifiers so common in runbooks that naming one says nothing the evidence must back (SPEC 4.2)."""

# -- normal form -----------------------------------------------------------------------------------

_SPACE_CLASS = "[" + re.escape(WHITE_SPACE) + "]"
_NOT_SPACE_CLASS = "[" + re.escape(WHITE_SPACE.replace(" ", "")) + "]"
# Only the runs that change: two or more White_Space characters, or one that is not U+0020.
_SPACES = re.compile(f"{_SPACE_CLASS}{{2,}}|{_NOT_SPACE_CLASS}")
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")


def normal_form(text: str) -> str:
    """N(s): NFKC, ASCII A-Z lowered (nothing else), White_Space runs as one space, stripped."""
    text = unicodedata.normalize("NFKC", text)
    # A-Z are single bytes in UTF-8 and no other character's bytes are ASCII, so this lowers exactly them.
    text = text.encode("utf-8", "surrogatepass").translate(_ASCII_LOWER).decode("utf-8", "surrogatepass")
    return _SPACES.sub(" ", text).strip(" ")


# -- specifics -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Specific:
    """One number, identifier or quotation a text states, at its offset in NFKC(text)."""

    kind: SpecificKind
    value: str
    offset: int


_CLOSERS = {"“": "”", "「": "」", "『": "』", '"': '"', "`": "`"}
_OPENER = re.compile("[" + re.escape("".join(_CLOSERS)) + "]")
_WORD = re.compile(r"[A-Za-z0-9_./:-]+")
_WORD_EDGES = "./:-"
_NUMBER = re.compile(r"[0-9]+(?:[./:-][0-9]+)*")
_WITH_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)[A-Za-z]+")
_IDENTIFIER = re.compile(r"[0-9_]|[A-Za-z0-9]/[A-Za-z]|[A-Za-z]/[A-Za-z0-9]|[A-Za-z0-9]{2}\.[A-Za-z0-9]{2}")


def _quotations(text: str) -> tuple[list[Specific], str]:
    """The quotations of ``text`` (already NFKC) and the text with every enclosed span blanked."""
    found: list[Specific] = []
    parts: list[str] = []
    kept = 0
    position = 0
    closed_out: set[str] = set()  # openers with no closer left after some point: none after any later one
    while (opener := _OPENER.search(text, position)) is not None:
        start = opener.start()
        mark = text[start]
        end = -1 if mark in closed_out else text.find(_CLOSERS[mark], start + 1)
        if end < 0:
            closed_out.add(mark)
            position = start + 1
            continue
        value = normal_form(text[start + 1 : end])
        if len(value) >= 2:
            found.append(Specific("quote", value, start))
        parts.append(text[kept:start])
        parts.append(" " * (end + 1 - start))
        kept = position = end + 1
    parts.append(text[kept:])
    return found, "".join(parts)


@lru_cache(maxsize=4096)
def _word_specific(word: str) -> tuple[SpecificKind, str] | None:
    """What one word (already stripped of ``./:-`` at its ends) states, if anything."""
    if _NUMBER.fullmatch(word):
        return ("number", word) if len(word) > 1 else None
    with_unit = _WITH_UNIT.fullmatch(word)
    if with_unit:
        value = with_unit.group(1)
        return ("number", value) if len(value) > 1 else None
    if _IDENTIFIER.search(word):
        value = word.lower()
        return None if value in COMMON_TERMS else ("identifier", value)
    return None


def specifics(text: str) -> list[Specific]:
    """The specifics of ``text`` (SPEC 4.2): each (kind, value) once, at its first offset, in offset order."""
    if not text:
        return []
    found, rest = _quotations(unicodedata.normalize("NFKC", text))
    for match in _WORD.finditer(rest):
        word = match.group().strip(_WORD_EDGES)
        said = _word_specific(word) if word else None
        if said is not None:
            found.append(Specific(said[0], said[1], match.start()))
    found.sort(key=lambda s: s.offset)
    seen: set[tuple[str, str]] = set()
    out = []
    for specific in found:
        key = (specific.kind, specific.value)
        if key not in seen:
            seen.add(key)
            out.append(specific)
    return out


def holds_in(specific: Specific, text: str) -> bool:
    """Whether ``text`` (in normal form) supports ``specific``: a number with no digit directly beside it,
    an identifier or a quotation as a substring."""
    if specific.kind != "number":
        return specific.value in text
    value = specific.value
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if (at == 0 or not "0" <= text[at - 1] <= "9") and (end == len(text) or not "0" <= text[end] <= "9"):
            return True
        at = text.find(value, at + 1)
    return False


# -- evidence --------------------------------------------------------------------------------------

_CHAIN = re.compile(r"[0-9]+(?:[./:-][0-9]+)*")
_CHAIN_SEPARATOR = re.compile(r"[./:-]")
_INDEXED_RUNS = 12
"""Digit chains of at most this many runs are indexed whole; longer ones (rare) are searched."""
_ITEM_FIELDS = ("document_id", "source", "title", "breadcrumb", "excerpt")


@dataclass(slots=True, eq=False)
class _Part:
    """One stretch of evidence in normal form: a projection's header, one of its items, or the names."""

    text: str
    tool_call_id: str | None = None
    document_id: str | None = None
    _numbers: tuple[frozenset[str], tuple[str, ...]] | None = None
    _words: frozenset[str] | None = None

    def numbers(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """Every number this text holds with no digit beside it (from chains of few runs), and the
        chains too long to index."""
        if self._numbers is None:
            indexed: set[str] = set()
            long: list[str] = []
            for chain in set(_CHAIN.findall(self.text)):
                runs = _CHAIN_SEPARATOR.split(chain)
                if len(runs) == 1:
                    indexed.add(chain)
                elif len(runs) > _INDEXED_RUNS:
                    long.append(chain)
                else:
                    # a number sits in a chain from the start of one digit run to the end of another
                    starts = [0]
                    for run in runs[:-1]:
                        starts.append(starts[-1] + len(run) + 1)
                    ends = [s + len(r) for s, r in zip(starts, runs, strict=True)]
                    indexed.update(chain[s:e] for i, s in enumerate(starts) for e in ends[i:])
            self._numbers = frozenset(indexed), tuple(long)
        return self._numbers

    def words(self) -> frozenset[str]:
        """The distinct maximal runs of word characters."""
        if self._words is None:
            self._words = frozenset(_WORD.findall(self.text))
        return self._words

    def holds(self, specific: Specific) -> bool:
        if not self.text:
            return False
        if specific.kind == "number":
            indexed, long = self.numbers()
            return specific.value in indexed or any(holds_in(specific, chain) for chain in long)
        # an identifier is most often a whole evidence word; else a substring of one (or of the text)
        return specific.value in self.words() or specific.value in self.text


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one reviewed text may state: its parts in evidence order, E being their texts joined."""

    parts: tuple[_Part, ...]

    def text(self) -> str:
        """E: the evidence in normal form (what a quotation must be a substring of)."""
        return " ".join(part.text for part in self.parts if part.text)

    def supports(self, specific: Specific) -> bool:
        """SPEC 4.2's support test against E."""
        if specific.kind == "quote":  # a quotation may run across two parts; the others cannot
            return specific.value in self.text()
        return any(part.holds(specific) for part in self.parts)

    def found_in(self, specific: Specific) -> tuple[str | None, str | None]:
        """``(tool_call_id, document_id)`` of the first evidence item that alone supports ``specific``."""
        for part in self.parts:
            if part.document_id is not None and holds_in(specific, part.text):
                return part.tool_call_id, part.document_id
        return None, None


def _joined(values: Sequence[Any]) -> str:
    return normal_form("\n".join(v for v in values if isinstance(v, str)))


@dataclass(slots=True)
class _Projections:
    """The cited projections of one draft, each put in normal form once (and each narrowing once)."""

    projections: Mapping[str, Mapping[str, Any]]
    _heads: dict[str, _Part] = field(default_factory=dict)
    _items: dict[str, list[_Part]] = field(default_factory=dict)
    _evidence: dict[tuple[str, frozenset[str] | None], tuple[_Part, ...]] = field(default_factory=dict)

    def parts(self, tool_call_id: str, documents: frozenset[str] | None) -> tuple[_Part, ...]:
        """A projection's parts: its tool_call_id and query, then its items (those in ``documents``)."""
        key = (tool_call_id, documents)
        cached = self._evidence.get(key)
        if cached is not None:
            return cached
        projection = self.projections.get(tool_call_id) or {}
        head = self._heads.get(tool_call_id)
        if head is None:
            head = self._heads[tool_call_id] = _Part(_joined([tool_call_id, projection.get("query")]))
        items = self._items.get(tool_call_id)
        if items is None:
            items = []
            if projection.get("evidence_status") == EvidenceStatus.EVIDENCE_FOUND:
                for item in projection.get("evidence") or []:
                    document_id = item.get("document_id")
                    text = _joined([item.get(name) for name in _ITEM_FIELDS])
                    items.append(
                        _Part(text, tool_call_id, document_id if isinstance(document_id, str) else "")
                    )
            self._items[tool_call_id] = items
        chosen = items if documents is None else [p for p in items if p.document_id in documents]
        parts = self._evidence[key] = (head, *chosen)
        return parts


@dataclass(frozen=True, slots=True)
class ReviewedText:
    """One text under review: where it is, what it says, and the evidence it is judged on."""

    path: str
    content: str
    evidence: Evidence


def reviewed_texts(
    draft: DiagnosisDraft | Mapping[str, Any],
    reviewed: Sequence[bool],
    projections: Mapping[str, Mapping[str, Any]],
) -> Iterator[ReviewedText]:
    """The texts D reviews, in order (analysis items, conclusion, actions), each with its evidence.

    ``reviewed[i]`` says whether analysis item ``i`` cites a tool call and none of its citations or
    ``document_ids`` got a B or C violation; ``projections`` holds the re-read projection of every
    citation that passed C, by tool call id. Every text may also name the draft's ``run_id`` and the
    ``id`` of any analysis or action item.
    """
    analysis = list(draft.get("analysis") or [])
    actions = list(draft.get("action_plan") or [])
    names = [draft.get("run_id"), *(i.get("id") for i in analysis), *(a.get("id") for a in actions)]
    named = _Part(_joined(names))
    cache = _Projections(projections)
    evidence: dict[str, tuple[_Part, ...]] = {}  # of each reviewed analysis id (its first item)
    for index, item in enumerate(analysis):
        if index >= len(reviewed) or not reviewed[index]:
            evidence.setdefault(item.get("id"), ())
            continue
        documents = frozenset(item.get("document_ids") or []) or None
        parts = tuple(
            part
            for tcid in dict.fromkeys(item.get("tool_call_ids") or [])
            for part in cache.parts(tcid, documents)
        )
        evidence.setdefault(item.get("id"), parts)
        yield ReviewedText(f"analysis[{index}].content", item.get("content") or "", Evidence((*parts, named)))

    def built_on(refs: Sequence[str] | None) -> Evidence | None:
        if not refs or not all(evidence.get(ref) for ref in refs):
            return None
        parts = dict.fromkeys(part for ref in dict.fromkeys(refs) for part in evidence[ref])
        return Evidence((*parts, named))

    conclusion = draft.get("conclusion")
    if conclusion is not None:
        on = built_on(conclusion.get("based_on_analysis_ids"))
        if on is not None:
            yield ReviewedText("conclusion.content", conclusion.get("content") or "", on)
    for index, action in enumerate(actions):
        on = built_on(action.get("based_on_analysis_ids"))
        if on is not None:
            yield ReviewedText(f"action_plan[{index}].content", action.get("content") or "", on)


_MAX_SHOWN = 80


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else f"{text[: _MAX_SHOWN - 1]}…"


def review(
    draft: DiagnosisDraft | Mapping[str, Any],
    reviewed: Sequence[bool],
    projections: Mapping[str, Mapping[str, Any]],
) -> list[Violation]:
    """D's violations (codes 21-23): per reviewed text in order, each unsupported specific in order."""
    out: list[Violation] = []
    for text in reviewed_texts(draft, reviewed, projections):
        for specific in specifics(text.content):
            if not text.evidence.supports(specific):
                message = f"{specific.kind} {_shown(specific.value)} is in none of the cited evidence"
                out.append({"code": CODES[specific.kind], "path": text.path, "message": message})
    return out


def claims(content: str | None, evidence: Evidence | None) -> list[dict[str, Any]]:
    """For the run page: each specific of ``content`` with its support and the evidence item it was found
    in (``tool_call_id``/``document_id`` None when unsupported or found only in a query or the names).
    Empty when the text is not reviewed (``evidence`` None)."""
    if evidence is None or not content:
        return []
    out = []
    for specific in specifics(content):
        supported = evidence.supports(specific)
        tool_call_id, document_id = evidence.found_in(specific) if supported else (None, None)
        out.append(
            {
                "kind": specific.kind,
                "value": specific.value,
                "supported": supported,
                "tool_call_id": tool_call_id,
                "document_id": document_id,
            }
        )
    return out
