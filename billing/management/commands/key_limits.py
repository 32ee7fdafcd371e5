import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts.models import ApiKey
from billing.services import KEEP, key_limits_set, key_settings
from core.money import InvalidCreditString, parse_credits


def _limit(value: str | None, flag: str):
    if value is None:
        return KEEP
    if value.strip().lower() == "none":
        return None
    try:
        return parse_credits(value.strip())
    except InvalidCreditString as exc:
        raise CommandError(f"{flag} {exc}") from exc


class Command(BaseCommand):
    help = ("Set an API key's or OAuth connection's spend limits (credits per UTC day and calendar month, or "
            "'none'); prints the key's settings as one JSON object.")

    def add_arguments(self, parser):
        parser.add_argument("key_id", help="the key id (GET /v1/usage key.key_id, create_workspace --json key_id)")
        parser.add_argument("--daily", help="daily limit in credits, or 'none'")
        parser.add_argument("--monthly", help="monthly limit in credits, or 'none'")

    def handle(self, *args, **opts):
        daily, monthly = _limit(opts["daily"], "--daily"), _limit(opts["monthly"], "--monthly")
        try:
            key = ApiKey.objects.get(pk=opts["key_id"])
        except (ApiKey.DoesNotExist, ValidationError, ValueError) as exc:
            raise CommandError(f"no key {opts['key_id']}") from exc
        if daily is not KEEP or monthly is not KEEP:
            key_limits_set(api_key=key, daily=daily, monthly=monthly)
        self.stdout.write(json.dumps(key_settings(api_key=key)))
