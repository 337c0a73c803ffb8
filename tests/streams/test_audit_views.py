"""The audit views read the stations' figures by the names their types declare, and the rows the store
writes are its tables' columns (issue 40 item 3).

``tool_invocation`` (schema version 1) is released SQL that a later version may only replace, so its
columns cannot be generated from :mod:`models.audit`; these tests hold the two equal instead: every
figure a column reads is a field of that station's figure types, every figure of a tool call's station
has a column, and the rows the store returns are the view's columns.
"""

from __future__ import annotations

import re

import pytest

from models import audit as figures
from models.audit import ToolCallRow, VerdictRow
from streams.audit import evidence, tables
from streams.audit.migrations.views import TOOL_CALL_COLUMNS, VERDICT_COLUMNS, VERDICT_SHARED
from streams.audit.store import EventRow
from streams.audit.tables import Table

FIGURES_BY_ALIAS: dict[str, tuple[type, ...]] = {
    "pp": (figures.PostprocessFigures, figures.PostprocessFailed),
    "pj": (figures.ProjectFigures, figures.ProjectFailed),
    "lg": (figures.LedgerFigures,),
    "dl": (figures.DeadLetterFigures,),
}
"""The station each alias of ``tool_invocation`` joins (``tool_call_station``), by its figure types."""

_READ = re.compile(r"\{(pp|pj|lg|dl)[.#]([a-z0-9_]+)\}")


def fields_of(*shapes: type) -> set[str]:
    return {name for shape in shapes for name in shape.__annotations__}


def read_by_the_view(alias: str) -> set[str]:
    return {name for _, sql in TOOL_CALL_COLUMNS for a, name in _READ.findall(sql) if a == alias}


@pytest.mark.parametrize("alias", sorted(FIGURES_BY_ALIAS))
def test_a_tool_call_row_reads_every_figure_of_its_stations_and_nothing_else(alias: str) -> None:
    assert read_by_the_view(alias) == fields_of(*FIGURES_BY_ALIAS[alias])


def test_the_view_reads_no_figure_under_another_alias() -> None:
    aliases = {a for _, sql in TOOL_CALL_COLUMNS for a in re.findall(r"\{(\w+)[.#]", sql)}
    assert aliases == set(FIGURES_BY_ALIAS)


def test_a_tool_call_row_is_the_views_columns() -> None:
    columns = ("run_id", "tool_call_id", *(name for name, _ in TOOL_CALL_COLUMNS), "updated_at")
    assert tuple(ToolCallRow.__annotations__) == columns


def test_a_verdict_row_is_the_views_columns_and_the_verdict_figures() -> None:
    columns = ("run_id", *(name for name, _ in VERDICT_COLUMNS), *VERDICT_SHARED, "updated_at")
    assert tuple(VerdictRow.__annotations__) == columns
    verdict = tuple(name for name, _ in VERDICT_COLUMNS if name != "event_id")
    # SPEC 5's figures of a verdict: the guard's first five (what guard_verdict keeps), its unjudged
    # figures, and those of the semantic review that gives a verdict in enforce mode (it cites nothing)
    assert tuple(figures.GuardFigures.__annotations__)[: len(verdict)] == verdict
    assert tuple(figures.GuardUnjudged.__annotations__) == verdict
    assert set(verdict) - fields_of(figures.SemanticFigures) == {"cited_tool_call_ids"}
    assert set(figures.SemanticUnjudged.__annotations__) <= set(verdict) | {"status"}


def test_a_figure_of_one_station_means_one_thing_in_the_view() -> None:
    """Two stations' figures of one name have two columns (``relevance_level`` and
    ``projected_relevance_level``), never one column read from either."""
    for name, sql in TOOL_CALL_COLUMNS:
        assert len({a for a, _ in _READ.findall(sql)}) <= 1, name


def columns_of(*tables: Table) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.name for table in tables for c in table.inserted))


@pytest.mark.parametrize(
    ("row", "table"),
    [
        (evidence.EntryRow, tables.LEDGER_ENTRY),
        (evidence.VerdictDocumentRow, tables.VERDICT_RECORD),
        (evidence.ReportDocumentRow, tables.REPORT_RECORD),
        (evidence.JudgementDocumentRow, tables.JUDGEMENT_RECORD),
        (evidence.DraftRow, tables.DRAFT_RECORD),
    ],
)
def test_an_evidence_row_is_its_tables_columns(row: type, table: Table) -> None:
    assert set(row.__annotations__) == set(columns_of(table))


def test_an_audit_records_row_fills_the_three_tables_and_says_which() -> None:
    columns = columns_of(tables.AUDIT_EVENTS, tables.TOOL_CALL_STATION, tables.GUARD_VERDICT)
    assert set(EventRow.__annotations__) == {*columns, "is_verdict", "is_station"}
