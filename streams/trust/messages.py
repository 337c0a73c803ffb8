"""The bytes a signature covers (SPEC 3.7 for ledger entries, 4.1 for verdicts, 4.3 for reports, 4.4 for
the semantic review's hand-overs and judgements). Pure.

Each message is a run of netstrings, ``<byte length in decimal>:<UTF-8 bytes>,``, so no field can
run into the next: ``24:evidence-chain/ledger/v1,2:r1,2:c1,5:READY,…``. A field that is absent or
null is the empty string (``0:,``).

The signed fields are strings or null, ``attempt`` and the counts integers (SPEC 3.7). A value of
another type has no message — :class:`FieldTypeError` — so it never verifies: ``"attempt": "1"`` is
not ``1``, ``true`` is not an integer, and ``["r1"]`` is not the run id ``r1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from models.ledger import LedgerEntry
from models.semantic import JudgeCase, JudgementEvent, SemanticReviewEvent
from models.verdict import ReportEvent, Verdict
from streams import codec
from streams.hashing import sha256_hex

LEDGER_CONTEXT = "evidence-chain/ledger/v1"
VERDICT_CONTEXT = "evidence-chain/verdict/v1"
REPORT_CONTEXT = "evidence-chain/report/v1"
JUDGEMENT_CONTEXT = "evidence-chain/judgement/v1"
HANDOVER_CONTEXT = "evidence-chain/handover/v1"
"""A hand-over to the semantic review (SPEC 4.4): what the guard passed on to be judged. Its own first
field, so a hand-over's signature never verifies as a verdict's: a PASS the review may still reject is
not a verdict."""

ENTRY_SIGNED_FIELDS: tuple[str, ...] = (
    "run_id",
    "tool_call_id",
    "status",
    "projection_sha256",
    "evidence_status",
    "failure_reason",
)
"""The entry's fields the signature covers, in message order; the projection is covered by its hash."""


class FieldTypeError(ValueError):
    """A signed field holds a value of a type it may not have: there is no message, nothing verifies."""


def _kind(value: Any) -> str:
    """The JSON name of a value's type, for a message (never the value itself)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _string(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise FieldTypeError(f"{name} must be a string or null, not {_kind(value)}")


def _strings(source: Mapping[str, Any], *names: str, within: str = "") -> list[str | None]:
    """The signed string fields ``names`` of ``source``, in that order (``within``: the path of
    ``source`` in the event, for a message).

    Raises:
        FieldTypeError: one of them is not a string or null.
    """
    return [_string(within + name, source.get(name)) for name in names]


def _integer(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise FieldTypeError(f"{name} must be an integer, not {_kind(value)}")


def _list(name: str, value: Any) -> list[Any]:
    """A signed list: absent or null counts as empty; anything but an array has no message."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise FieldTypeError(f"{name} must be an array, not {_kind(value)}")


def netstrings(fields: Iterable[str | int | None]) -> bytes:
    """Each field as a netstring, concatenated: a string as its UTF-8 bytes, an integer in decimal,
    None as the empty string.

    Raises:
        FieldTypeError: a field of another type (a boolean included), a string that is not Unicode
            text (a lone surrogate) or an integer too long to write.
    """
    out = bytearray()
    for field in fields:
        if field is None:
            data = b""
        elif isinstance(field, str):
            try:
                data = field.encode("utf-8")
            except UnicodeEncodeError:
                raise FieldTypeError("a signed field holds a lone surrogate: not Unicode text") from None
        elif isinstance(field, int) and not isinstance(field, bool):
            try:
                data = b"%d" % field
            except ValueError:  # over Python's 4,300 digits
                raise FieldTypeError("a signed integer is too long to write") from None
        else:
            raise FieldTypeError(f"a signed field must be a string, an integer or null, not {_kind(field)}")
        out += b"%d:%s," % (len(data), data)
    return bytes(out)


def entry_message(entry: LedgerEntry) -> bytes:
    """What a ledger entry's signature covers, from its stored fields (SPEC 3.7).

    Raises:
        FieldTypeError: a signed field is not a string or null.
    """
    return netstrings((LEDGER_CONTEXT, *_strings(entry, *ENTRY_SIGNED_FIELDS)))


def verdict_message(verdict: Verdict) -> bytes:
    """What a verdict's signature covers (SPEC 4.1).

    Missing or null lists count as empty (the message is the same: ``0:,``).

    Raises:
        FieldTypeError: a signed field of the wrong type (``attempt`` a string, an item not an object...).
    """
    return netstrings((VERDICT_CONTEXT, *_verdict_fields(verdict)))


def _verdict_fields(verdict: Verdict) -> list[str | int | None]:
    """A verdict's signed fields after the message's first (SPEC 4.1), in message order.

    Raises:
        FieldTypeError: a signed field of the wrong type.
    """
    snapshot = _list("evidence_snapshot", verdict.get("evidence_snapshot"))
    violations = _list("violations", verdict.get("violations"))
    fields: list[str | int | None] = [
        *_strings(verdict, "run_id", "draft_id", "draft_sha256"),
        _integer("attempt", verdict.get("attempt")),
        _string("verdict", verdict.get("verdict")),
        _integer("violation_count", verdict.get("violation_count")),
        len(snapshot),
    ]
    fields += _item_strings("evidence_snapshot", snapshot, ("tool_call_id", "projection_sha256"))
    fields.append(len(violations))
    fields += _item_strings("violations", violations, ("code", "path"))
    return fields


def _item_strings(name: str, items: list[Any], keys: tuple[str, ...]) -> list[str | None]:
    """The signed string fields ``keys`` of each item of the list ``name``, item by item.

    Raises:
        FieldTypeError: an item is not an object, or one of those fields is not a string or null.
    """
    out: list[str | None] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise FieldTypeError(f"{name}[{index}] must be an object, not {_kind(item)}")
        out += _strings(item, *keys, within=f"{name}[{index}].")
    return out


def _json_sha256(value: Any) -> str:
    """Lowercase hex SHA-256 of ``value`` as compact JSON in its own key order (how an event writes it);
    the empty string for a value JSON cannot hold (never one a station built: a message that will not
    verify)."""
    try:
        return sha256_hex(codec.dumps(value))
    except codec.JSONEncodeError:
        return ""


def handover_message(event: SemanticReviewEvent) -> bytes:
    """What a ``semantic-review`` hand-over's signature covers (SPEC 4.4): the mode, what the guard's claim
    on the triple said, the ids the judgement will name, the verdict's ``event_id`` and every field its
    own signature would cover, the SHA-256 of the draft's reviewed fields (compact JSON, as a report
    hashes its report), and each projection's tool call and SHA-256 — everything the semantic station
    acts on, so it signs nothing the guard did not hand it.

    Raises:
        FieldTypeError: a signed field of the wrong type (``verdict`` not an object included).
    """
    verdict = event.get("verdict")
    if not isinstance(verdict, Mapping):
        raise FieldTypeError(f"verdict must be an object, not {_kind(verdict)}")
    projections = _list("projections", event.get("projections"))
    fields: list[str | int | None] = [
        HANDOVER_CONTEXT,
        *_strings(event, "mode", "report_claim", "run_id", "draft_id"),
        _integer("attempt", event.get("attempt")),
        _string("verdict.event_id", verdict.get("event_id")),
        *_verdict_fields(verdict),  # read field by field
        _json_sha256(event.get("draft")),
        len(projections),
    ]
    for index, item in enumerate(projections):
        if not isinstance(item, Mapping):
            raise FieldTypeError(f"projections[{index}] must be an object, not {_kind(item)}")
        text = _string(f"projections[{index}].projection", item.get("projection"))
        try:
            hashed = None if text is None else sha256_hex(text.encode("utf-8"))
        except UnicodeEncodeError:
            raise FieldTypeError(f"projections[{index}].projection is not Unicode text") from None
        fields += (_string(f"projections[{index}].tool_call_id", item.get("tool_call_id")), hashed)
    return netstrings(fields)


def report_message(event: ReportEvent) -> bytes:
    """What a ``reports`` event's signature covers (SPEC 4.3): its ids, then the SHA-256 of ``report``
    as compact JSON in its own key order (how the event writes it), so the report's every byte counts.

    A report JSON cannot hold (never one the guard built) hashes as the empty string: no error, and a
    message that will not verify.

    Raises:
        FieldTypeError: a signed id of the wrong type (``attempt`` not an integer, an id not a string).
    """
    digest = _json_sha256(event.get("report"))
    return netstrings(
        (
            REPORT_CONTEXT,
            *_strings(event, "run_id", "draft_id"),
            _integer("attempt", event.get("attempt")),
            *_strings(event, "verdict", "verdict_event_id", "draft_sha256"),
            digest,
        )
    )


def judgement_message(event: JudgementEvent) -> bytes:
    """What a ``judgements`` event's signature covers (SPEC 4.4): whose draft and verdict, the mode and
    status, the digest of what was asked (the model and the case: a verifier recomputes it from the
    event), the model, the prompt version, the SHA-256 of the raw answer (empty when none), then each
    claim's path, label, reason and the refs it relied on.

    Raises:
        FieldTypeError: a signed field of the wrong type.
    """
    answer = _string("answer", event.get("answer"))
    claims = _list("claims", event.get("claims"))
    fields: list[str | int | None] = [
        JUDGEMENT_CONTEXT,
        *_strings(event, "run_id", "draft_id"),
        _integer("attempt", event.get("attempt")),
        *_strings(
            event, "draft_sha256", "verdict_event_id", "mode", "status", "digest", "model", "prompt_version"
        ),
        "" if answer is None else sha256_hex(answer.encode("utf-8", "surrogatepass")),
        len(claims),
    ]
    for index, claim in enumerate(claims):
        if not isinstance(claim, Mapping):
            raise FieldTypeError(f"claims[{index}] must be an object, not {_kind(claim)}")
        refs = _list(f"claims[{index}].evidence", claim.get("evidence"))
        fields += (*_strings(claim, "path", "label", "reason", within=f"claims[{index}]."), len(refs))
        fields += (_string(f"claims[{index}].evidence[{i}]", ref) for i, ref in enumerate(refs))
    return netstrings(fields)


def judgement_digest(model: str, case: JudgeCase) -> str:
    """Lowercase hex SHA-256 of the compact JSON of ``{"model", **case}`` (keys in that order): what a
    semantic judge was asked, of whom (SPEC 4.4). The station keys its records by it; a receipt's
    verifier recomputes it from the judgement's own ``model`` and ``case``, so the signature, which
    covers the digest, covers every word the judge was shown.

    Raises:
        JSONEncodeError: ``case`` holds what JSON cannot (never one the station built).
    """
    return sha256_hex(codec.dumps({"model": model, **case}))
