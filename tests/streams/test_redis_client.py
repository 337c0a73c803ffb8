"""The one Redis client factory: the server of EC_REDIS_URL, or the primary EC_REDIS_SENTINELS name."""

from __future__ import annotations

import pytest
from redis.asyncio.connection import Connection
from redis.asyncio.sentinel import (
    MasterNotFoundError,
    SentinelConnectionPool,
    SentinelManagedConnection,
    SentinelManagedSSLConnection,
)
from redis.exceptions import ConnectionError as RedisConnectionError

from streams.errors import ConfigurationError, RedisUnavailable
from streams.ledger.client import close_client, open_client
from streams.ledger.redis import redis_errors, refusal_advice
from streams.settings import Settings, load_settings

SENTINELS = "127.0.0.1:26379,127.0.0.1:26380,[::1]:26381"


def sentinel_settings(url: str = "redis://ec-ledger:pw@unused.invalid:1/3", **extra: object) -> Settings:
    return load_settings(redis_url=url, redis_sentinels=SENTINELS, **extra)


def test_without_sentinels_the_client_talks_to_the_url_s_server() -> None:
    client = open_client(load_settings(redis_url="redis://u:pw@10.0.0.7:6390/2"))
    pool = client.connection_pool
    assert not isinstance(pool, SentinelConnectionPool)
    assert pool.connection_class is Connection
    assert {k: pool.connection_kwargs[k] for k in ("host", "port", "db", "username", "password")} == {
        "host": "10.0.0.7",
        "port": 6390,
        "db": 2,
        "username": "u",
        "password": "pw",
    }


def test_the_sentinels_setting_is_a_list_of_host_port_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EC_REDIS_SENTINELS", f" {SENTINELS} ")
    assert load_settings().redis_sentinels == (
        ("127.0.0.1", 26379),
        ("127.0.0.1", 26380),
        ("::1", 26381),
    )
    assert load_settings(redis_sentinels="").redis_sentinels == ()
    with pytest.raises(ConfigurationError, match="EC_REDIS_SENTINELS: .*'127.0.0.1' is not host:port"):
        load_settings(redis_sentinels="127.0.0.1")


def test_with_sentinels_the_client_writes_to_the_primary_they_name() -> None:
    """The URL gives user, password and database; the sentinels, the address (no host, no port)."""
    client = open_client(sentinel_settings(redis_sentinel_master="ledger-a", redis_timeout_ms=1500))
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.is_master and pool.service_name == "ledger-a"
    assert pool.connection_class is SentinelManagedConnection
    kwargs = pool.connection_kwargs
    assert (kwargs["username"], kwargs["password"], kwargs["db"]) == ("ec-ledger", "pw", 3)
    assert "host" not in kwargs and "port" not in kwargs
    assert kwargs["socket_timeout"] == 1.5
    sentinels = pool.sentinel_manager.sentinels
    assert [
        (s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs["port"])
        for s in sentinels
    ] == [
        ("127.0.0.1", 26379),
        ("127.0.0.1", 26380),
        ("::1", 26381),
    ]
    # The sentinels have their own password (none here), never the ledger user's.
    assert all(s.connection_pool.connection_kwargs.get("password") is None for s in sentinels)


def test_the_sentinels_password_and_tls_to_the_primary() -> None:
    client = open_client(
        sentinel_settings(
            "rediss://ec-ledger@unused.invalid/0", redis_password="pw", redis_sentinel_password="sp"
        )
    )
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    assert pool.connection_class is SentinelManagedSSLConnection
    assert pool.connection_kwargs["password"] == "pw"
    assert {s.connection_pool.connection_kwargs["password"] for s in pool.sentinel_manager.sentinels} == {
        "sp"
    }


def test_a_socket_url_cannot_go_through_sentinels() -> None:
    with pytest.raises(ConfigurationError, match="EC_REDIS_SENTINELS needs EC_REDIS_URL to be redis://"):
        open_client(sentinel_settings("unix:///run/redis.sock"))


def test_a_bad_query_parameter_is_refused_under_sentinels_too() -> None:
    with pytest.raises(ConfigurationError, match="EC_REDIS_URL cannot work"):
        open_client(sentinel_settings("redis://u:pw@h/0?no_such_option=1"))


async def test_closing_the_client_closes_the_sentinels_clients() -> None:
    client = open_client(sentinel_settings())
    pool = client.connection_pool
    assert isinstance(pool, SentinelConnectionPool)
    closed: list[object] = []
    for sentinel in pool.sentinel_manager.sentinels:
        original = sentinel.aclose

        async def aclose(original: object = original, sentinel: object = sentinel) -> None:
            closed.append(sentinel)
            await original()  # type: ignore[operator]

        sentinel.aclose = aclose  # type: ignore[method-assign]
    await close_client(client)
    assert len(closed) == 3


@pytest.mark.parametrize(
    "error",
    [
        MasterNotFoundError("No master found for 'ec-ledger'"),  # no sentinel answers, or none knows one
        RedisConnectionError("The previous master is now a slave"),  # still on the demoted primary
    ],
)
def test_while_the_primary_moves_redis_is_unavailable_not_refused(error: Exception) -> None:
    """Retriable: the batch is held and retried, never dead-lettered (the worker's hold reads it)."""
    with pytest.raises(RedisUnavailable) as raised, redis_errors("ledger write"):
        raise error
    assert raised.value.retriable


@pytest.mark.parametrize(
    ("error", "says"),
    [
        ("this user has no permissions to access one of the keys used as arguments", "`EC_NS=other make up`"),
        ("No permissions to access a key", "outside this Redis user's key pattern"),
        (
            "ERR Error running script: The user executing the script can't access at least one of the keys",
            "deploy/redis/acl.sh rules ec-ledger <redis version> other",
        ),
        ("this user has no permissions to run the 'select' command", "end EC_REDIS_URL with /0"),
        ("this user has no permissions to run the 'info' command", "may not run INFO"),
        ("WRONGPASS invalid username-password pair or user is disabled.", "check the password"),
    ],
)
def test_a_refusal_says_what_to_change(error: str, says: str) -> None:
    """Issue 32 item 9: a key outside the user's pattern or a SELECT is not a password problem."""
    advice = refusal_advice(error, "other")
    assert says in advice
    assert ("check the password" in advice) == error.startswith("WRONGPASS")


def test_an_entry_with_a_non_ascii_digit_in_an_integer_field_reads_as_null_not_a_crash() -> None:
    """``"²".isdigit()`` is true and ``int("²")`` raises: a rewritten (unsigned) timestamp field of an
    entry must not turn every read of it — gateway, guard, inspect — into a 500 with a traceback."""
    from streams.ledger.redis import from_hash

    ids = {"run_id": "r1", "tool_call_id": "c1", "status": "READY"}
    entry = from_hash({**ids, "source_timestamp": "²", "written_at": "-١٢"})
    assert entry["source_timestamp"] is None
    assert from_hash({**ids, "source_timestamp": "-12"})["source_timestamp"] == -12
