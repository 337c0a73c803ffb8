"""The HTTP servers' one room: a listener with limits, the request-head checks, the cached probe.

Every server of the project is built on it: the gateway (:mod:`streams.web.gateway`), the audit
pages (``serve``, :mod:`streams.web.pages`), the audit sink's probes (:mod:`streams.audit.sink`) and
the worker's probes (:mod:`streams.worker.health`; Faust's own web server stays off). The package
re-exports nothing: an importer names the module that owns what it takes.

- :mod:`streams.web.listener` — :class:`~streams.web.listener.Limits` and
  :func:`~streams.web.listener.listening`: a header-read timeout, a keepalive timeout, a connection cap
  and a cap per peer address (both answered 503), request heads aiohttp cannot parse answered in the
  server's own error shape and logged without their bytes; ``serve_until_signal``.
- :mod:`streams.web.hosts` — the ``Host`` a request names (400 when unreadable), whether it is this
  machine, and whether a browser page sent it (``Origin``, ``Sec-Fetch-Site``); ``refuse_pages``,
  the doors of a server without a token (the gateway's ``/v1`` and the MCP server over HTTP).
- :mod:`streams.web.asgi` — the same doors and limits for an ASGI app under uvicorn (the MCP
  server's streamable HTTP); imported on its own, so the aiohttp servers never load uvicorn.
- :mod:`streams.web.body` — a body read within a size and a time, a client gone mid-body told apart.
- :mod:`streams.web.probe` — a readiness probe answered at most once per interval.
"""
