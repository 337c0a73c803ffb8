"""Schema version 3: the evidence itself, so pages and receipts outlive the Redis ledger (issue 19, item 6).

- ``ledger_entry`` — every ledger entry as the ``ledger`` topic carried it (``entry``: the exact JSON
  text, signature included), one per ``(run_id, tool_call_id)``: the first one stored wins, as in the
  write-once ledger; a later different one is not stored, only flagged (``later_differs`` 1).
- ``verdict_record`` — every verdict as the ``verdicts`` topic carried it (``document``: the exact JSON
  text), keyed by its ``event_id``: a re-delivered verdict is stored once, each attempt of a draft kept.
- ``draft_record`` — the drafts the verdicts judged, keyed by ``draft_sha256`` (the SHA-256 of the exact
  bytes, which a verdict carries), so a page can show each analysis item beside the evidence it cites;
  ``origin_*`` are the draft record's coordinates (a verdict's ``origin``).
  Only drafts the guard would parse are kept (at most ``max_draft_bytes``, a JSON object).

Schema version 4 adds ``report_record`` (:func:`report_tables`): every published report as the
``reports`` topic carried it (``document``: the exact JSON text, signature included), keyed by its
``event_id`` like a verdict, with the ``verdict_event_id`` it was published under, so ``inspect`` and
the run page show what left the chain for each draft.

Text columns hold JSON text, never ``jsonb``: ``jsonb`` reorders keys, and an entry is kept as stored.
"""

from __future__ import annotations

from typing import Literal

EVIDENCE_NAME = "ledger entries, verdicts and drafts as the topics carried them"
REPORTS_NAME = "published reports as the reports topic carried them"


def evidence_tables(dialect: Literal["sqlite", "postgresql"]) -> tuple[str, ...]:
    """The statements of version 3 in one dialect (the same columns; ``bigint``/``bytea`` in PostgreSQL)."""
    integer, blob, stamp = (
        ("INTEGER", "BLOB", "TEXT") if dialect == "sqlite" else ("bigint", "bytea", "timestamptz")
    )
    return (
        f"""CREATE TABLE ledger_entry (
            run_id            TEXT NOT NULL,
            tool_call_id      TEXT NOT NULL,
            status            TEXT,
            projection_sha256 TEXT,
            key_id            TEXT,
            event_id          TEXT,
            origin_topic      TEXT,
            origin_partition  {integer},
            origin_offset     {integer},
            source_timestamp  {integer},
            ledger_topic      TEXT NOT NULL,
            ledger_partition  {integer} NOT NULL,
            ledger_offset     {integer} NOT NULL,
            entry             TEXT NOT NULL,
            later_differs     {integer} NOT NULL DEFAULT 0,
            applied_at        {stamp} NOT NULL,
            PRIMARY KEY (run_id, tool_call_id)
        )""",
        f"""CREATE TABLE verdict_record (
            event_id          TEXT PRIMARY KEY,
            run_id            TEXT,
            draft_id          TEXT,
            attempt           {integer},
            verdict           TEXT,
            draft_sha256      TEXT,
            origin_topic      TEXT,
            origin_partition  {integer},
            origin_offset     {integer},
            source_timestamp  {integer},
            document          TEXT NOT NULL,
            applied_at        {stamp} NOT NULL
        )""",
        "CREATE INDEX verdict_record_run ON verdict_record (run_id, draft_id)",
        f"""CREATE TABLE draft_record (
            draft_sha256      TEXT PRIMARY KEY,
            run_id            TEXT,
            draft_id          TEXT,
            origin_topic      TEXT NOT NULL,
            origin_partition  {integer} NOT NULL,
            origin_offset     {integer} NOT NULL,
            value             {blob} NOT NULL,
            applied_at        {stamp} NOT NULL
        )""",
        "CREATE INDEX draft_record_run ON draft_record (run_id)",
    )


def report_tables(dialect: Literal["sqlite", "postgresql"]) -> tuple[str, ...]:
    """The statements of version 4 in one dialect: ``report_record``, keyed by ``event_id``."""
    integer, stamp = ("INTEGER", "TEXT") if dialect == "sqlite" else ("bigint", "timestamptz")
    return (
        f"""CREATE TABLE report_record (
            event_id          TEXT PRIMARY KEY,
            run_id            TEXT,
            draft_id          TEXT,
            attempt           {integer},
            verdict           TEXT,
            verdict_event_id  TEXT,
            draft_sha256      TEXT,
            origin_topic      TEXT,
            origin_partition  {integer},
            origin_offset     {integer},
            source_timestamp  {integer},
            document          TEXT NOT NULL,
            applied_at        {stamp} NOT NULL
        )""",
        "CREATE INDEX report_record_run ON report_record (run_id, draft_id)",
    )
