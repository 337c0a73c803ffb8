"""The golden cases and the line-handling edge cases through the ``evidence-chain`` console script
(each run in a child forked from one preloaded interpreter: ``tests/console.py``).

Each command runs once per module on a whole golden file (one process, many cases); the
per-case tests then compare one output line each, as ``golden/README.md`` says.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from streams import codec
from streams.hashing import sha256_hex
from tests.console import Command, Console, Done, clean_env
from tests.golden import (
    GOLDEN,
    assert_same_line,
    by_case,
    case_names,
    dead_letter_core,
    expected,
    lines,
    normalized_verdict,
)


def run_cli(script: Console, *args: str, stdin: bytes = b"") -> Done:
    """One command with the SPEC's defaults (no EC_* setting of the caller's)."""
    (done,) = script.run(Command(args, clean_env(), stdin=stdin, timeout=60))
    return done


# -- one subprocess per command over a whole golden file ---------------------------------------


@pytest.fixture(scope="module")
def pipe_projection(script: Console) -> dict[str, bytes]:
    done = run_cli(script, "pipe", stdin=(GOLDEN / "pipe" / "input.jsonl").read_bytes())
    assert done.returncode == 0, done.stderr.decode()
    return by_case("pipe", done.stdout)


@pytest.fixture(scope="module")
def pipe_lookup(script: Console) -> dict[str, bytes]:
    done = run_cli(script, "pipe", "--emit", "lookup", stdin=(GOLDEN / "pipe" / "input.jsonl").read_bytes())
    assert done.returncode == 0, done.stderr.decode()
    return by_case("pipe", done.stdout)


@pytest.fixture(scope="module")
def pipe_from_lookup(script: Console) -> dict[str, bytes]:
    done = run_cli(
        script, "pipe", "--from", "lookup", stdin=(GOLDEN / "project" / "input.jsonl").read_bytes()
    )
    assert done.returncode == 0, done.stderr.decode()
    return by_case("project", done.stdout)


@pytest.fixture(scope="module")
def verify_verdicts(script: Console) -> dict[str, bytes]:
    ledger = str(GOLDEN / "guard" / "ledger.jsonl")
    done = run_cli(
        script, "verify", "--ledger", ledger, stdin=(GOLDEN / "guard" / "drafts.jsonl").read_bytes()
    )
    assert done.returncode == 0, done.stderr.decode()
    return by_case("guard", done.stdout)


PIPE_PROJECTIONS = expected("pipe", "expected_projection.jsonl")
PIPE_LOOKUPS = expected("pipe", "expected_lookup.jsonl")
PROJECTIONS = expected("project", "expected.jsonl")
VERDICTS = expected("guard", "expected_verdicts.jsonl")


@pytest.mark.parametrize("case", case_names("pipe"))
def test_pipe(case: str, pipe_projection: dict[str, bytes]) -> None:
    assert_same_line(pipe_projection[case], PIPE_PROJECTIONS[case])


@pytest.mark.parametrize("case", case_names("pipe"))
def test_pipe_emit_lookup(case: str, pipe_lookup: dict[str, bytes]) -> None:
    wanted = codec.loads(PIPE_LOOKUPS[case])
    actual = codec.loads(pipe_lookup[case])
    if "dead_letter" in wanted:
        assert dead_letter_core(actual["dead_letter"]) == dead_letter_core(wanted["dead_letter"])
    else:
        assert actual == wanted


@pytest.mark.parametrize("case", case_names("project"))
def test_pipe_from_lookup(case: str, pipe_from_lookup: dict[str, bytes]) -> None:
    assert_same_line(pipe_from_lookup[case], PROJECTIONS[case])


@pytest.mark.parametrize("case", case_names("guard"))
def test_verify(case: str, verify_verdicts: dict[str, bytes]) -> None:
    assert normalized_verdict(codec.loads(verify_verdicts[case])) == normalized_verdict(
        codec.loads(VERDICTS[case])
    )


# -- line handling ------------------------------------------------------------------------------

GOOD = lines((GOLDEN / "pipe" / "input.jsonl").read_bytes())[0]
GOOD_PROJECTION = PIPE_PROJECTIONS["seed_example_7_in_5_out"]


def dead_letter_reason(line: bytes) -> str:
    return str(codec.loads(line)["dead_letter"]["reason"])


@pytest.mark.parametrize(
    "args",
    [pytest.param(("pipe",), id="pipe"), pytest.param(("pipe", "--from", "lookup"), id="pipe-from-lookup")],
)
def test_invalid_utf8_line_is_a_dead_letter_not_a_crash(args: tuple[str, ...], script: Console) -> None:
    done = run_cli(script, *args, stdin=b'{"run_id":"r\xff\xfe"}\n')
    assert done.returncode == 0, done.stderr.decode()
    out = lines(done.stdout)
    assert len(out) == 1
    assert dead_letter_reason(out[0]) == "MALFORMED_JSON"


def test_invalid_utf8_draft_is_unparsable(tmp_path: Path, script: Console) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b"")
    done = run_cli(script, "verify", "--ledger", str(ledger), stdin=b"\xff\xfe{}\n")
    assert done.returncode == 0, done.stderr.decode()
    (verdict,) = [codec.loads(line) for line in lines(done.stdout)]
    assert [v["code"] for v in verdict["violations"]] == ["DRAFT_UNPARSABLE"]
    assert verdict["draft_sha256"] == sha256_hex(b"\xff\xfe{}")


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("pipe",), id="pipe"),
        pytest.param(("pipe", "--emit", "lookup"), id="pipe-emit-lookup"),
        pytest.param(("pipe", "--from", "lookup"), id="pipe-from-lookup"),
    ],
)
def test_empty_input_prints_nothing(args: tuple[str, ...], script: Console) -> None:
    done = run_cli(script, *args, stdin=b"")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""


def test_verify_empty_input_prints_nothing(script: Console) -> None:
    done = run_cli(script, "verify", "--ledger", str(GOLDEN / "guard" / "ledger.jsonl"), stdin=b"")
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout == b""


def test_blank_line_in_the_middle_is_one_dead_letter(script: Console) -> None:
    done = run_cli(script, "pipe", stdin=GOOD + b"\n\n" + GOOD + b"\n")
    assert done.returncode == 0, done.stderr.decode()
    out = lines(done.stdout)
    assert len(out) == 3
    assert out[0] == GOOD_PROJECTION
    assert dead_letter_reason(out[1]) == "MALFORMED_JSON"
    assert out[2] == GOOD_PROJECTION


def test_crlf_line_endings_give_the_same_bytes(script: Console) -> None:
    done = run_cli(script, "pipe", stdin=GOOD + b"\r\n" + b"[1]\r\n" + GOOD + b"\r\n")
    assert done.returncode == 0, done.stderr.decode()
    out = lines(done.stdout)
    assert len(out) == 3
    assert out[0] == GOOD_PROJECTION
    assert dead_letter_reason(out[1]) == "MALFORMED_JSON"
    assert out[2] == GOOD_PROJECTION
    assert b"\r" not in done.stdout


def test_crlf_drafts_hash_the_record_without_its_line_ending(script: Console) -> None:
    draft = lines((GOLDEN / "guard" / "drafts.jsonl").read_bytes())[0]
    done = run_cli(
        script, "verify", "--ledger", str(GOLDEN / "guard" / "ledger.jsonl"), stdin=draft + b"\r\n"
    )
    assert done.returncode == 0, done.stderr.decode()
    (verdict,) = [codec.loads(line) for line in lines(done.stdout)]
    assert verdict["verdict"] == "PASS"
    assert verdict["draft_sha256"] == sha256_hex(draft)


def test_last_line_without_newline_still_counts(script: Console) -> None:
    done = run_cli(script, "pipe", stdin=GOOD + b"\n" + GOOD)
    assert done.returncode == 0, done.stderr.decode()
    assert lines(done.stdout) == [GOOD_PROJECTION, GOOD_PROJECTION]
    assert done.stdout.endswith(b"\n")


def test_line_count_in_equals_line_count_out(script: Console) -> None:
    stdin = b"\n".join([GOOD, b"", b"not json", b"\xff", b"{}", b"[]", GOOD]) + b"\n"
    done = run_cli(script, "pipe", "--emit", "lookup", stdin=stdin)
    assert done.returncode == 0, done.stderr.decode()
    out = [codec.loads(line) for line in lines(done.stdout)]
    assert len(out) == 7
    assert [("dead_letter" in line) for line in out] == [False, True, True, True, True, True, False]


def test_pipe_from_lookup_prints_a_dead_letter_for_a_failed_lookup(script: Console) -> None:
    failed = {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "status": "FAILED",
        "failure_reason": "SCHEMA_VIOLATION",
    }
    good = lines((GOLDEN / "project" / "input.jsonl").read_bytes())[1]
    done = run_cli(script, "pipe", "--from", "lookup", stdin=codec.dumps(failed) + b"\n" + good + b"\n")
    assert done.returncode == 0, done.stderr.decode()
    first, second = lines(done.stdout)
    assert dead_letter_core(codec.loads(first)["dead_letter"]) == {
        "reason": "SCHEMA_VIOLATION",
        "run_id": "run-1",
        "tool_call_id": "call-1",
    }
    assert second == PROJECTIONS["camel_case_aliases"]


def test_verify_first_ledger_line_for_a_key_wins(tmp_path: Path, script: Console) -> None:
    ledger_lines = lines((GOLDEN / "guard" / "ledger.jsonl").read_bytes())
    good = codec.loads(ledger_lines[0])
    forged = dict(good, projection_sha256="0" * 64)
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b"\n".join([*ledger_lines[:2], codec.dumps(forged)]) + b"\n")
    draft = lines((GOLDEN / "guard" / "drafts.jsonl").read_bytes())[0]
    done = run_cli(script, "verify", "--ledger", str(ledger), stdin=draft + b"\n")
    assert done.returncode == 0, done.stderr.decode()
    assert codec.loads(done.stdout)["verdict"] == "PASS"

    ledger.write_bytes(b"\n".join([codec.dumps(forged), *ledger_lines[:2]]) + b"\n")
    done = run_cli(script, "verify", "--ledger", str(ledger), stdin=draft + b"\n")
    assert done.returncode == 0, done.stderr.decode()
    assert [v["code"] for v in codec.loads(done.stdout)["violations"]] == ["LEDGER_PAYLOAD_TAMPERED"]


def test_verify_survives_a_ledger_projection_of_the_wrong_shape(tmp_path: Path, script: Console) -> None:
    projection = codec.dumps(
        {"evidence_status": ["EVIDENCE_FOUND"], "tool_call_id": "call-1", "query": "q", "evidence": [],
         "returned_count": 0, "relevance_level": None, "truncated": False}
    )  # fmt: skip
    entry = {
        "run_id": "run-1",
        "tool_call_id": "call-1",
        "status": "READY",
        "projection": projection.decode(),
        "projection_sha256": sha256_hex(projection),
    }
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(codec.dumps_line(entry))
    item = {"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": ["call-1"]}
    draft = {"run_id": "run-1", "draft_id": "d-1", "limitations": ["l"], "analysis": [item]}
    done = run_cli(script, "verify", "--ledger", str(ledger), stdin=codec.dumps_line(draft))
    assert done.returncode == 0, done.stderr.decode()[-300:]
    (verdict,) = [codec.loads(line) for line in lines(done.stdout)]
    assert [(v["code"], v["path"]) for v in verdict["violations"]] == [
        ("LEDGER_PAYLOAD_INVALID", "analysis[0].tool_call_ids[0]")
    ]


# -- usage errors: exit 2 with a message that says what to fix ----------------------------------


def test_verify_skips_a_ledger_line_that_is_not_json_and_names_it(tmp_path: Path, script: Console) -> None:
    ledger = tmp_path / "ledger.jsonl"
    good = lines((GOLDEN / "guard" / "ledger.jsonl").read_bytes())[:2]
    ledger.write_bytes(good[0] + b"\n{not json\n" + good[1] + b"\n")
    drafts = lines((GOLDEN / "guard" / "drafts.jsonl").read_bytes())[:1]  # cites call_x1 and call_x2
    done = run_cli(script, "verify", "--ledger", str(ledger), stdin=drafts[0] + b"\n")
    assert done.returncode == 0
    assert [codec.loads(v)["verdict"] for v in lines(done.stdout)] == ["PASS"]  # both entries still loaded
    assert f"{ledger}:2: skipped".encode() in done.stderr
    assert b"Traceback" not in done.stderr


def test_verify_skips_a_ledger_line_that_is_not_an_entry(tmp_path: Path, script: Console) -> None:
    ledger = tmp_path / "ledger.jsonl"
    ledger.write_bytes(b'["run-1","call-1"]\n{"run_id":"run-1","status":"READY"}\n')
    item = {"id": "a1", "kind": "NORMAL", "content": "x", "tool_call_ids": ["call-1"]}
    draft = {"run_id": "run-1", "draft_id": "d-1", "limitations": ["l"], "analysis": [item]}
    done = run_cli(script, "verify", "--ledger", str(ledger), stdin=codec.dumps_line(draft))
    assert done.returncode == 0
    (verdict,) = [codec.loads(v) for v in lines(done.stdout)]
    assert [v["code"] for v in verdict["violations"]] == ["CITATION_NOT_FOUND"]
    assert f"{ledger}:1: skipped".encode() in done.stderr and f"{ledger}:2: skipped".encode() in done.stderr


def test_verify_missing_ledger_file(tmp_path: Path, script: Console) -> None:
    missing = tmp_path / "nope.jsonl"
    done = run_cli(script, "verify", "--ledger", str(missing), stdin=b"{}\n")
    assert done.returncode == 2
    assert str(missing).encode() in done.stderr
    assert b"Traceback" not in done.stderr


def test_pipe_from_lookup_cannot_emit_lookup(script: Console) -> None:
    done = run_cli(script, "pipe", "--from", "lookup", "--emit", "lookup", stdin=GOOD + b"\n")
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"--from lookup" in done.stderr
    assert b"Traceback" not in done.stderr


def test_hostile_lines_give_one_output_line_each(script: Console) -> None:
    """Each of these once lost every later line (a traceback) or became INTERNAL_ERROR."""
    deep = b"[" * 300 + b"]" * 300
    hostile = [
        codec.dumps(
            {
                "run_id": "r",
                "tool_call_id": "c1",
                "response": {
                    "query": "q",
                    "evidence_status": "supported",
                    "hits": [
                        {
                            "evidence_key": "d#chunk-" + "9" * 5000,
                            "document_id": "d",
                            "source": "s",
                            "excerpt": "e",
                            "quality_score": 0.9,
                        }
                    ],
                },
            }
        ),
        b'{"run_id":"r","tool_call_id":"c2","response":{"query":"q","evidence_status":"supported","hits":[],'
        b'"retrieval_trace":' + deep + b"}}",
        b'{"run_id":"r","tool_call_id":"c3","response":{"query":"\\u0000\\ud835\\udd4f","evidence_status":"supported","hits":[]}}',
        b"\xff not json",
        b'{"run_id":"r","draft_id":"' + b"d" * 250_000 + b'","analysis":' + deep + b"}",
    ]
    done = run_cli(script, "pipe", stdin=b"\n".join(hostile) + b"\n")
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    assert len(out) == len(hostile)
    parsed = [codec.loads(line) for line in out]
    assert parsed[0]["evidence"][0]["document_id"].startswith("d#chunk-999")
    assert [p.get("dead_letter", {}).get("reason") for p in parsed[1:]] == [
        "SCHEMA_VIOLATION",
        None,
        "MALFORMED_JSON",
        "INVALID_ID",
    ]
    verified = run_cli(
        script,
        "verify",
        "--ledger",
        str(GOLDEN / "guard" / "ledger.jsonl"),
        stdin=b"\n".join(hostile) + b"\n",
    )
    assert verified.returncode == 0, verified.stderr
    verdicts = [codec.loads(line) for line in lines(verified.stdout)]
    assert len(verdicts) == len(hostile)
    assert all(v["verdict"] == "REJECT" for v in verdicts)
    assert verdicts[4]["violations"][0]["code"] in ("DRAFT_UNPARSABLE", "DRAFT_TOO_LARGE")
