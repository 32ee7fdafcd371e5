"""Demo data: a one-time demo grant so the README tour runs end to end on the demo workspace (the purchase in
step 5 costs 3,000 credits; the 300 signup credits do not cover it). Sandbox mode only: in sandbox nothing is
bought for real. Idempotent: the grant carries an external reference, so a second seed adds nothing."""

from django.conf import settings

from core.money import credits, format_credits

DEMO_GRANT = credits(5000)


def seed(workspace, stdout=None):
    from billing.models import LedgerEntry
    from billing.services import credits_grant

    ref = f"demo_grant:{workspace.pk}"
    if not settings.SANDBOX or LedgerEntry.objects.filter(kind=LedgerEntry.Kind.GRANT, external_ref=ref).exists():
        return
    entry = credits_grant(workspace=workspace, amount=DEMO_GRANT, memo="demo credits (sandbox)",
                          external_ref=ref)
    if entry is not None and stdout is not None:
        stdout.write(f"  billing: granted {format_credits(DEMO_GRANT)} demo credits (sandbox); "
                     f"balance {format_credits(entry.balance_after_micros)}")
