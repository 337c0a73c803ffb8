"""Reading a text for its specifics (review rules §3-§5): what a text states, as claims with readings.

A **claim** is one thing the text states, as the draft wrote it (``surface``, ``start``): a number with
its unit, an identifier, a quotation or a command in a code span. A claim has one or more **readings**,
each a tuple of **atoms** that must all be supported for that reading to hold; the claim is supported
when one reading holds. Several readings are how one form means more than one thing to a reader:
``503/504`` is the path-like word ``503/504`` or the list 503 and 504; ``1,024`` is 1024 or 1 and 024;
``v1.27`` is the identifier or the version 1.27.

The reader is the same for the draft and for the evidence (:mod:`streams.stations.review.index` reads
every evidence string with it), so both sides agree on what a word is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from heapq import merge
from itertools import islice
from operator import attrgetter
from typing import Literal, NamedTuple

from streams.stations.review.forms import (
    EN_MULTIPLIER,
    EN_MULTIPLIERS,
    EN_NUMBER,
    ZH_MULTIPLIER,
    ZH_MULTIPLIERS,
    ZH_NUMBER,
    chinese_value,
    english_value,
    shown,
    unit_of,
)

SpecificKind = Literal["number", "identifier", "quote"]
AtomKind = Literal["number", "identifier", "weak", "word", "quote", "code", "pair"]


class Atom(NamedTuple):
    """One thing a reading needs the evidence to state.

    - ``number``: ``value`` (digits, ``.``-decimals, or a chain such as ``10.42.7.19:8443``) with
      ``unit`` (canonical, :data:`~streams.stations.review.forms.UNITS`) or None; ``key`` is the
      identifier it is stated next to (§5), if any;
    - ``identifier``: a whole identifier (§4), as shown (lowered);
    - ``weak``: a word that looks like a name (``allkeys-lru``, ``OOMKilled``) but may be plain
      English: supported unless it is a near miss of an identifier the evidence states;
    - ``word``: a plain word that must be a word of the evidence (a member of a slash list);
    - ``quote``: a quotation's words (§6); ``code``: a code span or code line (§7);
    - ``pair``: ``key=value`` (``value`` is the part after ``=``, ``key`` the part before).
    """

    kind: AtomKind
    value: str
    unit: str | None = None
    key: str | None = None


Reading = tuple[Atom, ...]


class Claim(NamedTuple):
    """One specific a text states: its kind for the violation code, as written, where, and its readings.
    ``code`` is the index of the code span (a claim of kind ``quote`` whose atom is ``code``) it is inside,
    or -1."""

    kind: SpecificKind
    surface: str
    start: int
    readings: tuple[Reading, ...]
    code: int = -1


# -- characters ------------------------------------------------------------------------------------

_LETTERS = (
    "A-Za-z0-9_\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0300-\u036f\u0370-\u03ff\u0400-\u052f"
    "\u0530-\u058f\u0590-\u05ff\u0600-\u06ff\u0900-\u0dff\u0e00-\u0eff\u10a0-\u10ff\u13a0-\u13ff"
    "\u1d00-\u1dbf\u1e00-\u1fff\u2070-\u209f\u2100-\u218f\u2460-\u24ff\uff10-\uff19\uff21-\uff3a"
    "\uff41-\uff5a\U0001d400-\U0001d7ff\U0001f100-\U0001f1ff\U0001fbf0-\U0001fbf9"
)
"""Letters and digits of the scripts a specific may be written or disguised in (CJK is not one: Chinese
text runs into numbers and names with no space, so its characters end a word)."""
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufeff\uffa0"
    "\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe00-\ufe0f\ufe20-\ufe2f\U000e0000-\U000e007f\U000e0100-\U000e01ef"
)
"""Format characters, combining marks, variation selectors and the Hangul fillers: inside a word they
are read through (``9\u200b0s`` is one word, shown ``90s``)."""
_JOINERS = "._/:=%#@\\-\uff0d\uff0e\uff0f\uff05\uff1d\uff3f"
_WORD_CHAR = f"[{_LETTERS}{_INVISIBLE}{_JOINERS}]"
_TOKEN = re.compile(f"{_WORD_CHAR}+(?:(?:\\*{{1,2}}|`+){_WORD_CHAR}+)*")
"""A word: a run of letters, digits, joiners (``_ . / : = % # @ -``) and invisible characters, and
markdown emphasis or code marks between two of them (``**1**20s`` is one word, ``120s``)."""
_EDGES = ".:/=#@-\\"
_MARKS = re.compile(r"[*`]+")

_SEGMENT_END = re.compile(r"[。！？；;!?\n]|\.(?=\s|$)")
_CONNECTOR = re.compile(
    r"""[\s(（:：="'“]*(?:(?:defaults?(?:\s+(?:value|is|to|of))?|is|was|are|were|set\s+to|to|of|at|from|=|by\s+default
    |typically|usually|normally|generally|often|about|around|roughly|approximately|up\s+to|at\s+most|at\s+least
    |no\s+more\s+than|no\s+less\s+than|below|above|under|over|only|still|now|currently|e\.g\.|~
    |默认(?:值)?(?:为|是)?|均为|分别为|为|是|设为|设置为|设成|调整为|调整到|调到|调大到|调小到|调高到|调低到|改为|改成
    |提高到|降到|降低到|增加到|增大到|减少到|减小到|从|约|大约|约为|通常(?:为|是)?|一般(?:为|是)?|最多|至少|不超过|不低于
    |低于|高于|超过|达到|仅|只有|当前(?:为|是)?|目前(?:为|是)?)[\s:：=,，"'“]*)*$""",
    re.VERBOSE,
)
"""What may stand between a key and the value it is given for the value to be read as that key's (§5):
spaces, ``=``, ``:``, an opening parenthesis and the words that say "is", "defaults to", "set to"."""


# -- words -----------------------------------------------------------------------------------------

COMMON_TERMS = frozenset(
    "p50 p75 p90 p95 p99 p999 p99.9 http/1.0 http/1.1 http/2 http/3 h2 h3 h2c ipv4 ipv6 l4 l7 utf-8 utf8 "
    "utf-16 utf16 sha1 sha-1 sha256 sha-256 sha512 sha-512 md5 base64 x86 x64 x86_64 amd64 arm64 aarch64 "
    "k8s k3s s3 ec2 e2e i18n l10n 2fa mfa oauth2 tls1.2 tls1.3 tlsv1.2 tlsv1.3 2xx 3xx 4xx 5xx i/o tcp/ip "
    "udp/ip n/a and/or w/o ci/cd c/c++ 24/7 a/b read/write r/w rw/ro x509 x.509 e.g i.e etc vs cpu/memory "
    "http/https tcp/udp 1st 2nd 3rd 4th 5th g1 g1gc".split()
)
"""Common technical vocabulary used as a name, never a fact about the incident (LABELS: ``HTTP/2``,
``p99``, ``5xx``, ``k8s``, ``UTF-8`` …), compared as shown (lowered)."""

_MULTIPLIER = re.compile(r"[x×]([0-9]+(?:\.[0-9]+)?)")
_STATUS_PLURAL = re.compile(r"[45][0-9]{2}s")
_NUMBER_UNIT = re.compile(r"([0-9]+(?:\.[0-9]+)?)-?([a-z%µμ/]+)?")
_CHAIN = re.compile(r"([0-9]+(?:[./:-][0-9]+)+)(?:-?([a-z%µμ/]+))?")
_GROUPED_TOKEN = re.compile(r"[0-9]{1,3}(?:_[0-9]{3})+")
_VERSION = re.compile(r"v([0-9]+(?:\.[0-9]+)*)")
_STRONG = re.compile(r"[0-9_#@=]|[a-z0-9]:[a-z0-9]|[a-z0-9]\.[a-z0-9]|[a-z0-9]/[a-z]|[a-z]/[a-z0-9]")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_LOWER_CAMEL = re.compile(r"[a-z]{3,}[A-Z][a-z]")
"""A code identifier (``maxClientCnxns``, ``tickTime``): a lower-case word with a capital inside."""
_HYPHENATED = re.compile(r"[a-z0-9]-[a-z0-9]")


@lru_cache(maxsize=16384)
def word_readings(raw: str) -> tuple[SpecificKind, tuple[Reading, ...]] | None:
    """What one word states (§4), as a kind and its readings; None for a plain word (or a common term).

    ``raw`` is the word as written (its case tells a camel-case name)."""
    value = shown(_MARKS.sub("", raw)).strip(_EDGES)
    if not value:
        return None
    flag = raw.lstrip(_EDGES) != raw and raw.lstrip("-") != raw and len(value) > 1  # -s: part of a command
    return _readings(value, flag, raw)


def _readings(value: str, flag: bool, raw: str) -> tuple[SpecificKind, tuple[Reading, ...]] | None:
    if value in COMMON_TERMS:
        return None
    number = _NUMBER_UNIT.fullmatch(value)
    if number is not None:
        unit = unit_of(number.group(2)) if number.group(2) else None
        if number.group(2) is None or unit is not None:
            if _STATUS_PLURAL.fullmatch(value):  # 403s, 502s: responses with that status, or seconds
                return "number", (
                    (Atom("number", number.group(1), unit),),
                    (Atom("number", number.group(1), "#"),),
                )
            return "number", ((Atom("number", number.group(1), unit),),)
    multiplier = _MULTIPLIER.fullmatch(value)
    if multiplier is not None:  # x5, ×2: five times, twice
        return "number", ((Atom("number", multiplier.group(1), "x"),), (Atom("identifier", value),))
    if _GROUPED_TOKEN.fullmatch(value):
        return "number", ((Atom("number", value.replace("_", "")),), (Atom("identifier", value),))
    chain = _CHAIN.fullmatch(value)
    if chain is not None and (chain.group(2) is None or unit_of(chain.group(2)) is not None):
        return "number", _chain_readings(chain.group(1), unit_of(chain.group(2)) if chain.group(2) else None)
    if "/" in value and not raw.lstrip("*`").startswith("/"):
        listed = _list_reading(value)
        if listed is not None:
            kind: SpecificKind = "number" if all(a.kind == "number" for a in listed) else "identifier"
            return kind, ((Atom("identifier", value),), listed)
    version = _VERSION.fullmatch(value)
    if version is not None:
        return "identifier", ((Atom("identifier", value),), (Atom("number", version.group(1)),))
    if "=" in value:
        key, _, assigned = value.partition("=")
        key = key.strip(_EDGES)
        if key and assigned:
            return "identifier", ((Atom("identifier", value),), (Atom("pair", assigned, key=key),))
    if flag or _STRONG.search(value) or _LOWER_CAMEL.match(raw.strip(_EDGES)):
        return "identifier", ((Atom("identifier", value),),)
    if _HYPHENATED.search(value) or _CAMEL.search(raw):
        return "identifier", ((Atom("weak", value),),)
    return None


def _chain_readings(chain: str, unit: str | None) -> tuple[Reading, ...]:
    """A chain of digit runs: the whole, and where its separators make it one, a list (``/``) or a
    range of two (``-``, the first below the second)."""
    readings: list[Reading] = [(Atom("number", chain, unit),)]
    if "/" in chain:
        parts = chain.split("/")
        if 2 <= len(parts) <= 6 and all(parts):
            readings.append(tuple(Atom("number", p, unit) for p in parts))
        return tuple(readings)
    parts = chain.split("-")
    if len(parts) == 2 and all(_is_decimal(p) for p in parts) and float(parts[0]) < float(parts[1]):
        readings.append(tuple(Atom("number", p, unit) for p in parts))
    return tuple(readings)


def _is_decimal(text: str) -> bool:
    return re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", text) is not None


def _member_kind(member: str) -> str:
    """What kind of word a member of a slash list is: a number, a dotted name, or a word."""
    if member[:1].isdigit():
        return "number"
    return "dotted" if "." in member else "word"


def _list_reading(value: str) -> Reading | None:
    """``a/b/c`` as the list of its members, each read as a word of its own, when it can be one: two to
    six members, none empty, each at most 40 characters."""
    parts = value.split("/")
    if not 2 <= len(parts) <= 6 or any(not p or len(p) > 40 for p in parts):
        return None
    if len({_member_kind(p) for p in parts}) > 1:
        return None  # nginx.ingress.kubernetes.io/limit-rps: a name with a path, not a list
    atoms: list[Atom] = []
    for part in parts:
        part = part.strip(_EDGES)
        if not part:
            return None
        if part in COMMON_TERMS:
            continue
        read = _readings(part, False, part)
        if read is None:
            atoms.append(Atom("word", part))
        else:
            atoms.extend(read[1][0])  # the member's first reading: a list of lists is not read
    return tuple(atoms)


# -- counts ----------------------------------------------------------------------------------------

_ZH_MEASURES = (
    "个副本", "个节点", "个分片", "个实例", "个分区", "个消费者", "个", "台", "次", "条", "只", "位",
    "名", "组",
    "副本", "节点", "分片", "实例", "轮", "遍", "份", "项", "家", "块", "颗", "张", "路", "倍",
)  # fmt: skip
_ZH_DISCOURSE = (
    "原因", "方面", "问题", "可能", "情况", "建议", "方向", "方案", "措施", "步", "点", "要点", "思路",
    "假设", "结论", "阶段", "层面", "件事", "类", "种", "大类", "个方面", "个原因", "个问题", "个建议",
)  # fmt: skip
_EN_DISCOURSE = frozenset(
    "step steps point points cause causes reason reasons thing things option options possibility "
    "possibilities way ways aspect aspects hypothesis hypotheses question questions item items action "
    "actions factor factors scenario scenarios explanation explanations part parts approach approaches "
    "fix fixes suggestion suggestions recommendation recommendations checks candidates issues ideas "
    "areas places things".split()
)
_EN_FUNCTION = frozenset(
    "and or to in on at is are was were be been being the a an as by for with without than then if but so "
    "it its this that these those which who whom whose when where while after before since until till "
    "per from into onto over under above below about around across against along among between during "
    "through via within because although though unless whether not no nor also only still already just "
    "even again more less most least very too quite rather has have had having will would can could "
    "should shall may might must do does did done get gets got make makes made see sees seen each every "
    "any all some both either neither other another such same here there now once twice ago later "
    "earlier first last next previous default defaults by its this has was is as us yes thus always less "
    "unless previous various famous".split()
)
_NEXT_WORD = re.compile(r"[ \t\u00a0]*([A-Za-z]+)")
_ORDINAL_BEFORE = re.compile(
    r"(?:第|step|steps|no\.|#|round|phase|attempt|option|item|point)\s*$", re.IGNORECASE
)
_LIST_MARKER = re.compile(r"(?:^|\n)[ \t]*(?:[-*+>][ \t]*)?\(?$", re.MULTILINE)


COUNT = "#"
"""The unit of a count (``8 consumers``, ``3 个副本``, ``9 times``): it matches a count or a bare number of
the evidence, never a number in another unit (5 replicas are not 5 times)."""


_MEASURE_AFTER = re.compile(
    "[ \t\u00a0]*(?:(?P<measure>"
    + "|".join(map(re.escape, sorted(_ZH_MEASURES, key=len, reverse=True)))
    + ")|(?=(?:"
    + "|".join(map(re.escape, sorted(_ZH_DISCOURSE, key=len, reverse=True)))
    + ")))(?P<discourse>"
    + "|".join(map(re.escape, sorted(_ZH_DISCOURSE, key=len, reverse=True)))
    + ")?"
)
"""A Chinese measure word after a number (``个``, ``次``, ``个副本`` …), and whether one of the draft's own
points follows it (``两个原因``); or such a point right after the number (``三点``)."""


_COUNT_NEXT = frozenset(" \t\u00a0")


def _cjk_next(text: str, end: int) -> bool:
    """Whether the first character after ``end`` and any spaces is CJK."""
    while end < len(text) and text[end] in " \t\u00a0":
        end += 1
    return end < len(text) and "\u3400" <= text[end] <= "\u9fff"


def count_of(text: str, start: int, end: int, value: str, zh_one: bool = False) -> tuple[int, str] | None:
    """Whether a number at ``text[start:end]`` counts something about the incident or its settings
    (LABELS' fine points): it is followed by a measure word or a noun, not by one of the draft's own
    steps or points, and is not a list marker or an ordinal of the draft's own steps. A bare small number
    (one digit, a small number word) is a specific only when it counts. Returns where the counted word
    ends (the count as the draft wrote it, ``9 个``, ``8 consumers``) and its unit: ``#`` and the noun
    it counts (``#replica``, ``#副本``; just ``#`` when the noun is not read), or None."""
    following = text[end : end + 1]
    if following and following not in _COUNT_NEXT and not following.isalpha():
        return None  # a quotation mark, a digit, a dash …: nothing it could count follows
    if following in (".", ")", "、", "）") and _LIST_MARKER.search(text, max(0, start - 40), start):
        return None
    before = text[max(0, start - 12) : start]
    ordinal = before.rstrip().endswith("第")
    if not ordinal and _ORDINAL_BEFORE.search(before):
        return None
    measure = _MEASURE_AFTER.match(text, end) if _cjk_next(text, end) else None
    if measure is not None and (measure.group("measure") or measure.group("discourse")):
        if measure.group("discourse") and measure.group("measure") != "倍":
            return None
        if zh_one or value == "1":
            return None
        following_noun = _ZH_NOUN.match(text, measure.end())
        named = measure.group("measure").lstrip("个") or (
            (following_noun.group(1) or following_noun.group(2)) if following_noun else ""
        )
        return measure.end(), f"{COUNT}{_singular(named.lower())}"
    if ordinal:
        return end, COUNT
    word = _NEXT_WORD.match(text, end)
    if word is None or value == "1" or zh_one:
        return None
    noun = word.group(1).lower()
    if noun == "of":
        return word.end(), COUNT
    if noun in _EN_DISCOURSE or noun in _EN_FUNCTION:
        return None
    if _plural_noun(noun):
        return word.end(), f"{COUNT}{_singular(noun)}"
    second = _NEXT_WORD.match(text, word.end())  # 9 data nodes, 5 failed attempts
    if second is not None and _plural_noun(noun2 := second.group(1).lower()) and noun2 not in _EN_DISCOURSE:
        return second.end(), f"{COUNT}{_singular(noun2)}"
    return None


def _plural_noun(word: str) -> bool:
    """Whether an English word reads as a plural noun (``consumers``, ``times``), not a function word."""
    return len(word) > 2 and word.endswith("s") and not word.endswith("ss") and word not in _EN_FUNCTION


def _singular(noun: str) -> str:
    if noun.endswith(("ses", "xes", "zes", "ches", "shes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") else noun


_ZH_NOUN = re.compile(r"[ \t\u00a0]*([\u4e00-\u9fff]{1,4})|[ \t\u00a0]*([A-Za-z][A-Za-z0-9_-]*)")
"""The word after a Chinese count's measure word: what it counts, or (``三个 CoreDNS 副本``) a name before it,
which :func:`~streams.stations.review.forms.same_thing` then does not hold against another count."""


def _count_start(text: str, start: int) -> int:
    """Where a count starts as written: at ``第`` before it (``第 6 次``), else at the number."""
    at = start
    while at > 0 and text[at - 1] in " \t\u00a0":
        at -= 1
    return at - 1 if at > 0 and text[at - 1] == "第" else start


# -- structure: code and quotations ----------------------------------------------------------------

_FENCE = re.compile(r"(?m)^[ \t]*(`{3,}|~{3,})([^\n]*)\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL)
_CODE_SPAN = re.compile(r"(`+)([^`\n]+?)\1(?!`)")
_QUOTES = {
    "“": "”", "「": "」", "『": "』", '"': '"', "«": "»", "‹": "›", "《": "》", "〈": "〉", "„": "“",
    "‘": "’", "'": "'", "〝": "〞", "﹁": "﹂", "﹃": "﹄", "＂": "＂",
}  # fmt: skip
_OPENER = re.compile("[" + re.escape("".join(_QUOTES)) + "]")
_WORDLIKE = re.compile(f"[{_LETTERS}]")


def _glued(text: str, position: int) -> bool:
    return 0 <= position < len(text) and _WORDLIKE.match(text[position]) is not None


def _apostrophe(text: str, start: int, mark: str) -> bool:
    """Whether an ASCII or typographic single quote at ``start`` is an apostrophe, not an opener."""
    return mark in ("'", "‘") and _glued(text, start - 1)


def _closer(text: str, mark: str, start: int) -> int:
    """Where the quotation opened at ``start`` closes, or -1."""
    closer = _QUOTES[mark]
    at = text.find(closer, start + 1)
    while at >= 0 and closer in ("'", "’") and (_glued(text, at + 1) and _glued(text, at - 1)):
        at = text.find(closer, at + 1)  # don't, it's: an apostrophe inside the quotation
    return at


class _Structure(NamedTuple):
    prose: str
    """The text with quotations and code marks blanked (same length, so offsets are the text's)."""
    quotes: list[tuple[int, int, str]]
    """Each quotation's start, end (delimiters included) and content."""
    codes: list[tuple[int, int, str]]
    """Each code span's or code line's start, end and content."""


def _structure(text: str) -> _Structure:
    chars = list(text) if ("`" in text or "~~~" in text or _OPENER.search(text)) else None
    if chars is None:
        return _Structure(text, [], [])
    codes: list[tuple[int, int, str]] = []
    blocked = bytearray(len(text))  # 1 where a code span or block is: no quotation starts there

    def blank(first: int, last: int) -> None:
        chars[first:last] = " " * (last - first)

    for fence in _FENCE.finditer(text):
        blank(fence.start(), fence.start(3))  # the fence and its info string (a language tag)
        body_end = fence.start(3) + len(fence.group(3))
        blank(body_end, fence.end())
        offset = fence.start(3)
        for line in fence.group(3).split("\n"):
            content = line.strip()
            if content and not content.startswith(("#", "//")):
                first = offset + line.index(content)
                codes.append((first, first + len(content), content))
            offset += len(line) + 1
        blocked[fence.start() : fence.end()] = b"\x01" * (fence.end() - fence.start())
    for span in _CODE_SPAN.finditer(text):
        start, end = span.start(), span.end()
        if blocked[start] or _glued(text, start - 1) or _glued(text, end):
            continue  # inside a block, or marks that split a word (`9`0s): the word reads through them
        ticks = len(span.group(1))
        blank(start, start + ticks)
        blank(end - ticks, end)
        content = span.group(2).strip()
        if content:
            codes.append((start + ticks, end - ticks, content))
        blocked[start:end] = b"\x01" * (end - start)
    quotes: list[tuple[int, int, str]] = []
    position = 0
    dead: set[str] = set()
    while (opener := _OPENER.search(text, position)) is not None:
        start = opener.start()
        mark = text[start]
        position = start + 1
        if blocked[start] or mark in dead or _apostrophe(text, start, mark):
            continue
        end = _closer(text, mark, start)
        if end < 0:
            dead.add(mark)  # no closer after here: none after a later opener either
            continue
        if blocked.find(1, start, end) >= 0:
            continue
        quotes.append((start, end + 1, text[start + 1 : end]))
        blank(start, end + 1)
        position = end + 1
    codes.sort()
    return _Structure("".join(chars), quotes, codes)


# -- the reader ------------------------------------------------------------------------------------

_GROUPED = re.compile(
    r"(?<![0-9A-Za-z.])([0-9]{1,3})((?:([, \u00a0\u202f\u2009])[0-9]{3})(?:\3[0-9]{3})*)(?![0-9])"
)
_HALF_OF = re.compile(r"\s+(?:an?\s+)?")
_OF_THE = re.compile(r"\s+(?:of|the)\b")
_RANGE_BEFORE = re.compile(
    r"(?<![0-9A-Za-z.])[0-9]+(?:\.[0-9]+)?[%a-zA-Z]{0,3}\s*(?:–|—|~|～|〜|to|到|至)\s*$"
)


MOST_CLAIMS = 500
"""The most claims a text is read for (docs/review-rules.md §8): a text stating more is refused at the
next one, which bounds what any text costs (a 256 KiB draft of quotation marks and digits is read only as
far as its 501st claim). No diagnosis a person can check states 500 specifics in one text."""


def read(text: str, most: int = MOST_CLAIMS) -> list[Claim]:
    """The claims of ``text``, in the order they start: at most ``most + 1`` of them (the one after the
    last a text may state, if it states more)."""
    return list(islice(_read(text), most + 1))


def _read(text: str) -> Iterator[Claim]:
    """Every claim of ``text`` in the order they start, read as far as they are asked for: each kind is
    found by a pass of its own in text order, and the passes are merged."""
    structure = _structure(text)
    prose = structure.prose
    codes = (
        Claim("quote", f"`{content}`", start, ((Atom("code", " ".join(shown(content).split())),),))
        for start, _, content in structure.codes
    )
    quotes = (
        Claim("quote", text[start:end], start, ((Atom("quote", value),),))
        for start, end, content in structure.quotes
        if len(value := quote_value(content)) >= 2
    )
    passes: list[Iterator[Claim]] = [codes, quotes, _words(prose, structure.codes)]
    passes += [_english_numbers(prose, structure.codes), _english_multipliers(prose, structure.codes)]
    if ZH_MULTIPLIER.search(prose) is not None or ZH_NUMBER.search(prose) is not None:
        passes.append(chinese_numbers(prose))
    return merge(*passes, key=_START)


_START = attrgetter("start")


_QUOTE_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def quote_value(content: str) -> str:
    """A quotation's words as compared (§6): shown, without spaces and markdown marks, and without the
    punctuation at its ends."""
    value = "".join(shown(_MARKS.sub("", content)).split())
    return _QUOTE_EDGES.sub("", value)


def _code_of(codes: list[tuple[int, int, str]], position: int) -> int:
    """The index of the code span ``position`` is in (``codes`` in order, apart), or -1."""
    if not codes:
        return -1
    index = bisect_right(codes, (position, _AFTER_ANY)) - 1
    return index if index >= 0 and position < codes[index][1] else -1


_AFTER_ANY = 1 << 62


def _words(prose: str, codes: list[tuple[int, int, str]]) -> Iterator[Claim]:
    """The numbers and identifiers of the prose's words (quotations blanked), with keys (§5), in order."""
    grouped: dict[int, tuple[int, Claim]] = {}
    for match in _GROUPED.finditer(prose):  # 1,024 and 2 350 000: one number each (or, read apart, several)
        start, end = match.span()
        whole = match.group(1) + _NOT_DIGIT.sub("", match.group(2))
        unit, end_u = _unit_after(prose, end)
        if unit is None and (counted := count_of(prose, start, end, whole)) is not None:
            end_u, unit = counted
        parts = _GROUP_SEPARATOR.split(match.group(0))
        apart = (*(Atom("number", p) for p in parts[:-1]), Atom("number", parts[-1], unit))
        both: tuple[Reading, ...] = ((Atom("number", whole, unit),), apart)
        grouped[start] = (end_u, Claim("number", prose[start:end_u], start, both, _code_of(codes, start)))
    key: str | None = None  # the identifier a number may be stated next to, and where it ends
    key_end = -1
    skip_to = -1
    for match in _TOKEN.finditer(prose):
        start, end = match.span()
        if start < skip_to:
            continue
        if start in grouped:
            skip_to, claim = grouped[start]
            end = skip_to
        else:
            raw = match.group()
            read = word_readings(raw)
            if read is None:
                continue
            kind, readings = read
            first = start + len(raw) - len(raw.lstrip(_SHOWN_LEADING_EDGES))  # /var/log/…: as written
            start += len(raw) - len(raw.lstrip(_LEADING_EDGES))
            end -= len(raw) - len(raw.rstrip(_EDGES))
            end_shown = end  # the claim as written: from first to end_shown
            atom = readings[0][0]
            if kind == "number" and atom.unit is None:
                unit, end_u = _unit_after(prose, end)
                if unit is not None:  # 60 秒, 120/90 秒: the unit written after the word is its numbers'
                    readings = _with_unit(readings, unit)
                    end = end_shown = skip_to = end_u  # the unit's own word is not read again
                elif (counted := count_of(prose, start, end, atom.value)) is not None:
                    readings = _with_unit(readings, counted[1])
                    first, end_shown = _count_start(prose, start), counted[0]
                elif len(atom.value) == 1:
                    continue
            if "`" in raw or "*" in raw:
                while first > 0 and prose[first - 1] in "*`":  # `9`0s, **1**20s: as written, marks and all
                    first -= 1
            if kind == "number" and start and prose[start - 1] in _RANGE_TAIL:
                lower = _RANGE_BEFORE.search(prose, max(0, start - 24), start)
                if lower is not None:  # 10–20 times: the range as written
                    first = lower.start()
            claim = Claim(kind, prose[first:end_shown], start, readings, _code_of(codes, start))
        atom = claim.readings[0][0]
        if claim.kind == "number":
            if key is not None and _CONNECTOR.fullmatch(prose, key_end, start):
                claim = claim._replace(readings=_with_key(claim.readings, key))
                key_end = end  # "from 1,000 to 10,000": the next number may be the same key's
            else:
                key = None
        elif atom.kind == "identifier" and len(claim.readings) == 1:
            key, key_end = atom.value, end
        else:
            key = None
        yield claim


_LEADING_EDGES = _EDGES.replace("-", "")
"""A word's leading punctuation, but for the dashes that start a flag."""
_SHOWN_LEADING_EDGES = _LEADING_EDGES.replace("/", "")
"""What a word's surface drops at its start: not a flag's dashes, nor a path's first slash."""
_RANGE_TAIL = frozenset(" \t–—~～〜到至o")
_NOT_DIGIT = re.compile(r"[^0-9]")
_GROUP_SEPARATOR = re.compile(r"[, \u00a0\u202f\u2009]")


@lru_cache(maxsize=4096)
def _with_unit(readings: tuple[Reading, ...], unit: str) -> tuple[Reading, ...]:
    """``readings`` with ``unit`` on each number that has none (a unit after a word is its numbers')."""
    return tuple(
        tuple(a._replace(unit=unit) if a.kind == "number" and a.unit is None else a for a in reading)
        for reading in readings
    )


@lru_cache(maxsize=4096)
def _with_key(readings: tuple[Reading, ...], key: str) -> tuple[Reading, ...]:
    """``readings`` with each number stated next to ``key`` (§5)."""
    return tuple(
        tuple(a._replace(key=key) if a.kind == "number" else a for a in reading) for reading in readings
    )


_YEAR = re.compile(r"(?:[^0-9.]|^)(?:19|20)[0-9]{2}")
"""The four digits of a calendar year (1900-2099) ending a number: ``年`` after it is no unit."""


_PER_SECOND = re.compile(r"[ \t\u00a0]*(?:per[ \t\u00a0]+(?:second|sec|s)\b|a[ \t\u00a0]+second\b|每秒)")
_UNIT_START = frozenset(" \t\u00a0-(（%×µμ")
_UNIT_WORD = re.compile(
    r"[ \t\u00a0]?(?:-[ \t\u00a0]?)?(?:([A-Za-z%µμ×]+(?:/[A-Za-z]+)?)(?![A-Za-z0-9_])"
    r"|([\u4e00-\u9fff]{1,3}(?:/[\u4e00-\u9fff]{1,2})?))"
    r"|[ \t\u00a0]?[(（][ \t\u00a0]?([A-Za-z%µμ]+|[\u4e00-\u9fff]{1,3})[ \t\u00a0]?[)）]"
)


def _unit_after(text: str, end: int) -> tuple[str | None, int]:
    """The unit written right after ``text[:end]`` (glued, after a space or a hyphen, or in parentheses:
    ``60s``, ``60 seconds``, ``60-second``, ``60 秒``, ``20000（毫秒）``), and where it ends."""
    if end >= len(text):
        return None, end
    following = text[end]
    if not (following in _UNIT_START or following.isalpha()):
        return None, end
    match = _UNIT_WORD.match(text, end)
    if match is None:
        return None, end
    ascii_name, cjk, wrapped = match.groups()
    if ascii_name is not None:
        unit = unit_of(ascii_name.lower())
        if unit is None:
            return None, end
        rate = _PER_SECOND.match(text, match.end())
        if rate is not None and unit_of(f"{ascii_name.lower()}/s") is not None:  # 125 MiB per second
            return unit_of(f"{ascii_name.lower()}/s"), rate.end()
        return unit, match.end()
    name = cjk if cjk is not None else wrapped
    if cjk is None:  # in parentheses: the whole word is the unit
        unit = unit_of(name.lower())
        return (unit, match.end()) if unit is not None else (None, end)
    if cjk is not None and name.startswith("年") and _YEAR.fullmatch(text, max(0, end - 5), end):
        return None, end  # 2026 年: a year of the calendar, not a count of years
    if "/" in name and (unit := unit_of(name)) is not None:  # 次/秒
        return unit, match.end()
    name = name.split("/")[0]
    for size in range(len(name), 0, -1):  # 个小时, 小时: the longest unit the characters start with
        unit = unit_of(name[:size])
        if unit is not None:
            return unit, match.start(2) + size
    return None, end


def _english_numbers(prose: str, codes: list[tuple[int, int, str]]) -> Iterator[Claim]:
    """Numbers written in English words (§3.1, ``text2num``), in order."""
    for match in EN_NUMBER.finditer(prose):
        value = english_value(match.group())
        if value is None:
            continue
        start, end = match.span()
        unit, end_u = _unit_after(prose, end)
        if unit is None and (counted := count_of(prose, start, end, value)) is not None:
            end_u, unit = counted
        elif unit is None and len(value) == 1:
            continue
        if unit is None and value in ("0", "1"):
            continue
        yield Claim(
            "number", prose[start:end_u], start, ((Atom("number", value, unit),),), _code_of(codes, start)
        )


def _english_multipliers(prose: str, codes: list[tuple[int, int, str]]) -> Iterator[Claim]:
    """Multipliers and fractions written in English words (``twice``, ``half an hour``), in order."""
    for match in EN_MULTIPLIER.finditer(prose):
        value, unit = EN_MULTIPLIERS[match.group().lower()]
        start, end = match.span()
        if value == "0.5":
            after = _HALF_OF.match(prose, end)
            if after is not None:
                half_of, end_u = _unit_after(prose, after.end() - 1)
                if half_of is not None:
                    yield Claim("number", prose[start:end_u], start, ((Atom("number", value, half_of),),))
                    continue
            if not _OF_THE.match(prose, end):
                continue
        yield Claim(
            "number", prose[start:end], start, ((Atom("number", value, unit),),), _code_of(codes, start)
        )


def chinese_numbers(prose: str, everything: bool = False) -> Iterator[Claim]:
    """The numbers written in Chinese (§3.1), in order: multipliers (``翻倍``) and runs of numerals that
    are numbers (:func:`_chinese`). ``everything``: every number, counted or not (the evidence's)."""
    multiplied: set[int] = set()
    multipliers = []
    for match in ZH_MULTIPLIER.finditer(prose):
        value, unit = ZH_MULTIPLIERS[match.group()]
        multiplied.update(range(*match.span()))
        multipliers.append(Claim("number", match.group(), match.start(), ((Atom("number", value, unit),),)))
    yield from merge(multipliers, _chinese_numerals(prose, everything, multiplied), key=_START)


def _chinese_numerals(prose: str, everything: bool, multiplied: set[int]) -> Iterator[Claim]:
    if ZH_NUMBER.search(prose) is None:
        return
    idioms = [m.span() for m in _IDIOM.finditer(prose)]
    for match in ZH_NUMBER.finditer(prose):
        start, end = match.span()
        if start in multiplied:
            continue
        claim = _chinese(prose, start, end, match.group(), everything, idioms)
        if claim is not None:
            yield claim


_ZH_IDIOMS = (
    "一般", "一直", "一致", "一下", "一些", "一旦", "一起", "一定", "一样", "一切", "统一", "唯一", "万一",
    "千万", "一一", "一次性", "一律", "之一", "一时", "一体", "一边", "一方面", "一面", "一并", "一同",
    "一概", "一度", "不一", "同一", "逐一", "一口气", "一再", "一开始", "一遍", "一手", "一眼", "一整",
    "一对", "一贯", "一系列", "一瞬", "十足", "三思", "四处", "一部分", "一侧", "一端", "一段", "一环",
    "两者", "两边", "两端", "两侧", "一旁", "一味", "一向", "一经", "一齐", "一早", "一层", "一行",
    "一条龙", "百分百", "一步", "九成", "十之八九", "一共", "一半",
)  # fmt: skip
_IDIOM = re.compile("|".join(map(re.escape, sorted(_ZH_IDIOMS, key=len, reverse=True))) + "|十分(?!钟)")


def _in_idiom(idioms: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether a run of numerals at ``start:end`` overlaps a word that is no number (``一般``, ``统一``,
    ``十分`` not followed by ``钟``); ``idioms``: those words' spans, in order."""
    at = bisect_right(idioms, (end, 0)) - 1
    while at >= 0 and idioms[at][1] > start:
        if idioms[at][0] < end:
            return True
        at -= 1
    return False


def _chinese(
    prose: str, start: int, end: int, numerals: str, everything: bool, idioms: list[tuple[int, int]]
) -> Claim | None:
    """A run of Chinese numerals as a number claim, when it is one (§3.3)."""
    if _in_idiom(idioms, start, end):
        return None
    value = chinese_value(numerals)
    if value is None:
        return None
    unit, end_u = _unit_after(prose, end)
    if unit == "y" and len(value) == 4 and value[:2] in ("19", "20"):  # 二〇二五年: a year, not 2025 years
        unit = None
    percent = prose[max(0, start - 3) : start] == "百分之"
    if percent:
        unit = "%"
        start -= 3
    if numerals == "半" and unit is None:
        return None
    small = len(numerals) == 1 and numerals not in "十"
    if unit is None and not percent:
        if (counted := count_of(prose, start, end, value, zh_one=(value == "1"))) is not None:
            end_u, unit = counted
            start = _count_start(prose, start)
        elif everything:
            pass
        elif small or numerals in ("一十",):
            return None
        elif prose[max(0, start - 1) : start] == "第" and prose[end : end + 1] in ("步", "点", "条"):
            return None
    return Claim("number", prose[start:end_u], start, ((Atom("number", value, unit),),))
