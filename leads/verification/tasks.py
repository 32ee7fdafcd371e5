"""Periodic upkeep of the verification store (beat entries in config/settings.py). Safe to run twice."""

from celery import shared_task
from django.conf import settings

from leads.verification import services, technology


@shared_task(name="leads.verification.tasks.technology_rescan")
def technology_rescan() -> int:
    if not settings.DNS_TECHNOLOGY_ENABLED:
        return 0
    return technology.technology_rescan_due()


@shared_task(name="leads.verification.tasks.verification_prune")
def verification_prune() -> int:
    return services.verification_prune()
