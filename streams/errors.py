"""The exception tree of evidence-chain. ``retriable`` decides retry-and-hold versus dead letter.

::

    EvidenceChainError                 retriable=False
    ├── RejectedInput                  bad input: dead-lettered with a reason, never retried
    │   ├── OversizedInput             OVERSIZED
    │   ├── MalformedJson              MALFORMED_JSON
    │   ├── InvalidId                  INVALID_ID
    │   ├── SchemaViolation            SCHEMA_VIOLATION
    │   └── ProjectionBudgetExceeded   PROJECTION_BUDGET_EXCEEDED
    ├── MalformedAudit                 an audit record without SPEC 5's shape: the sink counts it, goes on
    ├── ConfigurationError             a setting or a file that cannot work; the CLI explains it
    └── InfrastructureError            retriable=True: hold the record, back off, try again
        ├── KafkaUnavailable           the broker cannot be reached or did not acknowledge
        └── RedisUnavailable           Redis cannot be reached or timed out

Third-party errors are translated once, at the boundary, with ``raise ... from exc``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from models.events import Rejection
from models.ids import is_valid_id
from models.vocab import DeadLetterReason


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
    """A field of the py-rag response is missing or has the wrong type."""

    reason = DeadLetterReason.SCHEMA_VIOLATION


class ProjectionBudgetExceeded(RejectedInput):
    """Even with no evidence the projection is larger than ``max_bytes``: it fails closed."""

    reason = DeadLetterReason.PROJECTION_BUDGET_EXCEEDED


class MalformedAudit(EvidenceChainError):
    """An audit record without the shape of SPEC 5; the sink logs it, counts it and goes on."""


class ConfigurationError(EvidenceChainError):
    """A setting, file or argument that cannot work; the message says what to change."""


class InfrastructureError(EvidenceChainError):
    """Kafka or Redis is unreachable: the record is held and retried, never dead-lettered."""

    retriable = True


class KafkaUnavailable(InfrastructureError):
    """The broker could not be reached or did not acknowledge a send."""


class RedisUnavailable(InfrastructureError):
    """Redis could not be reached or timed out."""


def rejection(
    reason: DeadLetterReason, error: str, run_id: Any = None, tool_call_id: Any = None
) -> Rejection:
    """The dead-letter core of a rejected record; the ids are given only when both are valid ids."""
    both_valid = is_valid_id(run_id) and is_valid_id(tool_call_id)
    return {
        "reason": reason,
        "error": error,
        "run_id": run_id if both_valid else None,
        "tool_call_id": tool_call_id if both_valid else None,
    }
