"""A receipt: a verdict and the ledger entries it rests on, checkable offline with trusted keys (SPEC 4.1).

``{"receipt": "evidence-chain/receipt/v1", "verdict": <as on the topic>, "entries": [<each entry the
snapshot lists, as stored, in snapshot order>], "public_keys": {<key_id>: <64 hex>}}``.

It verifies when the verdict's signature verifies under a trusted guard key and every entry's under a
trusted ledger key, every entry holds (:func:`streams.trust.integrity.check_entry`), and every snapshot
item equals what its entry's projection holds, and, for a draft the semantic review judged, its
``judgement`` holds (:mod:`streams.trust.judgement`). What the signatures do not cover is metadata, not
proof: ``event_id``, ``origin``, timestamps and the violations' ``message`` texts (an explanation
for people; ``code`` and ``path`` are signed). ``public_keys`` is a convenience for the reader: only
the trusted keys decide.

A receipt is untrusted input: :func:`receipt_failures` takes its bytes and answers every shape it may
not have (not JSON, not UTF-8, ``NaN``, a repeated name, nesting deeper than a verdict may, an unknown
field, a value of the wrong type) with a failure line, never an exception. The lines quote at most a
short ``repr`` of a string, a number or null from the receipt; whoever prints them escapes control
characters (:func:`streams.printable.printable`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, cast

from typing_extensions import TypedDict

from models.ledger import LEDGER_ENTRY_FIELDS, SIGNATURE_FIELDS, LedgerEntry
from models.semantic import JudgementEvent
from models.verdict import Verdict
from models.vocab import FALLBACK_LIMITATION
from streams import codec
from streams.codec import JSONObject
from streams.errors import UnknownVerdict
from streams.printable import printable
from streams.trust.integrity import EntryFault, check_entry
from streams.trust.judgement import judgement_failures
from streams.trust.keys import TrustedKeys, key_id_of, signer_for, trusted_for

RECEIPT_KIND = "evidence-chain/receipt/v1"


class Receipt(TypedDict):
    """A receipt as :func:`build_receipt` writes it (what a verifier reads is untrusted: any shape)."""

    receipt: str
    verdict: Verdict
    entries: list[LedgerEntry]
    public_keys: dict[str, str]
    """Key id → the public key's 64 hex digits, of each key the verdict and entries name."""
    judgement: NotRequired[JudgementEvent]
    """Only in a receipt of a draft the semantic review judged (SPEC 4.4)."""


SNAPSHOT_FIELDS: tuple[str, ...] = (
    "tool_call_id",
    "evidence_status",
    "relevance_level",
    "truncated",
    "projection_sha256",
    "evidence",
)
_FROM_PROJECTION = ("tool_call_id", "evidence_status", "relevance_level", "truncated", "evidence")
RECEIPT_FIELDS: tuple[str, ...] = tuple(Receipt.__annotations__)
"""``judgement`` only in a receipt of a draft the semantic review judged (SPEC 4.4)."""
MAX_RECEIPT_DEPTH = codec.MAX_DEPTH + 1
"""The receipt object around a verdict and entries, each at most SPEC's 64 levels deep."""
MAX_FAILURES_SHOWN = 50
"""Failure lines :func:`receipt_failures` returns before it sums up the rest in one line."""
_SHOWN_CHARS = 60


def receipt_keys(trusted_keys_file: str | None, signing_key_file: str | None) -> TrustedKeys | None:
    """The public keys a receipt may name: those of the trusted keys file and the signing key's public half
    (``EC_TRUSTED_KEYS_FILE``, ``EC_SIGNING_KEY_FILE``)."""
    trusted = trusted_for(trusted_keys_file)
    signer = signer_for(signing_key_file)
    if signer is None:
        return trusted
    # public_keys only lists keys for the reader's convenience: the role does not matter here
    mine = TrustedKeys.from_hex(ledger=[signer.public_hex])
    return mine if trusted is None else trusted.merged(mine)


def choose_verdict(verdicts: Sequence[Verdict], run_id: str, draft_id: str, attempt: int | None) -> Verdict:
    """The verdict a receipt is of: the one of ``attempt`` (default: the latest) among a draft's stored
    verdicts, owner first; of several for one attempt, the first: a draft is write-once per
    ``(run_id, draft_id, attempt)`` where people read it, so a later, different draft with that triple
    never replaces it. The caller orders them by what no writer of the topics controls
    (:func:`streams.audit.receipts.owner_rank`), never by their unsigned ``origin``.

    Raises:
        UnknownVerdict: no verdict of that draft, or none of that attempt (the message lists them).
    """
    if not verdicts:
        raise UnknownVerdict(
            f"run {printable(run_id)} has no stored verdict of draft {printable(draft_id)} in the audit store"
        )
    attempts = sorted({v["attempt"] for v in verdicts if isinstance(v.get("attempt"), int)})
    wanted = attempt if attempt is not None else max(attempts, default=None)
    chosen = [v for v in verdicts if v.get("attempt") == wanted]
    if not chosen:
        raise UnknownVerdict(
            f"draft {printable(draft_id)} of run {printable(run_id)} has no attempt {attempt}; "
            f"stored attempts: {', '.join(map(str, attempts)) or 'none'}"
        )
    return chosen[0]


def build_receipt(
    verdict: Verdict,
    entries: Mapping[str, LedgerEntry],
    keys: TrustedKeys | None,
    judgement: JudgementEvent | None = None,
) -> Receipt:
    """The receipt of ``verdict``, with ``entries`` (by tool call id, as stored) in snapshot order, and
    the semantic judge's ``judgement`` of the draft when it was judged (SPEC 4.4).

    ``public_keys`` lists each signing key the verdict and entries name that ``keys`` holds.

    Raises:
        KeyError: an entry the snapshot lists is missing (the receipt would not verify).
    """
    chosen: list[LedgerEntry] = []
    for item in verdict.get("evidence_snapshot") or []:
        tool_call_id = item["tool_call_id"]
        if tool_call_id not in entries:
            raise KeyError(tool_call_id)
        chosen.append(entries[tool_call_id])
    signature = verdict.get("signature")
    named: list[object] = [None if signature is None else signature.get("key_id")]
    named += [entry.get("key_id") for entry in chosen]
    public_keys: dict[str, str] = {}
    for key_id in named:
        if keys is not None and isinstance(key_id, str) and (hexed := keys.public_hex(key_id)) is not None:
            public_keys[key_id] = hexed
    receipt: Receipt = {
        "receipt": RECEIPT_KIND,
        "verdict": verdict,
        "entries": chosen,
        "public_keys": public_keys,
    }
    if judgement is not None:
        receipt["judgement"] = judgement
    return receipt


def _shown(value: Any) -> str:
    """A value of the receipt for a failure line: a short ``repr`` of a string, number, boolean or null,
    else its JSON kind (never a container's contents: one nested 1,000 deep has no ``repr``)."""
    if value is None or isinstance(value, bool | int | float | str):
        text = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else "(a huge integer)"
        return text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 1]}…"
    return "(an object)" if isinstance(value, Mapping) else "(an array)" if isinstance(value, list) else "(?)"


def _same_json(a: Any, b: Any) -> bool:
    """Whether two parsed values are the same JSON: key order ignored, ``true`` never equal to ``1``."""
    try:
        return codec.dumps_sorted(a) == codec.dumps_sorted(b)
    except codec.JSONEncodeError:  # nested too deep to write: not what a projection holds
        return False


_ENTRY_FIELDS = frozenset((*LEDGER_ENTRY_FIELDS, *SIGNATURE_FIELDS))


def _entry_failures(where: str, entry: Any, item: Any, run_id: Any, trusted: TrustedKeys) -> list[str]:
    if not isinstance(entry, Mapping):
        return [f"{where}: not an object"]
    out: list[str] = []
    unknown = sorted(set(entry) - _ENTRY_FIELDS)
    if unknown:
        out.append(f"{where}: unknown field {_shown(unknown[0])}: not a ledger entry as stored")
    # the one "does this entry hold?": the hash, then the signature (each field read and checked)
    held = check_entry(cast(LedgerEntry, entry), trusted)
    if held.fault is EntryFault.SIGNATURE:
        out.append(f"{where}: {held.detail}")
    if entry.get("run_id") != run_id:
        out.append(f"{where}: run_id {_shown(entry.get('run_id'))} is not the verdict's {_shown(run_id)}")
    if entry.get("status") != "READY":
        out.append(f"{where}: status {_shown(entry.get('status'))}, not READY")
    projection, sha = entry.get("projection"), entry.get("projection_sha256")
    if held.fault in (EntryFault.HASH, EntryFault.NO_PROJECTION) or not isinstance(projection, str):
        out.append(f"{where}: the projection does not hash to its projection_sha256")
        return out
    if not isinstance(item, Mapping):
        return [*out, f"{where}: its snapshot item is not an object"]
    if set(item) != set(SNAPSHOT_FIELDS):
        out.append(f"{where}: its snapshot item must have exactly the fields {', '.join(SNAPSHOT_FIELDS)}")
    if item.get("projection_sha256") != sha:
        out.append(f"{where}: the snapshot's projection_sha256 is not the entry's")
    try:
        shown = codec.loads(projection)
    except codec.JSONDecodeError:
        return [*out, f"{where}: the projection is not JSON"]
    if not isinstance(shown, Mapping):
        return [*out, f"{where}: the projection is not a JSON object"]
    for name in _FROM_PROJECTION:
        if name not in shown or not _same_json(item.get(name), shown[name]):
            out.append(f"{where}: the snapshot's {name} differs from the entry's projection")
    return out


def receipt_failures(data: bytes, trusted: TrustedKeys) -> list[str]:
    """Every reason the receipt file's bytes do not verify under ``trusted`` (empty: it verifies).

    Never raises on what the bytes hold: not JSON, a repeated name, nesting deeper than a receipt may
    — each is a failure line. At most :data:`MAX_FAILURES_SHOWN` lines, then one that counts the rest.
    """
    try:
        doc = codec.loads_unique(data)
    except codec.JSONDecodeError as exc:
        return [f"receipt: not strict UTF-8 JSON ({str(exc)[:120]})"]
    if codec.nested_deeper_than(data, doc, MAX_RECEIPT_DEPTH):
        return [f"receipt: nested more than {MAX_RECEIPT_DEPTH} levels deep; no receipt is"]
    out = verify_receipt(doc, trusted)
    if len(out) > MAX_FAILURES_SHOWN:
        out = [*out[:MAX_FAILURES_SHOWN], f"… and {len(out) - MAX_FAILURES_SHOWN:,} more failures"]
    return out


def verify_receipt(doc: Any, trusted: TrustedKeys) -> list[str]:
    """Every reason a parsed receipt does not verify under ``trusted`` (empty: it verifies). One line each.

    ``doc`` must be at most :data:`MAX_RECEIPT_DEPTH` levels deep (:func:`receipt_failures` checks).
    """
    if not isinstance(doc, Mapping):
        return ["the receipt is not a JSON object"]
    out: list[str] = []
    if doc.get("receipt") != RECEIPT_KIND:
        out.append(f"receipt: not {RECEIPT_KIND!r}")
    unknown = sorted(set(doc) - set(RECEIPT_FIELDS))
    if unknown:
        out.append(f"receipt: unknown field {_shown(unknown[0])} (a receipt has {', '.join(RECEIPT_FIELDS)})")
    verdict, entries = doc.get("verdict"), doc.get("entries")
    if not isinstance(verdict, Mapping):
        return [*out, "verdict: missing or not an object"]
    why = trusted.verify_verdict(cast(Verdict, verdict))  # unchecked: each field read and checked
    if why is not None:
        out.append(f"verdict: {why}")
    out += _verdict_shape(verdict)
    keys = doc.get("public_keys", {})
    if not isinstance(keys, Mapping):
        out.append("public_keys: not an object")
    else:
        for key_id, hexed in keys.items():
            try:
                matches = isinstance(hexed, str) and key_id_of(bytes.fromhex(hexed)) == key_id
            except ValueError:
                matches = False
            if not matches:
                out.append(f"public_keys[{_shown(key_id)}]: the key does not hash to its key_id")
    snapshot = verdict.get("evidence_snapshot")
    snapshot = snapshot if isinstance(snapshot, list) else []
    if not isinstance(entries, list):
        return [*out, "entries: missing or not a list"]
    if len(entries) != len(snapshot):
        out.append(f"entries: {len(entries)} entries for {len(snapshot)} snapshot items")
    for index, (entry, item) in enumerate(zip(entries, snapshot, strict=False)):
        tool_call_id = item.get("tool_call_id") if isinstance(item, Mapping) else None
        where = f"entries[{index}] ({_shown(tool_call_id)})"
        if isinstance(entry, Mapping) and entry.get("tool_call_id") != tool_call_id:
            out.append(
                f"{where}: the entry is for {_shown(entry.get('tool_call_id'))}, not the snapshot's call"
            )
        out += _entry_failures(where, entry, item, verdict.get("run_id"), trusted)
    if "judgement" in doc:
        out += judgement_failures(doc["judgement"], verdict, entries, trusted)
    return out


def _verdict_shape(verdict: JSONObject) -> list[str]:
    """What the verdict's own fields imply of each other (the unsigned ones included)."""
    out: list[str] = []
    listed = verdict.get("violations")
    violations: Sequence[Any] = listed if isinstance(listed, list) else []
    if listed is not None and not isinstance(listed, list):
        out.append("verdict: violations is not a list")
    count = verdict.get("violation_count")
    kind = verdict.get("verdict")
    if not isinstance(count, int) or isinstance(count, bool) or count < len(violations):
        out.append("verdict: violation_count is not a count of at least the listed violations")
    elif verdict.get("violations_truncated") is not (count > len(violations)):
        out.append("verdict: violations_truncated does not match violation_count")
    if (kind == "PASS") != (count == 0):
        out.append(f"verdict: {_shown(kind)} with violation_count {_shown(count)}")
    if kind not in ("PASS", "REJECT", "FALLBACK"):
        out.append(f"verdict: unknown verdict {_shown(kind)}")
    report = verdict.get("fallback_report")
    fixed = {"conclusion": None, "limitations": [FALLBACK_LIMITATION]}
    if not _same_json(report, fixed if kind == "FALLBACK" else None):
        out.append("verdict: fallback_report must be the fixed report exactly when FALLBACK, else null")
    return out
