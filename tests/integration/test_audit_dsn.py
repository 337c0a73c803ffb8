"""The audit DSN against a real PostgreSQL: several hosts work, and what the server says is never copied.

libpq's message for a refused connection carries the server's words, and the server quotes the value
of an option it refuses (``invalid value for parameter "work_mem": "..."``): the store describes the
refusal in its own words. A DSN naming several hosts (URI or key/value words) connects through the
first that answers and is printed without its password (issue 23, items 1-2).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

from streams.audit.factory import open_store
from streams.errors import ConfigurationError
from tests.console import clean_env
from tests.integration.audit_db import admin_dsn, fresh_database
from tests.integration.helpers import CLI
from tests.streams.audit_records import chain, guard

SECRET = "S3CR3T-option-value"


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    with fresh_database(admin_dsn()) as dsn:
        yield dsn


def test_an_option_value_the_server_quotes_is_never_printed(database: str) -> None:
    """Finding 1: the server's FATAL quoted the value, and it was copied into the error and the log."""
    dsn = f"{database}?options={quote(f'-c work_mem={SECRET}')}"
    with pytest.raises(ConfigurationError) as refused:
        open_store(dsn, readonly=True)
    text = str(refused.value)
    assert SECRET not in text and "options=****" in text and "EC_AUDIT_DSN" in text, text
    assert refused.value.__cause__ is None and refused.value.__suppress_context__  # no libpq text behind it


def test_a_wrong_password_is_a_setting_error_in_fixed_words(database: str) -> None:
    parts = urlsplit(database)
    wrong = database.replace(f":{parts.password}@", f":{SECRET}@", 1)
    with pytest.raises(ConfigurationError, match="password authentication failed") as refused:
        open_store(wrong, readonly=True)
    assert SECRET not in str(refused.value) and (parts.password or "") not in str(refused.value)


def several_hosts(dsn: str) -> tuple[str, str]:
    """``dsn`` as a URI and as key/value words, each naming first a closed port, then the server."""
    parts = urlsplit(dsn)
    host, port, user, password = parts.hostname, parts.port or 5432, parts.username, parts.password or ""
    uri = f"{parts.scheme}://{parts.netloc.rpartition('@')[0]}@{host}:1,{host}:{port}{parts.path}"
    words = (
        f"host={host},{host} port=1,{port} user={user} password='{password}' dbname={parts.path.lstrip('/')}"
    )
    return uri, words


def test_a_dsn_with_several_hosts_works_and_is_printed_without_its_password(
    database: str, tmp_path: Path
) -> None:
    """Finding 2: ``u:p@h1:1,h2:2`` raised ValueError (a port "1,h2:2"), key/value words were refused."""
    uri, words = several_hosts(database)
    password = urlsplit(database).password or ""
    writer = open_store(uri)
    try:
        writer.apply([*chain("run-hosts", "call_a", 0), guard("run-hosts", 0, 1, "PASS", [])])
        parts = urlsplit(database)
        host, port = parts.hostname, parts.port or 5432
        assert writer.where == f"{parts.scheme}://****@{host}:1,{host}:{port}{parts.path}"
    finally:
        writer.close()
    env = clean_env(EC_REDIS_URL="redis://127.0.0.1:1/0", EC_REDIS_TIMEOUT_MS="300")
    for dsn in (uri, words):
        done = subprocess.run(  # noqa: S603 - our own console script
            [CLI, "inspect", "run-hosts", "--json"],
            env={**env, "EC_AUDIT_DSN": dsn},
            cwd=tmp_path,
            capture_output=True,
            timeout=60,
            check=False,
        )
        output = (done.stdout + done.stderr).decode()
        assert done.returncode == 0, output
        assert "call_a" in output and password not in output and "Traceback" not in output, output
