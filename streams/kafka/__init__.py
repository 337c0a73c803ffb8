"""The Kafka edge, one module per thing it does (as aiokafka keeps ``producer/``, ``admin/``, ...).

- :mod:`streams.kafka.config` — the client factories with the security settings (SASL, TLS files),
  ``started``, and :func:`~streams.kafka.config.kafka_errors`, the one map of aiokafka's errors.
- :mod:`streams.kafka.producer` — :class:`~streams.kafka.producer.KafkaSink`, the agents' producer.
- :mod:`streams.kafka.admin` — the topics: names, configs, ``ensure_topics`` and waiting for leaders.
- :mod:`streams.kafka.offsets` — consumer groups: committed offsets, members, a reset's commit, and the
  worker's :class:`~streams.kafka.offsets.OffsetProbe`.
- :mod:`streams.kafka.ranges` — reads of topic ranges (``Range``, ``read_range``) and of whole topics.

Only this package builds aiokafka clients. Import a name from the module that owns it: this one
re-exports nothing, so importing one module does not load the others.
"""
