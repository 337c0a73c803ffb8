"""``evidence-chain serve`` for the tests of its pages: the server on a free port, a GET, the links of a page,
and a headless Chromium (the ``browser`` fixture; a module that uses it imports it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.integration.helpers import CLI


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(target: str, tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``evidence-chain serve`` on a free port over ``target`` (more ``options`` on its command line, more
    ``env`` in its environment, such as ``EC_TRUSTED_KEYS_FILE``); its base URL. The DSN goes by
    environment."""
    extra = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith("EC_")} | extra
    env["EC_AUDIT_DSN" if target.startswith("postgresql://") else "EC_AUDIT_DB"] = target
    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(  # noqa: S603 - our own console script
            [CLI, "serve", "--port", str(port), *options], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if server.poll() is not None:
                pytest.fail(f"serve exited with {server.returncode}: {log.read_text()}")
            try:
                with urllib.request.urlopen(f"{base}/runs?format=json", timeout=5):  # noqa: S310 - local
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"serve did not answer within 30 s: {log.read_text()}")
                time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
    if target.startswith("postgresql://"):  # it says where it reads, without the password
        password = urlsplit(target).password
        assert "postgresql://****@" in log.read_text() and password and password not in log.read_text()


def get(url: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - local test server
            return answer.status, answer.headers.get_content_type(), answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get_content_type(), exc.read()


class Links(HTMLParser):
    """Every element id, every ``href`` of a violation's links, and every tag, of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tags: Counter[str] = Counter()
        self.violation_links: list[tuple[str, str]] = []
        self.fragment_links: list[str] = []
        self._violation: str | None = None
        self._code = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags[tag] += 1
        if found.get("id"):
            self.ids.add(str(found["id"]))
        classes = str(found.get("class") or "").split()
        if tag == "li" and "violation" in classes:
            self._violation = ""
        if tag == "code" and self._violation == "":
            self._code = True
        href = str(found.get("href") or "")
        if tag == "a" and href.startswith("#"):
            self.fragment_links.append(href)
        if tag == "a" and self._violation is not None:
            self.violation_links.append((self._violation, href))

    def handle_data(self, data: str) -> None:
        if self._code:
            self._violation = data
            self._code = False

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self._violation = None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through chromedriver (Debian's packages; `make browser` installs them)."""
    from selenium import webdriver

    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        pytest.fail(
            "the browser tests need Debian's chromium and chromium-driver: run `make browser` "
            "(apt-get install chromium chromium-driver)",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=driver_path))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
