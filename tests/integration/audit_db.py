"""The audit databases the integration tests run against: a SQLite file, or a fresh PostgreSQL database.

PostgreSQL comes from, first match wins: ``EC_TEST_POSTGRES_DSN`` (a server where that user may
``CREATE DATABASE``), or the local cluster ``make up-postgres`` starts (its DSN is in
``.local/postgres/dsn``). Each test gets a database of its own, ``test_<12 hex>``, dropped afterwards.
A server that does not answer fails the tests that need it, with what to run; they are never skipped.

The fixtures ``postgres_admin`` and ``target`` (this test's audit database, once on each backend) are the
integration tier's (tests/integration/conftest.py registers them); ``sink_settings`` is an audit sink's
settings on the real broker, its topics created for the test and deleted after, and the fixture
``settings_fixture`` gives them as ``settings`` to a module that imports it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from pydantic import SecretStr

from streams.cli.display import redact_url
from streams.kafka.admin import TOPIC_NAMES, ensure_topics
from streams.settings import Settings

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


@pytest.fixture(scope="session")
def postgres_admin() -> str:
    """The PostgreSQL server of the session (see ``admin_dsn``)."""
    return admin_dsn()


@pytest.fixture(params=BACKENDS)
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """This test's own audit database, once on each backend: a SQLite file, or a fresh PostgreSQL
    database (dropped after). Only the PostgreSQL case needs the server."""
    admin = request.getfixturevalue("postgres_admin") if request.param == "postgresql" else None
    with audit_target(request.param, tmp_path, admin) as where:
        yield where


@asynccontextmanager
async def sink_settings(
    kafka_bootstrap: str, prefix: str, tmp_path: Path, target: str, **fields: Any
) -> AsyncIterator[Settings]:
    """Settings of an audit sink storing into ``target`` (a SQLite path or a PostgreSQL DSN), isolated by
    topic prefix, app id and ledger namespace, with short broker timeouts (``fields`` change any); the
    nine topics are created first and deleted after."""
    postgres = target.startswith("postgresql://")
    settings = Settings(
        **{
            "kafka_bootstrap": kafka_bootstrap,
            "topic_prefix": prefix,
            "app_id": f"{prefix}app",
            "ns": prefix.rstrip("-"),
            "audit_db": str(tmp_path / "audit.db"),
            "audit_dsn": SecretStr(target) if postgres else None,
            "topic_partitions": 3,
            "broker_session_timeout_seconds": 6,
            "broker_heartbeat_seconds": 1,
            "broker_rebalance_timeout_seconds": 10,
            "retry_initial_backoff_ms": 100,
            "retry_max_backoff_ms": 1000,
            **fields,
        }
    )
    await ensure_topics(settings)
    try:
        yield settings
    finally:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
        await admin.start()
        try:
            await admin.delete_topics([settings.topic(name) for name in TOPIC_NAMES])
        finally:
            await admin.close()


@pytest.fixture(name="settings")
async def settings_fixture(
    kafka_bootstrap: str, unique_prefix: str, tmp_path: Path, target: str
) -> AsyncIterator[Settings]:
    """``settings`` of a module that imports this: ``sink_settings`` storing into this test's ``target``."""
    async with sink_settings(kafka_bootstrap, unique_prefix, tmp_path, target) as settings:
        yield settings
