from celery import shared_task

from accounts.services import tokens_expire


@shared_task(name="accounts.tasks.expire_confirmation_tokens")
def expire_confirmation_tokens() -> int:
    return tokens_expire()


@shared_task(name="accounts.tasks.oauth_purge")
def oauth_purge() -> dict:
    from accounts.oauth import oauth_purge as purge

    return purge()
