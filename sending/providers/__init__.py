"""Provisioning providers: a registry of small modules (see `base.SendingProvider` for the contract).

`SENDING_PROVIDER` names the operator's default: `sandbox` (default with SANDBOX=1), `namecheap` (domains only),
`google_workspace` (domains through the registrar, Google Workspace mailboxes on them), `microsoft365` (the same
with Microsoft 365 mailboxes), or a dotted path to a class. A setup_sending call may choose the kind of mailbox
(`provider: "google" | "microsoft"`): `provider_for` maps that choice to a provider name.

Live mode (SANDBOX=0) never reaches the sandbox provider (CONTRACT 4.14): with SENDING_PROVIDER unset or set to
`sandbox` there, `get_provider` raises `provider_unavailable` naming the setting, so a purchase is refused before
anything is charged (and `config_problem` lets /readyz and `check --deploy` name it).
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from core import errors
from sending.providers import microsoft365
from sending.providers.base import SendingProvider

BUILTIN = {
    "sandbox": "sending.providers.sandbox.SandboxProvider",
    "namecheap": "sending.providers.namecheap.NamecheapProvider",
    "google_workspace": "sending.providers.google_workspace.GoogleWorkspaceProvider",
    "microsoft365": "sending.providers.microsoft365.Microsoft365Provider",
}
#: the kind of mailbox a setup_sending caller may ask for -> the provider that delivers it live
KINDS = {"google": "google_workspace", "microsoft": "microsoft365"}
#: what each provider's mailboxes are (None: no mailboxes of a particular host)
KIND_OF = {"google_workspace": "google", "microsoft365": "microsoft"}
LIVE_CHOICES = "namecheap, google_workspace, microsoft365 or a dotted path"


def config_problem(name: str | None = None) -> str | None:
    """Why no provider may be used in this mode, naming the setting; None when `name` (or SENDING_PROVIDER) may."""
    name = name or settings.SENDING_PROVIDER
    if settings.SANDBOX:
        return None
    if not name:
        return ("SENDING_PROVIDER is unset: with SANDBOX=0 sending capacity cannot be bought until it names a live "
                f"provider ({LIVE_CHOICES}); the sandbox provider is never used in live mode")
    if BUILTIN.get(name, name) == BUILTIN["sandbox"]:
        return ("SENDING_PROVIDER=sandbox while SANDBOX=0: the sandbox provider buys nothing and is never used in "
                f"live mode; name a live provider ({LIVE_CHOICES})")
    return None


def provider_key(name: str | None = None) -> str:
    name = name or settings.SENDING_PROVIDER
    problem = config_problem(name)
    if problem:
        raise errors.ProviderUnavailable(f"No sending provider is configured: {problem}. Nothing was charged.",
                                         details={"setting": "SENDING_PROVIDER"})
    return name or "sandbox"


def get_provider(name: str | None = None) -> SendingProvider:
    name = provider_key(name)
    return import_string(BUILTIN.get(name, name))()


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
