"""The audit tables, each described once, and the SQL of both dialects rendered from the descriptions.

A :class:`Table` names its columns with a :data:`Kind` each; :func:`create_table` writes its ``CREATE
TABLE`` in SQLite's or PostgreSQL's types (the migrations), :func:`insert` its ``INSERT`` with SQLite's
``:name`` or psycopg's typed ``%(name)s::type`` parameters (the stores). The rules the stores apply on a
conflict are written once here too: :func:`upsert_station` (a strictly newer origin wins a station's row)
and :func:`insert_entry` (the first ledger entry of a key stays); SQLite 3.24, which an upsert needs,
reads both.

A table is described as the schema version in its docstring created it. A later version that changes a
table is a migration of its own (and a new description the stores write); never an edit here, since a
database that ran a released version already holds that table (:mod:`streams.audit.migrations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, cast

Dialect = Literal["sqlite", "postgresql"]

Kind = Literal["text", "int", "int32", "json", "stamp", "bytes"]
"""``int`` is 64-bit; ``json`` is ``jsonb`` in PostgreSQL (read back as values), text in SQLite;
``stamp`` is when a row was stored (``timestamptz``; ISO 8601 text in SQLite)."""

_TYPES: dict[Dialect, dict[Kind, str]] = {
    "sqlite": {
        "text": "TEXT",
        "int": "INTEGER",
        "int32": "INTEGER",
        "json": "TEXT",
        "stamp": "TEXT",
        "bytes": "BLOB",
    },
    "postgresql": {
        "text": "text",
        "int": "bigint",
        "int32": "integer",
        "json": "jsonb",
        "stamp": "timestamptz",
        "bytes": "bytea",
    },
}


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its name, its kind, whether it may be NULL, and a default (which no insert sets)."""

    name: str
    kind: Kind
    not_null: bool = False
    default: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A table's name, its columns in order, and its primary key."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]

    @property
    def inserted(self) -> tuple[Column, ...]:
        """The columns an insert sets: all but those with a default."""
        return tuple(c for c in self.columns if c.default is None)


def _columns(*spec: str) -> tuple[Column, ...]:
    """Columns from ``"name kind"``; ``"name kind!"`` is NOT NULL, ``"name kind! = 0"`` has a default."""
    out = []
    for line in spec:
        declared, _, default = line.partition(" = ")
        name, kind = declared.split()
        if kind.rstrip("!") not in _TYPES["sqlite"]:
            raise ValueError(f"column {name}: no kind {kind!r}")
        out.append(Column(name, cast(Kind, kind.rstrip("!")), kind.endswith("!"), default or None))
    return tuple(out)


_ORIGIN = ("origin_topic text", "origin_partition int", "origin_offset int", "source_timestamp int")
_STORED = ("applied_at stamp!",)
_VERDICT = ("event_id text", "run_id text", "draft_id text", "attempt int", "verdict text")
"""A verdict's event id (the key of each table of verdicts or reports), whose draft and attempt, and how."""

AUDIT_EVENTS = Table(
    "audit_events",
    _columns(
        "event_id text",
        "run_id text",
        "tool_call_id text",
        "station text!",
        *_ORIGIN[:3],
        "source_topic text!",
        "source_partition int!",
        "source_offset int!",
        "source_timestamp int",
        "processed_at text!",
        "fields json!",
        *_STORED,
    ),
    ("event_id",),
)
"""Version 1: every distinct audit record; ``event_id`` is the dedupe authority."""

TOOL_CALL_STATION = Table(
    "tool_call_station",
    _columns(
        "run_id text!",
        "tool_call_id text!",
        "station text!",
        "event_id text!",
        *_ORIGIN,
        "tiebreak int32!",
        "processed_at text!",
        "fields json!",
        *_STORED,
    ),
    ("run_id", "tool_call_id", "station"),
)
"""Version 1: one station's latest figures for one tool call (:func:`upsert_station`)."""

GUARD_VERDICT = Table(
    "guard_verdict",
    _columns(
        *_VERDICT,
        "violation_codes json!",
        "cited_tool_call_ids json!",
        *_ORIGIN,
        "processed_at text!",
        *_STORED,
    ),
    ("event_id",),
)
"""Version 1: one row per guard audit record."""

# Versions 3 and 4 keep the evidence itself, so pages and receipts outlive the Redis ledger (issue 19),
# each document as its topic carried it: text columns hold JSON text, never jsonb, which reorders keys.
LEDGER_ENTRY = Table(
    "ledger_entry",
    _columns(
        "run_id text!",
        "tool_call_id text!",
        "status text",
        "projection_sha256 text",
        "key_id text",
        "event_id text",
        *_ORIGIN,
        "ledger_topic text!",
        "ledger_partition int!",
        "ledger_offset int!",
        "entry text!",
        "later_differs int! = 0",
        *_STORED,
    ),
    ("run_id", "tool_call_id"),
)
"""Version 3: every ledger entry as the ``ledger`` topic carried it (``entry``: the exact JSON text,
signature included), one per ``(run_id, tool_call_id)``: the first one stored wins, as in the write-once
ledger; a later different one is not stored, only flagged (``later_differs`` 1; :func:`insert_entry`)."""

VERDICT_RECORD = Table(
    "verdict_record",
    _columns(
        *_VERDICT,
        "draft_sha256 text",
        *_ORIGIN,
        "document text!",
        *_STORED,
    ),
    ("event_id",),
)
"""Version 3: every verdict as the ``verdicts`` topic carried it (``document``: the exact JSON text), keyed
by its ``event_id``: a re-delivered verdict is stored once, each attempt of a draft kept."""

DRAFT_RECORD = Table(
    "draft_record",
    _columns(
        "draft_sha256 text",
        "run_id text",
        "draft_id text",
        "origin_topic text!",
        "origin_partition int!",
        "origin_offset int!",
        "value bytes!",
        *_STORED,
    ),
    ("draft_sha256",),
)
"""Version 3: the drafts the verdicts judged, keyed by ``draft_sha256`` (the SHA-256 of the exact bytes,
which a verdict carries), so a page can show each analysis item beside the evidence it cites; ``origin_*``
are the draft record's coordinates. Only drafts the guard would parse are kept (at most
``max_draft_bytes``, a JSON object)."""

REPORT_RECORD = Table(
    "report_record",
    _columns(
        *_VERDICT,
        "verdict_event_id text",
        "draft_sha256 text",
        *_ORIGIN,
        "document text!",
        *_STORED,
    ),
    ("event_id",),
)
"""Version 4: every published report as the ``reports`` topic carried it (``document``: the exact JSON
text, signature included), keyed by its ``event_id`` like a verdict, with the ``verdict_event_id`` it
was published under, so ``inspect`` and the run page show what left the chain for each draft."""


JUDGEMENT_RECORD = Table(
    "judgement_record",
    _columns(
        "event_id text",
        "run_id text",
        "draft_id text",
        "attempt int",
        "verdict_event_id text",
        "draft_sha256 text",
        *_ORIGIN,
        "document text!",
        *_STORED,
    ),
    ("event_id",),
)
"""Version 5: every judgement of the semantic review (SPEC 4.4) as the ``judgements`` topic carried it
(``document``: the exact JSON text, signature included), keyed by its ``event_id``, with the verdict it
judged (``verdict_event_id``), so a receipt and the run page show what the model said of each claim."""


def create_table(table: Table, dialect: Dialect) -> str:
    """``CREATE TABLE`` of ``table`` in ``dialect``'s types; a one-column key is that column's."""
    types = _TYPES[dialect]
    width = max(len(c.name) for c in table.columns) + 1
    lines = []
    for column in table.columns:
        line = f"{column.name.ljust(width)}{types[column.kind]}"
        if table.key == (column.name,):
            line += " PRIMARY KEY"
        if column.not_null:
            line += " NOT NULL"
        if column.default is not None:
            line += f" DEFAULT {column.default}"
        lines.append(line)
    if len(table.key) > 1:
        lines.append(f"PRIMARY KEY ({', '.join(table.key)})")
    body = ",\n".join(f"    {line}" for line in lines)
    return f"CREATE TABLE {table.name} (\n{body}\n)"


def create_index(table: Table, suffix: str, *columns: str) -> str:
    """``CREATE INDEX <table>_<suffix> ON <table> (columns)`` (the same in both dialects)."""
    return f"CREATE INDEX {table.name}_{suffix} ON {table.name} ({', '.join(columns)})"


def parameters(table: Table, dialect: Dialect) -> str:
    """The inserted columns' values as parameters: ``:name`` (SQLite), ``%(name)s::type`` (psycopg)."""
    if dialect == "sqlite":
        return ", ".join(f":{c.name}" for c in table.inserted)
    types = _TYPES[dialect]
    return ", ".join(f"%({c.name})s::{types[c.kind]}" for c in table.inserted)


def insert(
    table: Table,
    dialect: Dialect,
    *,
    alias: str | None = None,
    select_from: str | None = None,
    verb: Literal["INSERT", "INSERT OR IGNORE"] = "INSERT",
) -> str:
    """``INSERT INTO table [AS alias] (columns) VALUES (parameters)``, or ``SELECT parameters FROM
    select_from`` in place of the VALUES (a PostgreSQL statement whose rows depend on an earlier CTE)."""
    named = f"{table.name} AS {alias}" if alias else table.name
    columns = ", ".join(c.name for c in table.inserted)
    values = parameters(table, dialect)
    source = f"VALUES ({values})" if select_from is None else f"SELECT {values}\nFROM {select_from}"
    return f"{verb} INTO {named} ({columns})\n{source}"


def insert_once(table: Table, dialect: Dialect, *, select_from: str | None = None) -> str:
    """An insert that stores nothing when the key is there already: a re-delivered record is a no-op.

    SQLite's is ``INSERT OR IGNORE`` (which also skips a row its constraints refuse, as it always has);
    PostgreSQL's is ``ON CONFLICT (key) DO NOTHING``.
    """
    if dialect == "sqlite":
        return insert(table, dialect, select_from=select_from, verb="INSERT OR IGNORE")
    statement = insert(table, dialect, select_from=select_from)
    return f"{statement}\nON CONFLICT ({', '.join(table.key)}) DO NOTHING"


def upsert_station(dialect: Dialect, *, select_from: str | None = None) -> str:
    """A station's row (``tool_call_station``): a record replaces the row only when it is strictly newer by
    origin — the same offset, then timestamp, then tiebreak comparison in both dialects (the rule in words:
    :mod:`streams.audit.store`)."""
    table = TOOL_CALL_STATION
    updated = [c.name for c in table.inserted if c.name not in table.key]
    return f"""{insert(table, dialect, alias="t", select_from=select_from)}
ON CONFLICT ({", ".join(table.key)}) DO UPDATE SET
    ({", ".join(updated)}) =
    ({", ".join(f"EXCLUDED.{name}" for name in updated)})
WHERE CASE
    WHEN EXCLUDED.origin_offset IS NOT NULL AND t.origin_offset IS NOT NULL
         AND EXCLUDED.origin_topic = t.origin_topic AND EXCLUDED.origin_partition = t.origin_partition
        THEN (EXCLUDED.origin_offset, EXCLUDED.tiebreak) > (t.origin_offset, t.tiebreak)
    WHEN EXCLUDED.source_timestamp IS NOT NULL AND t.source_timestamp IS NOT NULL
        THEN (EXCLUDED.source_timestamp, EXCLUDED.tiebreak) > (t.source_timestamp, t.tiebreak)
    ELSE true
END"""


def insert_entry(dialect: Dialect) -> str:
    """A ledger entry (``ledger_entry``): the first stored stays (what the agent was shown); a later one
    that differs in ``projection_sha256`` or ``status`` only sets ``later_differs``."""
    differs = "IS NOT" if dialect == "sqlite" else "IS DISTINCT FROM"  # SQLite < 3.39 lacks the latter
    return (
        f"{insert(LEDGER_ENTRY, dialect, alias='e')}\n"
        f"ON CONFLICT ({', '.join(LEDGER_ENTRY.key)}) DO UPDATE SET later_differs = 1\n"
        f"WHERE EXCLUDED.projection_sha256 {differs} e.projection_sha256\n"
        f"    OR EXCLUDED.status {differs} e.status"
    )
