"""Connection strings that may hold a secret: checked before any driver sees them, shown without it.

``EC_REDIS_URL`` and ``EC_AUDIT_DSN`` can carry a password in the user info, in a query parameter
(``?password=``, ``?options=-c ...``) or, for PostgreSQL, in a key/value word (``password=...``).
Drivers quote what they reject: libpq's ``invalid percent-encoded token: "..."`` or its IPv6 message
repeat the password, ``urllib`` repeats a "port" that is really part of one. So the strings are read
here first, the way their drivers read them (libpq's URI and key/value grammar, ``urllib`` as
redis-py uses it), and a string that cannot work gets a fixed message that quotes none of it. No
driver is imported: the settings use these checks, and nothing below the edges may reach a driver.
:func:`redact_url` is how every such string is printed; it never raises. :func:`redact_in` takes a
URL's secrets out of a text a library wrote about it (aiohttp's errors quote the URL they failed on).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = ["check_postgres_dsn", "check_redis_url", "is_conninfo", "redact_in", "redact_url"]

MASK = "****"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")

# libpq's keywords (PostgreSQL 18): names shown when printing; values never are. An unknown name is
# left for libpq to refuse (it may be newer than this list) and is shown as ****.
_LIBPQ_KEYWORDS = frozenset(
    "application_name channel_binding client_encoding connect_timeout dbname fallback_application_name "
    "gssdelegation gssencmode gsslib host hostaddr keepalives keepalives_count keepalives_idle "
    "keepalives_interval krbsrvname load_balance_hosts max_protocol_version min_protocol_version "
    "oauth_client_id oauth_client_secret oauth_issuer oauth_scope options passfile password port "
    "replication require_auth requirepeer scram_client_key scram_server_key service "
    "ssl_max_protocol_version ssl_min_protocol_version sslcert sslcertmode sslcompression sslcrl "
    "sslcrldir sslkey sslkeylogfile sslmode sslnegotiation sslpassword sslrootcert sslsni "
    "target_session_attrs tcp_user_timeout user ssl".split()
)
_REDIS_QUERY_NAMES = frozenset(
    "db socket_timeout socket_connect_timeout socket_read_size socket_keepalive retry_on_timeout "
    "max_connections health_check_interval ssl_check_hostname ssl_include_verify_flags "
    "ssl_exclude_verify_flags ssl_min_version timeout protocol legacy_responses client_name username "
    "password ssl_cert_reqs ssl_ca_certs".split()
)
_SHOWN_NAMES = _LIBPQ_KEYWORDS | _REDIS_QUERY_NAMES
# Shown as they are in a key/value DSN; every other value is masked.
_SHOWN_VALUES = frozenset({"host", "hostaddr", "port", "dbname"})
_KNOWN_SCHEMES = ("postgresql", "postgres", "redis", "rediss", "unix", "http", "https")
_CONNINFO_START = re.compile(r"\s*([A-Za-z_]+)\s*=")
_ENCODED_RESERVED = "percent-encode '/' as %2F, '?' as %3F, '#' as %23 and '@' as %40 in a password"


@dataclass(frozen=True)
class _Uri:
    """A ``postgresql://`` URI cut the way libpq cuts it (``conninfo_uri_parse_options``)."""

    scheme: str
    userinfo: str | None
    netlocs: tuple[tuple[str, str | None], ...]
    """(host as written, brackets included; port or None), one per host."""
    dbname: str | None
    query: str | None


# --- PostgreSQL ------------------------------------------------------------------------------------


def is_conninfo(text: str) -> bool:
    """Whether ``text`` is a libpq key/value connection string (``host=h1,h2 dbname=audit ...``)."""
    match = _CONNINFO_START.match(text)
    return "://" not in text and match is not None and match.group(1) in _LIBPQ_KEYWORDS


def check_postgres_dsn(dsn: str) -> None:
    """Refuse a DSN libpq would refuse, or read otherwise than it looks; one host or several.

    Raises:
        ValueError: what is wrong and how to fix it, quoting no part of ``dsn``.
    """
    if dsn.startswith(POSTGRES_SCHEMES):
        params = _uri_params(_split_uri(dsn), strict=True)
    elif is_conninfo(dsn):
        params = _conninfo_words(dsn)
    else:
        raise ValueError(
            "must be a postgresql://user:pass@host:port/db URL (scheme in lower case) or libpq "
            "key/value words (host=... dbname=...); unset it to use EC_AUDIT_DB"
        )
    hosts = params.get("host", "").split(",")
    ports = params.get("port", "").split(",")
    for port in ports:
        if port and not (port.isdigit() and 1 <= int(port) <= 65535):
            raise ValueError(f"a port is not a number from 1 to 65535 ({_ENCODED_RESERVED})")
    if len(ports) > 1 and len(ports) != len(hosts):
        raise ValueError(
            f"it names {len(hosts)} hosts but {len(ports)} ports; give one port, or one per host"
        )


def _first_of(text: str, stops: str, start: int = 0) -> int:
    """The index of the first character of ``text[start:]`` in ``stops``, or ``len(text)``."""
    for index in range(start, len(text)):
        if text[index] in stops:
            return index
    return len(text)


def _split_uri(dsn: str) -> _Uri:
    """Cut a ``postgresql://`` URI into its parts as libpq does; nothing is decoded.

    Raises:
        ValueError: an IPv6 host without its closing bracket, or followed by a stray character.
    """
    scheme, rest = dsn.split("://", 1)
    userinfo: str | None = None
    stop = _first_of(rest, "@/")  # libpq: user info ends at the first '@' before any '/'
    if stop < len(rest) and rest[stop] == "@":
        userinfo, rest = rest[:stop], rest[stop + 1 :]
    netlocs: list[tuple[str, str | None]] = []
    while True:
        if rest.startswith("["):
            end = rest.find("]")
            if end < 0:
                raise ValueError(f"an IPv6 host lacks its closing ']' ({_ENCODED_RESERVED})")
            if end == 1:
                raise ValueError("an IPv6 host in [] is empty")
            host, rest = rest[: end + 1], rest[end + 1 :]
            if rest and rest[0] not in ":/?,":
                raise ValueError("an IPv6 host in [] must be followed by ':port', '/db', '?' or ','")
        else:
            cut = _first_of(rest, ":/?,")
            host, rest = rest[:cut], rest[cut:]
        port: str | None = None
        if rest.startswith(":"):
            cut = _first_of(rest, "/?,", 1)
            port, rest = rest[1:cut], rest[cut:]
        netlocs.append((host, port))
        if not rest.startswith(","):
            break
        rest = rest[1:]
    dbname: str | None = None
    query: str | None = None
    if rest.startswith("/"):
        dbname, mark, tail = rest[1:].partition("?")
        query = tail if mark else None
    elif rest.startswith("?"):
        query = rest[1:]
    return _Uri(scheme, userinfo, tuple(netlocs), dbname, query)


def _uri_params(uri: _Uri, *, strict: bool) -> dict[str, str]:
    """The connection parameters of a URI, decoded (``strict``: checked as libpq checks them).

    Raises:
        ValueError: a space, a bad %-escape, a query parameter without one '=', a stray '@'.
    """
    raw = [uri.userinfo or "", uri.dbname or "", uri.query or ""]
    raw += [part for netloc in uri.netlocs for part in netloc if part]
    if strict and any(ch.isspace() for part in raw for ch in part):
        raise ValueError("holds a space; write a space as %20 (in a password too)")
    if "@" in (uri.dbname or "") + (uri.query or ""):
        raise ValueError(f"holds an '@' after the host ({_ENCODED_RESERVED})")
    decode = _decode if strict else unquote
    params: dict[str, str] = {}
    if uri.userinfo is not None:
        for part in uri.userinfo.split(":", 1):
            decode(part)  # only checked: user and password are never shown
    hosts = [host[1:-1] if host.startswith("[") else decode(host) for host, _ in uri.netlocs]
    params["host"] = ",".join(hosts)
    params["port"] = ",".join(decode(port or "") for _, port in uri.netlocs)
    if uri.dbname:
        params["dbname"] = decode(uri.dbname)
    for part in (uri.query or "").split("&"):
        if not part:
            continue
        name, equals, value = part.partition("=")
        if strict and not equals:
            raise ValueError("a query parameter lacks its '=' (write name=value&name=value)")
        if strict and "=" in value:
            raise ValueError("a query parameter holds a second '='; write '=' in a value as %3D")
        params[decode(name)] = decode(value)
    return params


def _decode(text: str) -> str:
    """``text`` with its %-escapes decoded, as libpq's ``conninfo_uri_decode`` allows them.

    Raises:
        ValueError: a '%' not followed by two hex digits, or ``%00``.
    """
    for index, char in enumerate(text):
        if char != "%":
            continue
        digits = text[index + 1 : index + 3]
        if len(digits) != 2 or not all(d in string.hexdigits for d in digits):
            raise ValueError("a '%' is not followed by two hex digits; write '%' itself as %25")
        if digits == "00":
            raise ValueError("holds %00, which libpq refuses")
    return unquote(text)


def _conninfo_words(text: str) -> dict[str, str]:
    """``key=value`` words of a libpq key/value string, as ``conninfo_parse`` reads them.

    Raises:
        ValueError: a word without '=', an unterminated quote.
    """
    params: dict[str, str] = {}
    index, end = 0, len(text)
    while index < end:
        if text[index].isspace():
            index += 1
            continue
        start = index
        while index < end and text[index] != "=" and not text[index].isspace():
            index += 1
        name = text[start:index]
        while index < end and text[index].isspace():
            index += 1
        if index >= end or text[index] != "=" or not name:
            raise ValueError("a word lacks its 'name=' (quote a value with spaces: password='a b')")
        index += 1
        while index < end and text[index].isspace():
            index += 1
        value: list[str] = []
        quoted = index < end and text[index] == "'"
        index += quoted
        while True:
            if index >= end:
                if quoted:
                    raise ValueError("a quoted value lacks its closing quote")
                break
            char = text[index]
            index += 1
            if char == "\\":
                if index < end:
                    value.append(text[index])
                    index += 1
            elif quoted and char == "'":
                break
            elif not quoted and char.isspace():
                break
            else:
                value.append(char)
        params[name] = "".join(value)
    return params


# --- Redis -----------------------------------------------------------------------------------------


def check_redis_url(url: str) -> None:
    """Refuse a Redis URL redis-py would refuse or misread: scheme, host, port, path, query syntax.

    Raises:
        ValueError: what is wrong and how to fix it, quoting no part of ``url``.
    """
    if not url.startswith(REDIS_SCHEMES):
        raise ValueError("must start with redis://, rediss:// (TLS) or unix://")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise ValueError(
            f"its host cannot be read: put an IPv6 address in [brackets] ({_ENCODED_RESERVED})"
        ) from None
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"its port is not a number from 1 to 65535 ({_ENCODED_RESERVED})")
    if "@" in parts.path + parts.query + parts.fragment:
        raise ValueError(f"holds an '@' after the host ({_ENCODED_RESERVED})")
    if parts.scheme != "unix" and not re.fullmatch(r"(/\d*)?", parts.path):
        raise ValueError("its path must be the database number, like /0")
    try:
        parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    except ValueError:
        raise ValueError("its query must be name=value pairs joined by '&'") from None
    # The names and types of query parameters are redis-py's to judge: the Redis edge
    # (streams.ledger.client.open_client) asks it before any connection, this module imports no driver.


# --- printing --------------------------------------------------------------------------------------


def redact_url(url: str) -> str:
    """A connection string as it may be printed: user info replaced by ``****``, every query value
    (and every key/value word but host, port, dbname) by ``****``, and in a URL's path every segment
    that is not a plain word (``/v1/sk-KEY/search`` is shown ``/v1/****/search``); never raises.

    A string that cannot be cut safely (its "port" or "path" may be part of a password) is shown as
    ``<unparsable postgresql URL>``; a string that is no URL at all (a file path) as it is.
    """
    try:
        if url.startswith(POSTGRES_SCHEMES):
            return _redact_postgres(url)
        if is_conninfo(url):
            return _redact_conninfo(url)
        if "://" in url:
            return _redact_generic(url)
        return url
    except ValueError:
        return _unparsable(url)


MIN_SECRET_CHARS = 3
"""A secret part shorter than this is not searched for on its own in a text (it would mask every
"a" of the text); the whole URL, as written and as a URL library prints it, still is."""


def redact_in(text: str, url: str) -> str:
    """``text`` with ``url`` shown as :func:`redact_url` shows it, and every secret part of ``url`` (user
    info, query values, fragment, the path segments that are not plain words; as written and
    percent-decoded) that still occurs masked; never raises.

    For a message a library wrote about ``url`` (aiohttp quotes the URL it could not use, yarl may
    normalize it first), so a password or ``api_key`` in ``EC_PYRAG_URL`` never reaches an answer,
    a tool error or a log.
    """
    shown = redact_url(url)
    forms = sorted({url, url.rstrip("/"), _normalized(url)} - {""}, key=len, reverse=True)
    text = re.sub("|".join(map(re.escape, forms)), lambda _: shown, text)  # one pass: never what it put
    for secret in sorted(_secret_parts(url), key=len, reverse=True):
        if len(secret) >= MIN_SECRET_CHARS:
            text = text.replace(secret, MASK)
    return text


def _normalized(url: str) -> str:
    """``url`` as urllib puts it back together (the form a library's message may quote)."""
    try:
        return urlsplit(url).geturl()
    except ValueError:
        return url


def _secret_parts(url: str) -> set[str]:
    """What of a URL may be secret: the user info (whole, user and password), every query value, the
    fragment and the path's segments that are no plain word, each as written and percent-decoded. Cut
    by hand, never failing: a URL no parser takes may still be quoted in a message."""
    rest = url.split("://", 1)[1] if "://" in url else url
    netloc, _, after = rest.partition("/")
    for stop in "?#":
        if stop in netloc:  # a netloc ends at the first of / ? #
            netloc, _, more = netloc.partition(stop)
            after = f"{stop}{more}/{after}"
    parts: set[str] = set()
    userinfo, at, _ = netloc.rpartition("@")
    if at:
        user, _, password = userinfo.partition(":")
        parts |= {userinfo, user, password}
    path_query, _, fragment = after.partition("#")
    parts.add(fragment)
    path, _, query = path_query.partition("?")
    parts |= _secret_path_parts(path)
    for part in query.replace(";", "&").split("&"):
        name, equals, value = part.partition("=")
        parts.add(value if equals else name)
    return {form for part in parts if part for form in (part, unquote(part))}


_PLAIN_SEGMENT = re.compile(r"[a-z]{1,32}(?:[-_.][a-z]{1,32}){0,3}|v?[0-9]{1,3}")
"""A path segment shown as it is: lower-case words joined by ``-``, ``_`` or ``.`` (``search``,
``chat``, ``rag-search``, ``redis.sock``), or a short number or version (``0``, ``v1``). A key is
random text: digits and capitals among its letters, or ``%``-escapes, almost always."""


def _plain(segment: str) -> bool:
    return _PLAIN_SEGMENT.fullmatch(segment) is not None


def _shown_path(path: str) -> str:
    """A URL's path as it may be printed: its shape (every ``/``), each segment that is a plain word
    (:data:`_PLAIN_SEGMENT`) as it is, and every other one, ``;`` parameters included, as ``****``:
    some APIs take their key in the path (``/v1/sk-KEY/search``, ``/search;api_key=KEY``)."""
    return "/".join(segment if not segment or _plain(segment) else MASK for segment in path.split("/"))


def _secret_path_parts(path: str) -> set[str]:
    """The segments of a path :func:`_shown_path` masks, and their pieces (split at ``;``, ``=`` and
    ``,``) that are no plain word themselves: ``search;api_key=KEY`` gives itself and ``KEY``."""
    parts: set[str] = set()
    for segment in path.split("/"):
        if segment and not _plain(segment):
            parts.add(segment)
            parts |= {piece for piece in re.split(r"[;=,]", segment) if piece and not _plain(piece)}
    return parts


def _unparsable(url: str) -> str:
    scheme = url.split("://", 1)[0] if "://" in url else ""
    if scheme.lower() in _KNOWN_SCHEMES:
        return f"<unparsable {scheme.lower()} URL>"
    if is_conninfo(url):
        return "<unparsable connection string>"
    return "<unparsable URL>"


def _masked_query(query: str) -> str:
    shown = []
    for part in query.replace(";", "&").split("&"):
        if part:
            name, equals, _ = part.partition("=")
            shown.append(f"{name if name in _SHOWN_NAMES else MASK}={MASK}" if equals else MASK)
    return "?" + "&".join(shown) if shown else ""


def _redact_postgres(url: str) -> str:
    uri = _split_uri(url)
    _uri_params(uri, strict=False)  # a stray '@' after the host: part of a password
    for _, port in uri.netlocs:
        if port and not port.isdigit():
            raise ValueError("a port that is no number may be part of a password")
    hosts = ",".join(f"{host}:{port}" if port is not None else host for host, port in uri.netlocs)
    userinfo = f"{MASK}@" if uri.userinfo is not None else ""
    dbname = f"/{uri.dbname}" if uri.dbname is not None else ""
    query = _masked_query(uri.query) if uri.query else ""
    return f"{uri.scheme}://{userinfo}{hosts}{dbname}{query}"


def _redact_conninfo(text: str) -> str:
    words = _conninfo_words(text)
    shown = []
    for name, value in words.items():
        if name in _SHOWN_VALUES and not any(ch.isspace() or ch in "'\\" for ch in value):
            shown.append(f"{name}={value}")
        else:
            shown.append(f"{name if name in _LIBPQ_KEYWORDS else MASK}={MASK}")
    return " ".join(shown)


def _redact_generic(url: str) -> str:
    parts = urlsplit(url)
    _ = parts.port  # a "port" that is no number may be part of a password: unparsable
    if "@" in parts.path + parts.query + parts.fragment:
        raise ValueError("an '@' after the host may be part of a password")
    userinfo, at, hostport = parts.netloc.rpartition("@")
    netloc = f"{MASK}@{hostport}" if at else hostport
    query = _masked_query(parts.query) if parts.query else ""
    fragment = f"#{MASK}" if parts.fragment else ""
    return f"{parts.scheme}://{netloc}{_shown_path(parts.path)}{query}{fragment}"
