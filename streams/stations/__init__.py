"""The pure rules, one module per station.

A station imports only ``models``, the standard library and the project's small pure helpers
(``streams.codec``, ``streams.hashing``, ``streams.errors``) — never Faust, aiokafka or Redis
(``tests/stations/test_purity.py`` enforces it). A station raises a
:class:`~streams.errors.RejectedInput` on bad input; ``streams.pipeline`` turns it into a dead
letter, and anything unexpected into an ``INTERNAL_ERROR`` for that record alone.
"""
