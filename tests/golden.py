"""Where the golden cases live (``tests/data/golden``) and how an output is compared with them
(``tests/data/golden/README.md``): one definition for every tier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streams import codec

GOLDEN = Path(__file__).resolve().parent / "data" / "golden"


def lines(data: bytes) -> list[bytes]:
    """JSON lines as exact bytes, without their ``\\n``."""
    return data.removesuffix(b"\n").split(b"\n") if data else []


def case_names(folder: str) -> list[str]:
    """The case names of ``folder/cases.txt``, in line order."""
    return (GOLDEN / folder / "cases.txt").read_text(encoding="utf-8").split()


def by_case(folder: str, output: bytes) -> dict[str, bytes]:
    """A command's output lines by case name; exactly one line per case."""
    names = case_names(folder)
    out = lines(output)
    assert len(out) == len(names), f"{len(out)} output lines for {len(names)} {folder} cases"
    return dict(zip(names, out, strict=True))


def expected(folder: str, name: str) -> dict[str, bytes]:
    """The expected lines of ``folder/name`` by case name."""
    return dict(zip(case_names(folder), lines((GOLDEN / folder / name).read_bytes()), strict=True))


def dead_letter_core(value: dict[str, Any]) -> dict[str, Any]:
    """The fields of a dead letter that must match (``error`` is free text)."""
    return {key: value[key] for key in ("reason", "run_id", "tool_call_id")}


def normalized_verdict(verdict: dict[str, Any]) -> dict[str, Any]:
    """A verdict without violation messages, its violations sorted by (code, path)."""
    out = dict(verdict)
    out["violations"] = sorted(
        ({"code": v["code"], "path": v["path"]} for v in verdict["violations"]),
        key=lambda v: (v["code"], v["path"]),
    )
    return out


def assert_same_line(actual: bytes, wanted: bytes) -> None:
    """A projection byte for byte, a dead letter by reason and ids."""
    parsed = codec.loads(wanted)
    if "dead_letter" in parsed:
        assert dead_letter_core(codec.loads(actual)["dead_letter"]) == dead_letter_core(parsed["dead_letter"])
    else:
        assert actual == wanted
