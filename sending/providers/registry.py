"""The provider registry: `SENDING_PROVIDER` (or a name a caller passes) to a provider instance, refused in live
mode for the sandbox. Kept apart from the package's `__init__` so that providers which build another provider
(a registrar for their domains) can look one up without importing the package that lists them.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from core import errors
from sending.providers.base import SendingProvider

BUILTIN = {
    "sandbox": "sending.providers.sandbox.SandboxProvider",
    "namecheap": "sending.providers.namecheap.NamecheapProvider",
    "google_workspace": "sending.providers.google_workspace.GoogleWorkspaceProvider",
    "microsoft365": "sending.providers.microsoft365.Microsoft365Provider",
}
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
