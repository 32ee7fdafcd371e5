"""Console sign-in glue around django-allauth, and the console's signal receivers.

- `ConsoleAccountAdapter`: adds a one-time sign-in link to allauth's login-code mail. The link's token is
  stored as a SHA-256 only, expires with the code, is single-use, and signs in only after a POST.
- Codes are never stored: allauth keeps its pending code in the session, so we hand it a random *seed*
  instead, and the code mailed and checked is HMAC(key derived from SECRET_KEY, seed) in allauth's code
  format. A reader of the session table (without SECRET_KEY) cannot recover a code.
- Receivers: sign-up creates a workspace (300 free credits); signing in accepts pending invitations;
  an approval waiting (accounts.signals.approval_requested) emails the workspace's owners and admins.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
import secrets
import string
from datetime import timedelta
from email.utils import formataddr, parseaddr
from urllib.parse import urlsplit

from allauth.account import app_settings as allauth_settings
from allauth.account import forms as allauth_forms
from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.models import EmailAddress
from allauth.account.signals import user_signed_up
from celery import shared_task
from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.core.mail import send_mail
from django.db import transaction
from django.dispatch import receiver
from django.template.loader import render_to_string
from django.utils import timezone

from accounts.models import ConfirmationToken, Invitation, Membership, SignInLink, User
from accounts.selectors import workspace_approver_emails
from accounts.signals import approval_requested
from core.mailheaders import header_text_problem

logger = logging.getLogger(__name__)


# --- sign-in links ----------------------------------------------------------------------------------
def _link_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def signin_link_issue(*, user: User, email: str) -> str:
    """A new single-use sign-in URL for `user`; returns the URL (the plaintext token is never stored)."""
    token = secrets.token_urlsafe(32)
    SignInLink.objects.create(
        user=user, email=email.lower(), token_hash=_link_hash(token),
        expires_at=timezone.now() + timedelta(seconds=allauth_settings.LOGIN_BY_CODE_TIMEOUT),
    )
    return f"{settings.BASE_URL}/console/auth/link/{token}/"


def signin_link_peek(*, token: str) -> SignInLink | None:
    """The usable link for `token` (unused, unexpired), without consuming it (for the GET page)."""
    link = SignInLink.objects.select_related("user").filter(token_hash=_link_hash(token)).first()
    if link is None or link.used_at is not None or link.expires_at <= timezone.now() or not link.user.is_active:
        return None
    return link


def signin_link_consume(*, token: str) -> SignInLink | None:
    """Use the link once: a conditional UPDATE, so two POSTs race to at most one sign-in."""
    link = signin_link_peek(token=token)
    if link is None:
        return None
    now = timezone.now()
    if SignInLink.objects.filter(pk=link.pk, used_at__isnull=True, expires_at__gt=now).update(used_at=now) != 1:
        return None
    # The link proves control of the address, like the code does.
    EmailAddress.objects.filter(user=link.user, email__iexact=link.email).update(verified=True)
    return link


# --- codes derived from a stored seed ---------------------------------------------------------------
SEED_PREFIX = "seed:"
_ALPHA = "BCDFGHJKLMNPQRSTVWXZ"  # allauth's (RFC 8628) alphabet: no vowels, no look-alikes


def code_seed() -> str:
    return SEED_PREFIX + secrets.token_urlsafe(24)


def code_from_seed(seed: str | None, fmt: dict | None = None) -> str:
    """The user-facing code for a stored seed; anything that is not a seed is returned unchanged."""
    if not seed or not seed.startswith(SEED_PREFIX):
        return seed or ""
    fmt = fmt or {}
    numeric = fmt.get("numeric", False)
    chars = string.digits if numeric else _ALPHA
    length = fmt.get("length") or (9 if numeric else 8)
    key = hashlib.sha256(("console-code:" + settings.SECRET_KEY).encode()).digest()
    n = int.from_bytes(hmac.new(key, seed.encode(), hashlib.sha256).digest(), "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, len(chars))
        out.append(chars[r])
    code = "".join(out)
    if fmt.get("dashed", True):
        chunk = math.ceil(length / (2 if length <= 8 else 3))
        code = "-".join(code[i:i + chunk] for i in range(0, length, chunk))
    return code


def _format_for(template_prefix: str) -> dict:
    if template_prefix.startswith("account/email/email_confirmation"):
        return allauth_settings.EMAIL_VERIFICATION_BY_CODE_FORMAT
    return allauth_settings.LOGIN_BY_CODE_FORMAT


class ConfirmLoginCodeForm(allauth_forms.ConfirmLoginCodeForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.expected_code = code_from_seed(self.expected_code, allauth_settings.LOGIN_BY_CODE_FORMAT)


class ConfirmEmailVerificationCodeForm(allauth_forms.ConfirmEmailVerificationCodeForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.expected_code = code_from_seed(self.expected_code, allauth_settings.EMAIL_VERIFICATION_BY_CODE_FORMAT)


def signin_links_purge(*, older_than: timedelta = timedelta(days=1)) -> int:
    """Delete sign-in links that expired more than `older_than` ago (periodic)."""
    return SignInLink.objects.filter(expires_at__lt=timezone.now() - older_than).delete()[0]


@shared_task(name="accounts.console_auth.purge_signin_links")
def purge_signin_links() -> int:
    return signin_links_purge()


class _Site:
    """What allauth's mail templates read from `current_site`, taken from BASE_URL (allauth would use the
    request's Host: anyone could make the service mail a link to any host)."""

    def __init__(self, base_url: str):
        self.domain = urlsplit(base_url).netloc
        self.name = settings.SITE_NAME  # "Hello from Outbound service!", not "Hello from 127.0.0.1:8000!"


def _base_url_context(context: dict) -> dict:
    """Every absolute link allauth put in a mail's context (signup_url, activate_url, password_reset_url, ...)
    rebuilt on BASE_URL, and the site taken from BASE_URL."""
    out: dict = {"current_site": _Site(settings.BASE_URL)}
    for key, value in context.items():
        if isinstance(value, str) and value.startswith(("http://", "https://")):
            parts = urlsplit(value)
            out[key] = settings.BASE_URL + (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return out


class ConsoleAccountAdapter(DefaultAccountAdapter):
    def get_from_email(self) -> str:
        """DEFAULT_FROM_EMAIL, shown as SITE_NAME when it carries no display name of its own."""
        name, addr = parseaddr(settings.DEFAULT_FROM_EMAIL)
        return settings.DEFAULT_FROM_EMAIL if name or not addr else formataddr((settings.SITE_NAME, addr))

    def add_message(self, request, level, message_template=None, message_context=None, extra_tags="", message=None):
        # Signing in by code confirms the address on the way: "You have confirmed …" followed by
        # "Successfully signed in as …" is two flashes for one action. Keep the sign-in one.
        if message_template == "account/messages/email_confirmed.txt" and not request.user.is_authenticated:
            return
        super().add_message(request, level, message_template, message_context, extra_tags, message)

    def generate_login_code(self) -> str:
        return code_seed()

    def generate_email_verification_code(self) -> str:
        return code_seed()

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        if isinstance(context.get("code"), str) and context["code"].startswith(SEED_PREFIX):
            context = {**context, "code": code_from_seed(context["code"], _format_for(template_prefix))}
        if template_prefix == "account/email/email_confirmation_signup" and context.get("user") is not None:
            # The link proves the address like the code does (signin_link_consume marks it verified).
            context = {**context, "signin_link": signin_link_issue(user=context["user"], email=email)}
        if template_prefix == "account/email/login_code" and context.get("code"):
            user = User.objects.filter(email__iexact=email).first()
            if user is not None:
                # Users made by operators (create_workspace, seed_demo) have no allauth address row yet;
                # without one, a correct code would still be followed by a second verification step.
                EmailAddress.objects.get_or_create(
                    user=user, email__iexact=email, defaults={"email": email.lower(), "primary": True}
                )
                context = {**context, "signin_link": signin_link_issue(user=user, email=email)}
        context.setdefault("BASE_URL", settings.BASE_URL)
        super().send_mail(template_prefix, email, {**context, **_base_url_context(context)})


# --- workspaces and invitations ---------------------------------------------------------------------
def invitations_accept(*, user: User) -> int:
    """Turn the pending invitations for the user's address into memberships."""
    accepted = 0
    now = timezone.now()
    with transaction.atomic():
        pending = Invitation.objects.select_for_update().filter(
            email__iexact=user.email, accepted_at__isnull=True, revoked_at__isnull=True
        )
        for inv in pending:
            Membership.objects.get_or_create(user=user, workspace=inv.workspace, defaults={"role": inv.role})
            inv.accepted_at = now
            inv.save(update_fields=["accepted_at"])
            accepted += 1
    return accepted


def ensure_workspace(*, user: User) -> None:
    """A user always has somewhere to work: their invitations, else a new workspace with 300 credits."""
    from accounts.services import workspace_create

    with transaction.atomic():
        # Two first requests of a new user arrive together: each would find no membership and create a
        # workspace (granting the signup credits twice). The user row lock makes the second wait for the first
        # to commit, and it then finds the membership.
        User.objects.select_for_update().filter(pk=user.pk).first()
        invitations_accept(user=user)
        if not Membership.objects.filter(user=user).exists():
            workspace_create(owner=user)


@receiver(user_signed_up, dispatch_uid="console-signup-workspace")
def _on_signed_up(sender, request, user, **kwargs):
    # Sign-up happens before the address is proven, so invitations are not accepted here but at the first
    # sign-in (after the code). An invited address gets no workspace of its own.
    from accounts.services import workspace_create

    invited = Invitation.objects.filter(email__iexact=user.email, accepted_at__isnull=True, revoked_at__isnull=True)
    if not invited.exists() and not Membership.objects.filter(user=user).exists():
        workspace_create(owner=user)


@receiver(user_logged_in, dispatch_uid="console-login-invitations")
def _on_logged_in(sender, request, user, **kwargs):
    invitations_accept(user=user)


# --- approvals waiting ------------------------------------------------------------------------------
def header_safe(text: str) -> str:
    """A console mail header built from user-chosen text (a workspace name): whitespace folded to one space,
    other control characters dropped, and an RFC 2047 encoded-word that would decode to a control character
    defused ("=?" -> "= ?"), so no mail reader decodes a line break into it (the check campaign mail applies)."""
    text = "".join(c for c in " ".join(text.split()) if c.isprintable())
    if header_text_problem(text):
        text = text.replace("=?", "= ?")
    return text


@receiver(approval_requested, dispatch_uid="console-approval-mail")
def _on_approval_requested(sender, token: ConfirmationToken, **kwargs):
    from accounts.services import approval_url

    recipients = workspace_approver_emails(workspace_id=token.workspace_id)
    if not recipients:
        return
    # Readable labels, as on the approval page: "leads_to_contact" -> "Leads to contact".
    rows = [(k.replace("_", " ").capitalize() if re.fullmatch(r"[a-z0-9_]+", str(k)) else k, v)
            for k, v in (token.summary or {}).items()]
    ctx = {"token": token, "workspace": token.workspace, "approval_url": approval_url(token), "rows": rows}
    subject = header_safe(f"Approval needed: {token.verb} in {token.workspace.name}")
    body = render_to_string("console/email/approval_requested.txt", ctx)
    try:
        send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, recipients)
    except Exception:  # a mail outage must not fail the API call that issued the token
        logger.exception("could not email approvers for token %s", token.pk)
