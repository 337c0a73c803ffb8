"""Bidirectional controls in ids (a U+202E turns ``d‮txt.exe`` into what reads as ``dexe.txt``) reach
neither the terminal nor the HTML raw: they show escaped, as the C0/C1 controls do (issue 23, item 6)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from models.audit import AuditRecord
from streams.audit.factory import open_store
from streams.cli.display import cell, printable
from streams.web.pages import render as pages
from tests.cli.bidi_text import BIDI_CONTROLS, EVIL_CALL, EVIL_DRAFT, EVIL_RUN, SEPARATORS
from tests.console import Command, Console, Done, clean_env
from tests.streams.audit_records import chain, guard


@pytest.mark.parametrize("control", BIDI_CONTROLS + SEPARATORS)
def test_each_bidi_control_and_separator_is_escaped(control: str) -> None:
    escaped = f"a\\u{ord(control):04x}b"
    assert printable(f"a{control}b") == escaped
    assert cell(f"a{control}b").plain == escaped
    assert pages.text(f"a{control}b") == escaped


def test_right_to_left_text_itself_is_left_alone() -> None:
    assert printable("שלום مرحبا 网关 é ok") == "שלום مرحبا 网关 é ok"
    assert printable("a\x1b\u202eb") == "a\\x1b\\u202eb"
    assert pages.text('<b>"x"\u202e</b>') == "&lt;b&gt;&quot;x&quot;\\u202e&lt;/b&gt;"


def test_a_tool_call_anchor_and_its_links_agree() -> None:
    anchor = pages.call_anchor(EVIL_CALL)
    assert anchor == "call-call\\u202ex"
    assert all(c not in anchor for c in BIDI_CONTROLS)


def _inspect(script: Console, db: Path, run_id: str) -> Done:
    env = clean_env(
        EC_AUDIT_DB=str(db), EC_REDIS_URL="redis://127.0.0.1:1/0", EC_REDIS_TIMEOUT_MS="300", COLUMNS="200"
    )
    (done,) = script.run(Command(["inspect", run_id], env, timeout=60))
    return done


def test_inspect_shows_bidi_controls_in_ids_escaped(script: Console, tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    store = open_store(db)
    # As another producer could write them: the agents themselves never put an invalid id in the audit.
    records = [{**r, "run_id": EVIL_RUN, "tool_call_id": EVIL_CALL} for r in chain("run-1", "call_a", 0)]
    verdict = guard("run-1", 0, 1, "REJECT", ["CITATION_NOT_FOUND"])
    verdict = {
        **verdict,
        "run_id": EVIL_RUN,
        "fields": {**verdict["fields"], "draft_id": EVIL_DRAFT, "cited_tool_call_ids": [EVIL_CALL]},
    }
    store.apply(cast(list[AuditRecord], [*records, verdict]))
    store.close()

    done = _inspect(script, db, EVIL_RUN)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "run run\\u202eg: 1 tool calls, 1 drafts" in out
    assert "call\\u202ex" in out and "d\\u202etxt.exe" in out
    assert not any(c in out for c in BIDI_CONTROLS + SEPARATORS), out

    missing = _inspect(script, db, "nobody\u202e")
    assert missing.returncode == 1
    err = missing.stderr.decode()
    assert "no audit records for run nobody\\u202e;" in err and "\u202e" not in err
