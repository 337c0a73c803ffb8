"""The bearer-token check of a server with a token (the gateway's ``/v1``, the MCP server over HTTP)."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Unauthorized:
    """Why a request is answered 401, and the ``WWW-Authenticate`` challenge that goes with it."""

    message: str
    invalid: bool
    """Whether a token was sent (and was wrong or malformed), not missing."""

    @property
    def challenge(self) -> str:
        return 'Bearer realm="evidence-chain"' + (', error="invalid_token"' if self.invalid else "")


def bearer_refusal(
    authorization: Sequence[str], token: bytes, server: str = "this gateway"
) -> Unauthorized | None:
    """None when the request's ``Authorization`` headers are exactly one ``Bearer <token>`` (compared in
    constant time), else why not. The token is never in a message."""
    if not authorization:
        return Unauthorized("this route needs Authorization: Bearer <EC_GATEWAY_TOKEN>", invalid=False)
    if len(authorization) > 1:
        return Unauthorized("send one Authorization header, not several", invalid=True)
    scheme, _, given = authorization[0].partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        given.strip().encode("utf-8", "surrogateescape"), token
    ):
        return Unauthorized(f"the bearer token is not {server}'s EC_GATEWAY_TOKEN", invalid=True)
    return None
