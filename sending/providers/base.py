"""The provider interface for buying sending capacity (domains and mailboxes).

A provider is a small class; the operation state machine (`sending.services.operation_advance`) calls it from
Celery tasks and stores every answer in the database, so each call may be repeated after a worker restart.
Every mutating call carries `client_ref`, a stable idempotency reference (`<operation_id>:<name>`): a provider
that supports client references must treat a repeat as the same order.

Contract of every method:
- return normalized dataclasses (`External`), never vendor payloads;
- raise `ProviderError(permanent=True)` when the vendor refused (that item fails; its price is refunded),
  `ProviderError(permanent=False)` when nothing was sent or the vendor said "try later" (retried),
  `OutcomeUnknown` when the request was sent and no answer came back (timeout after write). The operation then
  reports `operation_unknown_state` and, before trying again, reads the item back with `domain_lookup` /
  `mailbox_lookup`: nothing is re-executed blindly.
"""

from __future__ import annotations

from dataclasses import dataclass, field


class ProviderError(Exception):
    def __init__(self, message: str, *, permanent: bool):
        super().__init__(message)
        self.message = message
        self.permanent = permanent


class OutcomeUnknown(Exception):
    """The request may or may not have taken effect (e.g. a read timeout after it was sent)."""


PENDING, ACTIVE, FAILED = "pending", "active", "failed"


@dataclass
class External:
    """A provider-side item: its reference and state (`pending`, `active` or `failed`)."""

    ref: str
    status: str = PENDING
    detail: str = ""
    # for mailboxes: how to send and receive as it (host, port, security, username, secret)
    connection: dict = field(default_factory=dict)


class SendingProvider:
    name = "base"
    #: coarse readiness estimate shown in quotes
    ready_estimate = "24 to 48 hours"

    def domains_available(self, names: list[str]) -> list[str]:
        """Which of `names` can be registered now (order kept). ProviderError when the check itself fails."""
        raise NotImplementedError

    def domain_register(self, *, name: str, client_ref: str) -> External:
        raise NotImplementedError

    def domain_lookup(self, *, name: str, client_ref: str) -> External | None:
        """Read back a domain after an unknown outcome: the item if it exists in our account, else None."""
        raise NotImplementedError

    def domain_status(self, *, ref: str) -> External:
        raise NotImplementedError

    def mailbox_create(self, *, domain_ref: str, email: str, first_name: str, last_name: str,
                       client_ref: str) -> External:
        raise NotImplementedError

    def mailbox_lookup(self, *, email: str, client_ref: str) -> External | None:
        raise NotImplementedError

    def mailbox_status(self, *, ref: str) -> External:
        raise NotImplementedError
