#!/usr/bin/env python3
"""Write deploy/k8s/prometheusrule.yaml from evidence-chain.rules.yml: the same groups, for
prometheus-operator. Run after editing the rules:  python3 deploy/prometheus/render.py

The rules file's text is indented under ``spec:`` as it is (its comments too), so both files carry
the same expressions byte for byte; tests/test_alerts.py checks that the written file is what this
renders. ``--check`` exits 1 when it is not.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RULES = HERE / "evidence-chain.rules.yml"
TARGET = HERE.parent / "k8s" / "prometheusrule.yaml"

HEADER = """\
# Written by deploy/prometheus/render.py from deploy/prometheus/evidence-chain.rules.yml: edit that
# file and run the script. prometheus-operator loads these alerts into the Prometheus that selects
# PrometheusRules by these labels (kube-prometheus-stack: add `release: <its name>`, as for
# podmonitor.yaml). The runbook of each alert is its section in docs/OPERATIONS.md.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: evidence-chain
  labels:
    app.kubernetes.io/name: evidence-chain
    app.kubernetes.io/part-of: evidence-chain
spec:
"""


def render(rules_text: str) -> str:
    """The PrometheusRule whose ``spec`` is the rules file (from its ``groups:`` line on)."""
    lines = rules_text.splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("groups:"))
    body = "".join(f"  {line}\n" if line.strip() else "\n" for line in lines[start:])
    return HEADER + body


def main(argv: list[str]) -> int:
    text = render(RULES.read_text())
    if "--check" in argv:
        if TARGET.read_text() != text:
            print(f"{TARGET} is not what {RULES.name} renders: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
