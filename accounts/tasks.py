from celery import shared_task

from accounts.services import tokens_expire


@shared_task(name="accounts.tasks.expire_confirmation_tokens")
def expire_confirmation_tokens() -> int:
    return tokens_expire()
