"""The one check of a request's head that guards every server: its ``Host``, whether a web page sent it,
its content type, its token. Each server says what it asks with a :class:`Policy` of its own.

A page a browser loads from anywhere can send requests to ``127.0.0.1`` (a "simple" request needs no
CORS preflight) or, by DNS rebinding, under a name of its own that resolves to this machine
(:mod:`streams.web.hosts`). The policies of the project's servers:

- the gateway (:func:`Policy.token_door`, under ``/v1/``): with ``EC_GATEWAY_TOKEN``, one
  ``Authorization: Bearer <token>``; without one, a loopback ``Host``, no request a web page sent
  (``Origin``, a cross-site ``Sec-Fetch-Site``) and a POST labelled ``application/json``, which a page
  cannot send across origins without a CORS preflight (never granted). Every other route needs only a
  readable ``Host``;
- the MCP server over HTTP: the gateway's rule on every path;
- ``serve``'s pages (:func:`Policy.local`): a loopback ``Host`` or one of the names ``--host`` and
  ``--allow-host`` give; they are for browsers, so a page's own links are answered;
- the probes of the worker and the audit sink (:func:`Policy.probes`): any name a cluster gives them,
  and no ``Host`` at all (an HTTP/1.0 health checker sends none), but never one that cannot be read.

:func:`check` is the check; :class:`Guard` holds it with a server's policy, as aiohttp middleware (each
server answering a refusal in its own shape) and in :class:`streams.web.asgi.Doors` for the ASGI app under
uvicorn.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from aiohttp import web
from aiohttp.typedefs import Handler

from streams.errors import RequestRefused
from streams.web.bearer import bearer_refusal
from streams.web.hosts import cross_site, host_name, loopback_or_allowed

HOST_NOT_LOOPBACK = "HOST_NOT_LOOPBACK"
CROSS_ORIGIN = "CROSS_ORIGIN"
UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
UNAUTHORIZED = "UNAUTHORIZED"
JSON = "application/json"


class TokenRefused(RequestRefused):
    """401: no bearer token, or not the server's; ``challenge`` is the ``WWW-Authenticate`` to send."""

    def __init__(self, message: str, challenge: str) -> None:
        super().__init__(401, UNAUTHORIZED, message)
        self.challenge = challenge


@dataclass(frozen=True, slots=True)
class Policy:
    """What one server asks of a request's head before any route sees it (:func:`check`)."""

    server: str
    """Names the server in its refusals (``serve``, ``a gateway without EC_GATEWAY_TOKEN``)."""
    host_required: bool = True
    """Whether a request must carry a ``Host`` (one, readable, either way: 400)."""
    local_only: bool = False
    """Whether the ``Host`` must name this machine (a loopback name) or one of :attr:`allowed_hosts`."""
    allowed_hosts: tuple[str, ...] = ()
    others: str = ""
    """How a refusal names :attr:`allowed_hosts` (``the names --host and --allow-host give``)."""
    refuse_pages: bool = False
    """Whether a request a web page sent is refused (``Origin``, a cross-site ``Sec-Fetch-Site``)."""
    json_posts: bool = False
    """Whether a POST must be labelled ``Content-Type: application/json``."""
    token: bytes | None = None
    """The bearer token every request must carry, when set."""
    scope: str = "/"
    """The paths the rules beyond a readable ``Host`` apply to (a prefix; the gateway's ``/v1/``)."""

    @classmethod
    def token_door(cls, owner: str, without: str, token: bytes | None, scope: str = "/") -> Policy:
        """A server of agents (the gateway, the MCP server): the bearer ``token`` when there is one (a
        refusal names ``owner``'s token); without one, this machine only and no web page (refusals name
        the server ``without``)."""
        if token is not None:
            return cls(owner, token=token, scope=scope)
        return cls(without, local_only=True, refuse_pages=True, json_posts=True, scope=scope)

    @classmethod
    def local(cls, server: str, allowed_hosts: tuple[str, ...] = (), others: str = "") -> Policy:
        """A server of pages for people on this machine (``serve``): a loopback ``Host`` or an allowed one."""
        return cls(server, local_only=True, allowed_hosts=allowed_hosts, others=others)

    @classmethod
    def probes(cls, server: str) -> Policy:
        """Probes and scrapes from a cluster: any readable ``Host``, or none."""
        return cls(server, host_required=False)


def check(policy: Policy, method: str, path: str, headers: Mapping[str, str]) -> None:
    """Let a request's head through, or refuse it, in this order: an unreadable ``Host`` (400); within
    the policy's scope, a ``Host`` not local (403 ``HOST_NOT_LOOPBACK``), a request a web page sent (403
    ``CROSS_ORIGIN``), a POST not labelled JSON (415 ``UNSUPPORTED_MEDIA_TYPE``), no bearer token or
    not the server's (401, :class:`TokenRefused`). The token is never in a message.

    Raises:
        RequestRefused: the request is refused; ``status`` and ``reason`` say how.
    """
    host = host_name(headers) if policy.host_required or "Host" in headers else ""
    if not path.startswith(policy.scope):
        return
    server = policy.server
    if policy.local_only and not loopback_or_allowed(host, policy.allowed_hosts):
        names = f", [::1] or {policy.others}" if policy.others else " or [::1]"
        message = f"{server} answers only requests to localhost, 127.0.0.1{names}"
        raise RequestRefused(403, HOST_NOT_LOOPBACK, message)
    if policy.refuse_pages and (page := cross_site(headers)) is not None:
        raise RequestRefused(
            403,
            CROSS_ORIGIN,
            f"{server} answers no request a web page sent ({page}); call it from a process, or set "
            "EC_GATEWAY_TOKEN",
        )
    labelled = headers.get("Content-Type", "").partition(";")[0].strip().lower()
    if policy.json_posts and method == "POST" and labelled != JSON:
        given = headers.get("Content-Type", "none")[:60]
        message = f"send the body as Content-Type: {JSON}, not {given}"
        raise RequestRefused(415, UNSUPPORTED_MEDIA_TYPE, message)
    if policy.token is not None:
        getall = getattr(headers, "getall", None)
        sent: list[str] = list(getall("Authorization", [])) if getall is not None else []
        refused = bearer_refusal(sent, policy.token, server)
        if refused is not None:
            raise TokenRefused(refused.message, refused.challenge)


Refuse = Callable[[web.Request, RequestRefused], Awaitable[web.StreamResponse]]


class Guard:
    """The one check with a server's :attr:`policy`, the same object on every server: as aiohttp
    middleware (the gateway, ``serve``, the probes) it checks before any route, and ``refuse`` answers a
    refusal in the server's own shape (without it the refusal is raised on, to the app's own error
    middleware before this one); :class:`streams.web.asgi.Doors` calls :meth:`admit` (the MCP server)."""

    __middleware_version__ = 1  # aiohttp's mark of a new-style middleware

    def __init__(self, policy: Policy, refuse: Refuse | None = None) -> None:
        self.policy = policy
        self.refuse = refuse

    def admit(self, method: str, path: str, headers: Mapping[str, str]) -> None:
        """:func:`check` with this server's policy.

        Raises:
            RequestRefused: the request is refused (:class:`TokenRefused` for a 401).
        """
        check(self.policy, method, path, headers)

    async def __call__(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            self.admit(request.method, request.path, request.headers)
        except RequestRefused as exc:
            if self.refuse is None:
                raise
            return await self.refuse(request, exc)
        return await handler(request)
