"""The agents' producer picks each record's partition as aiokafka's ``send`` would (so one run stays on
one partition, and a replay lands where the first run did), hashing each key once (issue 42)."""

from __future__ import annotations

import pytest
from aiokafka.partitioner import DefaultPartitioner

from streams.kafka import producer
from streams.kafka.producer import KafkaSink
from streams.settings import Settings

KEYS = [b"", b"r", b"run-1", b"run-2", "ünïcode-run".encode(), bytes(range(256)), b"x" * 129]


@pytest.mark.parametrize("partitions", [[0], [0, 1, 2], list(range(7)), [2, 5, 9]])
def test_a_key_goes_where_aiokafkas_default_partitioner_sends_it(partitions: list[int]) -> None:
    sink = KafkaSink(Settings())
    for key in KEYS + [f"run-{i}".encode() for i in range(500)]:
        expected = DefaultPartitioner()(key, partitions, partitions)
        assert sink.partition_for(key, partitions) == expected
        assert sink.partition_for(key, partitions) == expected  # the remembered hash, the same answer


def test_a_record_without_a_key_goes_to_one_of_the_partitions() -> None:
    sink = KafkaSink(Settings())
    assert {sink.partition_for(None, [3, 4, 5]) for _ in range(200)} <= {3, 4, 5}
    assert not sink._hashes  # noqa: SLF001 - nothing remembered for a record without a key


def test_the_remembered_hashes_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(producer, "KEY_HASHES_KEPT", 10)
    sink = KafkaSink(Settings())
    for i in range(35):
        key = f"run-{i}".encode()
        assert sink.partition_for(key, [0, 1, 2]) == DefaultPartitioner()(key, [0, 1, 2], [0, 1, 2])
        assert len(sink._hashes) <= 10  # noqa: SLF001
