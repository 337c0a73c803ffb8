"""The metric names a PromQL expression reads, for the tests that hold the alerts and the dashboard to
what the processes export (tests/test_alerts.py, tests/test_dashboard.py,
tests/integration/test_metrics_exported.py).

Not a PromQL parser: it drops what cannot be a metric name (strings, label matchers, ranges, grouping
clauses, Grafana variables, numbers and durations) and keeps every identifier that is not a function
call or a keyword. promtool checks the syntax; this only finds the names.
"""

from __future__ import annotations

import re

KEYWORDS = frozenset({"and", "or", "unless", "offset", "bool", "inf", "nan", "atan2"})
_DROP = (
    re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\''),  # string literals
    re.compile(r"\{[^{}]*\}"),  # label matchers
    re.compile(r"\[[^\[\]]*\]"),  # ranges and subqueries
    re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)"),  # grouping clauses
    re.compile(r"\b(?:group_left|group_right)\b"),  # without a label list
    re.compile(r"\$\{?\w+\}?"),  # Grafana variables
)
_IDENTIFIER = re.compile(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?")


def metric_names(expr: str) -> set[str]:
    """The metric names ``expr`` selects (``up``, ``evidence_chain_records_total``, ...)."""
    text = expr
    for pattern in _DROP:
        text = pattern.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        name, call = match.group(1), match.group(2)
        if call is None and name.lower() not in KEYWORDS:
            names.add(name)
    return names
