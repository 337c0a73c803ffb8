"""How every Redis client of the project is made: :func:`open_client` is the one factory.

Without ``EC_REDIS_SENTINELS`` the client talks to the server of ``EC_REDIS_URL``. With it, to the primary
the sentinels name for ``EC_REDIS_SENTINEL_MASTER`` (redis-py's ``Sentinel(...).master_for(...)``): each
new connection asks them where the primary is, and a connection still on a primary Sentinel demoted
fails with a ``ConnectionError``. Either way, while the primary moves the calls fail with errors
:func:`streams.ledger.redis.redis_errors` maps to ``RedisUnavailable``: the batch is held and retried,
never dead-lettered. Under Sentinel the URL's host and port are not used; its user, password, database,
TLS (``rediss://``) and query still are: every node has the same users (``deploy/local/sentinel.sh``).
The sentinels get ``EC_REDIS_SENTINEL_PASSWORD`` (none by default) and the same timeouts, in plain TCP.
"""

from __future__ import annotations

import ssl
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool

from streams.errors import ConfigurationError
from streams.redaction import check_redis_url
from streams.settings import Settings

__all__ = ["close_client", "open_client"]


def open_client(settings: Settings) -> aioredis.Redis:
    """A Redis client for ``EC_REDIS_URL`` (``rediss://`` for TLS), password, CA file and timeouts; the
    primary of ``EC_REDIS_SENTINELS`` when they are set. Close it with :func:`close_client`.

    Raises:
        ConfigurationError: the URL cannot work, or the CA file is missing or not PEM; the message
            names the variable and never quotes the URL (a setting to fix, not a server to wait for).
    """
    url = settings.redis_url.get_secret_value()
    try:
        check_redis_url(url)  # again: settings copied with model_copy() skipped the validator
    except ValueError as exc:  # our own words, never the URL's
        raise ConfigurationError(f"EC_REDIS_URL cannot work: {exc}") from None
    options = _options(settings, url)
    try:
        if settings.redis_sentinels:
            client = _sentinel_client(settings, url, options)
        else:
            client = aioredis.Redis.from_url(url, **options)  # reads the query's values
        # ... and its names only when it makes a connection (at the first command, where a TypeError
        # would escape as a traceback): make one now, unconnected.
        client.connection_pool.make_connection()  # type: ignore[no-untyped-call]
    except (TypeError, ValueError):
        raise ConfigurationError(
            "EC_REDIS_URL cannot work: a query parameter is not one redis-py knows, or its value has "
            "the wrong type (db, socket_timeout, ... take numbers)"
        ) from None  # redis-py's message may quote the value
    return client


async def close_client(client: aioredis.Redis) -> None:
    """Close the client's connections, and under Sentinel the sentinels' too (``master_for`` leaves
    them to the caller)."""
    pool = client.connection_pool
    await client.aclose()
    if isinstance(pool, SentinelConnectionPool):
        await pool.sentinel_manager.aclose()


def _options(settings: Settings, url: str) -> dict[str, Any]:
    """Connection options beside the URL: password, timeouts, TLS verification."""
    timeout = settings.redis_timeout_ms / 1000
    options: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    if settings.redis_password:
        options["password"] = settings.redis_password.get_secret_value()
    if url.startswith("rediss://"):
        if settings.redis_ssl_ca_file:
            _check_ca_file(settings.redis_ssl_ca_file)
            options["ssl_ca_certs"] = settings.redis_ssl_ca_file
        options["ssl_cert_reqs"] = ssl.CERT_REQUIRED
    return options


def _sentinel_client(settings: Settings, url: str, options: dict[str, Any]) -> aioredis.Redis:
    """The primary's client: the URL's user, password, database, TLS and query, at the address the
    sentinels give.

    Raises:
        ConfigurationError: a ``unix://`` URL (a socket has no primary to fail over to).
    """
    if url.startswith("unix://"):
        raise ConfigurationError(
            "EC_REDIS_SENTINELS needs EC_REDIS_URL to be redis:// or rediss:// (its user, password and "
            "database are used at the primary the sentinels name), not unix://"
        )
    kwargs: dict[str, Any] = {**options, **parse_url(url)}  # the URL wins, as in from_url
    for name in ("host", "port"):  # the sentinels' to say
        kwargs.pop(name, None)
    if kwargs.pop("connection_class", None) is SSLConnection:
        kwargs["ssl"] = True  # the pool picks its Sentinel-managed TLS connection
    sentinel_options: dict[str, Any] = {
        "socket_timeout": options["socket_timeout"],
        "socket_connect_timeout": options["socket_connect_timeout"],
    }
    if settings.redis_sentinel_password:
        sentinel_options["password"] = settings.redis_sentinel_password.get_secret_value()
    sentinel = Sentinel(list(settings.redis_sentinels), sentinel_kwargs=sentinel_options)
    client: aioredis.Redis = sentinel.master_for(settings.redis_sentinel_master, **kwargs)
    return client


def _check_ca_file(path: str) -> None:
    """Load ``EC_REDIS_SSL_CA_FILE`` once now: redis-py loads it at connect, where a missing file
    would read as Redis being unreachable and be retried for ever.

    Raises:
        ConfigurationError: the file is missing, unreadable or holds no PEM certificate.
    """
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError as exc:  # before OSError, of which it is one
        raise ConfigurationError(
            f"EC_REDIS_SSL_CA_FILE: {path!r} is not a PEM CA bundle ({exc.reason or exc})"
        ) from exc
    except OSError as exc:
        raise ConfigurationError(
            f"EC_REDIS_SSL_CA_FILE: cannot read {path!r} ({exc.strerror or exc})"
        ) from exc
