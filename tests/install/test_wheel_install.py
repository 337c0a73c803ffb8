"""The package as a user installs it: the wheel and the sdist built by ``python -m build``, the wheel
installed with no extras into a virtualenv of its own, and the commands that need no service run from
there on the golden cases, with the README's library example (``make install-check``; ``make test``
runs it).

The development environment installs every extra, so only here would a module that imports an optional
backend at the top (psycopg, OpenTelemetry) show. The commands run outside the checkout, with the
Kafka and Redis settings pointing at a closed port, so they prove they need neither.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from streams import codec
from tests.golden import GOLDEN, assert_same_line, by_case, case_names, expected, lines, normalized_verdict

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("models", "streams")

# A closed port: a command that tried Kafka or Redis would fail or hang, not quietly pass.
OFFLINE = {"EC_KAFKA_BOOTSTRAP": "127.0.0.1:1", "EC_REDIS_URL": "redis://127.0.0.1:1/0"}
DSN = "postgresql://audit:not-this-secret@127.0.0.1:1/audit"

# Modules that need an optional extra, and the extra their error must name.
NEEDS_EXTRA = {
    "streams.audit.postgres": "evidence-chain[postgres]",
    "streams.openapi_bundle": "evidence-chain[dev]",  # schemas --openapi, a development command
}


@dataclass(frozen=True)
class Installed:
    """The built distributions and a virtualenv holding the wheel alone."""

    wheel: Path
    sdist: Path
    venv: Path
    home: Path

    @property
    def cli(self) -> Path:
        return self.venv / "bin" / "evidence-chain"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(
        self, args: Sequence[str | Path], *, stdin: bytes = b"", env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """``args`` outside the checkout, with no ``EC_*`` setting but the offline ones and ``env``."""
        base = {k: v for k, v in os.environ.items() if not k.startswith(("EC_", "OTEL_", "PYTHON"))}
        return subprocess.run(  # noqa: S603 - the console script and interpreter this test installed
            [str(arg) for arg in args],
            input=stdin,
            capture_output=True,
            cwd=self.home,
            env={**base, **OFFLINE, "PYTHONNOUSERSITE": "1", **(env or {})},
            timeout=120,
            check=False,
        )


def _checked(args: Sequence[str | Path], what: str) -> None:
    done = subprocess.run(  # noqa: S603 - build and pip, on paths of this test
        [str(arg) for arg in args], capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, (
        f"{what} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """``python -m build`` (the sdist, then the wheel from it), then ``pip install`` of that wheel."""
    root = tmp_path_factory.mktemp("install")
    dist = root / "dist"
    _checked([sys.executable, "-m", "build", "--outdir", dist, REPO], "python -m build")
    (wheel,) = dist.glob("evidence_chain-*.whl")
    (sdist,) = dist.glob("evidence_chain-*.tar.gz")
    venv = root / "venv"
    # The venv gets no pip of its own: this interpreter's pip installs into it (--python).
    _checked([sys.executable, "-m", "venv", "--without-pip", venv], "python -m venv")
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "--disable-pip-version-check"]
    _checked([*pip, "install", "--quiet", "--no-compile", wheel], "pip install of the wheel")
    home = root / "home"
    home.mkdir()
    return Installed(wheel, sdist, venv, home)


def _data_files() -> list[str]:
    """Every file of the packages that is not Python source: templates, the OpenAPI document, ..."""
    return sorted(
        path.relative_to(REPO).as_posix()
        for package in PACKAGES
        for path in (REPO / package).rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    )


def test_the_packages_have_data_files_to_check() -> None:
    # The check below means something only while there is something to find.
    assert "streams/openapi.yaml" in _data_files()


def test_the_wheel_and_the_sdist_hold_every_file_the_packages_read(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = set(wheel.namelist())
    with tarfile.open(installed.sdist) as sdist:
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    wanted = _data_files()
    assert [name for name in wanted if name not in in_wheel] == []
    assert [name for name in wanted if name not in in_sdist] == []
    with zipfile.ZipFile(installed.wheel) as wheel:
        # streams/openapi.yaml is a link in the checkout: the wheel holds the document, not the link.
        assert b"\nopenapi: 3.1" in wheel.read("streams/openapi.yaml")


def test_no_extra_is_installed(installed: Installed) -> None:
    for module in ("psycopg", "opentelemetry.sdk", "pytest"):
        done = installed.run([installed.python, "-c", f"import {module}"])
        assert done.returncode != 0, f"{module} is installed: the wheel's plain install is not plain"


def test_every_module_imports_without_the_extras(installed: Installed) -> None:
    script = """
import importlib, pkgutil, sys
for top in sys.argv[1:]:
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        try:
            importlib.import_module(info.name)
        except Exception as exc:
            print(f"{info.name}\\t{type(exc).__name__}\\t{exc}")
"""
    done = installed.run([installed.python, "-c", script, *PACKAGES])
    assert done.returncode == 0, done.stderr.decode()
    failed = dict(
        (name, (kind, message))
        for name, kind, message in (line.split("\t", 2) for line in done.stdout.decode().splitlines())
    )
    assert sorted(failed) == sorted(NEEDS_EXTRA), failed
    for name, extra in NEEDS_EXTRA.items():
        kind, message = failed[name]
        assert kind == "ConfigurationError" and extra in message, failed[name]


def test_help_and_every_command_help(installed: Installed) -> None:
    done = installed.run([installed.cli, "--help"])
    assert done.returncode == 0, done.stderr.decode()
    commands = re.findall(r"^ {4}([a-z][a-z-]+)\b", done.stdout.decode(), flags=re.MULTILINE)
    assert {"pipe", "verify", "worker", "inspect", "audit-sink"} <= set(commands)
    # Each command's --help in one interpreter (the script's own start is the one above).
    script = """
import contextlib, io, sys
from streams.cli import main
for command in sys.argv[1:]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            main([command, "--help"])
    except SystemExit as exc:
        code = exc.code
    else:
        code = "no exit"
    print(command, code, out.getvalue().startswith(f"usage: evidence-chain {command}"))
"""
    each = installed.run([installed.python, "-c", script, *commands])
    assert each.returncode == 0, each.stderr.decode()
    assert each.stdout.decode().splitlines() == [f"{command} 0 True" for command in commands]


@pytest.mark.parametrize(
    ("args", "folder", "stdin", "wanted"),
    [
        pytest.param(("pipe",), "pipe", "input.jsonl", "expected_projection.jsonl", id="pipe"),
        pytest.param(
            ("pipe", "--from", "lookup"), "project", "input.jsonl", "expected.jsonl", id="pipe-from-lookup"
        ),
    ],
)
def test_pipe_on_the_golden_cases(
    installed: Installed, args: tuple[str, ...], folder: str, stdin: str, wanted: str
) -> None:
    done = installed.run([installed.cli, *args], stdin=(GOLDEN / folder / stdin).read_bytes())
    assert done.returncode == 0, done.stderr.decode()
    got = by_case(folder, done.stdout)
    for case, line in expected(folder, wanted).items():
        assert_same_line(got[case], line)


def test_verify_on_the_golden_cases(installed: Installed) -> None:
    done = installed.run(
        [installed.cli, "verify", "--ledger", GOLDEN / "guard" / "ledger.jsonl"],
        stdin=(GOLDEN / "guard" / "drafts.jsonl").read_bytes(),
    )
    assert done.returncode == 0, done.stderr.decode()
    got = by_case("guard", done.stdout)
    wanted = expected("guard", "expected_verdicts.jsonl")
    assert list(got) == case_names("guard")
    for case, line in wanted.items():
        assert normalized_verdict(codec.loads(got[case])) == normalized_verdict(codec.loads(line)), case


def readme_example() -> str:
    """The Python example of the README's section for people who install the wheel."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Use it as a library or a tool", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readme_library_example_runs_on_the_installed_wheel(installed: Installed) -> None:
    (first, *_) = lines((GOLDEN / "pipe" / "input.jsonl").read_bytes())
    done = installed.run([installed.python, "-c", readme_example()], stdin=first + b"\n")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == expected("pipe", "expected_projection.jsonl")[case_names("pipe")[0]] + b"\n"


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("inspect", "run-1"), id="inspect"),
        pytest.param(("audit-sink", "--once"), id="audit-sink"),
        pytest.param(("serve",), id="serve"),
    ],
)
def test_a_postgresql_audit_store_without_psycopg_is_one_line_naming_the_extra(
    installed: Installed, args: tuple[str, ...]
) -> None:
    done = installed.run([installed.cli, *args], env={"EC_AUDIT_DSN": DSN})
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert done.stdout == b""
    assert len(stderr.splitlines()) == 1, stderr
    assert f"pip install '{NEEDS_EXTRA['streams.audit.postgres']}'" in stderr
    assert "Traceback" not in stderr
    assert "not-this-secret" not in stderr
