"""The SQL of the audit views, in SQLite's and PostgreSQL's dialect, from one list of columns.

A figure of a station is written ``{alias.name}`` (text: a string, or an object's JSON text) or
``{alias#name}`` (a number or boolean as JSON holds it). SQLite reads both with ``json_extract``;
PostgreSQL with ``->>`` (text) and ``->`` (``jsonb``), so a row reads back as the same Python values
from either database.

The lists here are those of schema version 1 (``tool_invocation``) and 2 (``run_summary``): a change
to a view is a new migration that replaces it, never an edit of these.
"""

from __future__ import annotations

import re

from streams.audit.tables import Dialect

TOOL_CALL_COLUMNS: tuple[tuple[str, str], ...] = (
    (
        "origin_partition",
        "coalesce(pp.origin_partition, pj.origin_partition, lg.origin_partition, dl.origin_partition)",
    ),
    ("origin_offset", "coalesce(pp.origin_offset, pj.origin_offset, lg.origin_offset, dl.origin_offset)"),
    (
        "source_timestamp",
        "coalesce(pp.source_timestamp, pj.source_timestamp, lg.source_timestamp, dl.source_timestamp)",
    ),
    # postprocess
    ("postprocess_status", "CASE WHEN pp.event_id IS NOT NULL THEN coalesce({pp.status}, 'OK') END"),
    ("postprocess_failure_reason", "{pp.reason}"),
    ("candidate_count", "{pp#candidate_count}"),
    ("evidence_block_count", "{pp#evidence_block_count}"),
    ("top_similarity", "{pp#top_similarity}"),
    ("relevance_level", "{pp.relevance_level}"),
    ("low_quality", "{pp#low_quality}"),
    ("py_rag_relevance_level", "{pp.py_rag_relevance_level}"),
    ("py_rag_evidence_status", "{pp.py_rag_evidence_status}"),
    ("contract_anomaly", "{pp.contract_anomaly}"),
    ("retrieval_trace", "{pp.retrieval_trace}"),
    ("pack_used_chars", "{pp#pack_used_chars}"),
    ("pack_included", "{pp#pack_included}"),
    ("pack_omitted", "{pp#pack_omitted}"),
    # project
    ("project_status", "CASE WHEN {pj.projection_sha256} IS NOT NULL THEN 'OK' ELSE {pj.status} END"),
    ("project_failure_reason", "{pj.failure_reason}"),
    ("evidence_status", "{pj.evidence_status}"),
    ("returned_count", "{pj#returned_count}"),
    ("projected_relevance_level", "{pj.relevance_level}"),
    ("truncated", "{pj#truncated}"),
    ("projection_bytes", "{pj#projection_bytes}"),
    ("projection_sha256", "{pj.projection_sha256}"),
    # ledger
    ("ledger_status", "{lg.status}"),
    ("ledger_outcome", "{lg.outcome}"),
    ("ledger_key", "{lg.key}"),
    # dead letter (the latest one for this tool call)
    ("dead_letter_reason", "{dl.reason}"),
    ("dead_letter_error", "{dl.error}"),
    ("dead_letter_station", "{dl.station}"),
    ("dead_letter_event_id", "dl.event_id"),
)
"""Columns of a ``tool_call`` row of ``tool_invocation`` and the SQL that reads them (see the module)."""

VERDICT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("event_id", "v.event_id"),
    ("draft_id", "v.draft_id"),
    ("attempt", "v.attempt"),
    ("verdict", "v.verdict"),
    ("violation_codes", "v.violation_codes"),
    ("cited_tool_call_ids", "v.cited_tool_call_ids"),
)
"""Columns only a ``verdict`` row of ``tool_invocation`` fills (plus run and origin columns)."""

VERDICT_SHARED: dict[str, str] = {
    "origin_partition": "v.origin_partition",
    "origin_offset": "v.origin_offset",
    "source_timestamp": "v.source_timestamp",
}

_FIGURE = re.compile(r"\{(pp|pj|lg|dl)([.#])([a-z0-9_]+)\}")


def figure_sql(template: str, dialect: Dialect) -> str:
    """``template`` with each ``{alias.name}`` / ``{alias#name}`` written in ``dialect``."""

    def one(match: re.Match[str]) -> str:
        alias, kind, name = match.groups()
        if dialect == "sqlite":
            return f"json_extract({alias}.fields, '$.{name}')"
        return f"({alias}.fields {'->>' if kind == '.' else '->'} '{name}')"

    return _FIGURE.sub(one, template)


def tool_invocation_sql(dialect: Dialect) -> str:
    """``CREATE VIEW tool_invocation``: one row per tool call of a run, one per guard verdict."""
    names = [
        "kind",
        "run_id",
        "tool_call_id",
        *(n for n, _ in TOOL_CALL_COLUMNS),
        *(n for n, _ in VERDICT_COLUMNS),
        "updated_at",
    ]
    stamps = ", ".join(
        f"coalesce({a}.applied_at, '')" if dialect == "sqlite" else f"{a}.applied_at"
        for a in ("pp", "pj", "lg", "dl")
    )
    tool_call = {
        "kind": "'tool_call'",
        "run_id": "k.run_id",
        "tool_call_id": "k.tool_call_id",
        **{n: figure_sql(sql, dialect) for n, sql in TOOL_CALL_COLUMNS},
        # SQLite's max() of several arguments is scalar; PostgreSQL's GREATEST skips nulls by itself.
        "updated_at": f"max({stamps})" if dialect == "sqlite" else f"GREATEST({stamps})",
    }
    verdict = {
        "kind": "'verdict'",
        "run_id": "v.run_id",
        **VERDICT_SHARED,
        **dict(VERDICT_COLUMNS),
        "updated_at": "v.applied_at",
    }
    joins = "\n".join(
        f"LEFT JOIN tool_call_station {alias} ON {alias}.run_id = k.run_id "
        f"AND {alias}.tool_call_id = k.tool_call_id AND {alias}.station = '{station}'"
        for alias, station in (
            ("pp", "postprocess"),
            ("pj", "project"),
            ("lg", "ledger"),
            ("dl", "dead-letter"),
        )
    )
    return (
        "CREATE VIEW tool_invocation AS\nSELECT "  # noqa: S608 - built from the constant column lists
        + ", ".join(f"{tool_call.get(n, 'NULL')} AS {n}" for n in names)
        + "\nFROM (SELECT DISTINCT run_id, tool_call_id FROM tool_call_station) AS k\n"
        + joins
        + "\nUNION ALL\nSELECT "
        + ", ".join(f"{verdict.get(n, 'NULL')} AS {n}" for n in names)
        + "\nFROM guard_verdict AS v"
    )


RUN_SUMMARY_SQL = """
CREATE VIEW run_summary AS
SELECT r.run_id,
    r.events,
    (SELECT count(DISTINCT t.tool_call_id) FROM tool_call_station AS t WHERE t.run_id = r.run_id)
        AS tool_calls,
    (SELECT count(*) FROM audit_events AS d WHERE d.run_id = r.run_id AND d.station = 'dead-letter')
        AS dead_letters,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id) AS verdicts,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id AND v.verdict = 'PASS')
        AS pass_verdicts,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id AND v.verdict = 'REJECT')
        AS reject_verdicts,
    (SELECT count(*) FROM guard_verdict AS v WHERE v.run_id = r.run_id AND v.verdict = 'FALLBACK')
        AS fallback_verdicts,
    r.first_source_timestamp,
    r.last_source_timestamp,
    r.last_applied_at
FROM (
    SELECT run_id, count(*) AS events, min(source_timestamp) AS first_source_timestamp,
        max(source_timestamp) AS last_source_timestamp, max(applied_at) AS last_applied_at
    FROM audit_events
    WHERE run_id IS NOT NULL
    GROUP BY run_id
) AS r
"""
"""``CREATE VIEW run_summary`` (schema version 2), the same SQL in both dialects: one row per run id
that any audit record names, with its tool calls, dead letters and verdicts by outcome."""
