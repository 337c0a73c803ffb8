"""``pipe``'s input lines in bounded memory (issue 23, item 4): how lines are cut, and the ids of a
cut line read from its first bytes agree with what the postprocess station finds by parsing it."""

from __future__ import annotations

import io
from typing import Any

import pytest

from models.ids import is_valid_id
from models.vocab import Station
from streams import codec
from streams.messages import Record
from streams.offline.lines import DRAIN_CHUNK_BYTES, Line, read_bounded_lines, read_lines, top_level_strings
from streams.offline.pipe import pipe_bounded_line, pipe_keep_bytes, pipe_line
from streams.pipeline import Outcome, StationRules, run_station
from streams.settings import Settings
from tests.golden import GOLDEN

NAMES = ("run_id", "tool_call_id")


class Chunked(io.RawIOBase):
    """A pipe that hands out at most ``size`` bytes per read, as a real one may."""

    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size, self.at = data, size, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        piece = self.data[self.at : self.at + min(self.size, len(buffer))]
        buffer[: len(piece)] = piece
        self.at += len(piece)
        return len(piece)


def bounded(data: bytes, keep: int, chunk: int = 7) -> list[Line]:
    return list(read_bounded_lines(io.BufferedReader(Chunked(data, chunk), buffer_size=16), keep))


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"a\nbb\r\nccc",
        b"\n\r\n\n",
        b"12345\n123456\r\n1234567\n12345678\r\n" + b"9" * 40 + b"\r\n" + b"x" * 40,
        b"123456\r",
        b"12345\r\r\n1234\r\r\n",
        b"x" * 100 + b"\r",
    ],
)
@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_bounded_lines_split_as_read_lines_does_and_keep_at_most_keep_bytes(data: bytes, chunk: int) -> None:
    keep = 6
    got = bounded(data, keep, chunk)
    whole = list(read_lines(io.BytesIO(data)))
    assert [line.length for line in got] == [len(line) for line in whole]
    for line, expected in zip(got, whole, strict=True):
        assert len(line.value) <= keep
        if len(expected) <= keep:
            assert not line.cut and line.value == expected
        else:
            assert line.cut and expected.startswith(line.value)


def test_a_line_far_longer_than_the_drain_chunk_is_counted_not_kept() -> None:
    long = b"{" + b"x" * (3 * DRAIN_CHUNK_BYTES + 5) + b"\r\n"
    got = bounded(long + b"next\n", keep=10, chunk=DRAIN_CHUNK_BYTES // 3)
    assert [(len(line.value), line.length) for line in got] == [(10, len(long) - 2), (4, 4)]


def golden_lines() -> list[bytes]:
    return [
        line
        for name in ("pipe/input.jsonl", "project/input.jsonl")
        for line in read_lines(io.BytesIO((GOLDEN / name).read_bytes()))
    ]


def id_pair(members: dict[str, Any] | None) -> tuple[str, str] | None:
    """The ids a dead letter would carry: both, when both are valid."""
    members = members or {}
    run_id, tool_call_id = members.get("run_id"), members.get("tool_call_id")
    return (run_id, tool_call_id) if is_valid_id(run_id) and is_valid_id(tool_call_id) else None


def parsed(line: bytes) -> dict[str, Any] | None:
    try:
        doc = codec.loads(line)
    except codec.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


@pytest.mark.parametrize("line", golden_lines())
def test_ids_from_the_first_bytes_agree_with_a_full_parse(line: bytes) -> None:
    doc = parsed(line)
    if doc is not None:
        assert id_pair(top_level_strings(line, NAMES)) == id_pair(doc)
        for cut in range(0, len(line), max(1, len(line) // 40)):
            found = top_level_strings(line[:cut], NAMES)
            assert found is not None  # a prefix of an object is never taken for something else
            assert id_pair(found) in (None, id_pair(doc))  # it shows some of the ids, never others


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b'{"run_id":"r","tool_call_id":"c"}', {"run_id": "r", "tool_call_id": "c"}),
        (b'{"response":{"run_id":"x","a":["]}"]},"run_id":"r"', {"run_id": "r"}),
        (b' { "run_id" : "r\\u0031" , "tool_call_id" : 7 }', {"run_id": "r1", "tool_call_id": None}),
        (b'{"run_id":"a","run_id":"b","tool_call_id":"c"}', {"run_id": "b", "tool_call_id": "c"}),
        (b'{"run_id":"' + b"r" * 2000 + b'","tool_call_id":"c"}', {"run_id": None, "tool_call_id": "c"}),
        (b"{}", {}),
        (b'{"run_id":"r"', {"run_id": "r"}),
        (b"[1]", None),
        (b'{"run_id":"r",}', None),
        (b'{"a":[}', None),
        (b'{"a":tru,"run_id":"r"}', None),
        (b'{"a":1} trailing', None),
        (b'{"run_id":"\\x"}', None),
        (b"\xff\xfe", None),
    ],
)
def test_top_level_strings(text: bytes, expected: dict[str, str | None] | None) -> None:
    assert top_level_strings(text, NAMES) == expected


def station_line(line: bytes, settings: Settings) -> bytes:
    return pipe_line(line, StationRules.from_settings(settings), source="raw-hits", emit="projection")


def pipe_of(line: Line, settings: Settings, source: str = "raw-hits") -> bytes:
    """``pipe``'s line for a line read with the cap of ``settings``, under their rules."""
    rules = StationRules.from_settings(settings)
    return pipe_bounded_line(line, settings, rules, source=source, emit="projection")


def raw(size: int, *, ids_first: bool = True, valid: bool = True) -> bytes:
    """A raw-hits record of exactly ``size`` bytes (its ids first or last), or one broken at its end."""
    ids = {"run_id": "run-1", "tool_call_id": "call-1"}
    body = {"query": "q", "evidence_status": "supported", "hits": [], "retrieval_trace": ""}
    doc = {**ids, "response": body} if ids_first else {"response": body, **ids}
    text = codec.dumps(doc)
    text = text.replace(b'"retrieval_trace":""', b'"retrieval_trace":"' + b"t" * (size - len(text)) + b'"')
    assert len(text) == size
    return text if valid else text[:-1] + b"]"


@pytest.mark.parametrize("factor", [1, 1.5, 2])
@pytest.mark.parametrize("ids_first", [True, False])
@pytest.mark.parametrize("valid", [True, False])
def test_a_line_up_to_twice_the_cap_gets_the_stations_own_answer(
    factor: float, ids_first: bool, valid: bool
) -> None:
    settings = Settings.model_validate({"input": {"max_message_bytes": 40_000}})
    keep = pipe_keep_bytes(settings)
    assert keep == 80_000
    line = raw(int(keep / 2 * factor) + 1 if factor < 2 else keep, ids_first=ids_first, valid=valid)
    (kept,) = read_bounded_lines(io.BytesIO(line + b"\n"), keep)
    assert not kept.cut
    assert pipe_of(kept, settings) == station_line(
        line, settings
    )


@pytest.mark.parametrize("ids_first", [True, False])
def test_a_longer_line_is_oversized_with_the_ids_its_first_bytes_hold(ids_first: bool) -> None:
    settings = Settings.model_validate({"input": {"max_message_bytes": 40_000}})
    line = raw(81_000, ids_first=ids_first)  # its ids last: past the 80,000 bytes kept
    (cut,) = read_bounded_lines(io.BytesIO(line), pipe_keep_bytes(settings))
    assert cut.cut
    letter = codec.loads(pipe_of(cut, settings))
    same_words = codec.loads(station_line(line, settings))  # the station's words, ids when it found them
    if ids_first:
        assert letter == same_words
    else:  # the ids are past the bytes kept: none are claimed
        assert letter == {"dead_letter": {**same_words["dead_letter"], "run_id": None, "tool_call_id": None}}


def test_the_keep_bound_has_a_floor_for_tiny_caps() -> None:
    settings = Settings.model_validate({"input": {"max_message_bytes": 10}})
    assert pipe_keep_bytes(settings) == 64 * 1024
    line = raw(300)
    step = run_station(Station.POSTPROCESS, Record.offline(line), StationRules.from_settings(settings))
    assert isinstance(step, Outcome) and step.rejection is not None
    (kept,) = read_bounded_lines(io.BytesIO(line), pipe_keep_bytes(settings))
    out = codec.loads(pipe_of(kept, settings))
    assert out["dead_letter"]["reason"] == "OVERSIZED" and out["dead_letter"]["run_id"] == "run-1"


def test_a_lookup_as_large_as_the_topics_allow_is_kept_whole() -> None:
    settings = Settings()
    assert pipe_keep_bytes(settings, "lookup") == settings.topic_max_message_bytes
    assert pipe_keep_bytes(settings, "lookup") > pipe_keep_bytes(settings)


def test_a_cut_lookup_is_oversized_with_its_ids() -> None:
    settings = Settings()
    keep = pipe_keep_bytes(settings, "lookup")
    line = b'{"run_id":"run-1","toolCallId":"call-1","query":"' + b"q" * keep + b'"}'
    (cut,) = read_bounded_lines(io.BytesIO(line), keep)
    out = codec.loads(pipe_of(cut, settings, "lookup"))
    assert out["dead_letter"]["reason"] == "OVERSIZED"
    assert (out["dead_letter"]["run_id"], out["dead_letter"]["tool_call_id"]) == ("run-1", "call-1")
    assert str(len(line)) in out["dead_letter"]["error"]
