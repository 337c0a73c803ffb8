"""What a reader sees: the display form of a specific, its units and its number words (review rules §2-§3).

A specific is judged by what it displays (docs/review-rules.md §2), so before anything is compared
both the draft's words and the evidence's are read through :func:`shown`:

- Unicode NFKC (fullwidth ``６０`` is ``60``, ``ｍｓ`` is ``ms``);
- invisible characters removed: format characters (general category Cf: U+200B, U+2060, U+FEFF,
  the bidi controls …), combining marks left over after NFKC (Mn, Me) and the Hangul fillers, so
  ``9\\u200b0s`` displays ``90s``;
- a digit of any script read as its ASCII digit (``٦٠٠`` is ``600``, ``९५`` is ``95``);
- a letter that Unicode's confusables data (UTS #39, as the ``confusable-homoglyphs`` package ships it)
  marks as a look-alike of an ASCII letter or digit read as that character (Cyrillic ``е`` in ``tls.kеy``
  is ``e``), except in the CJK scripts, whose characters imitate nothing here;
- ASCII letters lowered; and ``O``/``o`` right after a digit read as zeros (``6OO`` is ``600``, ``9Os`` is
  ``90s``), ``l``/``I`` between digits as ones.

The same function reads the evidence, so a form that does not change what a person reads never
changes a verdict, and one that does cannot hide from it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache, lru_cache
from importlib import resources

from streams.stations.blank import HANGUL_FILLERS

# -- the display form ------------------------------------------------------------------------------

_CJK = (
    (0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3100, 0x31FF),
    (0x3200, 0x4DBF), (0x4E00, 0x9FFF), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F), (0x20000, 0x3FFFF),
)  # fmt: skip
"""Hangul, CJK radicals, punctuation, kana, bopomofo, ideographs and their compatibility forms: never
read as a look-alike of an ASCII character (``〇`` is a Chinese numeral, not an ``O``)."""


def _cjk(code: int) -> bool:
    return any(first <= code <= last for first, last in _CJK)


@cache
def _table() -> dict[int, str | None]:
    """``str.translate``'s table for what NFKC leaves: invisible characters removed, digits of any script
    as ASCII digits, look-alike letters as the ASCII character they imitate. Made once per process, on
    the first text that is not ASCII (some 20 ms: the Basic and Supplementary Multilingual Planes and
    the tag characters are asked their category)."""
    table: dict[int, str | None] = {ord(c): None for c in HANGUL_FILLERS}
    for code in (*range(0x80, 0x20000), *range(0xE0000, 0xE0080), *range(0xE0100, 0xE01F0)):
        character = chr(code)
        kind = unicodedata.category(character)
        if kind in ("Cf", "Mn", "Me"):
            table[code] = None
        elif kind == "Nd":
            table[code] = str(unicodedata.decimal(character))
    for character, ascii_character in _confusables().items():
        table.setdefault(ord(character), ascii_character)
    return table


def _confusables() -> dict[str, str]:
    """Each non-ASCII, non-CJK character that UTS #39 lists as confusable with exactly one ASCII letter
    (or, failing a letter, one digit), with that character."""
    data = json.loads(
        resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
    )
    out: dict[str, str] = {}
    for character, entries in data.items():
        if len(character) != 1 or character.isascii() or _cjk(ord(character)):
            continue
        targets = {e["c"] for e in entries if len(e["c"]) == 1 and e["c"].isascii() and e["c"].isalnum()}
        letters = sorted(t for t in targets if t.isalpha())
        digits = sorted(t for t in targets if t.isdigit())
        if len({t.lower() for t in letters}) == 1:
            out[character] = letters[0].lower()
        elif not letters and len(digits) == 1:
            out[character] = digits[0]
    return out


_ZERO_LIKE = re.compile(r"(?<=[0-9])o+(?=[0-9]|(?:s|ms|m|h|d|mi|gi|ki|mb|gb|kb|k|g|%|x)?(?![a-z0-9]))")
_ONE_LIKE = re.compile(r"(?<=[0-9])[li](?=[0-9])")


_DIGIT_THEN_LOOKALIKE = re.compile(r"[0-9][oli]")


def _ascii_shown(text: str) -> str:
    """Lowered ASCII with the letters that stand for digits read as those digits."""
    text = text.lower()
    if _DIGIT_THEN_LOOKALIKE.search(text) is not None:
        text = _ONE_LIKE.sub("1", _ZERO_LIKE.sub(lambda m: "0" * len(m.group()), text))
    return text


def displayed(text: str) -> str:
    """``text`` as it displays, its letters' case kept: NFKC, invisible characters removed, digits of any
    script and look-alike letters as ASCII. :func:`shown` is this lowered, each character in place."""
    if not text.isascii():
        text = nfkc(text)
        if _UNUSUAL.search(text) is not None:
            text = nfkc(text.translate(_table()))  # once more: a removed mark may leave a composable pair
    return text


_UNUSUAL = re.compile("[^\x00-\x7f\u2010-\u2027\u2030-\u205e\u3000-\u9fff\uff00-\uffef]")
"""A character outside ASCII, everyday punctuation and CJK: the only kind :func:`_table` may change
(text without one is not translated)."""


def shown(text: str) -> str:
    """What ``text`` displays, as the review compares it: see the module docstring."""
    return _ascii_shown(displayed(text))


def lowered(text: str) -> str:
    """A displayed text as :func:`shown` gives it (the same length: ASCII lowered, digit look-alikes)."""
    return _ascii_shown(text)


# The compatibility characters of everyday Chinese text, each with its decomposition. Putting a
# character's NFKD in its place never changes the NFKC of a text (NFKC is the composition of the NFKD),
# and a text with only these is then often NFKC already: a quick check instead of CPython's full
# normalization, which costs some 75 µs per KB of such text.
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


# -- units -----------------------------------------------------------------------------------------

UNITS: dict[str, tuple[str, ...]] = {
    "ns": ("ns", "nsec", "nanosecond", "nanoseconds", "纳秒"),
    "us": ("us", "µs", "μs", "usec", "microsecond", "microseconds", "微秒"),
    "ms": ("ms", "msec", "msecs", "millis", "millisecond", "milliseconds", "毫秒"),
    "s": ("s", "sec", "secs", "second", "seconds", "秒", "秒钟"),
    "min": ("min", "mins", "minute", "minutes", "分钟", "分鐘"),
    "h": ("h", "hr", "hrs", "hour", "hours", "小时", "个小时", "小時"),
    "d": ("d", "day", "days", "天"),
    "w": ("w", "wk", "wks", "week", "weeks", "周", "星期", "个星期"),
    "mo": ("mo", "month", "months", "个月"),
    "y": ("y", "yr", "yrs", "year", "years", "年"),
    "b": ("b", "byte", "bytes", "字节"),
    "kb": ("kb", "kilobyte", "kilobytes"),
    "mb": ("mb", "megabyte", "megabytes", "兆"),
    "gb": ("gb", "gigabyte", "gigabytes"),
    "tb": ("tb", "terabyte", "terabytes"),
    "pb": ("pb", "petabyte", "petabytes"),
    "kib": ("kib", "ki"),
    "mib": ("mib", "mi"),
    "gib": ("gib", "gi"),
    "tib": ("tib", "ti"),
    "k": ("k",),
    "m": ("m",),
    "g": ("g",),
    "%": ("%", "percent", "per cent", "pct"),
    "x": ("x", "×", "倍"),
    "core": ("core", "cores", "vcpu", "vcpus", "核"),
    "hz": ("hz",),
    "iops": ("iops",),
    "qps": ("qps",),
    "rps": ("rps",),
    "rpm": ("rpm",),
    "tps": ("tps",),
    "fps": ("fps",),
    "ppm": ("ppm",),
    "ppb": ("ppb",),
    "bps": ("bps", "bit/s"),
    "kbps": ("kbps", "kbit/s"),
    "mbps": ("mbps", "mbit/s"),
    "gbps": ("gbps", "gbit/s"),
}
"""Each canonical unit with the ways a draft or an excerpt writes it. Units are compared, never
converted: ``60s`` is ``60 seconds`` and ``60 秒``, never ``1 minute`` (LABELS: values as the evidence
gives them). ``m`` is a minute in a duration and a milli-core in a CPU quantity; it stands for itself and
for ``min``."""

_RATE_SUFFIXES = ("/s", "/sec", "/second", "/min", "/minute", "/h", "/hour", "/day", "每秒")

_ALIASES: dict[str, str] = {}
for _canonical, _names in UNITS.items():
    for _name in _names:
        _ALIASES[_name] = _canonical
for _canonical in ("b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "k", "m", "g"):
    for _suffix in ("/s", "/sec", "ps"):
        _ALIASES[f"{_canonical}{_suffix}"] = f"{_canonical}/s"
for _count in (
    "req",
    "reqs",
    "request",
    "requests",
    "op",
    "ops",
    "msg",
    "msgs",
    "message",
    "messages",
    "qps",
):
    for _suffix in _RATE_SUFFIXES:
        _ALIASES[f"{_count}{_suffix}"] = "/s" if _suffix in ("/s", "/sec", "/second", "每秒") else _suffix
_ALIASES.update({"次/秒": "/s", "个/秒": "/s", "条/秒": "/s"})

SAME_UNIT: dict[str, frozenset[str]] = {"m": frozenset({"m", "min"}), "min": frozenset({"m", "min"})}
"""Units that stand for one another (see :data:`UNITS`)."""


def unit_of(name: str) -> str | None:
    """The canonical unit ``name`` (lowered) writes, or None when it is no unit."""
    return _ALIASES.get(name)


def same_unit(left: str | None, right: str | None) -> bool:
    """Whether two canonical units (or None, no unit) are the same unit. Counts (``#``, ``#replica``)
    are the same unit unless both name what they count and the names differ (one holding the other is
    the same thing: ``#版本`` and ``#不同版本``)."""
    if left == right:
        return True
    if left is None or right is None:
        return False
    if left[:1] == "#" and right[:1] == "#":
        return same_thing(left[1:], right[1:])
    return right in SAME_UNIT.get(left, ())


COUNTED_ALIKE: tuple[frozenset[str], ...] = tuple(
    frozenset(group.split())
    for group in (
        "replica instance pod copy container 副本 实例 容器",
        "node host server machine vm broker member 节点 主机 服务器 机器 台 成员",
        "consumer worker 消费者",
        "partition 分区",
        "shard 分片",
        "connection conn 连接",
        "thread 线程",
        "request call query req 请求 调用 查询",
        "error failure fault 错误 失败 故障",
        "retry attempt 重试 尝试",
        "restart reboot crash 重启 崩溃",
        "message msg record event entry 消息 记录 事件 条目",
        "file 文件",
        "key 键",
        "version release 版本",
        "image 镜像",
        "disk volume drive 磁盘 卷 盘",
        "zone az 可用区",
        "rack 机架",
        "cluster 集群",
        "second 秒",
    )
)
"""Nouns a count may use for the same things (a paraphrase, or the other language): 3 replicas is 3 个副本."""
_ANY_THING = frozenset({"", "time", "occurrence", "item", "thing", "次", "遍", "回", "个", "项", "条"})
"""What counts anything: 9 times is 9 restarts."""


def same_thing(left: str, right: str) -> bool:
    """Whether two counted nouns (lowered, singular) may name the same things: they differ only when each is
    a noun of :data:`COUNTED_ALIKE` and no group holds both (3 replicas are not 3 nodes); a noun the table
    does not know is not held against another (it may be a name before the noun, or a paraphrase)."""
    if left in _ANY_THING or right in _ANY_THING or left in right or right in left:
        return True
    left_groups = {i for i, group in enumerate(COUNTED_ALIKE) if _noun_in(group, left)}
    right_groups = {i for i, group in enumerate(COUNTED_ALIKE) if _noun_in(group, right)}
    return not left_groups or not right_groups or bool(left_groups & right_groups)


def _noun_in(group: frozenset[str], noun: str) -> bool:
    """Whether ``noun`` is a word of ``group`` (a Chinese noun: holds one, ``个副本`` holds ``副本``)."""
    return noun in group or (not noun.isascii() and any(not w.isascii() and w in noun for w in group))


UNIT_HINTS: tuple[tuple[str, str], ...] = (
    ("millis", "ms"),
    ("_ms", "ms"),
    ("ms", "ms"),
    ("micros", "us"),
    ("nanos", "ns"),
    ("seconds", "s"),
    ("secs", "s"),
    ("_sec", "s"),
    ("_s", "s"),
    ("minutes", "min"),
    ("_min", "min"),
    ("hours", "h"),
    ("_hours", "h"),
    ("days", "d"),
    ("_days", "d"),
    ("bytes", "b"),
    ("_mb", "mb"),
    ("_kb", "kb"),
    ("_gb", "gb"),
    ("percent", "%"),
    ("percentage", "%"),
    ("ratio", "%"),
    ("multiplier", "x"),
    ("factor", "x"),
)
"""A key whose name ends so fixes the unit of a bare number it is given (``MaxGCPauseMillis=200`` is
200 ms; LABELS' fine points): the evidence's bare number then also supports that unit."""


def hinted_unit(key: str) -> str | None:
    """The unit a key's name fixes (lowered key), or None: its ending (``…millis``), or the key itself
    when it is a unit's name (``iops: "6000"``)."""
    named = _ALIASES.get(key)
    if named is not None and len(key) > 2:
        return named
    for ending, unit in UNIT_HINTS:
        if key.endswith(ending):
            return unit
    return None


# -- number words ----------------------------------------------------------------------------------

_EN_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_EN_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_EN_SCALES = ("hundred", "thousand", "million", "billion")
_EN_WORD = "|".join([*_EN_UNITS, *_EN_TENS])
EN_NUMBER = re.compile(
    rf"\b(?:(?:{_EN_WORD})(?:[- ](?:{_EN_WORD}))*)"
    rf"(?:[ -](?:and[ -])?(?:{_EN_WORD}|{'|'.join(_EN_SCALES)}))*\b",
    re.IGNORECASE,
)
"""A run of English number words (``forty-eight``, ``two hundred``, ``one thousand and five``)."""

EN_MULTIPLIERS: dict[str, tuple[str, str | None]] = {
    "twice": ("2", "x"),
    "double": ("2", "x"),
    "doubled": ("2", "x"),
    "doubles": ("2", "x"),
    "doubling": ("2", "x"),
    "triple": ("3", "x"),
    "tripled": ("3", "x"),
    "triples": ("3", "x"),
    "thrice": ("3", "x"),
    "quadruple": ("4", "x"),
    "quadrupled": ("4", "x"),
    "half": ("0.5", None),
    "halved": ("0.5", "x"),
    "halve": ("0.5", "x"),
    "a third": ("1/3", None),
    "one third": ("1/3", None),
    "a quarter": ("1/4", None),
    "one quarter": ("1/4", None),
}
"""Multipliers and fractions written as words: numbers when they are about the incident or its settings
(LABELS' fine points)."""
EN_MULTIPLIER = re.compile(
    r"\b(?:" + "|".join(sorted(map(re.escape, EN_MULTIPLIERS), key=len, reverse=True)) + r")\b(?![-‐])",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def english_value(words: str) -> str | None:
    """The value of a run of English number words (``text2num``), or None when it is not one number."""
    from text_to_num import text2num

    phrase = " ".join(words.lower().replace("-", " ").split())
    try:
        return str(text2num(phrase, "en"))
    except ValueError:
        return None


ZH_DIGITS = "零〇一二两三四五六七八九"
ZH_NUMBER = re.compile(rf"[{ZH_DIGITS}十百千万亿]+(?:点[{ZH_DIGITS}]+)?|半")
"""A run of Chinese numerals (``六十``, ``二十三``, ``一千五百``, ``零点五``), or ``半`` (half)."""

ZH_MULTIPLIERS: dict[str, tuple[str, str | None]] = {
    "翻倍": ("2", "x"),
    "翻一倍": ("2", "x"),
    "双倍": ("2", "x"),
    "翻番": ("2", "x"),
    "一半": ("0.5", None),
    "减半": ("0.5", "x"),
    "三分之一": ("1/3", None),
    "四分之一": ("1/4", None),
}
ZH_MULTIPLIER = re.compile("|".join(sorted(map(re.escape, ZH_MULTIPLIERS), key=len, reverse=True)))


_ZH_DIGIT = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_ZH_SMALL = {"十": 10, "百": 100, "千": 1000}
_ZH_LARGE = {"万": 10**4, "亿": 10**8}


@lru_cache(maxsize=4096)
def chinese_value(numerals: str) -> str | None:
    """The value of a run of Chinese numerals (``六十`` 60, ``二十三`` 23, ``一千五百`` 1500, ``两万`` 20000,
    ``二〇二五`` 2025, ``零点五`` 0.5, ``半`` 0.5), or None when it is not one number.

    Written here rather than taken from ``cn2an``: that package (weighed for this) takes some 220 ms to
    import and 26 µs a call, and its text mode reads ``一般`` as ``1般``; the grammar of these numerals
    is the few lines below."""
    if numerals == "半":
        return "0.5"
    whole, _, fraction = numerals.partition("点")
    if fraction and not all(c in _ZH_DIGIT for c in fraction):
        return None
    value = _chinese_integer(whole) if whole else 0
    if value is None:
        return None
    if fraction:
        return f"{value}." + "".join(str(_ZH_DIGIT[c]) for c in fraction)
    return str(value)


def _chinese_integer(numerals: str) -> int | None:
    if all(c in _ZH_DIGIT for c in numerals):  # 二〇二五: digit by digit
        return int("".join(str(_ZH_DIGIT[c]) for c in numerals))
    total = section = digit = 0
    last_small = 10**9
    last_large = 10**12
    pending = False
    for c in numerals:
        if c in "零〇" and not pending:
            continue  # 一百零五: a zero between units holds a place
        if c in _ZH_DIGIT:
            if pending:
                return None  # two digits in a row inside a number with units: not a number
            digit, pending = _ZH_DIGIT[c], True
        elif c in _ZH_SMALL:
            unit = _ZH_SMALL[c]
            if unit >= last_small:
                return None
            section += (digit if pending else 1) * unit
            digit, pending, last_small = 0, False, unit
        else:
            unit = _ZH_LARGE[c]
            if unit >= last_large or (section == 0 and not pending):
                return None
            total += (section + (digit if pending else 0)) * unit
            section, digit, pending, last_small, last_large = 0, 0, False, 10**9, unit
    return total + section + (digit if pending else 0)
