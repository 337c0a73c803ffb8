"""A search answer as one ``raw-hits`` record (SPEC 2), its bytes carried unchanged."""

from __future__ import annotations

from streams import codec


def raw_hits_record(run_id: str, tool_call_id: str, answer: bytes) -> bytes:
    """``{"run_id", "tool_call_id", "response": <answer>}`` with the answer's bytes spliced in verbatim.

    An answer that is JSON of any kind (an object or not) goes in unchanged, so postprocess judges
    exactly what the engine said: a non-object gets its FAILED entry (SCHEMA_VIOLATION). An answer
    that is not strict UTF-8 JSON could not be spliced without breaking the record, so it goes in as
    a JSON string (undecodable bytes as U+FFFD): the record still carries the ids, and the chain
    gives it its FAILED entry too. What the agent is told is always in the ledger.
    """
    try:
        codec.loads(answer)
    except codec.JSONDecodeError:
        answer = codec.dumps(answer.decode("utf-8", "replace"))
    return b"".join(
        (
            b'{"run_id":',
            codec.dumps(run_id),
            b',"tool_call_id":',
            codec.dumps(tool_call_id),
            b',"response":',
            answer,
            b"}",
        )
    )
