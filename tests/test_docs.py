"""The README keeps up with the settings: every EC_ variable is listed with its default."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from streams.settings import Settings

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_readme_lists_every_setting_with_its_default() -> None:
    missing = []
    for name, field in Settings.model_fields.items():
        if isinstance(field.default, BaseModel):
            for sub, sub_field in type(field.default).model_fields.items():
                if f"`EC_{name.upper()}__{sub.upper()}` | `{sub_field.default}`" not in README:
                    missing.append(f"EC_{name.upper()}__{sub.upper()}")
        elif f"`EC_{name.upper()}`" not in README:
            missing.append(f"EC_{name.upper()}")
    assert missing == []


def test_readme_starts_with_purpose_then_the_two_commands() -> None:
    assert README.index("make run") < README.index("## Topology") < README.index("## Settings")
    assert "make test" in README.split("## Topology")[0]


def test_benchmarks_md_holds_the_written_findings_as_make_bench_would_append_them() -> None:
    # make bench rewrites BENCHMARKS.md and appends benchmarks/findings.md and chain-findings.md as
    # they are: a finding written only into BENCHMARKS.md would be lost by the next run.
    root = Path(__file__).resolve().parents[1]
    report = (root / "BENCHMARKS.md").read_text(encoding="utf-8")
    for name in ("findings.md", "chain-findings.md"):
        text = (root / "benchmarks" / name).read_text(encoding="utf-8").strip()
        kept = "\n".join(line for line in text.splitlines() if not line.startswith("<!--"))
        assert kept in report, f"benchmarks/{name} and BENCHMARKS.md differ: edit the findings file, copy it"
