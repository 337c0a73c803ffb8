"""What the evidence states, indexed once per cited projection (review rules §3-§7).

An :class:`Index` reads the strings of one cited projection (its tool_call_id and query, then each
evidence item's document_id, source, title, breadcrumb and excerpt) in their display form
(:func:`~streams.stations.review.forms.shown`), with the words the draft's reader uses
(:mod:`~streams.stations.review.reading`), so both sides agree on what a word and a number are:

- ``words``: every word, each part of a word split at ``= : @ ,`` (and at ``/``), and a name joined to
  the version after it (``JDK 17`` is also ``jdk17`` and ``jdkv17``);
- ``numbers``: each number's value with the units it is stated in (None: stated bare) — the numbers
  of every word that holds a digit, the numbers written with digit grouping and in words;

and, made only when a question needs them:

- :meth:`owned`: the numbers stated next to a key (§5: after the key, up to the next key that is not
  joined to it by "and", "与", a comma …; a sentence with no key of its own goes on with the last one's);
- :meth:`hinted`: whether a bare number is stated next to a key whose name fixes a unit
  (``MaxGCPauseMillis=200`` is 200 ms);
- :meth:`assigned`: a key's values written ``key=value``;
- :meth:`near_miss`: the name-like word a word is one edit away from (§4.3);
- ``compact`` (no spaces, for quotations, §6), ``spaced`` and :meth:`commands` (for code, §7).

Building one costs about as much as reading its strings once with C-speed regular expressions; what
is made only when asked costs nothing for a draft that does not ask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from streams.stations.review.forms import (
    EN_MULTIPLIER,
    EN_MULTIPLIERS,
    EN_NUMBER,
    displayed,
    english_value,
    hinted_unit,
    lowered,
    unit_of,
)
from streams.stations.review.reading import (
    _CONNECTOR,
    _EDGES,
    _GROUPED,
    _SEGMENT_END,
    _TOKEN,
    _WORD_CHAR,
    _unit_after,
    chinese_numbers,
    count_of,
    word_readings,
)

_NOT_DIGIT = re.compile(r"[^0-9]")
_SPLIT = re.compile(r"[=/:@,]")
_SPLIT_KEEPING_PATHS = re.compile(r"[=:@,]")
_JOINED_WORD = re.compile(r"([a-z]{3,}?)-?v?([0-9]+(?:\.[0-9]+)*)")
"""A name of three letters or more joined to its version (``JDK17``, ``TLSv1.3``): ``gp3`` or ``io2`` is a
name, not a version of ``gp``."""
_CAMEL_NAME = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_ZH_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿半]")
_EN_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand "
    "million billion".split()
)
_NAME_LIKE = re.compile(r"[0-9_.=:/-]")
_MARKS = re.compile(r"[*`]+")
_PLACEHOLDER = re.compile(r"<[^<>\s]{1,40}>|\{[A-Za-z_][A-Za-z0-9_.-]{0,39}\}|\$\{?[A-Z][A-Z0-9_]{1,39}\}?")
_CONJUNCTION = re.compile(r"\s*(?:与|和|及|或|、|,|，|/|and|or|&)\s*")
_FIELD_SEPARATOR = "\x1f"
_COMMAND_SPLIT = re.compile(r"[\s\u2e80-\u9fff\uff0c\uff1a\uff1b\uff08\uff09\u3001-\u3011]+")
_COMMAND_EDGES = "`'\"“”‘’()（）,.;，。；:："
_OWNED_SPAN = 400
"""How far after a key its numbers are looked for (characters of the field)."""


def _skeleton(value: str) -> str:
    return re.sub(r"[^a-z0-9]", "", value)


def _deletions(value: str) -> Iterable[str]:
    return (value[:i] + value[i + 1 :] for i in range(len(value)))


def _decimal(value: str) -> str:
    """A decimal's value without trailing zeros (``75.0`` is ``75``, ``60.000`` is ``60``)."""
    if value.count(".") == 1 and value.replace(".", "").isdigit():
        value = value.rstrip("0").rstrip(".")
    return value


def _key_like(value: str) -> bool:
    """Whether a word may be a key a value is stated next to: a name with ``_ . - :`` or a digit in it,
    or a camel-case name."""
    read = word_readings(value)
    return read is not None and len(read[1]) == 1 and read[1][0][0].kind == "identifier"


@dataclass(slots=True)
class Index:
    """What one cited projection (or the names a text may use) states: see the module docstring."""

    texts: tuple[str, ...]
    """Each string, shown."""
    cased: tuple[str, ...] = ()
    """Each string displayed, its case kept (character for character the same as ``texts``)."""
    _words: dict[str, bool] = field(default_factory=dict)
    _parts: dict[str, bool] = field(default_factory=dict)
    _numbers: dict[str, set[str | None]] = field(default_factory=dict)
    _spelled: dict[str, set[str | None]] | None = None
    _owned: dict[str, set[tuple[str, str | None]]] = field(default_factory=dict)
    _assigned: dict[str, set[str]] | None = None
    _names: dict[str, str] | None = None
    _compact: str | None = None
    _spaced: str | None = None
    _commands: list[tuple[str, ...]] | None = None

    @classmethod
    def of(cls, strings: Iterable[str]) -> Index:
        """The index of ``strings``, read as one text with a separator no word or quotation crosses."""
        cased = displayed(_FIELD_SEPARATOR.join(s for s in strings if s))
        return cls((lowered(cased),), (cased,))

    # -- words -------------------------------------------------------------------------------------

    def has_word(self, word: str) -> bool:
        """Whether ``word`` (shown) is a word of the evidence: a whole word, a part of one split at
        ``= : @ ,`` (or ``/``), or a name joined to the version after it (``JDK 17`` gives ``jdk17``)."""
        answer = self._words.get(word)
        if answer is None:
            answer = any(_word_in(text, word) for text in self.texts) or self._joined(word)
            if len(self._words) < _ANSWERS_KEPT:
                self._words[word] = answer
        return answer

    def has_part(self, word: str) -> bool:
        """Whether ``word`` is a word of the evidence or a piece of a dotted name (``watermark.low``)."""
        answer = self._parts.get(word)
        if answer is None:
            answer = self.has_word(word) or any(_word_in(text, word, dotted=True) for text in self.texts)
            if len(self._parts) < _ANSWERS_KEPT:
                self._parts[word] = answer
        return answer

    def _joined(self, word: str) -> bool:
        joined = _JOINED_WORD.fullmatch(word)
        if joined is None:
            return False
        name, version = joined.groups()
        pattern = re.compile(
            rf"(?<![a-z0-9_.-]){re.escape(name)}[ -]?v?{re.escape(version)}(?![0-9]|\.[0-9])"
        )
        return any(pattern.search(text) is not None for text in self.texts)

    # -- numbers -----------------------------------------------------------------------------------

    def units_of(self, value: str) -> set[str | None]:
        """The units ``value`` (decimal, as :func:`_decimal` gives it) is stated in (None: bare)."""
        units = self._numbers.get(value)
        if units is None:
            units = set()
            for text in self.texts:
                _digits_in(text, value, units)
            units |= self._spelled_numbers().get(value, set())
            if len(self._numbers) < _ANSWERS_KEPT:
                self._numbers[value] = units
        return units

    def _spelled_numbers(self) -> dict[str, set[str | None]]:
        """The numbers written with digit grouping (``1,024``) or in words (English, Chinese, multipliers)."""
        if self._spelled is None:
            found: dict[str, set[str | None]] = {}
            self._spelled = found
            for text in self.texts:
                for grouped in _GROUPED.finditer(text):
                    whole = grouped.group(1) + _NOT_DIGIT.sub("", grouped.group(2))
                    found.setdefault(whole, set()).add(_unit_after(text, grouped.end())[0])
                for multiplier in EN_MULTIPLIER.finditer(text):  # doubling, twice
                    times, unit = EN_MULTIPLIERS[multiplier.group().lower()]
                    found.setdefault(times, set()).add(unit)
                if not _EN_NUMBER_WORDS.isdisjoint(_LETTER_RUN.findall(text)):
                    for match in EN_NUMBER.finditer(text):
                        value = english_value(match.group())
                        if value is not None:
                            found.setdefault(value, set()).add(_unit_after(text, match.end())[0])
                if _ZH_NUMERAL.search(text) is not None:
                    for claim in chinese_numbers(text, everything=True):
                        atom = claim.readings[0][0]
                        found.setdefault(_decimal(atom.value), set()).add(atom.unit)
        return self._spelled

    # -- made when asked ---------------------------------------------------------------------------

    def owned(self, key: str) -> set[tuple[str, str | None]]:
        """The numbers (value, unit) stated next to ``key`` (§5), and the unit its name fixes on bare ones."""
        found = self._owned.get(key)
        if found is None:
            found = set()
            if len(self._owned) < _ANSWERS_KEPT:
                self._owned[key] = found
            hinted = hinted_unit(key)
            for text, cased in zip(self.texts, self.cased, strict=True):
                at = text.find(key)
                while at >= 0:
                    end = at + len(key)
                    if _whole_word(text, at, end):
                        for value, unit in _numbers_after(text, cased, end):
                            found.add((value, unit))
                            if unit is None and hinted is not None:
                                found.add((value, hinted))
                    at = text.find(key, end)
        return found

    def hinted(self, value: str, unit: str) -> bool:
        """Whether ``value``, stated bare, carries ``unit`` as its key or its sentence fixes it (LABELS' fine
        points): the key it is given to names the unit (``MaxGCPauseMillis=200``, ``max.poll.interval.ms
        (default 300000)``) or declares it (``--max-old-space-size (in MiB)``), or its sentence does
        (``--election-timeout=1000 (milliseconds)``, ``单位为秒``)."""
        for text, cased in zip(self.texts, self.cased, strict=True):
            at = text.find(value)
            while at >= 0:
                end = at + len(value)
                if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isdigit()):
                    key = _key_before(text, cased, at)
                    if key is not None and (hinted_unit(key) == unit or self._declared(key) == unit):
                        return True
                    if unit in _declared_units(_sentence(text, at)):
                        return True
                at = text.find(value, end)
        return False

    def _declared(self, key: str) -> str | None:
        """The unit the evidence declares for ``key`` (``key (in MiB)``, ``key（单位：秒）``), if any."""
        pattern = re.compile(
            re.escape(key) + r"\s*[(（]\s*(?:in\s+|单位[:：为是]?\s*)?([^\s()（）]{1,12})\s*[)）]"
        )
        for text in self.texts:
            for match in pattern.finditer(text):
                declared = unit_of(match.group(1))
                if declared is not None:
                    return declared
        return None

    def assigned(self, key: str) -> set[str]:
        """The values ``key`` is given as ``key=value``."""
        if self._assigned is None:
            self._assigned = {}
            for text in self.texts:
                if "=" not in text:
                    continue
                for match in _TOKEN.finditer(text):
                    word = match.group().strip(_EDGES)
                    if match.end() < len(text) and text[match.end()] == "<":
                        continue  # --endpoints=https://<ip>:2379: a template, no value given
                    if "=" in word:
                        name, _, value = word.partition("=")
                        name, value = name.strip(_EDGES), value.strip(_EDGES)
                        if name and value:
                            self._assigned.setdefault(name, set()).add(value)
        return self._assigned.get(key, set())

    def near_miss(self, word: str) -> str | None:
        """The name-like word of the evidence that ``word`` (not stated) is one edit away from, if any."""
        skeleton = _skeleton(word)
        if len(skeleton) < 4:
            return None
        if self._names is None:
            self._names = {}
            stated_words = {w.strip(_EDGES) for text in self.cased for w in _TOKEN.findall(text)}
            for cased_word in stated_words:
                stated = lowered(cased_word)
                if _NAME_LIKE.search(stated) or not stated.isalpha() or _CAMEL_NAME.search(cased_word):
                    stated_skeleton = _skeleton(stated)
                    if len(stated_skeleton) >= 4:
                        self._names.setdefault(stated_skeleton, stated)
                        for deleted in _deletions(stated_skeleton):
                            self._names.setdefault(deleted, stated)
        found = self._names.get(skeleton)
        if found is None:
            for deleted in _deletions(skeleton):
                found = self._names.get(deleted)
                if found is not None:
                    break
        return found

    @property
    def compact(self) -> str:
        """The strings shown without spaces, apart (for quotations)."""
        if self._compact is None:
            self._compact = _FIELD_SEPARATOR.join("".join(t.split()) for t in self.texts)
            self._compact = _SPACES.sub("", self.texts[0]) if len(self.texts) == 1 else self._compact
        return self._compact

    @property
    def spaced(self) -> str:
        """The strings shown with single spaces, apart (for code)."""
        if self._spaced is None:
            self._spaced = _FIELD_SEPARATOR.join(" ".join(t.split(" ")) for t in self.texts)
            self._spaced = _SPACE_RUNS.sub(" ", self.texts[0]) if len(self.texts) == 1 else self._spaced
        return self._spaced

    @property
    def commands(self) -> list[tuple[str, ...]]:
        """Each sentence that holds a ``<placeholder>``, as its words (for code, §7)."""
        if self._commands is None:
            self._commands = []
            for text in self.texts:
                if _PLACEHOLDER.search(text) is None:
                    continue
                for sentence in _SEGMENT_END.split(text):
                    if _PLACEHOLDER.search(sentence):
                        words = (w.strip(_COMMAND_EDGES) for w in _COMMAND_SPLIT.split(sentence))
                        self._commands.append(tuple(w for w in words if w))
        return self._commands


_SPACES = re.compile(r"[^\S\x1f]+")
_SPACE_RUNS = re.compile(r"[^\S\x1f]+")
_ANSWERS_KEPT = 1024
"""Answers an index remembers (a hostile draft's thousands of specifics are not all kept)."""
_WORD_BEFORE = re.compile(f"{_WORD_CHAR}*$")
_WORD_AFTER = re.compile(f"{_WORD_CHAR}*")
_LETTER_RUN = re.compile(r"[a-z]+")


def _enclosing(text: str, start: int, end: int) -> tuple[int, int]:
    """The word (a run of word characters) around ``text[start:end]``."""
    before = _WORD_BEFORE.search(text, max(0, start - 256), start)
    after = _WORD_AFTER.match(text, end, min(len(text), end + 256))
    return (start - len(before.group()) if before else start), (after.end() if after else end)


def _word_in(text: str, word: str, dotted: bool = False) -> bool:
    """Whether ``word`` is a word of ``text`` (shown): its enclosing word, without the punctuation at its
    ends, is ``word``, or one of its parts split at ``= : @ ,`` (or also ``/``; with ``dotted``, ``.``) is."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        first, last = _enclosing(text, at, end)
        whole = text[first:last]
        stripped = whole.strip(_EDGES)
        if stripped == word or (stripped != whole and _MARKS.sub("", stripped) == word):
            return True
        if "/" in word and stripped.endswith("/" + word):
            return True  # $JAVA_HOME/conf/security/java.security: a path from one of its directories on
        if stripped != word and len(stripped) > len(word):
            for split in (_SPLIT, _SPLIT_KEEPING_PATHS, *((_DOT,) if dotted else ())):
                if any(p.strip(_EDGES) == word for p in split.split(stripped)):
                    return True
        at = text.find(word, at + 1)
    return False


_DOT = re.compile(r"\.")


def _digits_in(text: str, value: str, units: set[str | None]) -> None:
    """Add to ``units`` the unit of each place ``text`` states the number ``value`` (a count: ``#`` and
    what it counts): a word holding the value as a number (its reading's, or the unit written after it,
    or the noun it counts), a part of a name split at ``= / : @ ,`` (``vault:1.15.4``), a name's version
    (``JDK17``)."""
    at = text.find(value)
    seen: set[int] = set()
    while at >= 0:
        first, last = _enclosing(text, at, at + len(value))
        if first not in seen:
            seen.add(first)
            token = text[first:last]
            stripped = token.strip(_EDGES)
            end = last - (len(token) - len(token.rstrip(_EDGES)))
            for unit in _units_stated(token, value, text, end):
                units.add(unit)
            if _SPLIT.search(stripped) is not None:  # ndots:5, vault:1.15.4: a value given to a name
                for part in _SPLIT.split(stripped):
                    if value in part and any(u is None for u in _units_stated(part, value, "", 0)):
                        units.add(GIVEN)
            joined = _JOINED_WORD.fullmatch(stripped)
            if joined is not None and _decimal(joined.group(2)) == value:
                units.add(None)  # JDK17, TLSv1.3: the version is a number too
        at = text.find(value, last)


GIVEN = "="
"""The unit of a number stated only as a part of a name (``ndots:5``): it states the number, not a count
of anything (5 replicas are not ndots:5) nor a unit."""


def _units_stated(word: str, value: str, text: str, end: int) -> Iterator[str | None]:
    """The units ``word`` (ending at ``end`` in ``text``, if given) states ``value`` in."""
    read = word_readings(word)
    if read is None:
        return
    for reading in read[1]:
        for atom in reading:
            if atom.kind == "number" and _decimal(atom.value) == value:
                unit = atom.unit
                if unit is None and len(read[1]) == 1 and text:
                    unit = _unit_after(text, end)[0]
                    if unit is None:
                        unit = _counted(text, _first_of(text, end, word), end, value)
                yield unit
            elif atom.kind == "number" and value in _chain_parts(atom.value):
                yield None
            elif atom.kind == "pair":
                assigned = word_readings(atom.value)
                for assigned_atom in assigned[1][0] if assigned is not None else ():
                    if assigned_atom.kind == "number" and _decimal(assigned_atom.value) == value:
                        yield assigned_atom.unit


def _first_of(text: str, end: int, word: str) -> int:
    """Where ``word``, ending at ``end`` in ``text``, starts (without its trailing punctuation)."""
    return max(0, end - len(word.rstrip(_EDGES)))


def _counted(text: str, start: int, end: int, value: str) -> str | None:
    """``#`` and the noun the number at ``text[start:end]`` counts (``3 replicas``: ``#replica``), or None."""
    counted = count_of(text, start, end, value)
    return None if counted is None else counted[1]


def _chain_parts(chain: str) -> set[str]:
    """The numbers a chain of digit runs also states: split at ``:`` and ``/`` (``10.42.7.19:8443`` states
    8443, ``09:40`` 40), and a date at ``-`` (``2026-09-29``); not ``1-20-3``, a revision."""
    parts = set(re.split(r"[:/]", chain)) if (":" in chain or "/" in chain) else set()
    if _DATE.fullmatch(chain):
        parts |= set(chain.split("-"))
    return {_decimal(p) for p in parts if p}


_DATE = re.compile(r"(?:19|20)[0-9]{2}-[0-9]{1,2}(?:-[0-9]{1,2})?")


def _key_before(text: str, cased: str, at: int) -> str | None:
    """The key a value at ``at`` is given to: the last name before it with only ``=``, ``:``, an opening
    parenthesis or the words that say "is", "defaults to" … between (:data:`_CONNECTOR`)."""
    window_start = max(0, at - 80)
    tokens = list(_TOKEN.finditer(text, window_start, at))
    for token in reversed(tokens):
        name = token.group().strip(_EDGES)
        if not name:
            continue
        if _CONNECTOR.fullmatch(text[token.end() : at]) is None:
            return None
        written = cased[token.start() : token.end()].rstrip(_EDGES).lstrip(_EDGES.replace("-", ""))
        if _key_like(written) or unit_of(name) is not None:  # a flag keeps its dashes: --max-old-space-size
            return name
    return None


_DECLARED = re.compile(
    r"[(（]\s*(?:in\s+|单位[:：为是]?\s*)?([a-zµμ%\u4e00-\u9fff]{1,12})\s*[)）]|\bin\s+([a-z]{1,12})\b|单位[:：为是]\s*([\u4e00-\u9fff]{1,3}|[a-z]{1,12})"
)


def _declared_units(sentence: str) -> set[str]:
    """The units a sentence declares for bare numbers (``(milliseconds)``, ``in seconds``, ``单位为秒``)."""
    out: set[str] = set()
    for match in _DECLARED.finditer(sentence):
        name = next(g for g in match.groups() if g)
        unit = unit_of(name)
        if unit is not None:
            out.add(unit)
    return out


def _sentence(text: str, at: int) -> str:
    """The sentence (or line, or list item) of ``text`` that holds position ``at``."""
    start = 0
    for end in _SEGMENT_END.finditer(text, 0, at):
        start = end.end()
    stop = _SEGMENT_END.search(text, at)
    return text[start : stop.start() if stop else len(text)]


def _whole_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole word (or a whole part of one split at ``= / : @ ,``)."""
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    joined_before = _TOKEN.fullmatch(before) is not None and before not in "=/:@,"
    joined_after = _TOKEN.fullmatch(after) is not None and after not in "=/:@,.:-"
    return not joined_before and not joined_after


def _numbers_after(text: str, cased: str, end: int) -> Iterable[tuple[str, str | None]]:
    """The numbers stated after a key that ends at ``end``: up to the next key that is not joined to it
    (``A 与 B 默认均为 60s`` gives A 60s), at most :data:`_OWNED_SPAN` characters on, in its field."""
    stop = min(len(text), end + _OWNED_SPAN)
    joinable = True
    last = end
    for match in _TOKEN.finditer(text, end, stop):
        read = word_readings(cased[match.start() : match.end()])
        if read is None:
            continue
        kind, readings = read
        if kind == "number":
            joinable = False
            word_end = match.end() - (len(match.group()) - len(match.group().rstrip(_EDGES)))
            unit = (
                _unit_after(text, word_end)[0] if len(readings) == 1 and readings[0][0].unit is None else None
            )
            for reading in readings:
                for atom in reading:
                    if atom.kind == "number":
                        yield _decimal(atom.value), atom.unit if atom.unit is not None else unit
        elif len(readings) == 1 and readings[0][0].kind == "identifier":
            if not (joinable and _CONJUNCTION.fullmatch(text[last : match.start()])):
                return
        last = match.end()
    # a sentence with no key of its own goes on with this one's: numbers in the next sentence count
    # only through the scan above reaching them before another key


def number_holds(indexes: Iterable[Index], value: str, unit: str | None) -> bool:
    """Whether a number (with its unit) is stated in any of ``indexes`` (a count ``#`` is stated by a
    count or a bare number; a bare number by a number in any unit; a unit by the same unit, or by a
    bare number next to a key whose name fixes it)."""
    from streams.stations.review.forms import same_unit

    value = _decimal(value)
    bare_in: list[Index] = []
    for index in indexes:
        units = index.units_of(value)
        if not units:
            continue
        if unit is None or any(same_unit(unit, u) for u in units):
            return True
        if unit is not None and unit.startswith("#") and None in units:
            return True
        if None in units:
            bare_in.append(index)
    return (
        unit is not None and not unit.startswith("#") and any(index.hinted(value, unit) for index in bare_in)
    )
