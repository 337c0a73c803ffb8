"""A deliberately naive second reading of SPEC 4.2 (the review's normal form, specifics and support).

Written from the SPEC's words alone, as plainly as possible: ``unicodedata.normalize`` each time, character
loops, no regular expressions, no caching. ``test_review_reference`` compares ``streams.stations.review``
against it; where the two disagree, the SPEC's sentence decides which one is wrong.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# Unicode White_Space (PropList.txt). Not str.isspace(): that also takes U+001C..U+001F (not White_Space).
WHITE_SPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
ASCII_DIGITS = "0123456789"
ASCII_LETTERS = ASCII_UPPER + ASCII_LOWER
ASCII_LETTERS_DIGITS = ASCII_LETTERS + ASCII_DIGITS
WORD_CHARACTERS = ASCII_LETTERS_DIGITS + "_./:-"
WORD_EDGES = "./:-"

OPENERS_TO_CLOSERS = {"“": "”", "「": "」", "『": "』", '"': '"', "`": "`"}

COMMON_TERMS = (
    "p50 p75 p90 p95 p99 p999 http/1.0 http/1.1 http/2 http/3 h2 h3 ipv4 ipv6 l4 l7 utf-8 utf8 utf-16 utf16"
    " sha1 sha-1 sha256 sha-256 sha512 md5 base64 x86 x64 x86_64 amd64 arm64 aarch64 k8s k3s s3 ec2 e2e i18n"
    " l10n 2fa mfa oauth2 tls1.2 tls1.3 2xx 3xx 4xx 5xx"
).split(" ")

NUMBER = "number"
IDENTIFIER = "identifier"
QUOTE = "quote"


def lower_ascii(text: str) -> str:
    """A-Z lowered, nothing else."""
    out = ""
    for character in text:
        if character in ASCII_UPPER:
            out += ASCII_LOWER[ASCII_UPPER.index(character)]
        else:
            out += character
    return out


def normal_form(text: str) -> str:
    """N(s): NFKC; ASCII A-Z lowered; each run of White_Space one space; no leading or trailing space."""
    text = unicodedata.normalize("NFKC", text)
    text = lower_ascii(text)
    out = ""
    previous_was_space = False
    for character in text:
        if character in WHITE_SPACE:
            if not previous_was_space:
                out += " "
            previous_was_space = True
        else:
            out += character
            previous_was_space = False
    while out.startswith(" "):
        out = out[1:]
    while out.endswith(" "):
        out = out[:-1]
    return out


def evidence_form(strings: list[str]) -> str:
    """E: the evidence strings joined with a newline, in normal form."""
    return normal_form("\n".join(strings))


def is_number_word(word: str) -> bool:
    """[0-9]+([./:-][0-9]+)*, the whole word."""
    if word == "":
        return False
    groups = [""]
    for character in word:
        if character in ASCII_DIGITS:
            groups[-1] += character
        elif character in "./:-":
            groups.append("")
        else:
            return False
    for group in groups:
        if group == "":
            return False
    return True


def number_with_unit(word: str) -> str | None:
    """The number part when the word is ([0-9]+(\\.[0-9]+)?)[A-Za-z]+, else None."""
    position = 0
    while position < len(word) and word[position] in ASCII_DIGITS:
        position += 1
    if position == 0:
        return None
    if position < len(word) and word[position] == ".":
        after_dot = position + 1
        while after_dot < len(word) and word[after_dot] in ASCII_DIGITS:
            after_dot += 1
        if after_dot == position + 1:
            return None
        position = after_dot
    number_part = word[:position]
    unit = word[position:]
    if unit == "":
        return None
    for character in unit:
        if character not in ASCII_LETTERS:
            return None
    return number_part


def looks_like_identifier(word: str) -> bool:
    """A digit, or _, or / next to a letter, or . with two letters or digits on each side."""
    for character in word:
        if character in ASCII_DIGITS or character == "_":
            return True
    for index in range(len(word)):
        if word[index] != "/":
            continue
        before = word[index - 1] if index >= 1 else ""
        after = word[index + 1] if index + 1 < len(word) else ""
        if before != "" and after != "":
            if before in ASCII_LETTERS_DIGITS and after in ASCII_LETTERS:
                return True
            if before in ASCII_LETTERS and after in ASCII_LETTERS_DIGITS:
                return True
    for index in range(len(word)):
        if word[index] != ".":
            continue
        if index < 2 or index + 2 >= len(word):
            continue
        two_before = word[index - 2 : index]
        two_after = word[index + 1 : index + 3]
        if all(c in ASCII_LETTERS_DIGITS for c in two_before) and all(
            c in ASCII_LETTERS_DIGITS for c in two_after
        ):
            return True
    return False


def word_specific(word: str) -> tuple[str, str] | None:
    """What one stripped word states: (kind, value), or None."""
    if is_number_word(word):
        if len(word) == 1:
            return None
        return (NUMBER, word)
    unit_number = number_with_unit(word)
    if unit_number is not None:
        if len(unit_number) == 1:
            return None
        return (NUMBER, unit_number)
    if looks_like_identifier(word):
        value = lower_ascii(word)
        if value in COMMON_TERMS:
            return None
        return (IDENTIFIER, value)
    return None


def strip_edges(word: str) -> str:
    while word != "" and word[0] in WORD_EDGES:
        word = word[1:]
    while word != "" and word[-1] in WORD_EDGES:
        word = word[:-1]
    return word


def specifics(text: str) -> list[tuple[str, str]]:
    """The specifics of a text, (kind, value), each once at its first offset, in offset order."""
    nfkc = unicodedata.normalize("NFKC", text)
    found: list[tuple[int, str, str]] = []  # (offset, kind, value)
    remaining = list(nfkc)

    # 1. Quotations.
    index = 0
    while index < len(nfkc):
        character = nfkc[index]
        if character in OPENERS_TO_CLOSERS:
            closer = OPENERS_TO_CLOSERS[character]
            closer_index = -1
            for later in range(index + 1, len(nfkc)):
                if nfkc[later] == closer:
                    closer_index = later
                    break
            if closer_index != -1:
                span = nfkc[index + 1 : closer_index]
                value = normal_form(span)
                if len(value) >= 2:
                    found.append((index, QUOTE, value))
                for blank in range(index, closer_index + 1):
                    remaining[blank] = " "
                index = closer_index + 1
                continue
        index += 1

    # 2. Words.
    index = 0
    while index < len(remaining):
        if remaining[index] not in WORD_CHARACTERS:
            index += 1
            continue
        start = index
        run = ""
        while index < len(remaining) and remaining[index] in WORD_CHARACTERS:
            run += remaining[index]
            index += 1
        specific = word_specific(strip_edges(run))
        if specific is not None:
            found.append((start, specific[0], specific[1]))

    # 3. Once per (kind, value), at the first offset, in offset order.
    found.sort(key=lambda entry: entry[0])
    result: list[tuple[str, str]] = []
    for _offset, kind, value in found:
        if (kind, value) not in result:
            result.append((kind, value))
    return result


def supported(kind: str, value: str, evidence: str) -> bool:
    """Whether E (already in normal form) supports one specific."""
    if kind == NUMBER:
        for start in range(len(evidence) - len(value) + 1):
            if evidence[start : start + len(value)] != value:
                continue
            before = evidence[start - 1] if start >= 1 else ""
            after_index = start + len(value)
            after = evidence[after_index] if after_index < len(evidence) else ""
            if before != "" and before in ASCII_DIGITS:
                continue
            if after != "" and after in ASCII_DIGITS:
                continue
            return True
        return False
    return value in evidence


def unsupported(text: str, evidence_strings: list[str]) -> list[tuple[str, str]]:
    """The specifics of text that the evidence does not support, in the order of the text's specifics."""
    evidence = evidence_form(evidence_strings)
    return [(kind, value) for kind, value in specifics(text) if not supported(kind, value, evidence)]


EVIDENCE_ITEM_FIELDS = ("document_id", "source", "title", "breadcrumb", "excerpt")


def projection_strings(projection: dict[str, Any], document_ids: list[str]) -> list[str]:
    """One cited projection's part of the evidence: its tool_call_id and query, then for each evidence item
    (only those named in document_ids when that list is non-empty) its five fields, nulls skipped. A
    NO_EVIDENCE projection gives its tool_call_id and query only."""
    strings: list[str] = []
    for name in ("tool_call_id", "query"):
        if isinstance(projection.get(name), str):
            strings.append(projection[name])
    if projection.get("evidence_status") != "EVIDENCE_FOUND":
        return strings
    for item in projection.get("evidence") or []:
        if len(document_ids) > 0 and item.get("document_id") not in document_ids:
            continue
        for name in EVIDENCE_ITEM_FIELDS:
            if isinstance(item.get(name), str):
                strings.append(item[name])
    return strings


def review_violations(
    draft: dict[str, Any], reviewed: list[bool], projections: dict[str, dict[str, Any]]
) -> list[tuple[str, str, str]]:
    """(path, kind, value) of each unsupported specific: analysis items, conclusion, actions, in order.

    ``reviewed[i]`` is the guard's answer for analysis item i (cites a tool call, no B or C violation on it).
    The names a text may use (the run_id, every analysis and action id) are read as more evidence, after it.
    """
    analysis = draft.get("analysis") or []
    actions = draft.get("action_plan") or []
    names: list[str] = []
    if isinstance(draft.get("run_id"), str):
        names.append(draft["run_id"])
    for entry in analysis + actions:
        if isinstance(entry.get("id"), str):
            names.append(entry["id"])

    out: list[tuple[str, str, str]] = []
    # Per analysis id, its first item: its evidence blocks when reviewed, else None.
    blocks_of_id: dict[str, list[tuple[str, tuple[str, ...], list[str]]] | None] = {}
    for index, item in enumerate(analysis):
        is_reviewed = index < len(reviewed) and reviewed[index]
        document_ids = list(item.get("document_ids") or [])
        blocks: list[tuple[str, tuple[str, ...], list[str]]] = []
        if is_reviewed:
            for tool_call_id in item.get("tool_call_ids") or []:
                key = (tool_call_id, tuple(sorted(set(document_ids))))
                if any(block[0] == key[0] and block[1] == key[1] for block in blocks):
                    continue
                strings = projection_strings(projections.get(tool_call_id) or {}, document_ids)
                blocks.append((key[0], key[1], strings))
        if item.get("id") not in blocks_of_id:
            blocks_of_id[item.get("id")] = blocks if is_reviewed else None
        if is_reviewed:
            item_evidence = [s for block in blocks for s in block[2]] + names
            for kind, value in unsupported(item.get("content") or "", item_evidence):
                out.append((f"analysis[{index}].content", kind, value))

    def union(refs: list[str] | None) -> list[str] | None:
        if not refs:
            return None
        chosen: list[tuple[str, tuple[str, ...], list[str]]] = []
        for ref in refs:
            blocks = blocks_of_id.get(ref)
            if not blocks:
                return None
            for block in blocks:
                if not any(c[0] == block[0] and c[1] == block[1] for c in chosen):
                    chosen.append(block)
        return [s for block in chosen for s in block[2]] + names

    conclusion = draft.get("conclusion")
    if conclusion is not None:
        evidence = union(conclusion.get("based_on_analysis_ids"))
        if evidence is not None:
            for kind, value in unsupported(conclusion.get("content") or "", evidence):
                out.append(("conclusion.content", kind, value))
    for index, action in enumerate(actions):
        evidence = union(action.get("based_on_analysis_ids"))
        if evidence is not None:
            for kind, value in unsupported(action.get("content") or "", evidence):
                out.append((f"action_plan[{index}].content", kind, value))
    return out
