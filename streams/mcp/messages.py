"""JSON-RPC messages the SDK takes for something they are not: the one rule of both transports.

The SDK reads ``{"jsonrpc": "2.0", "id": NaN, "method": "ping"}`` (an ``id`` of NaN, Infinity, 1.5,
``true``, ``null`` or ``{}``) as a *notification*: its request model refuses the id, its notification
model ignores a member it does not know. A notification gets no answer, so a host that sent such a
request waited for its own timeout (issue 38 L4 and its re-review). MCP allows a request id that is a
string or an integer only, and every notification it defines is named ``notifications/...``: a message
with a request's method and no id MCP allows is an Invalid Request, answered ``-32600`` with ``id: null``
as JSON-RPC 2.0 answers a request whose id cannot be read. stdio (:mod:`streams.mcp.stdio`) and
streamable HTTP (:mod:`streams.web.mcp_sessions`) both ask :func:`is_invalid_request` of the message the
SDK parsed, before the server sees it.
"""

from __future__ import annotations

from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCNotification

RequestId = int | str
NOTIFICATION_PREFIX = "notifications/"
"""Every notification MCP defines is named under it (``notifications/initialized``, ``.../cancelled``)."""
BAD_ID = (
    "Invalid Request: a request's id must be a string or an integer (MCP; not null, true, a fraction, "
    "NaN or an object), and a notification's method starts with notifications/"
)


def request_id(found: object) -> RequestId | None:
    """``found`` when it is an id MCP allows (a string, or an integer that is not a bool), else None."""
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return found
    return None


def is_invalid_request(message: JSONRPCMessage) -> bool:
    """Whether ``message`` is a request whose id MCP does not allow (or that has none), which the SDK
    would take for a notification and leave unanswered."""
    return isinstance(message, JSONRPCNotification) and not message.method.startswith(NOTIFICATION_PREFIX)


def invalid_request_reply() -> JSONRPCError:
    """The answer to such a message: ``-32600`` with ``id: null`` (its id cannot be answered to)."""
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=BAD_ID))
