"""The Kafka settings as Faust takes them: the broker URLs and ``broker_credentials``.

``streams.kafka.config.client_options`` gives the aiokafka clients the same settings; this is its Faust twin,
so ``EC_KAFKA_SECURITY_PROTOCOL``, SASL and SSL reach the agents' consumer too.
"""

from __future__ import annotations

from typing import Any

import faust

from streams.kafka.config import ssl_context
from streams.settings import Settings


def faust_brokers(bootstrap: str) -> str:
    """``EC_KAFKA_BOOTSTRAP`` (``host:port,host:port``) as Faust's ``kafka://host:port;kafka://...``."""
    return ";".join(f"kafka://{host.strip()}" for host in bootstrap.split(",") if host.strip())


def broker_credentials(settings: Settings) -> Any:
    """``EC_KAFKA_SECURITY_PROTOCOL`` and its SASL/SSL settings as Faust's ``broker_credentials``.

    Raises:
        ConfigurationError: a TLS file that is missing or not PEM (see ``streams.kafka.config.ssl_context``).
    """
    protocol = settings.kafka_security_protocol
    context = ssl_context(settings)
    if protocol.startswith("SASL"):
        password = settings.kafka_sasl_password.get_secret_value() if settings.kafka_sasl_password else None
        return faust.SASLCredentials(
            username=settings.kafka_sasl_username,
            password=password,
            mechanism=settings.kafka_sasl_mechanism,
            ssl_context=context,
        )
    if protocol == "SSL":
        return faust.SSLCredentials(context)
    return None
