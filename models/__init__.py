"""The contracts of evidence-chain: every message shape and fixed vocabulary, with no I/O.

Shapes are ``TypedDict`` contracts validated by pydantic ``TypeAdapter``s where they are read
from the outside. A TypedDict is a plain ``dict`` at run time, so the stations build and
serialize them without per-object overhead, and the key order of a literal is the order on
the wire (the projection's bytes depend on it).
"""
