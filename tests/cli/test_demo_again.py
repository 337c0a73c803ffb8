"""``demo`` (``make run``) ends with commands a person can paste: the real path of the console script
(it is not on PATH in a checkout), the demo's own prefix, app id and namespace, and a run of the sample."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from streams.cli.demo import _again
from streams.settings import Settings


def test_the_last_lines_are_a_pasteable_audit_sink_then_inspect(tmp_path: Path) -> None:
    settings = Settings(topic_prefix="demo-1-", app_id="demo-1-evidence-chain", ns="demo-1")
    raw = [b"not json", b'{"run_id": "bad id"}', b"[1]", b'{"run_id": "run-demo-1", "tool_call_id": "c"}']
    run_id, commands = _again(settings, raw, Path(".local"))
    assert run_id == "run-demo-1"
    export, both = commands.splitlines()
    words = shlex.split(export)
    assert words[0] == "export"
    env = dict(word.split("=", 1) for word in words[1:])
    assert env == {
        "EC_TOPIC_PREFIX": "demo-1-",
        "EC_APP_ID": "demo-1-evidence-chain",
        "EC_NS": "demo-1",
        "EC_AUDIT_DB": ".local/demo-1-audit.db",
        "EC_AUDIT_SINK_PORT": "0",
    }
    sink, inspect = (shlex.split(part) for part in both.split(" && "))
    script = Path(sink[0])  # relative to where make run runs: .venv/bin/evidence-chain
    assert Path.cwd() / script == Path(sys.executable).with_name("evidence-chain")
    assert os.access(script, os.X_OK)
    assert sink[1:] == ["audit-sink", "--once", "--loglevel", "warning"]
    assert inspect == [sink[0], "inspect", "run-demo-1"]
    syntax = subprocess.run(["bash", "-n"], input=commands.encode(), capture_output=True, check=False)
    assert syntax.returncode == 0, syntax.stderr


def test_a_sample_without_a_valid_run_names_a_placeholder() -> None:
    assert _again(Settings(), [b'{"run_id": "a:b"}'], Path("/tmp"))[0] == "RUN_ID"
