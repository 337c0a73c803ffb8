"""Every "SPEC …" citation in the repository names a section of ``docs/SPEC.md``, the contract's copy
users get with the code.

The forms in use: a section (``SPEC 3.7``, ``SPEC section 5``), a list or range of them (``SPEC 1, 4.3``,
``SPEC 2, 3.1 and 4``, ``SPEC sections 2-5``), a numbered step of one (``SPEC 3.5.4``, ``SPEC 3.5 step 2``),
and a part of section 4 or a rule in it (``SPEC 4 B``, ``SPEC 4: A-C``, ``SPEC 4 rules A–C``, ``SPEC 4
A.1``). A step or rule must be a numbered item of its section (or part); a part a lettered line of it.
``SPEC's …`` is prose, not a citation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "docs" / "SPEC.md"
SCANNED = ("streams", "models", "tests", "benchmarks", "docs", "examples", "deploy", "README.md")
SUFFIXES = {".py", ".md", ".json", ".yaml", ".yml", ".html", ".sh", ".mjs", ".toml", ".txt"}

_NUM = r"\d+(?:\.\d+)*"
_NUMS = rf"{_NUM}(?:\s*[-–]\s*{_NUM})?"
_PART = r"[A-Z](?:\.\d+)?"
CITATION = re.compile(
    rf"\bSPEC(?:\s+sections?)?:?\s+(?P<numbers>{_NUMS}(?:(?:,\s*|\s+and\s+){_NUMS})*)"
    rf"(?:\s+step\s+(?P<step>\d+)|(?::\s*|\s+rules\s+|\s+)(?P<parts>{_PART}(?:\s*[-–]\s*{_PART})?)\b)?"
)


@dataclass(frozen=True)
class Contract:
    """The sections of the contract by number (``"4"`` holds its subsections), and their text."""

    sections: dict[str, str]

    @classmethod
    def read(cls, text: str) -> Contract:
        heads = list(re.finditer(r"^(?P<level>##|###) (?P<number>\d+(?:\.\d+)?)\.? ", text, re.MULTILINE))
        sections = {}
        for i, head in enumerate(heads):
            depth = len(head["level"])
            end = next((h.start() for h in heads[i + 1 :] if len(h["level"]) <= depth), len(text))
            sections[head["number"]] = text[head.end() : end]
        return cls(sections)

    def problems(self, citation: re.Match[str]) -> list[str]:
        """What in ``citation`` names nothing in the contract (empty: it all resolves)."""
        numbers = [n for n in re.split(r"\s*(?:,|and|[-–])\s*", citation["numbers"]) if n]
        out = [f"no section {n}" for n in numbers if self._section(n) is None]
        last = self._section(numbers[-1])
        if last is not None and citation["step"] and not _item(last, citation["step"]):
            out.append(f"no step {citation['step']} in section {numbers[-1]}")
        if last is not None and citation["parts"]:
            for part in re.split(r"\s*[-–]\s*", citation["parts"]):
                letter, _, rule = part.partition(".")
                body = _part(last, letter)
                if body is None:
                    out.append(f"no part {letter} in section {numbers[-1]}")
                elif rule and not _item(body, rule):
                    out.append(f"no rule {rule} in part {letter} of section {numbers[-1]}")
        return out

    def _section(self, number: str) -> str | None:
        """A section's text, or for ``3.5.4`` the text of 3.5 when it has a step 4."""
        if number in self.sections:
            return self.sections[number]
        head, _, step = number.rpartition(".")
        if head in self.sections and _item(self.sections[head], step):
            return self.sections[head]
        return None


def _item(text: str, number: str) -> bool:
    return re.search(rf"^\s*{re.escape(number)}\. ", text, re.MULTILINE) is not None


def _part(text: str, letter: str) -> str | None:
    found = re.search(rf"^{letter}\. .*?(?=^[A-Z]\. |\Z)", text, re.MULTILINE | re.DOTALL)
    return found.group(0) if found else None


def scanned_files() -> list[Path]:
    out = []
    for name in SCANNED:
        path = REPO / name
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        out += [f for f in files if f.is_file() and f.suffix in SUFFIXES and "__pycache__" not in f.parts]
    return [f for f in out if f != Path(__file__).resolve()]  # this file's wrong citations are on purpose


@pytest.fixture(scope="module")
def contract() -> Contract:
    return Contract.read(SPEC.read_text(encoding="utf-8"))


def test_the_contract_has_its_sections(contract: Contract) -> None:
    assert {"1", "2", "3", "3.1", "3.5", "3.7", "4", "4.1", "4.2", "4.3", "5", "6", "7"} <= set(
        contract.sections
    )
    assert "1. Score" in contract.sections["3.2"]
    assert "### 3.2" not in contract.sections["3.1"]  # a section ends where the next begins
    assert "### 4.1" in contract.sections["4"]  # and holds its subsections


def test_every_spec_citation_names_a_section_of_docs_spec(contract: Contract) -> None:
    found, unresolved = 0, []
    for path in scanned_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for citation in CITATION.finditer(text):
            found += 1
            line = text.count("\n", 0, citation.start()) + 1
            unresolved += [
                f"{path.relative_to(REPO)}:{line}: {citation[0]!r}: {p}" for p in contract.problems(citation)
            ]
    assert found > 300, f"only {found} citations found: is the pattern still right?"
    assert unresolved == [], "\n".join(unresolved)


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("SPEC 3.7", []),
        ("(SPEC section 5)", []),
        ("SPEC 1, 4.3 and 7", []),
        ("SPEC sections 2-5", []),
        ("SPEC 3.5.4", []),
        ("SPEC 3.5 step 2", []),
        ("SPEC 4 A.1", []),
        ("SPEC 4 B", []),
        ("SPEC 4: A-C", []),
        ("SPEC 4 rules A–C", []),
        ("SPEC 4 A.11", []),
        ("SPEC 4.1", []),
        ("SPEC 9", ["no section 9"]),
        ("SPEC 3.9", ["no section 3.9"]),
        ("SPEC 3.5.9", ["no section 3.5.9"]),
        ("SPEC 3.1.1", ["no section 3.1.1"]),  # 3.1 has no numbered steps
        ("SPEC 2, 8", ["no section 8"]),
        ("SPEC sections 2-8", ["no section 8"]),
        ("SPEC 3.5 step 7", ["no step 7 in section 3.5"]),
        ("SPEC 4 E", ["no part E in section 4"]),
        ("SPEC 4 A.12", ["no rule 12 in part A of section 4"]),  # rule 12 is in part B
        ("SPEC 4: A-E", ["no part E in section 4"]),
    ],
)
def test_a_citation_resolves_to_its_section_step_part_or_rule(
    contract: Contract, text: str, problems: list[str]
) -> None:
    (citation,) = CITATION.finditer(text)
    assert contract.problems(citation) == problems


@pytest.mark.parametrize("text", ["the SPEC's 64 levels", "SPEC.md", "as the SPEC says", "SPEC's defaults"])
def test_prose_about_the_spec_is_no_citation(text: str) -> None:
    assert list(CITATION.finditer(text)) == []


def test_the_contracts_links_to_the_repository_resolve() -> None:
    text = SPEC.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert "review-rules.md" in targets  # 4.2 points at the review's rules
    assert [t for t in targets if not (SPEC.parent / t).exists()] == []
