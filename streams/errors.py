"""The exception tree of evidence-chain. ``retriable`` decides hold-and-retry versus not.

::

    EvidenceChainError                 retriable=False
    ├── RejectedInput                  bad input: dead-lettered with a reason, never retried
    │   ├── OversizedInput             OVERSIZED
    │   ├── MalformedJson              MALFORMED_JSON
    │   ├── InvalidId                  INVALID_ID
    │   ├── SchemaViolation            SCHEMA_VIOLATION
    │   └── ProjectionBudgetExceeded   PROJECTION_BUDGET_EXCEEDED
    ├── MalformedAudit                 an audit record the sink cannot store: counted, skipped
    │   └── Unstorable                 a value no audit database can hold (an integer beyond 64 bits)
    ├── ConfigurationError             a setting, file or argument that cannot work; the CLI explains it
    │   └── UnknownVerdict             no stored verdict of that run, draft or attempt (serve: 404)
    ├── Refused                        a server refused in a way retrying cannot fix: the worker exits
    │   ├── KafkaRefused               e.g. not authorized, message too large for the topic
    │   └── RedisRefused               e.g. NOPERM, a script error
    ├── HoldExpired                    an outage outlasted EC_MAX_HOLD_SECONDS: the worker exits
    ├── HoldInterrupted                asked to stop while holding an operation; nothing was done
    ├── RecordsSkipped                 records were never delivered to an agent: the worker exits
    ├── LedgerIntegrityError           a stored entry does not hold: it is not the asked key's, its
    │                                  projection does not hash to its projection_sha256, or (trusted
    │                                  keys) no trusted ledger key signed it (client, gateway 502
    │                                  LEDGER_INTEGRITY)
    ├── VerdictIntegrityError          only verdicts that do not hold came for a draft: (trusted keys)
    │                                  none signed by a trusted guard key (client, gateway 502
    │                                  VERDICT_INTEGRITY)
    ├── ReportIntegrityError           only reports that do not hold came for a verdict (client)
    ├── RequestRefused                 an HTTP request refused before any route (streams.web): status
    ├── SearchRefused                  py-rag answered 4xx, or more than the raw-hits size cap: not retried
    ├── SearchUnavailable              retriable=True: py-rag unreachable, timed out or 5xx after the
    │                                  retries; nothing was produced
    ├── JudgeRefused                   the semantic judge refused for good (a redirect, 401, 403, 404 or
    │                                  another 4xx but those below: a URL, a token, a model name): the
    │                                  worker exits, nothing is published
    ├── JudgeDeclined                  the semantic judge cannot judge this one case (400, 413, 422: over
    │                                  the model's context, too large a body, an input it rejects): the
    │                                  draft's judgement is NOT_ASKED, recorded like an answer
    ├── JudgeUnavailable               retriable=True: the semantic judge is down, slow, rate-limited
    │                                  (429, Retry-After honoured), failing (5xx) or answered something
    │                                  that is not a judgement: the draft is held and asked again
    ├── ReplyTimeout                   retriable=True: no reply in time; nothing left waiting
    │   ├── LookupTimeout              no ledger entry for a lookup (client, gateway 504)
    │   ├── CheckTimeout               no verdict for a draft (client, gateway 504)
    │   └── ReportTimeout              no report on ``reports`` for a verdict that publishes one (client)
    └── InfrastructureError            retriable=True: hold the batch, back off, try again
        ├── KafkaUnavailable           the broker cannot be reached or did not acknowledge
        ├── RedisUnavailable           Redis cannot be reached, is loading, read-only, out of
        │                              memory, redirecting, or did not make a write durable
        └── AuditStoreBusy             the audit database is locked, unreachable or failing;
                                       nothing of the batch was stored

Third-party errors are translated once, at their edge (``streams.kafka``, ``streams.ledger.redis``,
``streams.audit.sqlite``, ``streams.audit.postgres``), with ``raise ... from exc``. A batch-level error
that is not retriable makes the worker exit non-zero without committing the batch (crash-only); its
supervisor starts it again and the batch is re-read.
"""

from __future__ import annotations

from typing import ClassVar

from models.events import Rejection
from models.vocab import DeadLetterReason
from streams.envelope import rejection


class EvidenceChainError(Exception):
    """Root of every error this project raises on purpose."""

    retriable: ClassVar[bool] = False


class RejectedInput(EvidenceChainError):
    """A record that cannot be processed; it becomes one dead letter with :attr:`reason`."""

    reason: ClassVar[DeadLetterReason] = DeadLetterReason.INTERNAL_ERROR

    def __init__(self, error: str, *, run_id: str | None = None, tool_call_id: str | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.run_id = run_id
        self.tool_call_id = tool_call_id

    def as_rejection(self) -> Rejection:
        """The dead-letter core of this rejection."""
        return rejection(self.reason, self.error, self.run_id, self.tool_call_id)


class OversizedInput(RejectedInput):
    """The raw value is larger than ``max_message_bytes``."""

    reason = DeadLetterReason.OVERSIZED


class MalformedJson(RejectedInput):
    """The value is not strict JSON, or its top level is not an object."""

    reason = DeadLetterReason.MALFORMED_JSON


class InvalidId(RejectedInput):
    """``run_id`` or ``tool_call_id`` is not 1-128 characters of ``[A-Za-z0-9._-]``."""

    reason = DeadLetterReason.INVALID_ID


class SchemaViolation(RejectedInput):
    """A field is missing or has the wrong type, or a value is nested more than 64 levels deep."""

    reason = DeadLetterReason.SCHEMA_VIOLATION


class ProjectionBudgetExceeded(RejectedInput):
    """Even with no evidence the projection is larger than ``max_bytes``: it fails closed."""

    reason = DeadLetterReason.PROJECTION_BUDGET_EXCEEDED


class MalformedAudit(EvidenceChainError):
    """An audit record the sink cannot store; it logs it, counts it and goes on."""


class Unstorable(MalformedAudit):
    """One record holds a value the audit databases cannot (an integer beyond 64 bits); it is skipped."""


class ConfigurationError(EvidenceChainError):
    """A setting, file or argument that cannot work; the message says what to change."""


class UnknownVerdict(ConfigurationError):
    """The audit store holds no verdict of the run, draft or attempt asked for (a receipt's)."""


class Refused(EvidenceChainError):
    """A server refused a request in a way that retrying cannot fix; the message says what to change."""


class KafkaRefused(Refused):
    """The broker refused a request for good (authorization, a record too large for the topic, ...)."""


class RedisRefused(Refused):
    """Redis refused a command for good (NOPERM, wrong password, an error in the write-once script)."""


class HoldExpired(EvidenceChainError):
    """An outage lasted longer than ``EC_MAX_HOLD_SECONDS``; the worker exits instead of idling."""


class HoldInterrupted(EvidenceChainError):
    """The caller asked to stop while an operation was being held; nothing was done."""


class RecordsSkipped(EvidenceChainError):
    """Records the broker holds never reached an agent (dropped on the way): exit and read them again."""


class LedgerIntegrityError(EvidenceChainError):
    """A stored entry that does not hold (its key, its hash, then its signature under trusted ledger
    keys): never shown."""


class VerdictIntegrityError(EvidenceChainError):
    """Verdicts came for a draft and none holds (trusted keys: none signed by a trusted guard key)."""


class ReportIntegrityError(EvidenceChainError):
    """Reports came for a verdict and none holds (trusted keys: none signed by a trusted guard key)."""


class RequestRefused(EvidenceChainError):
    """An HTTP request the servers refuse at their edge (:mod:`streams.web`): ``status`` says how."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class SearchRefused(EvidenceChainError):
    """py-rag refused the search (4xx) or answered more than a raw-hits record may hold; nothing produced."""


class SearchUnavailable(EvidenceChainError):
    """py-rag could not be reached, timed out or kept failing (5xx); nothing produced, a retry may work."""

    retriable = True


class JudgeRefused(Refused):
    """The semantic judge refused a call in a way that asking again cannot fix (a token, a model name)."""


class JudgeDeclined(EvidenceChainError):
    """The semantic judge answered that it cannot judge this case (400, 413, 422): the prompt is over the
    model's context, the body over a proxy's limit, or the input is one it rejects. Asking again gets the
    same answer and the next draft may be judged, so it is neither held nor the worker's end: the draft's
    judgement is ``NOT_ASKED`` (SPEC 4.4), recorded under ``(run_id, digest)`` like an answer."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class JudgeUnavailable(EvidenceChainError):
    """The semantic judge gave no usable answer (down, timed out, 429, 5xx, not a judgement): hold the
    draft and ask again, never pass it and never dead-letter it for the judge's fault."""

    retriable = True

    def __init__(self, message: str, *, retry_after_seconds: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds
        """The judge's own Retry-After, honoured by :func:`streams.retry.hold` (None: the backoff's)."""


class ReplyTimeout(EvidenceChainError):
    """No reply arrived in time; the request left nothing behind and sending it again is safe."""

    retriable = True


class LookupTimeout(ReplyTimeout):
    """No ledger entry for a lookup within its timeout."""


class CheckTimeout(ReplyTimeout):
    """No verdict for a draft within its timeout."""


class ReportTimeout(ReplyTimeout):
    """The report a PASS or FALLBACK verdict publishes did not appear on ``reports`` within the timeout."""


class InfrastructureError(EvidenceChainError):
    """Kafka, Redis or the audit database is unavailable: hold the batch and retry, never dead-letter."""

    retriable = True


class KafkaUnavailable(InfrastructureError):
    """The broker could not be reached or did not acknowledge a send."""


class RedisUnavailable(InfrastructureError):
    """Redis could not be reached, timed out, or cannot take writes right now."""


class AuditStoreBusy(InfrastructureError):
    """The audit database is busy, unreachable or failing; nothing of the batch was stored: retry."""
