"""No secret in any error: a connection string that cannot work stops every command with one line
naming its setting (exit 2), never a traceback, never a piece of the password (issue 23, items 1-2).

The commands run as the console script with the secret in the environment: each in a child forked
from one interpreter that has the script's imports done (``tests/console.py``), and a few through the
installed script itself, start-up and exit included. Nothing here needs Kafka, Redis or PostgreSQL:
every address is a closed port, and each case is refused before any connection
(tests/integration/test_audit_dsn.py has the cases that need a real server).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import SecretStr

from streams.errors import ConfigurationError
from streams.ledger.redis import open_client
from streams.redaction import check_postgres_dsn, check_redis_url, redact_url
from streams.settings import load_settings
from tests.console import CLI, Command, Console, clean_env

SECRET = "S3CR3T"

# Every command that loads the settings, with arguments that need nothing on stdin.
EVERY_COMMAND: tuple[tuple[str, ...], ...] = (
    ("worker",),
    ("audit-sink",),
    ("serve", "--port", "0"),
    ("inspect", "run-1"),
    ("ledger", "export", "--run", "run-1"),
    ("ledger", "rebuild"),
    ("ledger", "check"),
    ("replay", "--topic", "raw-hits", "--from-offset", "0"),
    ("verify", "--redis"),
    ("publish", "raw-hits"),
    ("topics",),
    ("pipe",),
    ("demo",),
)
# One command per form is enough once every command is shown to load the settings first.
DATABASE_COMMANDS: tuple[tuple[str, ...], ...] = (("audit-sink",),)  # the one that retried for ever
REDIS_COMMANDS: tuple[tuple[str, ...], ...] = (("ledger", "export", "--run", "run-1"),)
KAFKA_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("worker",),
    ("audit-sink",),
    ("ledger", "rebuild"),
    ("replay", "--topic", "raw-hits", "--from-offset", "0"),
    ("publish", "raw-hits"),
    ("topics",),
)

# (value, the pieces of it that must never be printed)
MALFORMED_DSNS = {
    "bad-percent-escape": (f"postgresql://u:{SECRET}%ZZPW@127.0.0.1:1/db", [SECRET, "ZZPW"]),
    "space-in-password": (f"postgresql://u:{SECRET} PW@127.0.0.1:1/db", [SECRET]),
    "ipv6-unclosed": (f"postgresql://u:{SECRET}@[::1/db", [SECRET]),
    "raw-equals-in-options": (f"postgresql://u@127.0.0.1:1/db?options=-c x={SECRET}", [SECRET]),
    "slash-in-password": (
        f"postgresql://u:{SECRET[:3]}/{SECRET[3:]}@127.0.0.1:1/db",
        [SECRET[:3], SECRET[3:]],
    ),
    "port-not-a-number": (f"postgresql://u:{SECRET}@127.0.0.1:{SECRET}/db", [SECRET]),
    "ports-do-not-pair": (f"postgresql://u:{SECRET}@h1:1,h2:2,h3:3/db?port=1,2", [SECRET]),
    "kv-unquoted-space": (f"host=127.0.0.1 port=1 password={SECRET} PW dbname=db", [SECRET]),
    "kv-unterminated-quote": (f"host=127.0.0.1 port=1 password='{SECRET}", [SECRET]),
    "other-scheme": (f"mysql://u:{SECRET}@127.0.0.1:1/db", [SECRET]),
}
MALFORMED_REDIS_URLS = {
    "bad-scheme": (f"http://:{SECRET}@127.0.0.1:1/0", [SECRET]),
    "port-not-a-number": (f"redis://:{SECRET}@127.0.0.1:notaport/0", [SECRET, "notaport"]),
    "port-out-of-range": (f"redis://:{SECRET}@127.0.0.1:99999/0", [SECRET]),
    "ipv6-unclosed": (f"redis://:{SECRET}@[::1:6379/0", [SECRET]),
    "slash-in-password": (f"redis://:{SECRET[:3]}/{SECRET[3:]}@127.0.0.1:1/0", [SECRET[:3], SECRET[3:]]),
    "query-bad-value": (f"redis://:{SECRET}@127.0.0.1:1/0?socket_timeout={SECRET}", [SECRET]),
    "query-unknown-name": (f"redis://:{SECRET}@127.0.0.1:1/0?{SECRET}=1", [SECRET]),
    "path-not-a-db": (f"redis://:{SECRET}@127.0.0.1:1/{SECRET}", [SECRET]),
}
# What the settings refuse; the query's names and types are left to redis-py, at the Redis edge.
SETTINGS_REDIS_URLS = {k: v for k, v in MALFORMED_REDIS_URLS.items() if not k.startswith("query-")}
# Valid DSNs whose password is outside the user info, or that name several hosts: they must be
# accepted (the server is merely unreachable) and printed without the secret.
LEAKY_DSNS = {
    "password-in-query": (f"postgresql://u@127.0.0.1:1/db?password={SECRET}", "?password=****"),
    "options-in-query": (f"postgresql://u@127.0.0.1:1/db?options=-c%20work_mem%3D{SECRET}", "?options=****"),
    "multi-host-uri": (
        f"postgresql://u:{SECRET}@127.0.0.1:1,127.0.0.1:2/db",
        "****@127.0.0.1:1,127.0.0.1:2/db",
    ),
    "multi-host-kv": (
        f"host=127.0.0.1,127.0.0.1 port=1,2 user=u password={SECRET} dbname=db",
        "host=127.0.0.1,127.0.0.1 port=1,2",
    ),
}


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = clean_env(
        EC_KAFKA_BOOTSTRAP="127.0.0.1:1",
        EC_REDIS_URL="redis://127.0.0.1:1/0",
        EC_REDIS_TIMEOUT_MS="300",
        EC_STARTUP_WAIT_SECONDS="1",
        EC_RETRY_INITIAL_BACKOFF_MS="100",
        EC_RETRY_MAX_BACKOFF_MS="300",
        EC_AUDIT_DB=str(tmp_path / "audit.db"),
        EC_AUDIT_SINK_PORT="0",
        EC_DATA_DIR=str(tmp_path / "faust"),
    )
    env.update(extra)
    return env


Results = list[tuple[str, int | None, str]]
"""Per command: its arguments, its exit status (None: still running at its timeout, killed), and
stdout + stderr."""


def run(args: Sequence[str], env: dict[str, str], cwd: Path, timeout: float = 45) -> tuple[int | None, str]:
    """The installed console script itself: exit status and stdout + stderr."""
    try:
        done = subprocess.run(  # noqa: S603 - our own console script
            [CLI, *args], env=env, cwd=cwd, input=b"", capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        return None, ((exc.stdout or b"") + (exc.stderr or b"")).decode(errors="replace")
    return done.returncode, (done.stdout + done.stderr).decode(errors="replace")


def run_every(script: Console, commands: Sequence[Sequence[str]], env: dict[str, str], cwd: Path) -> Results:
    """Each command at once (each in its own forked child), in the given order."""
    return [
        (" ".join(done.args), done.returncode, done.output)
        for done in script.run(*(Command(args, env, cwd) for args in commands))
    ]


def assert_configuration_errors(results: Results, setting: str, secrets: Sequence[str]) -> None:
    problems = []
    for command, code, output in results:
        leaked = [s for s in secrets if s in output]
        if code != 2 or "Traceback" in output or leaked or setting not in output:
            problems.append(f"{command}: exit {code}, leaked {leaked}:\n{output[-1500:]}")
    assert not problems, "\n\n".join(problems)


# --- what is printed -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://audit:s3cret@db/audit", "postgresql://****@db/audit"),
        ("postgresql://u@h:1/db?password=s3cret", "postgresql://****@h:1/db?password=****"),
        (
            "postgresql://h/db?options=-c%20x%3Ds3cret&sslmode=require",
            "postgresql://h/db?options=****&sslmode=****",
        ),
        ("postgresql://u:s3cret@h1:1,h2:2/db", "postgresql://****@h1:1,h2:2/db"),
        ("postgresql://u:s3cret@[::1]:5432,h2/db", "postgresql://****@[::1]:5432,h2/db"),
        ("postgresql://u:s3?cret@h/db", "postgresql://****@h/db"),  # libpq: user info ends at '@'
        ("postgresql://u@h/db?s3cret=1", "postgresql://****@h/db?****=****"),
        ("postgresql://u@h/db?s3cret", "postgresql://****@h/db?****"),
        (
            "host=h1,h2 port=1,2 user=u password=s3cret dbname=db",
            "host=h1,h2 port=1,2 user=**** password=**** dbname=db",
        ),
        ("host=h1 password='s3 cret' options='-c x=s3cret'", "host=h1 password=**** options=****"),
        (
            "rediss://user:s3cret@cache.example:6380/2?password=s3cret",
            "rediss://****@cache.example:6380/2?password=****",
        ),
        ("redis://:s3cret@[::1]:6379/0", "redis://****@[::1]:6379/0"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
        ("evidence-chain-audit.db", "evidence-chain-audit.db"),
        # Cannot be cut safely: a "port" or a path that may be part of a password.
        ("postgresql://u:s3cret@[::1/db", "<unparsable postgresql URL>"),
        ("postgresql://u:s3/cret@h/db", "<unparsable postgresql URL>"),
        ("redis://:s3cret@[::1:6379/0", "<unparsable redis URL>"),
        ("redis://:s3/cret@h:6379/0", "<unparsable redis URL>"),
        ("redis://:s3cret@h:99999/0", "<unparsable redis URL>"),
        ("redis://:12?s3cret@h/0", "<unparsable redis URL>"),
        ("host=h1 password='s3cret", "<unparsable connection string>"),
    ],
)
def test_every_form_of_a_secret_is_redacted_and_nothing_raises(url: str, shown: str) -> None:
    assert redact_url(url) == shown
    assert "s3" not in shown


@pytest.mark.parametrize(("name", "case"), [*MALFORMED_DSNS.items(), *SETTINGS_REDIS_URLS.items()])
def test_the_settings_refuse_without_quoting_the_value(name: str, case: tuple[str, list[str]]) -> None:
    value, secrets = case
    variable = "audit_dsn" if name in MALFORMED_DSNS else "redis_url"
    check = check_postgres_dsn if variable == "audit_dsn" else check_redis_url
    with pytest.raises(ValueError, match=".") as refused:
        check(value)
    with pytest.raises(ConfigurationError, match=f"EC_{variable.upper()}") as error:
        load_settings(**{variable: value})
    for text in (str(refused.value), str(error.value)):
        assert not [s for s in secrets if s in text], text


@pytest.mark.parametrize("name", sorted(MALFORMED_REDIS_URLS))
def test_the_redis_edge_refuses_without_quoting_the_value(name: str) -> None:
    """The query's names and types are redis-py's to judge, at the edge; settings copied with
    ``model_copy`` (no validator) are checked there too."""
    value, secrets = MALFORMED_REDIS_URLS[name]
    settings = load_settings(redis_url="redis://127.0.0.1:1/0").model_copy(
        update={"redis_url": SecretStr(value)}
    )
    with pytest.raises(ConfigurationError, match="EC_REDIS_URL") as refused:
        open_client(settings)
    assert not [s for s in secrets if s in str(refused.value)], refused.value


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://u:p@h1:1,h2:2/db",
        "postgresql://u:p@[::1]:5432,[fe80::1]/db?target_session_attrs=read-write",
        "postgres:///db?host=/var/run/postgresql",
        "postgresql://u:p%40ss%2Fw0rd@h/db?options=-csearch_path%3Daudit",
        "host=h1,h2 port=5432 dbname=audit user=u password='p w' sslmode=require",
        "postgresql://u:p?w@h/db",
    ],
)
def test_valid_dsns_are_accepted(dsn: str) -> None:
    check_postgres_dsn(dsn)
    assert load_settings(audit_dsn=dsn).audit_dsn is not None


# --- every command, as the console script runs it ---------------------------------------------


def test_a_malformed_audit_dsn_stops_every_command_with_its_name_and_no_secret(
    script: Console, tmp_path: Path
) -> None:
    """Finding 1: libpq's message quoted the password, and the sink retried it as a busy database."""
    value, secrets = MALFORMED_DSNS["bad-percent-escape"]
    results = run_every(script, EVERY_COMMAND, base_env(tmp_path, EC_AUDIT_DSN=value), tmp_path)
    assert_configuration_errors(results, "EC_AUDIT_DSN", secrets)


@pytest.mark.parametrize("name", sorted(MALFORMED_DSNS))
def test_each_malformed_audit_dsn_is_a_setting_error_not_a_busy_database(
    name: str, script: Console, tmp_path: Path
) -> None:
    """Finding 1, form by form, with the command that retried a malformed DSN for ever."""
    value, secrets = MALFORMED_DSNS[name]
    results = run_every(script, DATABASE_COMMANDS, base_env(tmp_path, EC_AUDIT_DSN=value), tmp_path)
    assert_configuration_errors(results, "EC_AUDIT_DSN", secrets)


@pytest.mark.parametrize("name", ["ipv6-unclosed", "ports-do-not-pair"])
def test_a_malformed_dsn_given_with_db_is_refused_too(name: str, script: Console, tmp_path: Path) -> None:
    """``--db`` bypasses the settings' validators: the store checks the DSN again before libpq sees it."""
    value, secrets = MALFORMED_DSNS[name]
    commands = [
        ("inspect", "run-1", "--db", value),
        ("audit-sink", "--db", value),
        ("serve", "--port", "0", "--db", value),
    ]
    results = run_every(script, commands, base_env(tmp_path), tmp_path)
    assert_configuration_errors(results, "EC_AUDIT_DSN", secrets)


@pytest.mark.parametrize("name", sorted(LEAKY_DSNS))
def test_a_valid_dsn_is_accepted_and_its_password_never_printed(
    name: str, script: Console, tmp_path: Path
) -> None:
    """Finding 1 (query parameters) and 2 (several hosts): accepted, waited for, printed redacted."""
    value, shown = LEAKY_DSNS[name]
    env = base_env(tmp_path, EC_AUDIT_DSN=value)
    readers = run_every(script, [("inspect", "run-1"), ("serve", "--port", "0")], env, tmp_path)
    for command, code, output in readers:
        assert code == 1 and "AuditStoreBusy" in output, f"{command}: {code}\n{output}"
        assert shown in output and SECRET not in output and "Traceback" not in output, output
    # The sink waits for an unreachable server, logging each retry: stopped (SIGTERM) after two, or at
    # 60 s (a busy machine starts it slowly, so no fixed sleep).
    (sink,) = script.run(Command(["audit-sink"], env, tmp_path, timeout=60, stop_on=("retry", 2)))
    log = sink.output
    assert log.count("retry") >= 2, log
    assert shown in log and SECRET not in log and "Traceback" not in log, log


def test_a_malformed_redis_url_stops_every_command_with_its_name_and_no_secret(
    script: Console, tmp_path: Path
) -> None:
    """Finding 2: ValueError tracebacks, this one quoting the "port" (a piece of the password)."""
    value, secrets = MALFORMED_REDIS_URLS["slash-in-password"]
    results = run_every(script, EVERY_COMMAND, base_env(tmp_path, EC_REDIS_URL=value), tmp_path)
    assert_configuration_errors(results, "EC_REDIS_URL", secrets)


@pytest.mark.parametrize("name", sorted(MALFORMED_REDIS_URLS))
def test_each_malformed_redis_url_is_a_setting_error(name: str, script: Console, tmp_path: Path) -> None:
    """Finding 2, form by form (scheme, port, IPv6, path, query), with a command that opens Redis."""
    value, secrets = MALFORMED_REDIS_URLS[name]
    results = run_every(script, REDIS_COMMANDS, base_env(tmp_path, EC_REDIS_URL=value), tmp_path)
    assert_configuration_errors(results, "EC_REDIS_URL", secrets)


@pytest.mark.parametrize("content", [None, b"not a certificate\n"])
def test_a_missing_or_broken_kafka_ca_file_names_its_setting(
    content: bytes | None, script: Console, tmp_path: Path
) -> None:
    """Finding 2: FileNotFoundError from the SSL context (or a broker "unavailable" for ever)."""
    ca = tmp_path / "kafka-ca.pem"
    if content is not None:
        ca.write_bytes(content)
    env = base_env(
        tmp_path,
        EC_KAFKA_SECURITY_PROTOCOL="SASL_SSL",
        EC_KAFKA_SASL_USERNAME="u",
        EC_KAFKA_SASL_PASSWORD=SECRET,
        EC_KAFKA_SSL_CAFILE=str(ca),
    )
    assert_configuration_errors(
        run_every(script, KAFKA_COMMANDS, env, tmp_path), "EC_KAFKA_SSL_CAFILE", [SECRET]
    )


def test_a_missing_redis_ca_file_names_its_setting(script: Console, tmp_path: Path) -> None:
    """Finding 2: redis-py loads the CA at connect, so a missing file read as Redis unreachable."""
    env = base_env(
        tmp_path,
        EC_REDIS_URL=f"rediss://:{SECRET}@127.0.0.1:1/0",
        EC_REDIS_SSL_CA_FILE=str(tmp_path / "missing-ca.pem"),
    )
    commands = [("ledger", "export", "--run", "run-1"), ("verify", "--redis")]
    assert_configuration_errors(run_every(script, commands, env, tmp_path), "EC_REDIS_SSL_CA_FILE", [SECRET])


# --- the installed script itself -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "setting", "case"),
    [
        (("worker",), "EC_REDIS_URL", MALFORMED_REDIS_URLS["slash-in-password"]),
        (("audit-sink",), "EC_AUDIT_DSN", MALFORMED_DSNS["bad-percent-escape"]),
    ],
)
def test_the_installed_script_stops_with_one_line_and_exit_2(
    command: tuple[str, ...], setting: str, case: tuple[str, list[str]], tmp_path: Path
) -> None:
    """The cases above run in forked children of one interpreter; these run the script end to end, its
    own start-up and exit included."""
    value, secrets = case
    code, output = run(command, base_env(tmp_path, **{setting: value}), tmp_path)
    assert_configuration_errors([(" ".join(command), code, output)], setting, secrets)


def test_the_installed_script_reports_an_unreachable_database_with_exit_1(tmp_path: Path) -> None:
    """An error of the project's own (the database does not answer): exit 1, one line, no traceback."""
    value, shown = LEAKY_DSNS["password-in-query"]
    code, output = run(("inspect", "run-1"), base_env(tmp_path, EC_AUDIT_DSN=value), tmp_path)
    assert code == 1 and "AuditStoreBusy" in output, f"{code}\n{output}"
    assert shown in output and SECRET not in output and "Traceback" not in output, output


def test_ledger_check_cannot_reach_redis_exit_2_without_the_password(script: Console, tmp_path: Path) -> None:
    """``ledger check`` keeps exit 1 for "the ledgers differ": an unreachable server is 2, like a setting."""
    env = base_env(tmp_path, EC_REDIS_URL=f"redis://:{SECRET}@127.0.0.1:1/0")
    ((command, code, output),) = run_every(script, [("ledger", "check")], env, tmp_path)
    assert code == 2 and "RedisUnavailable" in output and "nothing was compared" in output, output
    assert "redis://****@127.0.0.1:1/0" in output and SECRET not in output and "Traceback" not in output
