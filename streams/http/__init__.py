"""The HTTP servers' one room: a listener with limits, the request-head checks, the cached probe.

Every server of the project is built on it: the gateway (:mod:`streams.client.gateway`), the audit
pages (``serve``, :mod:`streams.cli.serve`), the audit sink's probes (:mod:`streams.audit.sink`) and
the worker's probes (:mod:`streams.worker.health`; Faust's own web server stays off).

- :mod:`streams.http.listener` — :class:`Limits` and :func:`listening`: a header-read timeout, a
  keepalive timeout, a connection cap and a cap per peer address (both answered 503), request heads
  aiohttp cannot parse answered in the server's own error shape and logged without their bytes;
  :func:`serve_until_signal`.
- :mod:`streams.http.hosts` — the ``Host`` a request names (400 when unreadable), whether it is this
  machine, and whether a browser page sent it (``Origin``, ``Sec-Fetch-Site``); :func:`refuse_pages`,
  the doors of a server without a token (the gateway's ``/v1`` and the MCP server over HTTP).
- :mod:`streams.http.asgi` — the same doors and limits for an ASGI app under uvicorn (the MCP
  server's streamable HTTP); imported on its own, so the aiohttp servers never load uvicorn.
- :mod:`streams.http.body` — a body read within a size and a time, a client gone mid-body told apart.
- :mod:`streams.http.probe` — a readiness probe answered at most once per interval.
"""

from streams.http.body import read_bounded
from streams.http.hosts import cross_site, host_name, is_loopback, loopback_or_allowed, refuse_pages
from streams.http.listener import ErrorShape, Limits, listening, serve_until_signal
from streams.http.probe import CachedProbe

__all__ = [
    "CachedProbe",
    "ErrorShape",
    "Limits",
    "cross_site",
    "host_name",
    "is_loopback",
    "listening",
    "loopback_or_allowed",
    "read_bounded",
    "refuse_pages",
    "serve_until_signal",
]
