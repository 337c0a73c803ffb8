"""Guard check D: the review of claims against the evidence they cite, rules version 2.

Every specific a reviewed text states — a number with its unit, an identifier, a quotation, a command
in a code span — must be stated by the evidence that text cites (SPEC 4.2: which texts, against what,
and the codes 21-23). What a specific is and what "stated" means are the project's own rules, written
normatively in ``docs/review-rules.md`` and versioned (:data:`RULES_VERSION`); they are measured against
people's labels (``tests/data/review-set/``, ``make bench``). Plain words are never judged: a synonym,
a paraphrase, a wrong inference or a negation is left to a model (the next gate, SemanticGuard).

- :mod:`~streams.stations.review.forms`: what a reader sees (disguises, units, number words);
- :mod:`~streams.stations.review.reading`: a text's claims (§3-§7 of the rules);
- :mod:`~streams.stations.review.index`: what a cited projection states, indexed once;
- here: which texts are reviewed (SPEC 4.2), each claim judged, the violations and the run page's view.

Drafts of a run cite the same tool calls again and again (attempt 2 re-cites attempt 1's and repeats
the texts that passed), so three answers are kept across drafts, bounded: a short text's claims, a
cited projection's index keyed by its ``projection_sha256`` (checked by C against the stored bytes)
and the narrowing, and a short text's unsupported claims keyed by the text, the names and those
digests. All are pure functions of their keys, so no verdict depends on what was remembered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from models.draft import DiagnosisDraft
from models.review import EvidenceSource, Specific
from models.verdict import Violation
from models.vocab import EvidenceStatus, ViolationCode
from streams.stations.review.forms import displayed, same_unit, shown
from streams.stations.review.index import _PLACEHOLDER, Index, _decimal, number_holds
from streams.stations.review.reading import (
    _EDGES,
    _TOKEN,
    COMMON_TERMS,
    COUNT,
    MOST_CLAIMS,
    Atom,
    Claim,
    Reading,
    SpecificKind,
    read,
    word_readings,
)

RULES_VERSION = "2"
"""The version of the review's rules (docs/review-rules.md). It is in the guard's audit figures, its
metrics and ``evidence-chain --version``; a change to what any text is judged to state is a new version."""

CODES: dict[SpecificKind, ViolationCode] = {
    "number": ViolationCode.CLAIM_NUMBER_UNSUPPORTED,
    "identifier": ViolationCode.CLAIM_IDENTIFIER_UNSUPPORTED,
    "quote": ViolationCode.CLAIM_QUOTE_UNSUPPORTED,
}

__all__ = [
    "CODES",
    "EvidenceSource",
    "Specific",
    "COMMON_TERMS",
    "RULES_VERSION",
    "TextEvidence",
    "Finding",
    "Hint",
    "ReviewedText",
    "claims",
    "prepare",
    "review",
    "reviewed_texts",
    "shown",
]


class Hint(NamedTuple):
    """What the cited evidence says instead of an unstated claim: the values it gives the same key
    (``values``), or, with no values, the name the claim is a near miss of (``name``)."""

    name: str
    values: tuple[str, ...] = ()


class Finding(NamedTuple):
    """One claim a text states that its evidence does not: as the draft wrote it, and what the evidence
    says instead where it says something."""

    kind: SpecificKind
    surface: str
    hint: Hint | None = None
    too_many: bool = False
    """The claim after the most a text may state (§8): not judged, the text is refused at it."""


# -- evidence --------------------------------------------------------------------------------------

_ITEM_FIELDS = ("document_id", "source", "title", "breadcrumb", "excerpt")

_Key = tuple[str, frozenset[str] | None]
"""A cited projection and the document_ids it is narrowed to (None: all its items)."""


def _strings(tool_call_id: str, projection: EvidenceSource, documents: frozenset[str] | None) -> list[str]:
    """A cited projection's strings: its tool_call_id and query, then per item (only those in the narrowing,
    if any) its document_id, source, title, breadcrumb and excerpt, nulls skipped."""
    out = [tool_call_id]
    query = projection.get("query")
    if isinstance(query, str):
        out.append(query)
    if projection.get("evidence_status") == EvidenceStatus.EVIDENCE_FOUND:
        for item in projection.get("evidence") or []:
            if isinstance(item, Mapping) and (documents is None or item.get("document_id") in documents):
                out.extend(v for name in _ITEM_FIELDS if isinstance(v := item.get(name), str))
    return out


_NO_SOURCE: EvidenceSource = {"query": None, "evidence_status": None, "evidence": ()}
"""A tool call the draft cites and the review holds no projection of: only its id is evidence."""

_SOURCES_KEPT = 512
"""Indexes kept across drafts (:data:`_SHARED`), the oldest dropped first: one holds some 50-200 KB for
eight runbook excerpts, so at most some 25-100 MB."""
_SHARED: dict[tuple[str, _Key], Index] = {}
"""Indexes by (projection_sha256, key): the same stored bytes and narrowing state the same things."""


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
    """The cited projections of one draft, each indexed once per narrowing; with ``digests`` (each cited
    tool call's ``projection_sha256``), indexed once across drafts."""

    projections: Mapping[str, EvidenceSource]
    digests: Mapping[str, str] | None = None
    _indexes: dict[_Key, Index] = field(default_factory=dict)

    def index(self, key: _Key) -> Index:
        found = self._indexes.get(key)
        if found is None:
            digest = self.digests.get(key[0]) if self.digests is not None else None
            if digest is not None:
                found = _SHARED.get((digest, key))
            if found is None:
                tool_call_id, documents = key
                source = self.projections.get(tool_call_id) or _NO_SOURCE
                found = Index.of(_strings(tool_call_id, source, documents))
                if digest is not None:
                    _remember(_SHARED, _SOURCES_KEPT, (digest, key), found)
            self._indexes[key] = found
        return found


@dataclass(slots=True)
class TextEvidence:
    """What one reviewed text may state: the projections it cites (indexed when first asked) and the
    names (the draft's run_id and item ids)."""

    keys: tuple[_Key, ...]
    projections: _Projections
    named: Index
    _indexes: tuple[Index, ...] | None = None

    def indexes(self) -> tuple[Index, ...]:
        if self._indexes is None:
            self._indexes = (*[self.projections.index(key) for key in self.keys], self.named)
        return self._indexes

    def judge(self, claim: Claim) -> tuple[bool, Hint | None]:
        """Whether one reading of ``claim`` holds; if none does, the first hint of what the evidence says."""
        hint: Hint | None = None
        for reading in claim.readings:
            failed = None
            for atom in reading:
                holds, atom_hint = self._holds(atom)
                if not holds:
                    failed = atom_hint
                    break
            else:
                return True, None
            if hint is None:
                hint = failed
        return False, hint

    def _holds(self, atom: Atom) -> tuple[bool, Hint | None]:
        indexes = self.indexes()
        kind = atom.kind
        if kind == "number":
            return self._number(atom)
        if kind == "identifier":
            if atom.value in COMMON_TERMS or any(i.has_word(atom.value) for i in indexes):
                return True, None
            if self._fills(atom.value):
                return True, None
            near = self._near(atom.value)
            return False, Hint(near) if near is not None else None
        if kind == "weak":
            if any(i.has_word(atom.value) for i in indexes):
                return True, None
            near = self._near(atom.value)
            if near is None or _plural(atom.value, near):  # DaemonSets for DaemonSet: English, not a new name
                return True, None
            return False, Hint(near)
        if kind == "word":
            return atom.value in COMMON_TERMS or any(i.has_part(atom.value) for i in indexes), None
        if kind == "quote":
            return self._quote(atom.value), None
        if kind == "code":
            return self._code(atom.value), None
        return self._pair(atom)

    def _number(self, atom: Atom) -> tuple[bool, Hint | None]:
        """A number is stated when the evidence states it in its unit (§3); one stated next to a key is
        stated when the evidence gives that key that value, and not when it gives the key only others
        (§5: a value taken from a neighbour)."""
        indexes = self.indexes()
        owned: set[tuple[str, str | None]] = set()
        if atom.key is not None:
            for index in indexes:
                owned |= index.owned(atom.key)
            value, unit = _decimal(atom.value), atom.unit
            if any(v == value and _unit_holds(unit, u) for v, u in owned):
                return True, None
        if number_holds(indexes, atom.value, atom.unit) and not owned:
            return True, None
        if owned:  # what the evidence gives the key, in the claim's unit where it gives one
            alike = {
                (v, u)
                for v, u in owned
                if u is not None and atom.unit is not None and same_unit(atom.unit, u)
            }
            given = sorted({f"{v}{'' if u is None or u.startswith(COUNT) else u}" for v, u in alike or owned})
            return False, Hint(atom.key or "", tuple(given[:4]))
        return False, None

    def _pair(self, atom: Atom) -> tuple[bool, Hint | None]:
        indexes = self.indexes()
        key = atom.key or ""
        assigned: set[str] = set()
        for index in indexes:
            assigned |= index.assigned(key)
        if assigned:
            if atom.value in assigned or _decimal(atom.value) in {_decimal(v) for v in assigned}:
                return True, None
            return False, Hint(key, tuple(sorted(assigned)[:4]))
        if not any(i.has_word(key) for i in indexes):
            near = self._near(key)
            return False, Hint(near) if near is not None else None
        read = word_readings(atom.value)
        if read is not None and read[0] == "number" and len(read[1][0]) == 1:  # =65s: 65 s next to the key
            number = read[1][0][0]
            return self._number(number._replace(key=key))
        return any(i.has_word(atom.value) for i in indexes), None

    def _near(self, word: str) -> str | None:
        for index in self.indexes():
            near = index.near_miss(word)
            if near is not None and near != word:
                return near
        return None

    def _quote(self, value: str) -> bool:
        parts = [p for p in value.replace("…", "...").split("...") if len(p) >= 1] or [value]
        for part in parts:
            if part.isascii() and part.isalnum() and len(part) <= 3:
                if not any(i.has_word(part) for i in self.indexes()):
                    return False
            elif not any(part in i.compact for i in self.indexes()):
                return False
        return True

    def states_verbatim(self, command: str) -> bool:
        """Whether an evidence string holds ``command`` (shown, single spaces) word for word (§7)."""
        return any(_contains(i.spaced, command) for i in self.indexes())

    def _code(self, value: str) -> bool:
        indexes = self.indexes()
        if self.states_verbatim(value):
            return True
        words = value.split(" ")
        if any(_fits(words, command, self._fill) for i in indexes for command in i.commands):
            return True
        return all(self._code_word(w) for w in words)

    def _code_word(self, word: str) -> bool:
        for raw in _TOKEN.findall(word):
            part = raw.strip(_EDGES)
            if part and not (part in COMMON_TERMS or any(i.has_word(part) for i in self.indexes())):
                if not self._fills(part):
                    return False
        return True

    def _fill(self, fill: str) -> bool:
        """Whether ``fill`` may stand for a placeholder: a word of the evidence or query, or made of them."""
        indexes = self.indexes()
        if any(i.has_word(fill) for i in indexes):
            return True
        parts = [p.strip(_EDGES) for p in _FILL_PARTS.split(fill) if p.strip(_EDGES)]
        return bool(parts) and all(any(i.has_word(p) for i in indexes) for p in parts)

    def _fills(self, word: str) -> bool:
        """Whether ``word`` is a word of a command with placeholders, filled (§7): a word that is more than
        a placeholder (``/etc/nginx/conf.d/<upstream>.conf``); a bare ``<host>`` is filled only inside a
        command, where the words around it place it."""
        return any(
            _word_fits(word, target, self._fill, "startend")
            for i in self.indexes()
            for command in i.commands
            for target in command
            if _PLACEHOLDER.search(target) is not None and _PLACEHOLDER.fullmatch(target) is None
        )

    def found_in(
        self, claim: Claim, items: Sequence[tuple[str, str | None, Index]]
    ) -> tuple[str | None, str | None]:
        """``(tool_call_id, document_id)`` of the first evidence item that alone states ``claim``."""
        for tool_call_id, document_id, index in items:
            if TextEvidence((), self.projections, index, (index,)).judge(claim)[0]:
                return tool_call_id, document_id
        return None, None


_FILL_PARTS = re.compile(r"[/:@]+")


def _unit_holds(claimed: str | None, stated: str | None) -> bool:
    """Whether a number stated in unit ``stated`` (None: bare) states it in unit ``claimed`` (None: any)."""
    return claimed is None or same_unit(claimed, stated) or (claimed.startswith(COUNT) and stated is None)


def _contains(text: str, words: str) -> bool:
    """Whether ``words`` occur in ``text`` as whole words (no letter or digit joined on either side)."""
    at = text.find(words)
    while at >= 0:
        end = at + len(words)
        if (at == 0 or not text[at - 1].isalnum() or not words[0].isalnum()) and (
            end == len(text) or not text[end].isalnum() or not words[-1].isalnum()
        ):
            return True
        at = text.find(words, at + 1)
    return False


def _plural(word: str, near: str) -> bool:
    return word in (near + "s", near + "es") or near in (word + "s", word + "es")


def _fits(words: list[str], command: tuple[str, ...], fill: Any) -> bool:
    """Whether ``words`` are a run of ``command``'s words, each equal to its word or filling its
    placeholders with what ``fill`` accepts (§7); the first may be the end of its word and the last the
    start of its word when they are literal."""
    count = len(words)
    for start in range(len(command) - count + 1):
        for offset, word in enumerate(words):
            edge = ("start" if offset == 0 else "") + ("end" if offset == count - 1 else "")
            if not _word_fits(word, command[start + offset], fill, edge):
                break
        else:
            return True
    return False


def _word_fits(word: str, target: str, fill: Any, edge: str) -> bool:
    if word == target:
        return True
    word, target = word.strip(_WORD_EDGES), target.strip(_WORD_EDGES)
    if word == target:
        return True
    if _PLACEHOLDER.search(target) is None:
        if edge == "startend":
            return False  # one word is a whole word, not a piece of one
        return (edge.startswith("start") and target.endswith(word)) or (
            edge.endswith("end") and target.startswith(word)
        )
    match = _template(target).fullmatch(word)
    return match is not None and all(fill(g) or _PLACEHOLDER.fullmatch(g) for g in match.groups())


@lru_cache(maxsize=4096)
def _template(target: str) -> re.Pattern[str]:
    """A command word with placeholders as a pattern: each placeholder one filled piece."""
    return re.compile(
        "".join(
            "(.+?)" if _PLACEHOLDER.fullmatch(piece) else re.escape(piece)
            for piece in _PLACEHOLDER_SPLIT.split(target)
            if piece
        )
    )


_WORD_EDGES = _EDGES + "*`'\""
"""What a command's word is compared without, at its ends (``--flag``, ``<bucket>/*``, quotes)."""
_PLACEHOLDER_SPLIT = re.compile(f"({_PLACEHOLDER.pattern})")


# -- which texts, against what ---------------------------------------------------------------------


class ReviewedText(NamedTuple):
    """One text under review: where it is, what it says, and the evidence it is judged on."""

    path: str
    content: str
    evidence: TextEvidence


def reviewed_texts(
    draft: DiagnosisDraft,
    reviewed: Sequence[bool],
    projections: Mapping[str, EvidenceSource],
    digests: Mapping[str, str] | None = None,
) -> Iterator[ReviewedText]:
    """The texts D reviews, in order (analysis items, conclusion, actions), each with its evidence.

    ``reviewed[i]`` says whether analysis item ``i`` cites a tool call and none of its citations or
    ``document_ids`` got a B or C violation; ``projections`` holds the re-read projection of every
    citation that passed C, by tool call id. Every text may also name the draft's ``run_id`` and the
    ``id`` of any analysis or action item. ``digests``, each projection's ``projection_sha256`` as C
    checked it, lets drafts share the index of a projection they cite alike.
    """
    names, texts = _texts(draft, reviewed)
    named = Index.of(names.split("\n"))
    cache = _Projections(projections, digests)
    for path, content, keys in texts:
        yield ReviewedText(path, content, TextEvidence(keys, cache, named))


def _texts(
    draft: DiagnosisDraft, reviewed: Sequence[bool]
) -> tuple[str, list[tuple[str, str, tuple[_Key, ...]]]]:
    """The names a text may use (joined), and each reviewed text's path, content and the cited
    projections (with their narrowings) it is judged on: :func:`reviewed_texts` before any evidence.
    On every draft's path (a remembered text costs little else), so written for speed."""
    analysis = draft.get("analysis") or ()
    actions = draft.get("action_plan") or ()
    run_id = draft.get("run_id")
    names = [run_id] if isinstance(run_id, str) else []
    texts: list[tuple[str, str, tuple[_Key, ...]]] = []
    cites: dict[Any, tuple[_Key, ...]] = {}  # of each reviewed analysis id (its first item)
    reviewed_count = len(reviewed)
    for index, item in enumerate(analysis):
        item_id = item.get("id")
        if isinstance(item_id, str):
            names.append(item_id)
        if index >= reviewed_count or not reviewed[index]:
            if item_id not in cites:
                cites[item_id] = ()
            continue
        document_ids = item.get("document_ids")
        documents = frozenset(document_ids) if document_ids else None
        calls = item.get("tool_call_ids") or ()
        keys = tuple([(tcid, documents) for tcid in (calls if len(calls) == 1 else dict.fromkeys(calls))])
        if item_id not in cites:
            cites[item_id] = keys
        texts.append((f"analysis[{index}].content", item.get("content") or "", keys))
    for action in actions:
        action_id = action.get("id")
        if isinstance(action_id, str):
            names.append(action_id)

    def built_on(refs: Sequence[str] | None) -> tuple[_Key, ...] | None:
        if not refs:
            return None
        if len(refs) == 1:
            return cites.get(refs[0]) or None
        found: list[_Key] = []
        for ref in refs:
            keys = cites.get(ref)
            if not keys:
                return None
            found.extend(keys)
        return tuple(dict.fromkeys(found))

    conclusion = draft.get("conclusion")
    if conclusion is not None and (on := built_on(conclusion.get("based_on_analysis_ids"))) is not None:
        texts.append(("conclusion.content", conclusion.get("content") or "", on))
    for index, action in enumerate(actions):
        if (on := built_on(action.get("based_on_analysis_ids"))) is not None:
            texts.append((f"action_plan[{index}].content", action.get("content") or "", on))
    return "\n".join(names), texts


# -- the judgement ---------------------------------------------------------------------------------

_CACHED_TEXT_CHARS = 2048
"""Texts up to this long keep their claims and their answer across drafts."""
_REMEMBERED = 64
"""Texts stating more claims than this are not remembered (a list of hundreds, hostile or not, is read
afresh): an entry stays some 20 KB at most."""
_TEXTS_KEPT = 2048
"""Texts whose claims (:data:`_READ`) and answers (:data:`_ANSWERED`) are kept, oldest dropped first."""
_READ: dict[str, tuple[Claim, ...]] = {}
_Signature = tuple[str, str, tuple[_Key, ...], tuple[str, ...]]
_ANSWERED: dict[_Signature, tuple[tuple[ViolationCode, str], ...]] = {}
"""A short text's violations (code, message) by its signature (:func:`_signature`)."""
_SIGNED_KEYS = 8
_SIGNED_NAMES = 1024
_SIGNED_DOCUMENTS = 32


def text_claims(text: str) -> tuple[Claim, ...]:
    """The claims of ``text`` (:func:`~streams.stations.review.reading.read`), remembered when short."""
    if len(text) > _CACHED_TEXT_CHARS:
        return tuple(read(text))
    said = _READ.get(text)
    if said is None:
        said = tuple(read(text))
        if len(said) <= _REMEMBERED:
            _remember(_READ, _TEXTS_KEPT, text, said)
    return said


def unsupported(content: str, evidence: TextEvidence) -> tuple[Finding, ...]:
    """The claims of ``content`` that ``evidence`` does not state, each once, in the order they start.

    A command in a code span that the evidence states (placeholders filled) states every word in it;
    one that it does not is reported through the specifics in it that are not stated, or, when every
    one of those is, as the command itself (§7). A text that states more than :data:`MOST_CLAIMS`
    claims is judged on those and refused at the next (§8)."""
    claims = text_claims(content)
    beyond = claims[MOST_CLAIMS] if len(claims) > MOST_CLAIMS else None
    claims = claims[:MOST_CLAIMS]
    answers: dict[tuple[Reading, ...], tuple[bool, Hint | None]] = {}
    judged = []
    for claim in claims:
        answer = answers.get(claim.readings)
        if answer is None:
            answer = answers[claim.readings] = evidence.judge(claim)
        judged.append(answer)
    held = [holds for holds, _ in judged]
    commands = [i for i, claim in enumerate(claims) if claim.readings[0][0].kind == "code"]
    if commands:
        verbatim = {
            c for c in commands if held[c] and evidence.states_verbatim(claims[c].readings[0][0].value)
        }
        unstated_inside: set[int] = set()
        for i, claim in enumerate(claims):
            if 0 <= claim.code < len(commands):
                command = commands[claim.code]
                if command in verbatim:
                    held[i] = True  # a command the evidence writes word for word states every word in it
                elif not held[i]:
                    unstated_inside.add(command)
        for command in unstated_inside:
            held[command] = True  # its unstated specifics speak for it
    out: list[Finding] = []
    seen: set[tuple[str, str, str | None]] = set()
    for claim, holds, (_, hint) in zip(claims, held, judged, strict=True):
        first = claim.readings[0][0]
        mark = (claim.kind, first.value, first.unit)
        if not holds and mark not in seen:
            seen.add(mark)
            out.append(Finding(claim.kind, claim.surface, hint))
    if beyond is not None:
        out.append(Finding(beyond.kind, beyond.surface, None, too_many=True))
    return tuple(out)


def _signature(
    content: str, names: str, keys: tuple[_Key, ...], digests: Mapping[str, str] | None
) -> _Signature | None:
    """What the answer for a text depends on: the text, the names, each cited projection (with its
    narrowing) and its stored bytes (its digest); None when it is not remembered."""
    if (
        digests is None
        or len(content) > _CACHED_TEXT_CHARS
        or len(keys) > _SIGNED_KEYS
        or len(names) > _SIGNED_NAMES
    ):
        return None
    cited = []
    narrowed = 0
    for tool_call_id, documents in keys:
        digest = digests.get(tool_call_id)
        if digest is None:
            return None
        cited.append(digest)
        if documents:
            narrowed += len(documents)
    if narrowed > _SIGNED_DOCUMENTS:
        return None
    return content, names, keys, tuple(cited)


_MAX_SHOWN = 80


def escaped(surface: str) -> str:
    """A specific as the draft wrote it, for a message or a repair prompt: in double quotes, with quotes,
    backslashes, control, format and other invisible characters escaped (``"9\\u200b0s"``), at most 80
    characters."""
    text = json.dumps(surface, ensure_ascii=False)
    text = "".join(
        f"\\u{ord(c):04x}" if (not c.isprintable() or c in "\u00ad\u034f\u115f\u1160\u3164\uffa0") else c
        for c in text
    )
    return text if len(text) <= _MAX_SHOWN else f'{text[: _MAX_SHOWN - 2]}…"'


_WHAT = {"number": "number", "identifier": "identifier", "quote": "quotation"}


def message(finding: Finding) -> str:
    """A violation's message: the specific as the draft wrote it (escaped, at most 80 characters), and
    what the cited evidence says instead: ``number "65s" is in none of the cited evidence; the cited
    evidence gives "proxy_read_timeout" the value "60s"`` (or ``... names "proxy_read_timeout"``).
    :func:`streams.client.repair.repair_prompt` reads these back."""
    if finding.too_many:
        return (
            f"{_WHAT[finding.kind]} {escaped(finding.surface)} is one more than the {MOST_CLAIMS} specifics "
            "a text may state: the review reads no further"
        )
    text = f"{_WHAT[finding.kind]} {escaped(finding.surface)} is in none of the cited evidence"
    hint = finding.hint
    if hint is not None and hint.values:
        values = " or ".join(escaped(v) for v in hint.values)
        text += f"; the cited evidence gives {escaped(hint.name)} the value {values}"
    elif hint is not None:
        text += f"; the cited evidence names {escaped(hint.name)}"
    return text


def prepare() -> None:
    """Make the review's one-time tables (look-alike letters, digits of every script: some 20-30 ms), so a
    worker pays for them when it starts, not on the first draft whose text needs them."""
    displayed("\u0661")


def review(
    draft: DiagnosisDraft,
    reviewed: Sequence[bool],
    projections: Mapping[str, EvidenceSource],
    digests: Mapping[str, str] | None = None,
) -> list[Violation]:
    """D's violations (codes 21-23): per reviewed text in order, each unsupported claim in order."""
    out: list[Violation] = []
    names, texts = _texts(draft, reviewed)
    cache: _Projections | None = None
    named: Index | None = None
    for path, content, keys in texts:
        key = _signature(content, names, keys, digests)
        found = _ANSWERED.get(key) if key is not None else None
        if found is None:  # the evidence is made only for a text not remembered
            if cache is None or named is None:
                cache, named = _Projections(projections, digests), Index.of(names.split("\n"))
            found = tuple(
                (CODES[f.kind], message(f)) for f in unsupported(content, TextEvidence(keys, cache, named))
            )
            if key is not None and len(found) <= _REMEMBERED:
                _remember(_ANSWERED, _TEXTS_KEPT, key, found)
        for code, said in found:
            out.append({"code": code, "path": path, "message": said})
    return out


def claims(content: str | None, evidence: TextEvidence | None) -> list[Specific]:
    """For the run page: each claim of ``content`` with its support and the evidence item it was found in
    (``tool_call_id``/``document_id`` None when unsupported or found only in a query or the names).
    Empty when the text is not reviewed (``evidence`` None)."""
    if evidence is None or not content:
        return []
    missing = {(f.kind, f.surface) for f in unsupported(content, evidence)}
    items = _item_indexes(evidence)
    out: list[Specific] = []
    for claim in text_claims(content):
        supported = (claim.kind, claim.surface) not in missing
        tool_call_id, document_id = evidence.found_in(claim, items) if supported else (None, None)
        out.append(
            {
                "kind": claim.kind,
                "value": claim.surface,
                "supported": supported,
                "tool_call_id": tool_call_id,
                "document_id": document_id,
            }
        )
    return out


def _item_indexes(evidence: TextEvidence) -> list[tuple[str, str | None, Index]]:
    """Each evidence item of the text's cited projections indexed alone (for the run page)."""
    out: list[tuple[str, str | None, Index]] = []
    for tool_call_id, documents in evidence.keys:
        projection = evidence.projections.projections.get(tool_call_id) or _NO_SOURCE
        if projection.get("evidence_status") != EvidenceStatus.EVIDENCE_FOUND:
            continue
        for item in projection.get("evidence") or []:
            if not isinstance(item, Mapping) or (
                documents is not None and item.get("document_id") not in documents
            ):
                continue
            document_id = item.get("document_id")
            index = Index.of(v for name in _ITEM_FIELDS if isinstance(v := item.get(name), str))
            out.append((tool_call_id, document_id if isinstance(document_id, str) else None, index))
    return out
