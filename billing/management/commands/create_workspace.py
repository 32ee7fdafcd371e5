import json

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.services import key_create, user_get_or_create, workspace_create
from billing.services import credits_grant
from core import errors
from core.money import InvalidCreditString, parse_credits


class Command(BaseCommand):
    help = "Create a workspace owned by --email (created if absent) with 300 signup credits and one API key."

    def add_arguments(self, parser):
        parser.add_argument("--email", required=True)
        parser.add_argument("--name")
        parser.add_argument("--credits", help="extra credits to grant, a credit string")
        parser.add_argument("--scopes", default="", help="comma-separated scopes, or 'all'")
        parser.add_argument("--json", action="store_true", help="print exactly one JSON object")

    def handle(self, *args, **opts):
        scopes = "all" if opts["scopes"].strip() == "all" else [s for s in opts["scopes"].split(",") if s.strip()]
        try:
            extra = parse_credits(opts["credits"]) if opts["credits"] else 0
        except InvalidCreditString as exc:
            raise CommandError(f"--credits {exc}") from exc
        try:
            with transaction.atomic():
                user = user_get_or_create(email=opts["email"])
                workspace = workspace_create(owner=user, name=opts["name"])
                if extra:
                    credits_grant(workspace=workspace, amount=extra, memo="create_workspace --credits")
                key, plaintext = key_create(workspace=workspace, name="default", scopes=scopes, created_by=user)
        except errors.DomainError as exc:
            raise CommandError(exc.message) from exc
        if opts["json"]:
            self.stdout.write(json.dumps({"workspace_id": str(workspace.pk), "api_key": plaintext,
                                          "key_id": str(key.pk)}))
        else:
            self.stdout.write(f"workspace {workspace.pk} for {user.email}\nAPI key (shown once): {plaintext}")
