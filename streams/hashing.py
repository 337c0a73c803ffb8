"""Content hashes: the SHA-256 that ties a projection, a draft or a dead letter to its exact bytes."""

from __future__ import annotations

import hashlib


def sha256_hex(data: bytes) -> str:
    """Lowercase hex SHA-256 of some bytes."""
    return hashlib.sha256(data).hexdigest()
