"""`manage.py key_limits KEY_ID [--daily C|none] [--monthly C|none] [--answers-per-day N|none]`: an API key's or
OAuth connection's limits (CONTRACT section 1): spend limits per UTC day and calendar month (credit strings, billing's
key budgets) and replies a day without approval. Each option is one entry of LIMITS (flag, parser, setter), so
further limits are one entry each. Prints the key's settings as one JSON object, changed or not."""

import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from accounts import services
from accounts.models import ApiKey
from billing import services as billing
from core import errors
from core.money import InvalidCreditString, parse_credits


def count_or_none(value: str) -> int | None:
    value = value.strip().lower()
    if value == "none":
        return None
    if not value.isascii() or not value.isdigit():
        raise CommandError(f"expected a whole number or none, got {value!r}")
    return int(value)


def credits_or_none(value: str) -> int | None:
    value = value.strip()
    if value.lower() == "none":
        return None
    try:
        return parse_credits(value)
    except InvalidCreditString as exc:
        raise CommandError(f"expected a credit amount such as 25 or 0.5, or none: {exc}") from None


# (flag, destination, parse, apply(key, value))
LIMITS = [
    ("--daily", "daily", credits_or_none, lambda key, value: billing.key_limits_set(api_key=key, daily=value)),
    ("--monthly", "monthly", credits_or_none, lambda key, value: billing.key_limits_set(api_key=key, monthly=value)),
    ("--answers-per-day", "answers_per_day", count_or_none,
     lambda key, value: services.key_answers_per_day_set(key=key, answers_per_day=value)),
]


class Command(BaseCommand):
    help = "Show or set an API key's (or OAuth connection's) limits; prints its settings as one JSON object."

    def add_arguments(self, parser):
        parser.add_argument("key_id", help="the key's id, as GET /v1/usage key.key_id")
        for flag, dest, parse, _ in LIMITS:
            parser.add_argument(flag, dest=dest, default=None, metavar="C|none" if parse is credits_or_none else "N|none")

    def handle(self, *args, **opts):
        try:
            key_id = uuid.UUID(opts["key_id"].strip())
        except ValueError:
            raise CommandError("KEY_ID is not a key id") from None
        key = ApiKey.objects.select_related("oauth_grant").filter(pk=key_id).first()
        if key is None:
            raise CommandError("no such key")
        for _, dest, parse, apply in LIMITS:
            if opts.get(dest) is not None:
                try:
                    apply(key, parse(opts[dest]))
                except errors.DomainError as exc:
                    raise CommandError(exc.message) from exc
        key.refresh_from_db()
        settings = {**services.key_settings(key=key), **billing.key_budget_settings(api_key=key)}
        self.stdout.write(json.dumps(settings, sort_keys=True))
