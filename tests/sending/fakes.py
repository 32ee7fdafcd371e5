"""A scripted provider for state-machine tests: behaviour per name is set on the class before a test runs."""

from sending.providers.base import (
    ACTIVE,
    FAILED,
    PENDING,
    External,
    OutcomeUnknown,
    ProviderError,
    SendingProvider,
)


class ScriptedProvider(SendingProvider):
    name = "scripted"
    ready_estimate = "scripted"
    # name/email -> list of outcomes consumed per call: "ok", "fail", "transient", "unknown"
    script: dict = {}
    # ref -> list of statuses returned by *_status calls ("pending", "active", "failed"); default active
    status_script: dict = {}
    created: dict = {}  # what the "vendor" really holds: name/email -> ref
    calls: list = []

    @classmethod
    def reset(cls):
        cls.script, cls.status_script, cls.created, cls.calls = {}, {}, {}, []

    def domains_available(self, names):
        return [n for n in names if self.script.get(n) != ["taken"]]

    def _order(self, key, client_ref):
        self.calls.append(("order", key))
        outcomes = self.script.get(key) or ["ok"]
        outcome = outcomes.pop(0) if len(outcomes) > 1 else outcomes[0]
        if outcome == "fail":
            raise ProviderError(f"{key} refused", permanent=True)
        if outcome == "transient":
            raise ProviderError(f"{key} try later", permanent=False)
        self.created[key] = f"ref-{key}"
        if outcome == "unknown":  # the vendor did it, but the answer was lost
            raise OutcomeUnknown(key)
        if outcome == "unknown-lost":  # the vendor never got it
            del self.created[key]
            raise OutcomeUnknown(key)
        return External(ref=f"ref-{key}", status=PENDING)

    def _lookup(self, key):
        self.calls.append(("lookup", key))
        ref = self.created.get(key)
        return External(ref=ref, status=PENDING) if ref else None

    def _status(self, ref):
        seq = self.status_script.get(ref) or [ACTIVE]
        status = seq.pop(0) if len(seq) > 1 else seq[0]
        conn = {}
        return External(ref=ref, status=status, detail="scripted" if status == FAILED else "", connection=conn)

    def domain_register(self, *, name, client_ref):
        return self._order(name, client_ref)

    def domain_lookup(self, *, name, client_ref):
        return self._lookup(name)

    def domain_status(self, *, ref):
        return self._status(ref)

    def mailbox_create(self, *, domain_ref, email, first_name, last_name, client_ref):
        return self._order(email, client_ref)

    def mailbox_lookup(self, *, email, client_ref):
        return self._lookup(email)

    def mailbox_status(self, *, ref):
        return self._status(ref)
