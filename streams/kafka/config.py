"""The Kafka clients: their factories with the security settings, and the one map of aiokafka's errors.

Only this package builds aiokafka clients (the Faust app turns the same settings into Faust's
``broker_credentials`` in ``streams.worker.credentials``), so ``EC_KAFKA_SECURITY_PROTOCOL``, SASL and SSL
settings reach every one of them. Every aiokafka exception is translated here, once, by
:func:`kafka_errors`, using aiokafka's own ``retriable`` flag. Public aiokafka API only.
"""

from __future__ import annotations

import contextlib
import os
import ssl
from collections.abc import AsyncIterator, Iterator
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError
from aiokafka.helpers import create_ssl_context

from streams.errors import ConfigurationError, KafkaRefused, KafkaUnavailable
from streams.settings import Settings

# --- errors -------------------------------------------------------------------------------------


@contextlib.contextmanager
def kafka_errors(what: str) -> Iterator[None]:
    """Translate aiokafka exceptions raised inside the block into the project's error tree.

    Raises:
        KafkaUnavailable: a connection, timeout or other error aiokafka marks retriable.
        KafkaRefused: an error retrying cannot fix (authorization, a record too large, ...).
    """
    try:
        yield
    except (KafkaConnectionError, KafkaTimeoutError, TimeoutError, OSError) as exc:
        raise KafkaUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
    except KafkaError as exc:
        if getattr(exc, "retriable", False):
            raise KafkaUnavailable(f"{what}: {type(exc).__name__}: {exc}") from exc
        raise KafkaRefused(f"{what}: {type(exc).__name__}: {exc}") from exc


# --- clients ------------------------------------------------------------------------------------


def client_options(settings: Settings) -> dict[str, Any]:
    """Connection and security options every aiokafka client of the project gets."""
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_bootstrap,
        "security_protocol": settings.kafka_security_protocol,
        # aiokafka refreshes metadata on a stale-leader answer but not when a leader's broker is gone
        # (NodeNotReady): without a short age it retries the dead broker until the request times out.
        "metadata_max_age_ms": settings.kafka_metadata_max_age_ms,
    }
    if settings.kafka_security_protocol.startswith("SASL"):
        options["sasl_mechanism"] = settings.kafka_sasl_mechanism
        options["sasl_plain_username"] = settings.kafka_sasl_username
        options["sasl_plain_password"] = (
            settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else None
        )
    context = ssl_context(settings)
    if context is not None:
        options["ssl_context"] = context
    return options


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """The TLS context of ``SSL`` / ``SASL_SSL`` (CA bundle, optional client certificate); else None.

    Raises:
        ConfigurationError: a CA bundle, certificate or key that is missing or not PEM; the message
            names its variable (a missing file is a setting to fix, not a broker to wait for).
    """
    if not settings.kafka_security_protocol.endswith("SSL"):
        return None
    cafile, certfile, keyfile = (
        settings.kafka_ssl_cafile,
        settings.kafka_ssl_certfile,
        settings.kafka_ssl_keyfile,
    )
    with _tls_files(("EC_KAFKA_SSL_CAFILE", cafile)):
        context: ssl.SSLContext = create_ssl_context(cafile=cafile)
    if certfile is not None:
        with _tls_files(("EC_KAFKA_SSL_CERTFILE", certfile), ("EC_KAFKA_SSL_KEYFILE", keyfile)):
            context.load_cert_chain(certfile, keyfile)
    return context


@contextlib.contextmanager
def _tls_files(*files: tuple[str, str | None]) -> Iterator[None]:
    """Load the ``(variable, path)`` files inside the block; a failure names the variables.

    Raises:
        ConfigurationError: a file is missing, unreadable or not PEM.
    """
    for variable, path in files:
        if path is not None and not os.path.isfile(path):
            raise ConfigurationError(f"{variable}: no such file {path!r}; point it at a PEM file it can read")
    named = " / ".join(variable for variable, path in files if path is not None)
    try:
        yield
    except ssl.SSLError as exc:  # before OSError, of which it is one
        raise ConfigurationError(f"{named}: not a usable PEM file ({exc.reason or exc})") from exc
    except OSError as exc:
        raise ConfigurationError(f"{named}: cannot be read ({exc.strerror or exc})") from exc


def new_producer(settings: Settings, **overrides: Any) -> AIOKafkaProducer:
    """A producer with acks=all and requests as large as the topics allow."""
    options = {
        **client_options(settings),
        "acks": "all",
        "max_request_size": settings.topic_max_message_bytes + 64 * 1024,
        "linger_ms": 5,
        **overrides,
    }
    return AIOKafkaProducer(**options)


def new_consumer(settings: Settings, *topics: str, **overrides: Any) -> AIOKafkaConsumer:
    """A consumer without auto-commit, able to fetch the largest record a topic allows."""
    options = {
        **client_options(settings),
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
        "max_partition_fetch_bytes": 2 * settings.topic_max_message_bytes,
        "fetch_max_bytes": 4 * settings.topic_max_message_bytes,
        **overrides,
    }
    return AIOKafkaConsumer(*topics, **options)


def new_admin(settings: Settings, **overrides: Any) -> AIOKafkaAdminClient:
    """An admin client."""
    return AIOKafkaAdminClient(
        **{**client_options(settings), "client_id": f"{settings.app_id}-admin", **overrides}
    )


@contextlib.asynccontextmanager
async def started(client: Any, what: str) -> AsyncIterator[Any]:
    """Start a client (mapping its errors), yield it, and always stop/close it."""
    with kafka_errors(f"{what}: connecting"):
        await client.start()
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            await (client.close() if isinstance(client, AIOKafkaAdminClient) else client.stop())
