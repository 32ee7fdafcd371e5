"""A mailbox that can send again (reconnected after needs_reconnect, or reactivated once its upkeep is paid)
brings the leads that waited for it to the next tick, not MAILBOX_WAIT (an hour) after their failed attempt;
a lead whose own schedule is later (a follow-up's wait_days) keeps it."""

from __future__ import annotations

from datetime import timedelta

from campaigns import scheduler, sender
from campaigns.models import CampaignLead, SentMessage
from sending import oauth
from sending.models import Mailbox, Provider
from tests.campaigns.conftest import T0


def _tick():
    dispatched = []
    scheduler.tick(now=T0, dispatch=dispatched.extend)
    return {lead_id for lead_id, _, _ in dispatched}


def _waiting_and_scheduled(campaign, mb, status):
    """ann put off waiting for the mailbox; bob already sent step 0 and due for step 1 in 2 days."""
    ann = CampaignLead.objects.get(campaign=campaign, email="ann@acme.test")
    bob = CampaignLead.objects.exclude(pk=ann.pk).get(campaign=campaign)
    SentMessage.objects.create(workspace_id=campaign.workspace_id, campaign=campaign, campaign_lead=bob,
                               step_index=0, mailbox=mb, message_id="m1@out-mail.test", to_email=bob.email,
                               subject="s", state=SentMessage.State.SENT, claimed_at=T0, sent_at=T0)
    CampaignLead.objects.filter(pk=bob.pk).update(current_step=1, next_send_at=T0 + timedelta(days=2))
    Mailbox.objects.filter(pk=mb.pk).update(status=status)
    assert sender.send_lead_step(lead_id=ann.pk, step=0, lease=ann.next_send_at) in (
        "mailbox_needs_reconnect", "mailbox_inactive")
    ann.refresh_from_db()
    assert ann.next_send_at == T0 + sender.MAILBOX_WAIT
    return ann, bob


def _assert_back(ann, bob):
    ann.refresh_from_db()
    bob.refresh_from_db()
    assert ann.next_send_at == T0  # due at the next tick
    assert bob.next_send_at == T0 + timedelta(days=2)  # its own schedule, never earlier
    assert _tick() == {ann.pk}


def test_reconnect_brings_waiting_leads_to_the_next_tick(launched, django_capture_on_commit_callbacks):
    campaign, mb = launched
    Mailbox.objects.filter(pk=mb.pk).update(provider=Provider.BYO, auth=Mailbox.Auth.OAUTH2, oauth_provider="google")
    ann, bob = _waiting_and_scheduled(campaign, mb, Mailbox.Status.NEEDS_RECONNECT)
    assert _tick() == set()
    provider = oauth.OAuthProvider(
        name="google", label="Google", client_id="c", client_secret="s", authorize_url="https://as.test/a",
        token_url="https://as.test/t", scopes=("mail",), identity_claims=("email",),
        smtp=("smtp.gmail.com", 587, "starttls"), imap=("imap.gmail.com", 993, "tls"))
    grant = oauth.Grant(email=mb.email, subject="sub-1", access_token="at", refresh_token="rt",
                        expires_at=T0 + timedelta(hours=1), scope="mail", name="Alex Out")
    with django_capture_on_commit_callbacks(execute=True):
        oauth.mailbox_oauth_connect(workspace=campaign.workspace, provider=provider, grant=grant,
                                    expect_mailbox_id=str(mb.pk))
    assert Mailbox.objects.get(pk=mb.pk).status == Mailbox.Status.ACTIVE
    _assert_back(ann, bob)


def test_upkeep_reactivation_brings_waiting_leads_back(launched, django_capture_on_commit_callbacks):
    from billing.services import credits_grant
    from core.money import credits
    from sending.services import mailbox_renew

    campaign, mb = launched
    ann, bob = _waiting_and_scheduled(campaign, mb, Mailbox.Status.SUSPENDED)
    credits_grant(workspace=campaign.workspace, amount=credits("10000"), memo="upkeep")  # it can pay again
    Mailbox.objects.filter(pk=mb.pk).update(renews_at=T0 - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert mailbox_renew(mailbox_id=mb.pk, now=T0) == Mailbox.Status.ACTIVE
    _assert_back(ann, bob)
