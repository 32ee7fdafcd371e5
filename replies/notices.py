"""Owners and admins may ask for an email on every `interested` reply of their workspace: its text and a link to
the conversation in the console. The choice is an `AnswerNotice` row per (workspace, member); a member who is no
longer an owner or admin gets nothing. Mail goes through Django's mail backend (the sandbox Maildir sink in
sandbox mode), after the classification commits, and never fails the classification."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail

from accounts.console_auth import header_safe
from accounts.models import Membership
from core import errors
from replies.models import AnswerNotice, Reply

logger = logging.getLogger("replies.notices")

TEXT_LIMIT = 5_000


def notice_set(*, workspace, user, on: bool) -> bool:
    """Turn the email on or off for this member; only owners and admins may have it."""
    membership = Membership.objects.filter(workspace=workspace, user=user).first()
    if membership is None or not membership.can_approve:
        raise errors.NotFound()
    if on:
        AnswerNotice.objects.get_or_create(workspace=workspace, user=user)
    else:
        AnswerNotice.objects.filter(workspace=workspace, user=user).delete()
    return on


def notice_on(*, workspace, user) -> bool:
    return AnswerNotice.objects.filter(workspace=workspace, user=user).exists()


def recipients(workspace_id) -> list[str]:
    roles = [Membership.Role.OWNER, Membership.Role.ADMIN]
    users = AnswerNotice.objects.filter(workspace_id=workspace_id).values_list("user_id", flat=True)
    return sorted(Membership.objects.filter(workspace_id=workspace_id, user_id__in=list(users), role__in=roles)
                  .values_list("user__email", flat=True))


def interested_notify(*, reply_id: str) -> int:
    """Email the members who asked for it about this interested reply. Returns how many were emailed."""
    try:
        reply = Reply.objects.select_related("campaign").filter(pk=reply_id).first()
        if reply is None or reply.classification != "interested":
            return 0
        to = recipients(reply.workspace_id)
        if not to:
            return 0
        text = reply.text or reply.snippet
        if len(text) > TEXT_LIMIT:
            text = text[:TEXT_LIMIT] + "…"
        link = f"{settings.BASE_URL}/console/replies/{reply.pk}/"
        campaign = f" to “{reply.campaign.name}”" if reply.campaign else ""
        body = (f"{reply.from_email} replied{campaign} and is interested:\n\n{text}\n\n"
                f"Read the whole conversation and answer it: {link}\n\n"
                "You get this because you asked for an email on every interested reply; turn it off on the "
                f"Replies page: {settings.BASE_URL}/console/replies/\n")
        send_mail(header_safe(f"Interested reply from {reply.from_email}: {reply.subject}")[:250], body,
                  settings.DEFAULT_FROM_EMAIL, to, fail_silently=False)
        return len(to)
    except Exception:  # noqa: BLE001 - a mail problem never undoes a classification
        logger.exception("could not email the interested reply %s", reply_id)
        return 0
