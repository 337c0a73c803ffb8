"""The tests clean up what they start: when a session ends, the topics named under the prefixes it gave
its tests (``new_prefix``) are deleted, the workers' and Faust's included; another session's topics, or
a developer's, are left alone."""

from __future__ import annotations

import asyncio
import time

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.integration.conftest import _topics, delete_topics_of
from tests.integration.helpers import ISSUED_PREFIXES, new_prefix


async def _admin_call(
    bootstrap: str, create: list[str] | None = None, delete: list[str] | None = None
) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
    await admin.start()
    try:
        if create:
            await admin.create_topics([NewTopic(n, num_partitions=1, replication_factor=1) for n in create])
        if delete:
            await admin.delete_topics(delete)
    finally:
        await admin.close()


async def _until_listed(bootstrap: str, names: set[str], timeout_s: float = 30.0) -> None:
    """CreateTopics returns when the controller has the topics; a broker's metadata, which
    ``list_topics`` reads, may follow a moment later on a busy machine (CI saw it list none of three)."""
    deadline = time.monotonic() + timeout_s
    while not names <= (listed := await _topics(bootstrap)):
        assert time.monotonic() < deadline, f"created topics never listed: {sorted(names - listed)}"
        await asyncio.sleep(0.2)


async def test_the_topics_under_a_sessions_prefixes_are_deleted_and_no_others(kafka_bootstrap: str) -> None:
    ours, also_ours = new_prefix(), new_prefix()
    made = [f"{ours}raw-hits", f"{ours}evidence-chain-__assignor-__leader", f"{also_ours}ledger"]
    theirs = f"{new_prefix()}raw-hits"  # as another session's prefix: never handed to the call below
    keep = f"ecdemo-{ours}raw-hits"  # a developer's topic that merely contains the prefix
    await _admin_call(kafka_bootstrap, create=[*made, theirs, keep])
    try:
        await _until_listed(kafka_bootstrap, {*made, theirs, keep})
        assert {ours, also_ours} <= ISSUED_PREFIXES

        deleted = await delete_topics_of(kafka_bootstrap, {ours, also_ours})

        assert deleted == sorted(made)
        assert {theirs, keep} <= await _topics(kafka_bootstrap)
        assert await delete_topics_of(kafka_bootstrap, set()) == []  # no prefix given: nothing deleted
    finally:
        await _admin_call(kafka_bootstrap, delete=[theirs, keep])
