"""Idempotent demo data: workspace and user demo@example.com, a demo API key, and each app's demo data.

An app contributes demo data with a function `seed(workspace, stdout)` in `<app>/demo.py`.
"""

import importlib
import os
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from accounts.models import ALL_SCOPES, ApiKey, Membership, Workspace
from accounts.services import key_authenticate, key_create, user_get_or_create, workspace_create
from core import errors

DEMO_EMAIL = "demo@example.com"
DEMO_WORKSPACE = "Demo workspace"


def demo_workspace() -> Workspace:
    user = user_get_or_create(email=DEMO_EMAIL)
    membership = Membership.objects.filter(user=user, workspace__name=DEMO_WORKSPACE, role="owner").select_related("workspace").first()
    if membership:
        return membership.workspace
    return workspace_create(owner=user, name=DEMO_WORKSPACE)


def demo_key(workspace: Workspace) -> str:
    """The demo key's plaintext lives in DATA_DIR/demo-api-key (mode 600) so `make run` can print it again."""
    path = Path(settings.DATA_DIR) / "demo-api-key"
    if path.exists():
        plaintext = path.read_text().strip()
        try:
            if key_authenticate(authorization=f"Bearer {plaintext}").workspace_id == workspace.pk:
                return plaintext
        except errors.Unauthenticated:
            pass
    ApiKey.objects.filter(workspace=workspace, name="demo", revoked_at__isnull=True).update(revoked_at=timezone.now())
    _, plaintext = key_create(workspace=workspace, name="demo", scopes=ALL_SCOPES, created_by=None)
    path.write_text(plaintext + "\n")
    os.chmod(path, 0o600)
    return plaintext


class Command(BaseCommand):
    help = "Create (idempotently) the demo workspace, its API key and demo data; print the key and console URL."

    def add_arguments(self, parser):
        parser.add_argument("--quiet", action="store_true")

    def handle(self, *args, **opts):
        with transaction.atomic():
            workspace = demo_workspace()
        for app in apps.get_app_configs():
            try:
                module = importlib.import_module(f"{app.name}.demo")
            except ModuleNotFoundError as exc:
                if exc.name != f"{app.name}.demo":
                    raise
                continue
            module.seed(workspace=workspace, stdout=self.stdout)
        plaintext = demo_key(workspace)
        if not opts["quiet"]:
            self.stdout.write(self.style.SUCCESS("Demo workspace ready."))
            self.stdout.write(f"  Workspace id:  {workspace.pk}")
            self.stdout.write(f"  Demo API key:  {plaintext}")
            self.stdout.write(f"  Console:       {settings.BASE_URL}/console/  (sign in as {DEMO_EMAIL}; "
                              f"the code lands in {settings.MAIL_SINK_DIR})")
            self.stdout.write(f"  API docs:      {settings.BASE_URL}/docs")
            self.stdout.write(f"  Approve:       .venv/bin/python manage.py approve ct_… --by {DEMO_EMAIL}  "
                              f"(a confirmation token from setup_sending or launch_campaign)")
            self.stdout.write(f"  Top up:        .venv/bin/python manage.py grant_credits {workspace.pk} 1000")
            self.stdout.write(f"  Try:           curl -H 'Authorization: Bearer {plaintext}' {settings.BASE_URL}/v1/usage")
