"""Provisioning providers: a registry of small modules (see `base.SendingProvider` for the contract).

`SENDING_PROVIDER` names one: `sandbox` (default with SANDBOX=1), `namecheap` (domains only),
`google_workspace` (domains through the registrar, Google Workspace mailboxes on them), or a dotted path to a class.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string

from sending.providers.base import SendingProvider

BUILTIN = {
    "sandbox": "sending.providers.sandbox.SandboxProvider",
    "namecheap": "sending.providers.namecheap.NamecheapProvider",
    "google_workspace": "sending.providers.google_workspace.GoogleWorkspaceProvider",
}


def get_provider(name: str | None = None) -> SendingProvider:
    name = name or settings.SENDING_PROVIDER or "sandbox"
    return import_string(BUILTIN.get(name, name))()


def provider_key(name: str | None = None) -> str:
    return name or settings.SENDING_PROVIDER or "sandbox"
