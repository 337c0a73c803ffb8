"""The audit databases the integration tests run against: a SQLite file, or a fresh PostgreSQL database.

PostgreSQL comes from, first match wins: ``EC_TEST_POSTGRES_DSN`` (a server where that user may
``CREATE DATABASE``), or the local cluster ``make up-postgres`` starts (its DSN is in
``.local/postgres/dsn``). Each test gets a database of its own, ``test_<12 hex>``, dropped afterwards.
A server that does not answer fails the tests that need it, with what to run; they are never skipped.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

from streams.cli.display import redact_url

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCAL_DSN_FILE = REPO_ROOT / ".local" / "postgres" / "dsn"
BACKENDS = ("sqlite", "postgresql")


def admin_dsn() -> str:
    """A DSN of a PostgreSQL server that answers and lets its user create databases (or ``pytest.fail``)."""
    dsn = os.environ.get("EC_TEST_POSTGRES_DSN", "").strip()
    source = "EC_TEST_POSTGRES_DSN"
    if not dsn:
        if not LOCAL_DSN_FILE.is_file():
            pytest.fail(
                "no PostgreSQL for the audit tests: run `make up-postgres` (see docs/local-stack.md), "
                "or set EC_TEST_POSTGRES_DSN to a server where you may CREATE DATABASE",
                pytrace=False,
            )
        dsn, source = LOCAL_DSN_FILE.read_text().strip(), str(LOCAL_DSN_FILE)
    try:
        with psycopg.connect(dsn, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        ci = " [CI]" if os.environ.get("CI", "").lower() == "true" else ""
        pytest.fail(
            f"PostgreSQL at {redact_url(dsn)} (from {source}) does not answer ({exc}).{ci} Run "
            "`make up-postgres`, then `make status`",
            pytrace=False,
        )
    return dsn


def with_database(dsn: str, name: str) -> str:
    """``dsn`` pointing at the database ``name`` instead (user, password, host and options kept)."""
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@contextmanager
def fresh_database(admin: str) -> Iterator[str]:
    """A new, empty database on ``admin``'s server for one test; its DSN. Dropped afterwards."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"'.encode())
    try:
        yield with_database(admin, name)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


@contextmanager
def audit_target(backend: str, tmp_path: Path, admin: str | None) -> Iterator[str]:
    """Where a test's audit database is: a SQLite path under ``tmp_path``, or a fresh PostgreSQL DSN."""
    if backend == "sqlite":
        yield str(tmp_path / "audit.db")
        return
    if admin is None:
        raise ValueError("a PostgreSQL target needs the admin DSN")
    with fresh_database(admin) as dsn:
        yield dsn
