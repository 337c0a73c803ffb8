"""``verify --redis``: the golden drafts against the golden ledger loaded into the live Redis."""

from __future__ import annotations

import asyncio
import os
import subprocess

from streams import codec
from tests.golden import GOLDEN
from tests.integration.helpers import CLI, golden_lines, load_golden_ledger


async def test_verify_redis_reproduces_the_golden_verdicts(redis_url: str, unique_prefix: str) -> None:
    ns = unique_prefix.rstrip("-")
    await load_golden_ledger(redis_url, ns)
    env = dict(os.environ, EC_REDIS_URL=redis_url, EC_NS=ns)
    done = await asyncio.to_thread(
        subprocess.run,
        [CLI, "verify", "--redis"],
        input=(GOLDEN / "guard" / "drafts.jsonl").read_bytes(),
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()

    def comparable(verdict: dict) -> dict:
        out = dict(verdict)
        out["violations"] = sorted((v["code"], v["path"]) for v in verdict["violations"])
        return out

    got = [comparable(codec.loads(line)) for line in done.stdout.splitlines()]
    expected = [comparable(codec.loads(line)) for line in golden_lines("guard", "expected_verdicts.jsonl")]
    assert got == expected
