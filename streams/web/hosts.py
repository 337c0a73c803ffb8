"""The ``Host`` a request names, whether it is this machine, and whether a web page sent it.

A page a browser loads from anywhere can send requests to ``127.0.0.1`` (a "simple" request needs no
CORS preflight) or, by DNS rebinding, under a name of its own that resolves to this machine. What is
read here closes both doors for servers without a login, in the one check of every server
(:func:`streams.web.guard.check`): the ``Host`` must be a loopback name (or one the operator allowed),
and a request that carries ``Origin`` or a ``Sec-Fetch-Site`` other than ``none``/``same-origin``
came from a page.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Mapping

from streams.errors import RequestRefused

_NAME = re.compile(r"[A-Za-z0-9._-]{1,253}")
_PORT = re.compile(r"[0-9]{1,5}")
LOOPBACK_NAMES = ("localhost",)
BAD_HOST = "BAD_REQUEST"
"""``reason`` of an unreadable ``Host`` (the gateway's :class:`ErrorReason` has the same value)."""


def is_loopback(host: str) -> bool:
    """Whether a listening address or ``Host`` name is this machine only (``localhost``, 127/8, ::1).

    Only the canonical spellings count: ``127.1``, ``0x7f000001``, ``2130706433`` or ``localhost.``
    are not loopback here, whatever a resolver would make of them.
    """
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return False  # ::ffff:127.0.0.1 listens on every IPv4 address on some systems; spell it 127.0.0.1
    return address.is_loopback


def host_name(headers: Mapping[str, str] | object) -> str:
    """The host name of a request's one ``Host`` header, without its port (an IPv6 literal in brackets).

    Raises:
        RequestRefused: 400 — no ``Host``, more than one, or one that is not ``name[:port]`` or
            ``[ipv6][:port]`` (a bare ``::1`` included).
    """
    getall = getattr(headers, "getall", None)
    values: list[str] = list(getall("Host", [])) if getall is not None else []
    if len(values) != 1:
        raise RequestRefused(400, BAD_HOST, "a request must carry exactly one Host header")
    value = values[0].strip()
    if value.startswith("["):
        literal, close, rest = value.partition("]")
        if not close:
            raise RequestRefused(400, BAD_HOST, "the Host header's IPv6 literal has no closing ]")
        host = literal + "]"
        try:
            ipaddress.IPv6Address(literal[1:])
        except ValueError:
            raise RequestRefused(400, BAD_HOST, "the Host header's IPv6 literal is not an address") from None
    else:
        host, colon, rest = value.partition(":")
        rest = colon + rest
        if not _NAME.fullmatch(host):
            raise RequestRefused(
                400, BAD_HOST, "the Host header must be name[:port] or [IPv6 address][:port]"
            )
    if rest and not (rest.startswith(":") and _PORT.fullmatch(rest[1:])):
        raise RequestRefused(400, BAD_HOST, "the Host header's port must be 1 to 5 digits")
    return host


def loopback_or_allowed(host: str, allowed: Collection[str] = ()) -> bool:
    """Whether ``host`` (from :func:`host_name`) is a loopback name or one of ``allowed`` (any case)."""
    return is_loopback(host) or host.lower() in {name.lower() for name in allowed}


def cross_site(headers: Mapping[str, str]) -> str | None:
    """Why a request was sent by a web page (it carries ``Origin``, or ``Sec-Fetch-Site`` says another
    site), or None. Non-browser clients send neither header."""
    if "Origin" in headers:
        return "it carries an Origin header"
    site = headers.get("Sec-Fetch-Site")
    if site is not None and site.strip().lower() not in ("none", "same-origin"):
        return f"its Sec-Fetch-Site is {site.strip()[:20]!r}"
    return None
