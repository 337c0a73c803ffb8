"""The web room: every server of the project, and what they share.

The servers:

- :mod:`streams.web.gateway` — ``evidence-chain gateway``: the agent's client over HTTP/JSON
  (``docs/openapi.yaml``, ``docs/gateway.md``).
- :mod:`streams.web.mcp` — ``evidence-chain mcp --http``: the MCP tools over streamable HTTP under
  uvicorn, each session a run (:mod:`streams.web.mcp_sessions`); over stdio they run in :mod:`streams.mcp`.
- :mod:`streams.web.pages` — ``evidence-chain serve``: the audit database as pages for people, with
  their templates (package data).
- :mod:`streams.web.probes` — the one probe server (``/livez``, ``/readyz``, ``/metrics``) of the
  worker and the audit sink, from what each says of itself.

What they share:

- :mod:`streams.web.guard` — the one check of a request's head (``Host``, ``Origin`` and
  ``Sec-Fetch-Site``, the content type, the bearer token), with a :class:`~streams.web.guard.Policy` per
  server; :mod:`streams.web.hosts` reads the ``Host`` and the page headers, :mod:`streams.web.bearer`
  compares the token.
- :mod:`streams.web.listener` — :class:`~streams.web.listener.Limits` and
  :func:`~streams.web.listener.listening`: a header-read timeout, a keepalive timeout, a connection cap
  and a cap per peer (both answered 503), request heads aiohttp cannot parse answered in the
  server's own error shape and logged without their bytes; ``serve_until_signal``.
- :mod:`streams.web.peers` — which client a connection or an MCP session is counted against (all of
  loopback is one, an IPv6 client its /64), for the listener's cap per peer and the session gate's.
- :mod:`streams.web.asgi` — the same doors and limits for an ASGI app under uvicorn (the MCP server);
  imported on its own, so the aiohttp servers never load uvicorn.
- :mod:`streams.web.body` — a body read within a size and a time, a client gone mid-body told apart.
- :mod:`streams.web.probe` — a readiness probe answered at most once per interval.

The package re-exports nothing: an importer names the module that owns what it takes, and importing
one server loads no other (the worker's probes load neither the gateway nor the pages).
"""
