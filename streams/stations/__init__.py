"""The pure rules, one module per station.

A station imports only ``models``, the standard library and ``streams.json`` — never Faust,
aiokafka or Redis (``tests/stations/test_purity.py`` enforces it). Stations never raise on bad
input: they return a result or a :class:`models.events.Rejection`.
"""
