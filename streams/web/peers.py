"""Which client a connection or a session comes from, for the caps per client of every server.

A cap per peer address does not hold where any process picks its source address: on this machine every
process may bind any address of 127/8 (eleven of them once held every MCP session, the red team's M1
after issue 38), and a host is given a whole IPv6 /64. So all of loopback is one client, an IPv6 client
is its /64, an IPv4 client its address. The listener's cap on connections per peer
(:mod:`streams.web.listener`: the gateway, ``serve``, the probes) and the MCP session gate's cap on
sessions per client (:mod:`streams.web.mcp_sessions`) both count by :func:`peer_of`.
"""

from __future__ import annotations

import ipaddress

LOOPBACK = "loopback"
"""The one client every loopback address is counted as."""
IPV6_CLIENT_PREFIX = 64
"""An IPv6 client is counted by its network of this length (a host is given a whole /64)."""
UNKNOWN = "?"
"""The client of a connection whose address cannot be read."""


def peer_of(address: str | None) -> str:
    """The client a connection or session is counted against: :data:`LOOPBACK` for every loopback
    address (127/8, ``::1``, ``::ffff:127.x.y.z``), an IPv6 address's /64, an IPv4 address itself;
    anything else (a Unix socket) as it is, and no address as :data:`UNKNOWN`."""
    if not address:
        return UNKNOWN
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return LOOPBACK
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, IPV6_CLIENT_PREFIX), strict=False))
    return str(ip)
