"""Provisioning providers: a registry of small modules (see `base.SendingProvider` for the contract).

`SENDING_PROVIDER` names the operator's default: `sandbox` (default with SANDBOX=1), `namecheap` (domains only),
`google_workspace` (domains through the registrar, Google Workspace mailboxes on them), `microsoft365` (the same
with Microsoft 365 mailboxes), or a dotted path to a class. A setup_sending call may choose the kind of mailbox
(`provider: "google" | "microsoft"`): `provider_for` maps that choice to a provider name.

Live mode (SANDBOX=0) never reaches the sandbox provider (CONTRACT 4.14): with SENDING_PROVIDER unset or set to
`sandbox` there, `get_provider` raises `provider_unavailable` naming the setting, so a purchase is refused before
anything is charged (and `config_problem` lets /readyz and `check --deploy` name it). The name-to-provider lookup
lives in `registry` (providers that build a registrar use it directly); it is named here for every other caller.
"""

from __future__ import annotations

from django.conf import settings

from core import errors
from sending.providers import microsoft365
from sending.providers.registry import BUILTIN, config_problem, get_provider, provider_key

__all__ = ["BUILTIN", "KINDS", "KIND_OF", "config_problem", "get_provider", "provider_for", "provider_key"]

#: the kind of mailbox a setup_sending caller may ask for -> the provider that delivers it live
KINDS = {"google": "google_workspace", "microsoft": "microsoft365"}
#: what each provider's mailboxes are (None: no mailboxes of a particular host)
KIND_OF = {"google_workspace": "google", "microsoft365": "microsoft"}


def _configured(name: str) -> bool:
    if name == "google_workspace":
        return bool(settings.GOOGLE_WORKSPACE_SERVICE_ACCOUNT_FILE and settings.GOOGLE_WORKSPACE_ADMIN_EMAIL)
    if name == "microsoft365":
        return microsoft365.configured()
    return True


def provider_for(kind: str | None) -> tuple[str, str | None]:
    """(provider name, mailbox kind) for a setup_sending call that asked for `kind` (`google`, `microsoft` or
    None for the operator's default). The sandbox delivers either kind locally (nothing leaves the machine); live,
    the kind's provider must be configured by the operator, else 502 provider_unavailable (nothing charged), and
    the default needs a live SENDING_PROVIDER (provider_key)."""
    if kind is None:
        default = provider_key()
        return default, KIND_OF.get(default)
    if settings.SANDBOX and (settings.SENDING_PROVIDER or "sandbox") == "sandbox":
        return "sandbox", kind
    name = KINDS[kind]
    if not _configured(name):
        label = {"google": "Google Workspace", "microsoft": "Microsoft 365"}[kind]
        raise errors.ProviderUnavailable(f"This service is not set up to deliver {label} mailboxes; "
                                         "ask its operator, or omit `provider` for the default.")
    return name, kind
