"""The alerts (deploy/prometheus, deploy/k8s/prometheusrule.yaml) as Prometheus reads them: promtool's
own checks and unit tests, a firing and a quiet case for every alert, the fields every alert carries,
a runbook section for each, and the PrometheusRule holding exactly the rules file's groups.

promtool comes from Debian's ``prometheus`` package, which ``make unit`` and ``make test`` install
(``make prometheus``); without it these tests fail, never skip.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "deploy" / "prometheus" / "evidence-chain.rules.yml"
RENDER = ROOT / "deploy" / "prometheus" / "render.py"
PROMETHEUS_RULE = ROOT / "deploy" / "k8s" / "prometheusrule.yaml"
UNIT_TESTS = ROOT / "tests" / "data" / "alerts" / "evidence-chain.test.yml"
OPERATIONS = ROOT / "docs" / "OPERATIONS.md"

SIGNALS = {
    "a batch held because Redis or Kafka is down": "EvidenceChainBatchHeld",
    "consumer lag that keeps growing": "EvidenceChainConsumerLagGrowing",
    "a CONFLICT on the write-once ledger": "EvidenceChainLedgerConflict",
    "LEDGER_INTEGRITY refusals at the doors": "EvidenceChainLedgerIntegrityRefused",
    "VERDICT_INTEGRITY refusals at the doors (issue 38)": "EvidenceChainVerdictIntegrityRefused",
    "a burst of dead letters": "EvidenceChainDeadLetterBurst",
    "a worker that stopped committing": "EvidenceChainNotCommitting",
    "a worker that is down": "EvidenceChainWorkerDown",
    "a worker that is not ready": "EvidenceChainWorkerNotReady",
    "the event loop lagging": "EvidenceChainEventLoopLagging",
    "the review refusing far more drafts than usual": "EvidenceChainReviewRefusalsHigh",
    "the semantic judge failing (issue 41)": "EvidenceChainSemanticJudgeFailing",
    "the semantic judge declining most cases (a setting, or drafts over its context)": (
        "EvidenceChainSemanticJudgeDeclining"
    ),
}
"""What issue 43 asked an alert for, and the alert that answers it."""

PLACEHOLDERS: tuple[str, ...] = ()
"""Alerts documented before their metric exists: a runbook section and a comment, never a rule."""


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    found = shutil.which("promtool")
    assert found, (
        "promtool not found: `make prometheus` installs Debian's prometheus package (it ships promtool)"
    )
    return subprocess.run([found, *args], capture_output=True, text=True, timeout=120, check=False)  # noqa: S603


@functools.cache
def alerts() -> dict[str, dict[str, Any]]:
    """Every alerting rule of the rules file, by name."""
    groups = yaml.safe_load(RULES.read_text())["groups"]
    found = [rule for group in groups for rule in group["rules"] if "alert" in rule]
    assert len({rule["alert"] for rule in found}) == len(found), "an alert name is used twice"
    return {rule["alert"]: rule for rule in found}


def anchor(heading: str) -> str:
    """The fragment GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@functools.cache
def runbook_sections() -> dict[str, str]:
    """``{anchor: text}`` of the ``###`` sections of docs/OPERATIONS.md's "Alerts"."""
    text = OPERATIONS.read_text()
    alerts_part = text.split("\n## Alerts\n", 1)[1].split("\n## ", 1)[0]
    sections = re.split(r"^### (.+)$", alerts_part, flags=re.MULTILINE)
    return {anchor(title): body for title, body in zip(sections[1::2], sections[2::2], strict=True)}


def test_promtool_checks_the_rules_file() -> None:
    done = promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in done.stdout


def test_promtool_unit_tests_pass() -> None:
    done = promtool("test", "rules", str(UNIT_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_unit_tests_fail_when_an_alert_does_not_fire_as_they_expect(tmp_path: Path) -> None:
    """The unit tests can fail: the same tests over rules whose held-batch threshold is an hour."""
    rules = tmp_path / "rules.yml"
    rules.write_text(
        RULES.read_text().replace(
            "(evidence_chain_held_seconds) > 60", "(evidence_chain_held_seconds) > 3600"
        )
    )
    tests = tmp_path / "tests.yml"
    tests.write_text(
        UNIT_TESTS.read_text().replace("../../../deploy/prometheus/evidence-chain.rules.yml", str(rules))
    )
    done = promtool("test", "rules", str(tests))
    assert done.returncode != 0
    assert "alertname: EvidenceChainBatchHeld" in done.stdout + done.stderr


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    cases: dict[str, dict[str, int]] = {name: {"firing": 0, "quiet": 0} for name in alerts()}
    document = yaml.safe_load(UNIT_TESTS.read_text())
    for test in document["tests"]:
        for case in test.get("alert_rule_test", []):
            name = case["alertname"]
            assert name in cases, f"{test['name']}: no alert {name}"
            cases[name]["firing" if case.get("exp_alerts") else "quiet"] += 1
    lacking = {name: kinds for name, kinds in cases.items() if not all(kinds.values())}
    assert lacking == {}, f"alerts without a firing or a quiet case: {lacking}"


def test_every_alert_has_a_severity_a_summary_and_its_runbook_section() -> None:
    sections = runbook_sections()
    for name, rule in alerts().items():
        assert rule["labels"]["severity"] in {"critical", "warning"}, name
        annotations = rule["annotations"]
        assert set(annotations) == {"summary", "description", "runbook_url"}, name
        assert len(annotations["summary"]) > 40, f"{name}: say what is wrong and where"
        path, _, fragment = annotations["runbook_url"].partition("#")
        assert path == "docs/OPERATIONS.md" and fragment == name.lower(), name
        body = sections.get(fragment)
        assert body is not None, f"docs/OPERATIONS.md has no section {name} (#{fragment})"
        for part in ("**What it means.**", "**Look first.**", "**What to do.**"):
            assert part in body, f"{name}'s runbook section has no {part}"
        assert f"[{name}](#{fragment})" in OPERATIONS.read_text(), f"{name} is missing from the alerts table"


def test_every_signal_of_the_issue_has_an_alert_and_placeholders_are_documented_not_rules() -> None:
    assert set(SIGNALS.values()) <= set(alerts())
    for name in PLACEHOLDERS:
        assert name not in alerts(), f"{name} would alert on a metric nobody exports"
        assert name.lower() in runbook_sections()
        assert name in RULES.read_text()  # the comment where the rule will go


def test_the_prometheus_rule_holds_the_rules_file_s_groups() -> None:
    done = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(RENDER), "--check"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    rule = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert rule["kind"] == "PrometheusRule"
    assert rule["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]
