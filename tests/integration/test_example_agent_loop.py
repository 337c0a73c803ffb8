"""The agent loop of examples/agent_loop.py on the real broker, Redis and a real worker."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from examples.agent_loop import agent_loop
from streams import codec
from streams.client import EvidenceChainClient
from tests.integration.helpers import Stack

REPO = Path(__file__).resolve().parents[2]
FIXED_REPORT = {"conclusion": None, "limitations": ["自动诊断未通过证据校验，请结合日志、指标、告警人工排查"]}
"""SPEC 4's fallback_report, written out here rather than imported."""
STACK_SETTINGS = {"gateway_timeout_ms": 30_000}
"""The module's worker stack (conftest.py's ``stack``): the client waits up to 30 s for a reply."""


def _codes(verdict: dict) -> list[tuple[str, str]]:
    return [(v["code"], v["path"]) for v in verdict["violations"]]


async def test_run_a_is_repaired_and_run_b_falls_back(stack: Stack) -> None:
    printed = io.StringIO()
    out = Console(file=printed, width=160, markup=False, emoji=False, highlight=False)
    async with EvidenceChainClient(stack.settings) as client:
        run_a, run_b, run_c = await agent_loop(client, out, tag="t")
        # What the model was shown is what the ledger holds, byte for byte.
        for tool_call_id, shown in run_a.shown.items():
            held = await client.entry(run_a.run_id, tool_call_id)
            assert held is not None and held.projection == shown.projection

    views = {t: codec.loads(r.projection) for t, r in run_a.shown.items() if r.projection is not None}
    assert {t: v["evidence_status"] for t, v in views.items()} == {
        "call_a_gw": "EVIDENCE_FOUND",
        "call_a_cert": "NO_EVIDENCE",
    }

    assert run_a.kinds == ["REJECT", "PASS"]
    assert [v.verdict["attempt"] for v in run_a.verdicts] == [1, 2]  # stamped by the harness
    assert _codes(run_a.verdicts[0].verdict) == [("CITATION_CROSS_RUN", "analysis[0].tool_call_ids[0]")]
    repair = run_a.replies[0]
    assert repair is not None
    assert "[CITATION_CROSS_RUN]" in repair and "analysis[0].tool_call_ids[0]" in repair
    assert run_a.replies[1] is None
    assert run_a.drafts[1]["analysis"][0]["tool_call_ids"] == ["call_a_gw"]  # the fix the prompt asked for

    assert run_b.kinds == ["REJECT", "FALLBACK"]
    assert [v.verdict["attempt"] for v in run_b.verdicts] == [1, 2]
    for verdict in run_b.verdicts:
        assert _codes(verdict.verdict) == [("NORMAL_CITES_NO_EVIDENCE", "analysis[0].tool_call_ids[0]")]
    assert run_b.replies[0] is not None and "[NORMAL_CITES_NO_EVIDENCE]" in run_b.replies[0]
    assert run_b.replies[1] is not None and codec.loads(run_b.replies[1]) == FIXED_REPORT
    assert run_b.verdicts[1].verdict["fallback_report"] == FIXED_REPORT

    # Run C: numbers its evidence never said (SPEC 4.2), a repair prompt naming each as the draft wrote
    # it with its code and path (and what the evidence gives the key), and the corrected draft passes.
    assert run_c.kinds == ["REJECT", "PASS"]
    assert _codes(run_c.verdicts[0].verdict) == [
        ("CLAIM_NUMBER_UNSUPPORTED", "analysis[0].content"),
        ("CLAIM_NUMBER_UNSUPPORTED", "action_plan[0].content"),
    ]
    prompt = run_c.replies[0]
    assert prompt is not None and "[CLAIM_NUMBER_UNSUPPORTED]" in prompt
    assert "action_plan[0].content" in prompt
    assert '"30s"' in prompt and '"120s"' in prompt and '"60s"' in prompt  # as written; the evidence's value

    # What each run published, read back from reports: exactly one event for the last verdict, the PASS
    # report holding the draft's reviewed fields, the FALLBACK one the fixed report.
    for run in (run_a, run_b, run_c):
        assert run.report is not None
        assert run.report["verdict_event_id"] == run.verdicts[-1].verdict["event_id"]
        assert run.report["draft_sha256"] == run.verdicts[-1].verdict["draft_sha256"]
    assert run_b.report is not None and run_b.report["report"] == FIXED_REPORT
    for run in (run_a, run_c):
        assert run.report is not None and run.report["verdict"] == "PASS"
        draft = run.drafts[-1]
        reviewed = {k: draft[k] for k in ("conclusion", "action_plan", "limitations")}
        assert {k: run.report["report"][k] for k in reviewed} == reviewed
        assert [a["id"] for a in run.report["report"]["analysis"]] == [a["id"] for a in draft["analysis"]]
    async with EvidenceChainClient(stack.settings) as client:
        for run in (run_a, run_b, run_c):
            published = await client.reports(run.run_id)
            # one per PASS or FALLBACK verdict, none for the REJECTs before them
            assert [r["event_id"] for r in published] == [run.report["event_id"]]  # type: ignore[index]

    text = printed.getvalue()
    for shown in (
        "REJECT → PASS",
        "REJECT → FALLBACK",
        "CITATION_CROSS_RUN @ analysis[0].tool_call_ids[0]",
        "CLAIM_NUMBER_UNSUPPORTED @ analysis[0].content",
        "PASS report, read back",
        "FALLBACK report, read back",
    ):
        assert shown in text
    assert "自动诊断未通过证据校验" in text  # the fixed report is printed


def test_the_example_runs_as_a_module(stack: Stack) -> None:
    """``python -m examples.agent_loop`` as the README and ``evidence-chain demo`` run it."""
    env = {**os.environ, **stack.env}
    done = subprocess.run(
        [sys.executable, "-m", "examples.agent_loop", "--tag", "cli", "--language", "en", "--width", "150"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "REJECT → PASS" in done.stdout and "REJECT → FALLBACK" in done.stdout
    assert "CLAIM_NUMBER_UNSUPPORTED" in done.stdout and "read back" in done.stdout
    assert "The cited tool call belongs to another run" in done.stdout  # the English instruction
