"""The stations at the edge: each processor takes a batch of consumed records, runs the pure
station chain on each, and delivers every output (and Redis effect) before the batch is acked.

The Faust agents in :mod:`streams.app` are thin shells around these processors, so the processors
can be tested with fakes (``tests/streams``) and reused by ``replay``.
"""
