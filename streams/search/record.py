"""A search answer as one ``raw-hits`` record (SPEC 2), its bytes carried unchanged."""

from __future__ import annotations

from streams import codec
from streams.errors import SearchRefused


def raw_hits_record(run_id: str, tool_call_id: str, answer: bytes, *, max_bytes: int | None = None) -> bytes:
    """``{"run_id", "tool_call_id", "response": <answer>}`` with the answer's bytes spliced in verbatim.

    Which answers end as what:

    - JSON of any kind (an object or not) goes in unchanged, so postprocess judges exactly what the
      engine said: a non-object gets its FAILED entry (SCHEMA_VIOLATION).
    - An answer that is not strict UTF-8 JSON could not be spliced without breaking the record, so it
      goes in as a JSON string (undecodable bytes as U+FFFD): the record still carries the ids, and the
      chain gives it its FAILED entry too. What the agent is told is always in the ledger.
    - A record larger than ``max_bytes`` (the raw-hits cap, ``EC_INPUT__MAX_MESSAGE_BYTES``) is not
      built: escaping a non-JSON answer can make it up to six times its size (a control byte becomes
      ``\\u0000``), and a JSON answer near the cap grows by the ids. Such a record would be refused on
      its way in (by the producer or the adapt station), so it is refused here, as the py-rag adapter
      refuses an answer over the cap: nothing is produced and the search fails.

    Raises:
        SearchRefused: the record would be larger than ``max_bytes``.
    """
    try:
        codec.loads(answer)
    except codec.JSONDecodeError:
        answer = codec.dumps(answer.decode("utf-8", "replace"))
    record = b"".join(
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
    if max_bytes is not None and len(record) > max_bytes:
        raise SearchRefused(
            f"py-rag's answer makes a raw-hits record of {len(record)} bytes, over the cap of {max_bytes} "
            "(EC_INPUT__MAX_MESSAGE_BYTES; an answer that is not JSON is carried escaped, up to six times "
            "its size): nothing was ledgered; ask for fewer hits, fix py-rag's answer or raise the cap"
        )
    return record
