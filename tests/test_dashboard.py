"""deploy/grafana/evidence-chain.json: what deploy/grafana/dashboard.py writes, its queries valid PromQL
(promtool), its panels laid out without overlap, and the subjects an operator needs each on a panel.
That every metric it names is exported is tests/integration/test_metrics_exported.py's to check."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.promql import metric_names

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "deploy" / "grafana" / "evidence-chain.json"
GENERATOR = ROOT / "deploy" / "grafana" / "dashboard.py"

SUBJECTS = {
    "throughput per station": "evidence_chain_records_total",
    "lag": "evidence_chain_consumer_lag",
    "batch latency": "evidence_chain_batch_seconds_bucket",
    "held batches": "evidence_chain_held_seconds",
    "dead letters": "evidence_chain_dead_letters_total",
    "refusals at the doors": "evidence_chain_door_refusals_total",
    "violations": "evidence_chain_violations_total",
    "event loop lag": "evidence_chain_event_loop_lag_seconds_bucket",
    "commits": "evidence_chain_commits_total",
}
"""What issue 43 asked the dashboard to show, by the metric that shows it."""


@functools.cache
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels() -> list[dict[str, Any]]:
    return [panel for panel in dashboard()["panels"] if panel["type"] != "row"]


def queries() -> list[str]:
    """Every PromQL query of the dashboard: its panels' and its variables'."""
    found = [target["expr"] for panel in panels() for target in panel["targets"]]
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            found.append(variable["definition"].removeprefix("label_values(").split(",")[0])
    return found


def test_the_file_is_what_the_generator_writes() -> None:
    done = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr


def test_every_query_is_valid_promql(tmp_path: Path) -> None:
    """promtool checks each query as the expression of a recording rule, Grafana's variables filled in."""
    rules = [
        {
            "record": f"dashboard:query_{n}",
            "expr": expr.replace("$__rate_interval", "1m").replace("$job", ".*"),
        }
        for n, expr in enumerate(queries())
    ]
    path = tmp_path / "dashboard.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    promtool = shutil.which("promtool")
    assert promtool, "promtool not found: `make prometheus` installs it"
    done = subprocess.run(  # noqa: S603 - promtool from PATH
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_each_panel_reads_the_chosen_data_source_and_jobs() -> None:
    assert {v["name"] for v in dashboard()["templating"]["list"]} == {"datasource", "job"}
    for panel in panels():
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"], panel["title"]
        assert panel["description"], panel["title"]
        for target in panel["targets"]:
            assert 'job=~"$job"' in target["expr"], f"{panel['title']}: {target['expr']}"
        refs = [target["refId"] for target in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]


def test_panels_are_laid_out_without_overlap() -> None:
    ids = [panel["id"] for panel in dashboard()["panels"]]
    assert len(ids) == len(set(ids))
    taken: set[tuple[int, int]] = set()
    for panel in dashboard()["panels"]:
        box = panel["gridPos"]
        assert box["x"] + box["w"] <= 24, panel["title"]
        cells = {
            (x, y) for x in range(box["x"], box["x"] + box["w"]) for y in range(box["y"], box["y"] + box["h"])
        }
        assert not cells & taken, f"{panel['title']} overlaps another panel"
        taken |= cells


def test_every_subject_of_the_issue_has_a_panel() -> None:
    named = set().union(*(metric_names(expr) for expr in queries()))
    missing = {subject: metric for subject, metric in SUBJECTS.items() if metric not in named}
    assert missing == {}
    verdicts = [q for q in queries() if 'agent="guard"' in q and "sum by (outcome)" in q]
    assert verdicts, "no panel shows verdicts by kind"


def test_metric_names_finds_the_names_and_nothing_else() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (agent, le) (rate(a_bucket{job=~"$job", x="up"}[$__rate_interval])))'
        " / on (agent) group_left b_total offset 1h > 1e3 and c"
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "c"}
