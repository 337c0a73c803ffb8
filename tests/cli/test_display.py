"""Nothing printed can leak a secret or inject markup or terminal escapes (hostile ids stay text)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.table import Table

from streams.audit.factory import open_store
from streams.cli.display import cell, console, printable, redact_url
from tests.console import Command, Console, clean_env
from tests.streams.audit_records import chain, guard

HOSTILE = "x[/]\x1b[31m[bold red]boom[/]\x07\x9b2J\n:emoji_smile:"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@redis:6379/0", "redis://****@redis:6379/0"),
        ("rediss://user:s3cret@cache.example:6380/2", "rediss://****@cache.example:6380/2"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("postgresql://audit:s3cret@db/audit", "postgresql://****@db/audit"),
    ],
)
def test_urls_are_printed_without_their_password(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_control_characters_are_escaped() -> None:
    assert printable("a\x1b[31mb\x9bc\nd\x00") == "a\\x1b[31mb\\x9bc\\x0ad\\x00"
    assert printable("网关 ok") == "网关 ok"


def test_hostile_text_renders_as_itself_never_as_markup(capsys: pytest.CaptureFixture[str]) -> None:
    table = Table(title="t")
    table.add_column("draft")
    table.add_row(cell(HOSTILE))
    out = console(width=200)
    out.print(table)
    text = capsys.readouterr().out
    assert "x[/]" in text and "[bold red]boom[/]" in text
    assert "\x1b" not in text and "\x07" not in text  # no raw escape reaches the terminal
    assert "\\x1b[31m" in text and "\\x07" in text and "\\x9b" in text
    assert ":emoji_smile:" in text
    out.print("[bold]not markup[/] :smile:")  # even a plain string: no markup, no emoji
    assert capsys.readouterr().out.strip() == "[bold]not markup[/] :smile:"


def test_inspect_prints_hostile_ids_as_text_and_no_password(script: Console, tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    store = open_store(db)
    verdict = guard("run-1", 0, 1, "REJECT", ["CITATION_NOT_FOUND"])
    verdict["fields"] = {**verdict["fields"], "draft_id": HOSTILE, "cited_tool_call_ids": [HOSTILE]}
    store.apply([*chain("run-1", "call_a", 0), verdict])
    store.close()
    env = clean_env(
        EC_AUDIT_DB=str(db), EC_REDIS_URL="redis://:hunter2-secret@127.0.0.1:1/0", EC_REDIS_TIMEOUT_MS="300"
    )
    (done,) = script.run(Command(["inspect", "run-1"], env, timeout=60))
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "hunter2-secret" not in out + done.stderr.decode()
    assert "redis://****@127.0.0.1:1/0" in out  # why the ledger column is empty, where it looked
    assert "x[/]" in out and "\\x1b[31m" in out and "\x1b[31m[bold" not in out
