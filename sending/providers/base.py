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
from datetime import timedelta


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
    # for mailboxes: the address the vendor really created, when it had to differ from the one asked for (a
    # collision resolved by the provider); empty when it is the address asked for
    email: str = ""


@dataclass(frozen=True)
class DnsRecord:
    """One DNS host record as a registrar's DNS stores it: `host` relative to the domain (`@` for the apex)."""

    host: str
    type: str
    address: str
    mx_pref: int | None = None
    ttl: int = 1800


class SendingProvider:
    name = "base"
    #: coarse readiness estimate shown in quotes
    ready_estimate = "24 to 48 hours"
    #: how long a removed mailbox is kept at the vendor before `mailbox_delete` (a mistaken removal can be undone)
    delete_grace = timedelta(days=30)

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

    def domain_dns_publish(self, *, ref: str, name: str, records: list[dict]) -> None:
        """Publish the service's own records for an active domain (`sending.dkim_keys.dns_records`: the DKIM
        key) where the provider writes the domain's DNS. Idempotent. The default publishes nothing: the records
        are listed in the operation result for the operator to publish."""

    # --- after delivery (optional: the default does nothing at the vendor) ------------------------------
    def mailbox_suspend(self, *, ref: str) -> None:
        """Upkeep could not be charged: stop the vendor-side mailbox (it sends and receives nothing). Idempotent."""

    def mailbox_resume(self, *, ref: str) -> None:
        """Upkeep was charged again after a suspension: start the vendor-side mailbox again. Idempotent."""

    def mailbox_delete(self, *, ref: str) -> None:
        """The capacity was removed and its grace period is over: delete the vendor-side mailbox. Idempotent (an
        item already gone is not an error)."""


class DnsRegistrar:
    """What a provider that hosts mailboxes on a registered domain needs from the domain's registrar: read and
    replace the domain's host records (a registrar whose API replaces the whole set, like Namecheap's setHosts,
    must be given every record to keep)."""

    def dns_hosts_get(self, *, name: str) -> list[DnsRecord]:
        raise NotImplementedError

    def dns_hosts_set(self, *, name: str, records: list[DnsRecord]) -> None:
        raise NotImplementedError


class RegistrarHostedProvider(SendingProvider):
    """A provider whose mailboxes live on domains that a registrar (`self.registrar`, a `DnsRegistrar`)
    registers and whose DNS it writes: availability, registration and read-back are the registrar's, and the
    service's DKIM key is written through it."""

    registrar: DnsRegistrar
    # The vendor's HTTP API as `vendor_request` maps it: its name in messages, the statuses besides 2xx handed
    # back to the caller, the error reasons that mean "try later" whatever the status, and the reasons that make a
    # 401/403 a refusal of the item itself (otherwise a 401/403 is an operator fix: consent, delegation, an API
    # not enabled). `vendor_error(response)` reads (reason, message) from the vendor's error body.
    vendor = "the vendor"
    vendor_passed: tuple[int, ...] = (404,)
    vendor_transient_reasons: frozenset[str] = frozenset()
    vendor_refusal_reasons: frozenset[str] = frozenset()
    _transport = None

    def vendor_error(self, response) -> tuple[str, str]:
        return "", response.text[:200]

    def vendor_request(self, method: str, url: str, *, what: str, timeout: float, headers: dict, json_body=None,
                       params=None, mutating: bool = False, answered: tuple[int, ...] = ()):
        """One call to the vendor's API through core.outbound's client (`timeout` is the whole call's deadline).
        Returns the response for 2xx, `vendor_passed` and the `answered` statuses (the callers decide); raises
        ProviderError / OutcomeUnknown as the provider contract says otherwise: not connected or "try later" (5xx,
        429, a transient reason) is retried, a mutating call sent without an answer or answered 5xx is
        OutcomeUnknown, anything else the vendor refused fails the item. `what` names the call in messages."""
        import httpx

        from core import outbound

        try:
            with outbound.client(transport=self._transport, timeout=timeout, allow_private=True) as c:
                response = c.request(method, url, json=json_body, params=params, headers=headers)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise ProviderError(f"{self.vendor} unreachable: {exc}", permanent=False) from exc
        except httpx.HTTPError as exc:  # sent, no answer
            if mutating:
                raise OutcomeUnknown(f"{method} {what}: {exc}") from exc
            raise ProviderError(f"{self.vendor} read failed: {exc}", permanent=False) from exc
        status = response.status_code
        if status < 300 or status in self.vendor_passed or status in answered:
            return response
        reason, message = self.vendor_error(response)
        if status >= 500 and mutating:
            raise OutcomeUnknown(f"{method} {what}: HTTP {status}")
        if status >= 500 or status == 429 or reason in self.vendor_transient_reasons:
            raise ProviderError(f"{self.vendor} HTTP {status}: {message}", permanent=False)
        if status in (401, 403) and reason not in self.vendor_refusal_reasons:
            raise ProviderError(f"{self.vendor} HTTP {status} ({reason}): {message}", permanent=False)
        raise ProviderError(f"{self.vendor} HTTP {status} ({reason}): {message}", permanent=True)

    def domains_available(self, names):
        return self.registrar.domains_available(names)

    def domain_register(self, *, name, client_ref):
        ext = self.registrar.domain_register(name=name, client_ref=client_ref)
        return External(ref=name, status=ext.status, detail=ext.detail) if ext.status != FAILED else ext

    def domain_lookup(self, *, name, client_ref):
        found = self.registrar.domain_lookup(name=name, client_ref=client_ref)
        return External(ref=name, status=found.status) if found else None

    def domain_dns_publish(self, *, ref, name, records):
        """Write the service's DKIM key record(s) through the registrar (other records, such as the DMARC policy
        written at set-up, stay)."""
        suffix = "." + name
        wanted = [DnsRecord(host=r["name"][:-len(suffix)], type=r["type"], address=r["value"])
                  for r in records if "._domainkey." in r["name"] and r["name"].endswith(suffix)]
        if not wanted:
            return
        existing = self.registrar.dns_hosts_get(name=name)
        if all(w in existing for w in wanted):
            return
        keep = [r for r in existing if r.host not in {w.host for w in wanted}]
        self.registrar.dns_hosts_set(name=name, records=keep + wanted)
