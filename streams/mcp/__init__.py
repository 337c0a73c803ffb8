"""``evidence-chain mcp``: ``lookup_knowledge``, ``check_diagnosis`` and ``get_evidence`` for any MCP host.

:mod:`streams.mcp.run` keeps one run's ids and which session is which run; :mod:`streams.mcp.server`
builds the tools on the official MCP Python SDK over a started client; :mod:`streams.mcp.stdio` serves
them on stdin/stdout, answering a line that is no JSON-RPC message with a JSON-RPC error (and a
request whose id MCP does not allow, by the rule of :mod:`streams.mcp.messages` both transports ask). Over
streamable HTTP they are served by the web room (:mod:`streams.web.mcp`, its sessions gated by
:mod:`streams.web.mcp_sessions`), behind the doors every server has.
"""

from __future__ import annotations

from streams.mcp.run import McpRun, McpRuns
from streams.mcp.server import EvidenceTools, build_server

__all__ = ["EvidenceTools", "McpRun", "McpRuns", "build_server"]
