"""The audit pages (``evidence-chain serve``): the audit database as web pages for people, read-only.

- :mod:`streams.web.pages.site` — the aiohttp application: its routes, the query checks, the
  Content-Security-Policy, a database read in a thread per request; ``serve`` within the listener's limits.
- :mod:`streams.web.pages.render` — the run list and one run's trail as documents (pure) and as HTML
  from the Jinja2 templates in ``templates/`` (package data, autoescaped) or JSON.
- :mod:`streams.web.pages.run_evidence` — the auditor's view of one run's evidence as a document: what
  each tool call showed the agent, each draft's claims beside what they cite, signatures checked.
- :mod:`streams.web.pages.window` — which part of a run one page holds (every page under 5 MB).
- :mod:`streams.web.pages.anchors` — the anchors and addresses the templates link with.
"""
