#!/usr/bin/env python3
"""Write deploy/grafana/evidence-chain.json, the Grafana dashboard of a deployment, from the panels below.

Run after editing:  python3 deploy/grafana/dashboard.py   (``--check`` exits 1 when the file differs)

Dashboards as code without a library: a panel is a title, a unit and its PromQL queries, laid out two
to a row. Import the JSON in Grafana (Dashboards > New > Import) and pick the Prometheus data source
that scrapes the workers; ``$job`` selects the scrape jobs (deploy/k8s/podmonitor.yaml's is
``evidence-chain/evidence-chain``). Every metric a query names is one the workers or the gateway export
(tests/integration/test_metrics_exported.py scrapes them to check).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent / "evidence-chain.json"
JOB = 'job=~"$job"'
RATE = "$__rate_interval"


def rate_by(by: str, metric: str, matchers: str = "") -> str:
    """``sum by (by) (rate(metric{matchers, job}[$__rate_interval]))``."""
    return f"sum by ({by}) (rate({metric}{{{matchers}{JOB}}}[{RATE}]))"


@dataclass(frozen=True)
class Panel:
    title: str
    description: str
    unit: str
    queries: tuple[tuple[str, str], ...]
    """``(expr, legend)`` pairs."""
    stack: bool = False


ROWS: tuple[tuple[str, tuple[Panel, ...]], ...] = (
    (
        "Flow",
        (
            Panel(
                "Records per second by station",
                "Records each agent finished, whatever became of them (evidence_chain_records_total).",
                "reqps",
                ((f"sum by (agent) (rate(evidence_chain_records_total{{{JOB}}}[{RATE}]))", "{{agent}}"),),
            ),
            Panel(
                "Consumer lag by topic",
                "Records on the assigned input partitions not yet processed, summed per topic.",
                "short",
                ((f"sum by (topic) (evidence_chain_consumer_lag{{{JOB}}})", "{{topic}}"),),
            ),
            Panel(
                "Batch latency by station (p50, p99)",
                "One batch, from its gap check to the broker's acks (evidence_chain_batch_seconds).",
                "s",
                (
                    (
                        "histogram_quantile(0.5, sum by (agent, le) "
                        f"(rate(evidence_chain_batch_seconds_bucket{{{JOB}}}[{RATE}])))",
                        "{{agent}} p50",
                    ),
                    (
                        "histogram_quantile(0.99, sum by (agent, le) "
                        f"(rate(evidence_chain_batch_seconds_bucket{{{JOB}}}[{RATE}])))",
                        "{{agent}} p99",
                    ),
                ),
            ),
            Panel(
                "Held batches",
                "How long each agent's current batch has been held for a Redis or Kafka outage (0: none). "
                "EvidenceChainBatchHeld fires above 60 s.",
                "s",
                (
                    (
                        f"max by (instance, agent) (evidence_chain_held_seconds{{{JOB}}})",
                        "{{agent}} {{instance}}",
                    ),
                ),
            ),
            Panel(
                "Commits per second",
                "Offset commits that went through; none while records flow is EvidenceChainNotCommitting.",
                "ops",
                ((f"sum by (agent) (rate(evidence_chain_commits_total{{{JOB}}}[{RATE}]))", "{{agent}}"),),
            ),
            Panel(
                "Where each agent's time goes",
                "Wall seconds per second by phase (evidence_chain_agent_seconds_total): waiting for "
                "records, settling, its station, Redis, waiting on acks.",
                "percentunit",
                (
                    (
                        f"sum by (agent, phase) (rate(evidence_chain_agent_seconds_total{{{JOB}}}[{RATE}]))",
                        "{{agent}} {{phase}}",
                    ),
                ),
                stack=True,
            ),
        ),
    ),
    (
        "Outcomes",
        (
            Panel(
                "Dead letters by reason",
                "Records dead-lettered per second, by agent and the spec's reason.",
                "reqps",
                (
                    (
                        rate_by("agent, reason", "evidence_chain_dead_letters_total") + " > 0",
                        "{{agent}} {{reason}}",
                    ),
                ),
                stack=True,
            ),
            Panel(
                "Ledger writes by outcome",
                "WRITTEN (ok), DUPLICATE (a repeat, same bytes), CONFLICT (refused: different bytes).",
                "reqps",
                (
                    (
                        rate_by("outcome", "evidence_chain_records_total", 'agent="ledger", '),
                        "{{outcome}}",
                    ),
                ),
                stack=True,
            ),
            Panel(
                "Verdicts by kind",
                "The guard's verdicts per second: PASS, REJECT, FALLBACK (and drafts it dead-lettered).",
                "reqps",
                (
                    (
                        rate_by("outcome", "evidence_chain_records_total", 'agent="guard", '),
                        "{{outcome}}",
                    ),
                ),
                stack=True,
            ),
            Panel(
                "Violations by code",
                "Judged drafts per second whose verdict carries the code; CLAIM_* are the review's.",
                "reqps",
                (
                    (
                        f"sum by (code) (rate(evidence_chain_violations_total{{{JOB}}}[{RATE}])) > 0",
                        "{{code}}",
                    ),
                ),
                stack=True,
            ),
            Panel(
                "Share of drafts the review refused",
                "Drafts with an unsupported number, identifier or quotation, over all judged drafts.",
                "percentunit",
                (
                    (
                        f"sum(rate(evidence_chain_review_refusals_total{{{JOB}}}[{RATE}])) / "
                        f'sum(rate(evidence_chain_records_total{{agent="guard", {JOB}}}[{RATE}]))',
                        "review refused",
                    ),
                ),
            ),
        ),
    ),
    (
        "Doors",
        (
            Panel(
                "Refusals at the doors by reason",
                "Requests the gateway refused, by the answer's error.reason. LEDGER_INTEGRITY: an entry "
                "that did not hold (EvidenceChainLedgerIntegrityRefused).",
                "reqps",
                (
                    (
                        rate_by("door, reason", "evidence_chain_door_refusals_total") + " > 0",
                        "{{door}} {{reason}}",
                    ),
                ),
                stack=True,
            ),
            Panel(
                "Gateway requests by route and status",
                "Every answered request (evidence_chain_gateway_requests_total).",
                "reqps",
                (
                    (
                        rate_by("route, status", "evidence_chain_gateway_requests_total"),
                        "{{route}} {{status}}",
                    ),
                ),
            ),
            Panel(
                "Gateway latency by route (p99)",
                "Time to answer, by route template.",
                "s",
                (
                    (
                        "histogram_quantile(0.99, sum by (route, le) "
                        f"(rate(evidence_chain_gateway_request_seconds_bucket{{{JOB}}}[{RATE}])))",
                        "{{route}}",
                    ),
                ),
            ),
            Panel(
                "Lookups handed out and timeouts",
                "Entries handed out from the ledger or the pipeline; lookups and checks timed out (504).",
                "reqps",
                (
                    (
                        rate_by("answered_from", "evidence_chain_gateway_lookups_total"),
                        "from {{answered_from}}",
                    ),
                    (
                        f"sum by (kind) (rate(evidence_chain_gateway_timeouts_total{{{JOB}}}[{RATE}]))",
                        "{{kind}} timeouts",
                    ),
                ),
            ),
        ),
    ),
    (
        "Workers",
        (
            Panel(
                "Workers up and ready",
                "Targets answering scrapes, and workers whose /readyz says ready.",
                "short",
                (
                    (f"sum(up{{{JOB}}})", "up"),
                    (f"sum(evidence_chain_ready{{{JOB}}})", "ready"),
                ),
            ),
            Panel(
                "Event loop lag (p99)",
                "How late each worker's event loop woke a probe sleeping 0.5 s: a stall of everything "
                "on the loop (EvidenceChainEventLoopLagging above 0.5 s).",
                "s",
                (
                    (
                        "histogram_quantile(0.99, sum by (instance, le) "
                        f"(rate(evidence_chain_event_loop_lag_seconds_bucket{{{JOB}}}[{RATE}])))",
                        "{{instance}}",
                    ),
                ),
            ),
            Panel(
                "CPU per worker",
                "Cores used (one core per worker is the sizing rule, docs/OPERATIONS.md).",
                "short",
                ((f"rate(process_cpu_seconds_total{{{JOB}}}[{RATE}])", "{{instance}}"),),
            ),
            Panel(
                "Memory per worker",
                "Resident memory of each worker process.",
                "bytes",
                ((f"process_resident_memory_bytes{{{JOB}}}", "{{instance}}"),),
            ),
        ),
    ),
)

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
WIDTH, HEIGHT = 12, 8


def panel_json(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    return {
        "id": panel_id,
        "type": "timeseries",
        "title": panel.title,
        "description": panel.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": HEIGHT, "w": WIDTH, "x": x, "y": y},
        "fieldConfig": {
            "defaults": {
                "unit": panel.unit,
                "custom": {"stacking": {"mode": "normal" if panel.stack else "none", "group": "A"}},
            },
            "overrides": [],
        },
        "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
        "targets": [
            {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + n)}
            for n, (expr, legend) in enumerate(panel.queries)
        ],
    }


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y, panel_id = 0, 1
    for row_title, row_panels in ROWS:
        panels.append(
            {
                "id": panel_id,
                "type": "row",
                "title": row_title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        panel_id, y = panel_id + 1, y + 1
        for n, panel in enumerate(row_panels):
            panels.append(panel_json(panel, panel_id, (n % 2) * WIDTH, y + (n // 2) * HEIGHT))
            panel_id += 1
        y += ((len(row_panels) + 1) // 2) * HEIGHT
    return {
        "title": "evidence-chain",
        "uid": "evidence-chain",
        "description": "Throughput, lag, batches, dead letters, verdicts and refusals of an evidence-chain "
        "deployment (deploy/grafana/dashboard.py writes this file).",
        "tags": ["evidence-chain", "kafka"],
        "editable": True,
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "browser",
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "current": {},
                    "hide": 0,
                },
                {
                    "name": "job",
                    "label": "Job",
                    "type": "query",
                    "datasource": DATASOURCE,
                    "query": {"query": "label_values(evidence_chain_records_total, job)", "refId": "job"},
                    "definition": "label_values(evidence_chain_records_total, job)",
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*evidence-chain.*",
                    "current": {},
                    "refresh": 2,
                    "hide": 0,
                },
            ]
        },
        "annotations": {"list": []},
        "panels": panels,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if TARGET.read_text() != text:
            print(f"{TARGET} is not what {Path(__file__).name} writes: run it", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
