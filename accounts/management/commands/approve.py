from django.core.management.base import BaseCommand, CommandError

from accounts.models import Membership, User
from accounts.services import token_approve, token_deny, token_lookup
from core import errors


class Command(BaseCommand):
    help = "Approve (or --deny) a confirmation token at the terminal, recorded as decided by --by EMAIL."

    def add_arguments(self, parser):
        parser.add_argument("token")
        parser.add_argument("--by", required=True, help="email of an owner or admin of the token's workspace")
        parser.add_argument("--deny", action="store_true")

    def handle(self, *args, **opts):
        token = token_lookup(plaintext=opts["token"].strip())
        if token is None:
            raise CommandError("unknown confirmation token")
        user = User.objects.filter(email__iexact=opts["by"].strip()).first()
        membership = Membership.objects.filter(user=user, workspace=token.workspace).first() if user else None
        if membership is None or not membership.can_approve:
            raise CommandError(f"{opts['by']} is not an owner or admin of workspace {token.workspace_id}")
        try:
            decided = (token_deny if opts["deny"] else token_approve)(token=token, user=user)
        except errors.DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{decided.verb} token {decided.token_hint}… {decided.status} by {user.email}")
