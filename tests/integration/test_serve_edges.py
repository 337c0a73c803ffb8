"""``evidence-chain serve`` against bad input and bad clients (issue 23, items 5 and 6).

Query values out of range are 400s, never 500s; idle and half-open connections are closed within
the header and keep-alive timeouts; connections past the cap are answered 503 while the server keeps
serving; the runs ``.`` and ``..`` open from the list (in a real browser too, which resolves ``/runs/.``
and ``/runs/%2E`` alike to ``/runs/``); bidirectional controls in ids show escaped on the pages.
The timeouts are set to a second or two so that the tests stay short.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

import pytest

from streams import codec
from streams.audit.factory import open_store
from tests.cli.bidi_text import BIDI_CONTROLS, EVIL_CALL, EVIL_DRAFT, EVIL_RUN
from tests.integration.audit_db import audit_target
from tests.integration.serving import Links, browser, get, serving  # noqa: F401 - browser: a fixture
from tests.streams.audit_records import chain, guard

pytestmark = pytest.mark.timeout(120)

SHORT = ("--header-timeout-seconds", "1", "--keepalive-timeout-seconds", "1")


def _fill(target: str) -> None:
    """Runs ``run-a``, ``.``, ``..``, and one whose ids hold a U+202E (as another producer could write)."""
    records = [*chain("run-a", "call_a", 0), *chain(".", "call_dot", 3), *chain("..", "call_dotdot", 6)]
    records += [{**r, "run_id": EVIL_RUN, "tool_call_id": EVIL_CALL} for r in chain("run-x", "call_x", 9)]
    verdict = guard("run-x", 20, 1, "REJECT", ["CITATION_NOT_FOUND"])
    fields = {**verdict["fields"], "draft_id": EVIL_DRAFT, "cited_tool_call_ids": [EVIL_CALL, "call_a"]}
    records.append({**verdict, "run_id": EVIL_RUN, "fields": fields})
    store = open_store(target)
    try:
        assert store.apply(records) == len(records)
    finally:
        store.close()


@pytest.fixture
def database(target: str) -> str:
    _fill(target)
    return target


@pytest.fixture
def sqlite(tmp_path: Path) -> Iterator[str]:
    with audit_target("sqlite", tmp_path, None) as target:
        _fill(target)
        yield target


# --- bad query values ------------------------------------------------------------------------------

NINES = "9" * 5000  # int() refuses more than 4,300 digits


BAD_QUERIES = [
    ("/runs?limit=%C2%B2", "limit must be"),  # "²": str.isdigit says yes, int says no
    (f"/runs?limit={NINES}", "limit must be"),
    (f"/?limit={NINES}&format=json", "limit must be"),
    ("/runs?limit=%EF%BC%95", "limit must be"),  # a full-width 5
    ("/runs?limit=0", "limit must be"),
    ("/runs?limit=5001", "limit must be"),
    ("/runs?limit=-1", "limit must be"),
    ("/runs?limit=%205", "limit must be"),
    ("/runs?limit=1.5", "limit must be"),
    ("/runs?limit=", "limit must be"),
    ("/runs?limit=2&limit=3", "limit may be given once"),
    ("/runs?format=xml", "format must be json or html"),
    ("/runs?format=%FF", "format must be json or html"),
    ("/runs?format=json&format=html", "format may be given once"),
    ("/runs?run_id=run-a&run_id=.", "run_id may be given once"),
    ("/runs?run_id=run-a&limit=%C2%B2", "limit must be"),
    ("/runs/run-a?format=xml", "format must be json or html"),
    ("/runs/run-a?format=json&format=json", "format may be given once"),
]


def test_a_bad_query_value_is_a_400(sqlite: str, tmp_path: Path) -> None:
    with serving(sqlite, tmp_path) as base:
        answers = {path: get(base + path) for path, _ in BAD_QUERIES}
        assert {path[:40]: status for path, (status, _, _) in answers.items() if status != 400} == {}
        for path, why in BAD_QUERIES:
            _, kind, body = answers[path]
            assert why.encode() in body, (path, body[-300:])
            assert kind == ("application/json" if "format=json" in path else "text/html"), path
        # the values the pages take still work, and parameters they do not take are ignored
        for good in ("/runs?limit=1", "/runs?limit=5000", "/runs?limit=0001", "/?format=html&utm=x"):
            assert get(base + good)[0] == 200, good
        assert get(f"{base}/runs/run-a?limit=%C2%B2&format=json")[0] == 200


# --- connections -----------------------------------------------------------------------------------


def _closed_after(sock: socket.socket, trickle: bytes = b"", within: float = 10.0) -> float:
    """Seconds until the server closes ``sock`` (reading what it sends; sending ``trickle`` every 0.25 s)."""
    start = time.monotonic()
    sock.settimeout(0.25)
    while time.monotonic() - start < within:
        try:
            if not sock.recv(65536):
                return time.monotonic() - start
        except TimeoutError:
            if trickle:
                with contextlib.suppress(OSError):
                    sock.sendall(trickle)
        except ConnectionResetError:
            return time.monotonic() - start
    return float("inf")


def _port(base: str) -> int:
    return int(urlsplit(base).port or 80)


def _response(sock: socket.socket) -> bytes:
    """One whole response (head and a Content-Length body) from a kept-alive connection."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_idle_and_half_open_connections_are_closed_within_the_timeouts(sqlite: str, tmp_path: Path) -> None:
    with serving(sqlite, tmp_path, *SHORT) as base:
        address = ("127.0.0.1", _port(base))
        idle = [socket.create_connection(address) for _ in range(20)]  # send nothing at all
        half_open = [socket.create_connection(address) for _ in range(20)]
        for sock in half_open:  # a request head that never ends
            sock.sendall(b"GET /runs HTTP/1.1\r\nHost: x\r\n")
        kept = [socket.create_connection(address) for _ in range(2)]
        for sock in kept:  # a whole request, then silence (one of them starts another head)
            sock.sendall(b"GET /runs?format=json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert _response(sock).startswith(b"HTTP/1.1 200")
        kept[1].sendall(b"GET /runs HTTP/1.1\r\n")
        with ThreadPoolExecutor(len(idle) + len(half_open) + len(kept)) as pool:
            waits = [pool.submit(_closed_after, sock) for sock in (*idle, *kept)]
            waits += [pool.submit(_closed_after, sock, b"X-Slow: 1\r\n") for sock in half_open]
            seconds = [w.result() for w in waits]
        for sock in (*idle, *half_open, *kept):
            sock.close()
        assert max(seconds) < 3.0, sorted(seconds)  # a 1 s timeout (and some slack for a busy machine)
        assert get(f"{base}/runs?format=json")[0] == 200


def test_connections_past_the_cap_are_refused_and_the_server_keeps_serving(
    sqlite: str, tmp_path: Path
) -> None:
    options = ("--max-connections", "4", "--header-timeout-seconds", "2", "--keepalive-timeout-seconds", "60")
    with serving(sqlite, tmp_path, *options) as base:
        port = _port(base)
        time.sleep(0.3)  # serving() asked once, and closed: let the server count it gone
        held = [http.client.HTTPConnection("127.0.0.1", port, timeout=5) for _ in range(4)]
        for conn in held:  # four kept-alive connections: the cap
            conn.request("GET", "/runs?format=json")
            assert conn.getresponse().read() and conn.sock is not None
        extra = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
        for sock in extra:
            sock.sendall(b"GET /runs HTTP/1.1\r\nHost: x\r\n\r\n")
        for sock in extra:  # each is answered at once, and closed
            sock.settimeout(5)
            assert sock.recv(65536).startswith(b"HTTP/1.1 503"), "not refused"
            assert _closed_after(sock) < 2.0
            sock.close()
        assert get(f"{base}/runs?format=json")[0] == 503

        held.pop().close()  # a slot frees: the next request is served
        assert _eventually_ok(base)
        for conn in held:  # the others were never disturbed
            conn.request("GET", "/runs/run-a?format=json")
            assert codec.loads(conn.getresponse().read())["run_id"] == "run-a"

        # A connection that holds the last slot and sends nothing loses it at the header timeout.
        squatter = socket.create_connection(("127.0.0.1", port))
        time.sleep(0.3)
        assert get(f"{base}/runs?format=json")[0] == 503
        assert _closed_after(squatter) < 4.0
        squatter.close()
        assert _eventually_ok(base)
        for conn in held:
            conn.close()


def _eventually_ok(base: str) -> bool:
    """The list answers 200 within a second (the server may not have seen the freed socket close yet)."""
    deadline = time.monotonic() + 1.0
    while True:
        status = get(f"{base}/runs?format=json")[0]
        if status == 200 or time.monotonic() > deadline:
            return status == 200
        time.sleep(0.05)


# --- the runs "." and ".." --------------------------------------------------------------------------


class _RunLinks(HTMLParser):
    """``data-run-id`` → the href of its link, of the run list."""

    def __init__(self) -> None:
        super().__init__()
        self.links: dict[str, str] = {}
        self._run: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "tr" and found.get("data-run-id") is not None:
            self._run = found["data-run-id"]
        elif tag == "a" and self._run is not None:
            self.links[self._run] = str(found.get("href"))
            self._run = None


def test_the_runs_dot_and_dot_dot_open_from_the_list(database: str, tmp_path: Path) -> None:
    with serving(database, tmp_path) as base:
        listed = {r["run_id"]: r["href"] for r in codec.loads(get(f"{base}/runs?format=json")[2])["runs"]}
        page = _RunLinks()
        page.feed(get(f"{base}/runs")[2].decode())
        for run_id, call in ((".", "call_dot"), ("..", "call_dotdot")):
            for href in (listed[run_id], page.links[run_id]):
                url = urljoin(f"{base}/runs", href)  # as a browser resolves it (dot segments removed)
                status, kind, body = get(url + ("&" if "?" in url else "?") + "format=json")
                assert status == 200, (run_id, href, url)
                trail = codec.loads(body)
                assert (trail["run_id"], [c["tool_call_id"] for c in trail["tool_calls"]]) == (run_id, [call])
                status, kind, body = get(url)
                assert (status, kind) == (200, "text/html")
                assert f'id="run-id">{run_id}</span>' in body.decode()
        # The path, percent-encoded, names them too (for a client that sends it as it is).
        for path, run_id in (("%2E", "."), ("%2E%2E", ".."), ("%2e", ".")):
            assert codec.loads(get(f"{base}/runs/{path}?format=json")[2])["run_id"] == run_id
        # and their JSON link is their JSON
        status, kind, body = get(f"{base}/runs?run_id=..&format=json")
        assert (status, kind) == (200, "application/json") and codec.loads(body)["run_id"] == ".."


def test_a_person_opens_the_runs_dot_and_dot_dot_in_a_browser(
    sqlite: str,
    tmp_path: Path,
    browser: Any,  # noqa: F811 - the fixture
) -> None:
    from selenium.webdriver.common.by import By

    with serving(sqlite, tmp_path) as base:
        for run_id, call in ((".", "call_dot"), ("..", "call_dotdot")):
            browser.get(f"{base}/")
            rows = browser.find_elements(By.CSS_SELECTOR, "#runs tr.run")
            (row,) = [r for r in rows if r.get_attribute("data-run-id") == run_id]
            row.find_element(By.CSS_SELECTOR, "td.run-id a").click()
            assert browser.find_element(By.ID, "run-id").text == run_id, browser.current_url
            assert browser.find_elements(By.ID, f"call-{call}")


# --- bidirectional controls -------------------------------------------------------------------------


def test_bidi_controls_in_ids_show_escaped_on_the_pages(database: str, tmp_path: Path) -> None:
    with serving(database, tmp_path) as base:
        listing = get(f"{base}/runs")[2].decode()
        assert "run\\u202eg" in listing
        run_page = get(f"{base}/runs/{quote(EVIL_RUN)}")
        assert run_page[0] == 200
        html = run_page[2].decode()
        assert "run\\u202eg" in html and "call\\u202ex" in html and "d\\u202etxt.exe" in html
        missing = get(f"{base}/runs/nobody%E2%80%AE")
        assert missing[0] == 404 and "nobody\\u202e" in missing[2].decode()
        for text in (listing, html, missing[2].decode()):
            assert not any(c in text for c in BIDI_CONTROLS), "a raw bidi control on a page"
        links = Links()
        links.feed(html)
        assert links.fragment_links
        for href in links.fragment_links:  # the tool call's link still lands on its row
            assert unquote(href.removeprefix("#")) in links.ids
        # The JSON is data: the ids as they are.
        trail = codec.loads(get(f"{base}/runs/{quote(EVIL_RUN)}?format=json")[2])
        assert (trail["run_id"], trail["drafts"][0]["draft_id"]) == (EVIL_RUN, EVIL_DRAFT)
