"""The offline commands' room: the stations on JSON lines, without Kafka (and, with a ledger file, without
Redis), one output line per input line (SPEC 6).

- :mod:`streams.offline.lines` — input lines in bounded memory, the ids of a line too long to keep, and
  the one output line per input line (a dead letter when the stations give none).
- :mod:`streams.offline.pipe` — ``pipe``: postprocess and project, as the agents run them.
- :mod:`streams.offline.verify` — ``verify``: the guard against a ledger file or a live store.

``evidence-chain pipe`` and ``verify`` (:mod:`streams.cli.offline`) parse their arguments and call these.
The package re-exports nothing.
"""
