"""Guard check D: the review of claims against the evidence they cite (SPEC 4.2).

Every **specific** a reviewed text states — a number, a technical identifier, a quotation — must occur
in the evidence that text cites; plain words are never judged (no synonyms, no model). The guard runs
this after B and C, on the texts whose citations all passed, in the same verdict
(:meth:`streams.stations.guard.EvidenceGuard.judge`); the run page asks :func:`claims` which specific
was found in which evidence item.

Cost: CPython's NFKC takes ~75 µs per KB of Chinese text with wide punctuation, more than the rest
of the guard. So a specific is first looked for in the evidence as stored, where finding it proves
it is in the normal form too (:func:`_raw_holds`); only what is not found so — an unsupported
specific, mostly — puts the evidence in normal form, each cited projection (and narrowing) once
per draft.

Drafts of a run cite the same tool calls again and again (attempt 2 re-cites attempt 1's, and repeats
the texts that passed), so three answers are kept across drafts, bounded: a short text's specifics
(:func:`specifics`); a cited projection's strings with what was found in them, keyed by the entry's
``projection_sha256`` (which C checked against the stored bytes) and the narrowing; and a short text's
unsupported specifics, keyed by the text, the names and those digests and narrowings
(:func:`review`). All are pure functions of their keys, so no verdict changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from operator import itemgetter
from typing import Any, Literal, NamedTuple

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
_OTHER_SPACE = re.compile(_NOT_SPACE_CLASS)
_SEPARATORS = re.compile("[\x1c-\x1f]")
_ASCII_LOWER = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ", b"abcdefghijklmnopqrstuvwxyz")
# The compatibility characters of everyday Chinese text, each with its decomposition. Putting a
# character's NFKD in its place never changes the NFKC of a text (NFKC is the composition of the
# NFKD), and a text with only these is then often NFKC already: a quick check instead of CPython's
# full normalization, which costs about 75 µs per KB of such text.
_WIDE = tuple(
    (c, unicodedata.normalize("NFKD", c)) for c in "，：；（）！？％～＋＝－．／［］｛｝＜＞＂＇…\u3000"
)


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, faster for text that is NFKC but for wide punctuation."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    for wide, narrow in _WIDE:
        if wide in text:
            text = text.replace(wide, narrow)
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def _lowered(text: str) -> str:
    """``text`` with ASCII A-Z lowered and nothing else."""
    if text.isascii():
        return text.lower()
    # A-Z are single bytes in UTF-8 and no other character's bytes are ASCII: exactly they change
    return text.encode("utf-8", "surrogatepass").translate(_ASCII_LOWER).decode("utf-8", "surrogatepass")


def normal_form(text: str) -> str:
    """N(s): NFKC, ASCII A-Z lowered (nothing else), White_Space runs as one space, stripped."""
    return _spaced(_lowered(nfkc(text)))


def _spaced(text: str) -> str:
    """``text`` with every run of White_Space as one space, stripped."""
    if "  " in text or _OTHER_SPACE.search(text) is not None:
        if _SEPARATORS.search(text) is None:  # str.split also splits at U+001C-U+001F, not White_Space
            return " ".join(text.split())
        text = _SPACES.sub(" ", text)
    return text.strip(" ")


# -- specifics -------------------------------------------------------------------------------------


class Specific(NamedTuple):
    """One number, identifier or quotation a text states."""

    kind: SpecificKind
    value: str


_CLOSERS = {"“": "”", "「": "」", "『": "』", '"': '"', "`": "`"}
_OPENER = re.compile("[" + re.escape("".join(_CLOSERS)) + "]")
_WORD = re.compile(r"[A-Za-z0-9_./:-]+")
_WORD_EDGES = "./:-"
_NUMBER = re.compile(r"[0-9]+(?:[./:-][0-9]+)*")
_WITH_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)[A-Za-z]+")
_IDENTIFIER = re.compile(r"[0-9_]|[A-Za-z0-9]/[A-Za-z]|[A-Za-z]/[A-Za-z0-9]|[A-Za-z0-9]{2}\.[A-Za-z0-9]{2}")


def _quotations(text: str) -> tuple[list[Specific], list[str]]:
    """The quotations of ``text`` (already NFKC), in order, and the text between them: one gap more than
    there are quotations. An enclosed span (delimiters included) is in no gap; one whose value is too
    short to be a quotation leaves a space between its neighbours."""
    found: list[Specific] = []
    gaps: list[str] = []
    pending = ""
    kept = 0
    position = 0
    closed_out: set[str] = set()  # openers with no closer after some point have none after a later one
    while (opener := _OPENER.search(text, position)) is not None:
        start = opener.start()
        mark = text[start]
        end = -1 if mark in closed_out else text.find(_CLOSERS[mark], start + 1)
        if end < 0:  # an opener with no closer is an ordinary character
            closed_out.add(mark)
            position = start + 1
            continue
        value = normal_form(text[start + 1 : end])
        if len(value) >= 2:
            found.append(Specific("quote", value))
            gaps.append(pending + text[kept:start])
            pending = ""
        else:  # too short to be a quotation: its span is still no word's, a space between its neighbours
            pending += text[kept:start] + " "
        kept = position = end + 1
    gaps.append(pending + text[kept:])
    return found, gaps


def _word_specific(run: str) -> Specific | None:
    """What one maximal run of word characters states, if anything (:func:`_short_word_specific` for
    a short run, remembered)."""
    word = run.strip(_WORD_EDGES)
    if not word:
        return None
    if _NUMBER.fullmatch(word):
        return Specific("number", word) if len(word) > 1 else None
    with_unit = _WITH_UNIT.fullmatch(word)
    if with_unit:
        value = with_unit.group(1)
        return Specific("number", value) if len(value) > 1 else None
    if _IDENTIFIER.search(word):
        value = word.lower()
        return None if value in COMMON_TERMS else Specific("identifier", value)
    return None


_SHORT_RUN = 64
"""Word runs up to this long are remembered (:func:`_short_word_specific`); a longer one is rare."""
_short_word_specific = lru_cache(maxsize=8192)(_word_specific)


_CACHED_TEXT_CHARS = 2048
"""Texts up to this long keep their specifics across drafts (:func:`_said`)."""
_REMEMBERED_SPECIFICS = 64
"""Texts stating more specifics than this are not remembered (a list of hundreds, hostile or not, is
read afresh): an entry of :data:`_SAID` or :data:`_ANSWERED` stays ~20 KB at most."""
_SAID_KEPT = 2048
"""Texts whose specifics are kept (:data:`_SAID`), the oldest dropped first: some 40 MB at most."""
_SAID: dict[str, tuple[Specific, ...]] = {}


def specifics(text: str) -> list[Specific]:
    """The specifics of ``text`` (SPEC 4.2): each (kind, value) once, at its first offset, in offset order."""
    return list(_said(text)) if text else []


def _said(text: str) -> tuple[Specific, ...]:
    """:func:`specifics` as a tuple, remembered for a short text with few of them."""
    if len(text) > _CACHED_TEXT_CHARS:
        return tuple(_specifics(text))
    said = _SAID.get(text)
    if said is None:
        said = tuple(_specifics(text))
        if len(said) <= _REMEMBERED_SPECIFICS:
            _remember(_SAID, _SAID_KEPT, text, said)
    return said


def _specifics(text: str) -> list[Specific]:
    text = nfkc(text)
    if _OPENER.search(text) is None:
        said = _words(text)
    else:  # the words before each quotation, the quotation, ..., the words after the last: offset order
        quotes, gaps = _quotations(text)
        said = _words(gaps[0])
        for quote, gap in zip(quotes, gaps[1:], strict=True):
            said.append(quote)
            said += _words(gap)
    return list(dict.fromkeys(said))


def _words(text: str) -> list[Specific]:
    """The specifics of the word runs of ``text`` (no quotation in it), in order. A run of letters alone
    is never one (no digit, ``_``, ``/`` or ``.``), so it is not asked."""
    return [
        s
        for run in _WORD.findall(text)
        if not run.isalpha()
        and (s := _short_word_specific(run) if len(run) <= _SHORT_RUN else _word_specific(run)) is not None
    ]


# -- evidence --------------------------------------------------------------------------------------

_ITEM_FIELDS = ("document_id", "source", "title", "breadcrumb", "excerpt")
_ITEM_VALUES = itemgetter(*_ITEM_FIELDS)


@lru_cache(maxsize=8192)
def _splits(character: str) -> bool:
    """Whether NFKC may be taken on either side of ``character`` apart: it starts a text as it starts
    a normalization segment (its decomposition begins with a starter that composes with nothing before
    it: not a mark, not a conjoining Hangul jamo)."""
    first = unicodedata.normalize("NFKD", character)[:1] or character
    return all(
        unicodedata.combining(c) == 0 and unicodedata.category(c)[0] != "M" and not "\u1100" <= c <= "\u11ff"
        for c in (character, first)
    )


@lru_cache(maxsize=8192)
def _digitless(character: str) -> bool:
    """Whether ``character`` puts no ASCII digit into the normal form (so a number beside it stays apart)."""
    return not any("0" <= c <= "9" for c in unicodedata.normalize("NFKC", character))


def _raw_holds(specific: Specific, raw: str) -> bool:
    """A sufficient test on the text before normal form: True only if N(raw) supports ``specific``.

    An ASCII word found as is, with a character after it that NFKC cannot join to it, is in N(raw)
    too (lowering keeps a lowercase word; NFKC keeps ASCII and splits before it); a number needs, in
    addition, neighbours whose normal form holds no digit. A quotation needs its value to be NFKC
    already and to start and end where NFKC splits. False means "not known": ask N(raw).
    """
    value = specific.value
    at = raw.find(value)
    while at >= 0:
        end = at + len(value)
        after = raw[end] if end < len(raw) else ""
        if specific.kind == "number":
            before = raw[at - 1] if at else ""
            if (not before or (not "0" <= before <= "9" and _digitless(before))) and (
                not after or (not "0" <= after <= "9" and _digitless(after))
            ):
                return True
        elif not after or after.isascii() or _splits(after):
            if specific.kind == "identifier" or (
                _splits(value[0]) and unicodedata.is_normalized("NFKC", value)
            ):
                return True
        at = raw.find(value, at + 1)
    return False


_SHORT_QUOTE = 256
"""Quotations up to this long are searched with a remembered pattern (:func:`_quote_pattern`); a longer
one in E's spaced form (no pattern of its size is kept, here or in ``re``'s own cache)."""


@lru_cache(maxsize=1024)
def _quote_pattern(value: str) -> re.Pattern[str]:
    """A quotation's value with each space matching a run of White_Space: it is in N(text) exactly when
    this is found in ``text`` lowered (the value starts and ends with no space, so a run it matches
    is a whole run)."""
    return re.compile(f"{_SPACE_CLASS}+".join(re.escape(word) for word in value.split(" ")))


def _number_in(value: str, text: str) -> bool:
    """Whether ``value`` occurs in ``text`` with no ASCII digit directly before or after it."""
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if (not at or not "0" <= text[at - 1] <= "9") and (end == len(text) or not "0" <= text[end] <= "9"):
            return True
        at = text.find(value, at + 1)
    return False


def holds_in(specific: Specific, text: str) -> bool:
    """Whether ``text`` (in normal form) supports ``specific``: a number with no digit directly beside it,
    an identifier or a quotation as a substring."""
    if specific.kind == "number":
        return _number_in(specific.value, text)
    return specific.value in text


@dataclass(slots=True, eq=False)
class _Source:
    """The evidence of one cited projection (with one narrowing), or the names a text may use.

    ``raw`` is its strings as stored, joined with newlines: its tool_call_id and query, then per item
    its document_id, source, title, breadcrumb and excerpt (nulls skipped). N(raw) is made only when
    a specific is not found in ``raw`` as it is (an unsupported one, mostly), and only as far as the
    specific needs: a number is judged on NFKC(raw) (lowering and spacing change no digit and no
    digit's neighbour into a digit), an identifier on that lowered (it holds no space), and a
    quotation on that with each of its spaces matching a run of White_Space (:func:`_quote_pattern`),
    which is what being in the spaced text means.
    """

    raw: str
    tool_call_id: str | None = None
    items: tuple[Mapping[str, Any], ...] = ()
    _nfkc: str | None = None
    _lowered: str | None = None
    _items_normal: tuple[str, ...] | None = None
    _raw_answers: dict[Specific, bool] = field(default_factory=dict)
    _answers: dict[Specific, bool] = field(default_factory=dict)

    def holds(self, specific: Specific) -> bool:
        """Whether N(raw) supports a number or an identifier (remembered)."""
        answer = self._answers.get(specific)
        if answer is None:
            if specific.kind == "number":
                answer = _number_in(specific.value, self.nfkc())
            else:
                answer = specific.value in self.lowered()
            if len(self._answers) < _ANSWERS_KEPT:
                self._answers[specific] = answer
        return answer

    def nfkc(self) -> str:
        if self._nfkc is None:
            self._nfkc = nfkc(self.raw)
        return self._nfkc

    def lowered(self) -> str:
        if self._lowered is None:
            self._lowered = _lowered(self.nfkc())
        return self._lowered

    def items_normal(self) -> tuple[str, ...]:
        """N of each item's strings, in item order (for the run page)."""
        if self._items_normal is None:
            self._items_normal = tuple(normal_form("\n".join(_item_strings(item))) for item in self.items)
        return self._items_normal


def _item_strings(item: Mapping[str, Any]) -> list[str]:
    return [v for name in _ITEM_FIELDS if isinstance(v := item.get(name), str)]


_Key = tuple[str, frozenset[str] | None]
"""A cited projection and the document_ids it is narrowed to (None: all its items)."""

_ANSWERS_KEPT = 512
"""Answers a source remembers (a hostile draft's thousands of specifics are not all kept)."""
_SOURCES_KEPT = 512
"""Sources kept across drafts (:data:`_SHARED`), the oldest dropped first. One holds its projection's
strings (~14 KB for 8 runbook excerpts, measured with tracemalloc) and, if a specific was not found as
stored, their NFKC and lowered forms too: some 7-20 MB at most."""
_SHARED: dict[tuple[str, _Key], _Source] = {}
"""Sources by (projection_sha256, key): the same stored bytes and narrowing give the same strings."""


def _remember(kept: dict[Any, Any], most: int, key: Any, value: Any) -> None:
    """``kept[key] = value``, the oldest entries dropped first to keep at most ``most``."""
    while len(kept) >= most:
        try:
            del kept[next(iter(kept))]
        except (KeyError, RuntimeError, StopIteration):  # another thread changed it meanwhile
            break
    kept[key] = value


@dataclass(slots=True)
class _Projections:
    """The cited projections of one draft, each joined once per narrowing (and normalized once, if at all);
    with ``digests`` (each cited tool call's ``projection_sha256``), joined once across drafts."""

    projections: Mapping[str, Mapping[str, Any]]
    digests: Mapping[str, str] | None = None
    _sources: dict[_Key, _Source] = field(default_factory=dict)

    def source(self, key: _Key) -> _Source:
        """A projection's tool_call_id and query, then its items (only those in the narrowing, if any)."""
        found = self._sources.get(key)
        if found is None:
            digest = self.digests.get(key[0]) if self.digests is not None else None
            if digest is not None:
                found = _SHARED.get((digest, key))
                if found is not None:
                    self._sources[key] = found
                    return found
            tool_call_id, documents = key
            projection = self.projections.get(tool_call_id) or {}
            query = projection.get("query")
            head = f"{tool_call_id}\n{query}" if isinstance(query, str) else tool_call_id
            items: tuple[Mapping[str, Any], ...] = ()
            raw = head
            if projection.get("evidence_status") == EvidenceStatus.EVIDENCE_FOUND:
                items = tuple(
                    item
                    for item in projection.get("evidence") or []
                    if documents is None or item.get("document_id") in documents
                )
                try:  # a re-read item has the five fields, each a string or null ("" joins as nothing)
                    raw = "\n".join(filter(None, chain((head,), *map(_ITEM_VALUES, items))))
                except (KeyError, TypeError):  # another shape (the run page's view of one, say)
                    raw = "\n".join([head, *(v for item in items for v in _item_strings(item))])
            found = self._sources[key] = _Source(raw, tool_call_id, items)
            if digest is not None:
                _remember(_SHARED, _SOURCES_KEPT, (digest, key), found)
        return found


@dataclass(slots=True)
class Evidence:
    """What one reviewed text may state: the projections it cites (made into sources only when a
    specific is asked about) and the names; E is N of their strings joined."""

    keys: tuple[_Key, ...]
    projections: _Projections
    named: _Source
    _sources: tuple[_Source, ...] | None = None
    _lowered: str | None = None
    _misses: int = 0
    _index: _Index | None = None

    def sources(self) -> tuple[_Source, ...]:
        if self._sources is None:
            source = self.projections.source
            self._sources = (*[source(key) for key in self.keys], self.named)
        return self._sources

    def lowered(self) -> str:
        """E before its White_Space runs are made single spaces (NFKC, A-Z lowered)."""
        if self._lowered is None:
            self._lowered = "\n".join([source.lowered() for source in self.sources()])
        return self._lowered

    def supports(self, specific: Specific) -> bool:
        """SPEC 4.2's support test against E."""
        if self._index is not None:
            return self._index.supports(specific)
        sources = self._sources or self.sources()
        # as stored first (each source remembers its answers: most specifics are in the first source
        # cited, and a projection cited by many drafts is asked the same things again); inlined, as
        # this runs for every specific of every reviewed text
        for source in sources:
            answers = source._raw_answers
            answer = answers.get(specific)
            if answer is None:
                answer = _raw_holds(specific, source.raw)
                if len(answers) < _ANSWERS_KEPT:
                    answers[specific] = answer
            if answer:
                return True
        self._misses += 1
        if self._misses > _INDEX_AFTER:  # many a specific not found as stored: index E once instead
            self._index = _Index.of(sources, self.lowered())
            return self._index.supports(specific)
        if specific.kind == "quote":  # a quotation may run across two sources; the others cannot
            if len(specific.value) > _SHORT_QUOTE:
                return specific.value in _spaced(self.lowered())
            return _quote_pattern(specific.value).search(self.lowered()) is not None
        return any(source.holds(specific) for source in sources)

    def found_in(self, specific: Specific) -> tuple[str | None, str | None]:
        """``(tool_call_id, document_id)`` of the first evidence item whose normal form alone supports
        ``specific`` (None, None when there is none: not supported, or only by a query or the names)."""
        for source in self.sources():
            for item, text in zip(source.items, source.items_normal(), strict=True):
                if holds_in(specific, text):
                    document_id = item.get("document_id")
                    return source.tool_call_id, document_id if isinstance(document_id, str) else None
        return None, None


_INDEX_AFTER = 16
"""Specifics of one text not found in the evidence as stored after which E is indexed (:class:`_Index`)."""
_CHAIN = re.compile(r"[0-9]+(?:[./:-][0-9]+)*")
_CHAIN_SEPARATOR = re.compile(r"[./:-]")
_INDEXED_RUNS = 12
"""Digit chains of at most this many runs are indexed whole; a longer one (rare) is searched."""


@dataclass(frozen=True, slots=True)
class _Index:
    """E indexed, for a text with many specifics that are not in the evidence as stored (an unsupported
    list of numbers or keys, mostly, or a hostile draft): a set lookup or one search of a short text
    each, instead of a search of every source. The answers are the same as :meth:`Evidence.supports`'s.

    A number sits in E with no digit beside it exactly when it runs, in one maximal chain of digit runs
    joined by single ``./:-``, from the start of one run to the end of another; an identifier is a
    substring of E exactly when it is one of a maximal run of word characters (it has only those).
    """

    numbers: frozenset[str]
    long_chains: tuple[str, ...]
    words: frozenset[str]
    words_text: str
    spaced: str

    @classmethod
    def of(cls, sources: Sequence[_Source], lowered: str) -> _Index:
        numbers: set[str] = set()
        long_chains: list[str] = []
        for chain_text in {c for source in sources for c in _CHAIN.findall(source.nfkc())}:
            runs = _CHAIN_SEPARATOR.split(chain_text)
            if len(runs) > _INDEXED_RUNS:
                long_chains.append(chain_text)
                continue
            starts = [0]
            for run in runs[:-1]:
                starts.append(starts[-1] + len(run) + 1)
            ends = [start + len(run) for start, run in zip(starts, runs, strict=True)]
            numbers.update(chain_text[s:e] for i, s in enumerate(starts) for e in ends[i:])
        words = frozenset(_WORD.findall(lowered))
        return cls(frozenset(numbers), tuple(long_chains), words, "\n".join(words), _spaced(lowered))

    def supports(self, specific: Specific) -> bool:
        value = specific.value
        if specific.kind == "number":
            return value in self.numbers or any(_number_in(value, c) for c in self.long_chains)
        if specific.kind == "identifier":
            return value in self.words or value in self.words_text
        return value in self.spaced


class ReviewedText(NamedTuple):
    """One text under review: where it is, what it says, and the evidence it is judged on."""

    path: str
    content: str
    evidence: Evidence


def reviewed_texts(
    draft: DiagnosisDraft | Mapping[str, Any],
    reviewed: Sequence[bool],
    projections: Mapping[str, Mapping[str, Any]],
    digests: Mapping[str, str] | None = None,
) -> Iterator[ReviewedText]:
    """The texts D reviews, in order (analysis items, conclusion, actions), each with its evidence.

    ``reviewed[i]`` says whether analysis item ``i`` cites a tool call and none of its citations or
    ``document_ids`` got a B or C violation; ``projections`` holds the re-read projection of every
    citation that passed C, by tool call id. Every text may also name the draft's ``run_id`` and the
    ``id`` of any analysis or action item. ``digests``, each projection's ``projection_sha256`` as C
    checked it, lets drafts share the work on a projection they cite alike.
    """
    names, texts = _texts(draft, reviewed)
    named = _Source(names)
    cache = _Projections(projections, digests)
    for path, content, keys in texts:
        yield ReviewedText(path, content, Evidence(keys, cache, named))


def _texts(
    draft: DiagnosisDraft | Mapping[str, Any], reviewed: Sequence[bool]
) -> tuple[str, list[tuple[str, str, tuple[_Key, ...]]]]:
    """The names a text may use (joined), and each reviewed text's path, content and the cited
    projections (with their narrowings) it is judged on: :func:`reviewed_texts` before any evidence."""
    analysis = draft.get("analysis") or []
    actions = draft.get("action_plan") or []
    names = [draft.get("run_id"), *(i.get("id") for i in analysis), *(a.get("id") for a in actions)]
    texts: list[tuple[str, str, tuple[_Key, ...]]] = []
    cites: dict[str, tuple[_Key, ...]] = {}  # of each reviewed analysis id (its first item)
    for index, item in enumerate(analysis):
        if index >= len(reviewed) or not reviewed[index]:
            cites.setdefault(item.get("id"), ())
            continue
        documents = frozenset(item.get("document_ids") or []) or None
        keys = tuple((tcid, documents) for tcid in dict.fromkeys(item.get("tool_call_ids") or []))
        cites.setdefault(item.get("id"), keys)
        texts.append((f"analysis[{index}].content", item.get("content") or "", keys))

    def built_on(refs: Sequence[str] | None) -> tuple[_Key, ...] | None:
        if not refs or not all(cites.get(ref) for ref in refs):
            return None
        if len(refs) == 1:
            return cites[refs[0]]
        return tuple(dict.fromkeys(key for ref in dict.fromkeys(refs) for key in cites[ref]))

    conclusion = draft.get("conclusion")
    if conclusion is not None and (on := built_on(conclusion.get("based_on_analysis_ids"))) is not None:
        texts.append(("conclusion.content", conclusion.get("content") or "", on))
    for index, action in enumerate(actions):
        if (on := built_on(action.get("based_on_analysis_ids"))) is not None:
            texts.append((f"action_plan[{index}].content", action.get("content") or "", on))
    return "\n".join(n for n in names if isinstance(n, str)), texts


_MAX_SHOWN = 80


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else f"{text[: _MAX_SHOWN - 1]}…"


def review(
    draft: DiagnosisDraft | Mapping[str, Any],
    reviewed: Sequence[bool],
    projections: Mapping[str, Mapping[str, Any]],
    digests: Mapping[str, str] | None = None,
) -> list[Violation]:
    """D's violations (codes 21-23): per reviewed text in order, each unsupported specific in order."""
    out: list[Violation] = []
    names, texts = _texts(draft, reviewed)
    cache: _Projections | None = None
    named: _Source | None = None
    for path, content, keys in texts:
        key = _signature(content, names, keys, digests)
        found = _ANSWERED.get(key) if key is not None else None
        if found is None:  # the evidence is made only for a text not remembered
            if cache is None or named is None:
                cache, named = _Projections(projections, digests), _Source(names)
            found = _unsupported(content, Evidence(keys, cache, named))
            if key is not None and len(found) <= _REMEMBERED_SPECIFICS:
                _remember(_ANSWERED, _TEXTS_KEPT, key, found)
        for specific in found:
            message = f"{specific.kind} {_shown(specific.value)} is in none of the cited evidence"
            out.append({"code": CODES[specific.kind], "path": path, "message": message})
    return out


_TEXTS_KEPT = 2048
"""Texts whose answer is kept across drafts (:data:`_ANSWERED`), the oldest dropped first. An entry is
a text of at most 2,048 characters, its signature (bounded below) and at most 64 specifics: ~1 KB for
an agent's text on a few projections, ~20 KB at most, so some 2-40 MB."""
_SIGNED_KEYS = 8
"""Most cited projections (with their narrowings) a remembered text is judged on."""
_SIGNED_NAMES = 1024
"""Most characters of names (the run_id and the item ids) a remembered text may use."""
_SIGNED_DOCUMENTS = 32
"""Most document_ids, over all its narrowings, a remembered text is judged on."""
_ANSWERED: dict[tuple[str, str, tuple[tuple[str, _Key], ...]], tuple[Specific, ...]] = {}
"""A short text's unsupported specifics by (text, the names, each cited source's digest and key): the
same text judged on the same stored bytes, narrowings and names has the same answer."""


def _signature(
    content: str, names: str, keys: tuple[_Key, ...], digests: Mapping[str, str] | None
) -> tuple[str, str, tuple[tuple[str, _Key], ...]] | None:
    """What the answer for a text depends on: the text, the names, and each cited projection's stored
    bytes (its digest) and key; None when it is not remembered (a long text, a projection with no
    known digest, or more projections, document_ids or names than a remembered text may have)."""
    if (
        digests is None
        or len(content) > _CACHED_TEXT_CHARS
        or len(keys) > _SIGNED_KEYS
        or len(names) > _SIGNED_NAMES
    ):
        return None
    cited = []
    documents = 0
    for key in keys:
        digest = digests.get(key[0])
        if digest is None:
            return None
        documents += len(key[1] or ())
        cited.append((digest, key))
    return (content, names, tuple(cited)) if documents <= _SIGNED_DOCUMENTS else None


def _unsupported(content: str, evidence: Evidence) -> tuple[Specific, ...]:
    """The specifics of ``content`` that ``evidence`` does not support, in order."""
    supports = evidence.supports
    return tuple(specific for specific in _said(content) if not supports(specific))


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
