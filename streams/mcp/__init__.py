"""``evidence-chain mcp``: ``lookup_knowledge``, ``check_diagnosis`` and ``get_evidence`` for any MCP host.

:mod:`streams.mcp.run` keeps one run's ids and which session is which run; :mod:`streams.mcp.server`
builds the tools on the official MCP Python SDK; :mod:`streams.mcp.serving` runs them over stdio or
streamable HTTP; :mod:`streams.mcp.stdio` answers a stdin line that is no JSON-RPC message with a
JSON-RPC error.
"""

from __future__ import annotations

from streams.mcp.run import McpRun, McpRuns
from streams.mcp.server import EvidenceTools, build_server

__all__ = ["EvidenceTools", "McpRun", "McpRuns", "build_server"]
