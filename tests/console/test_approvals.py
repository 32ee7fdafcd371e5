"""Approvals: who may see and decide, what the page states, history, and the mail to approvers."""

import pytest
from django.test import Client

from accounts import services
from accounts.models import ConfirmationToken, Membership
from tests.console.helpers import body, messages_to

pytestmark = pytest.mark.django_db(transaction=True)  # approval mail is sent on commit


def _quote(api, amount=7):
    resp = api.post("/v1/test_confirm", {"amount": amount})
    assert resp.status_code == 200, resp.content
    result = resp.json()["result"]
    token = ConfirmationToken.objects.get(pk=result["approval_url"].rstrip("/").rsplit("/", 1)[1])
    return token, result


def test_approval_url_page_states_what_happens_and_approve_works(api, console, owner):
    token, result = _quote(api)
    path = "/" + result["approval_url"].split("://", 1)[1].split("/", 1)[1]
    page = console.get(path).content.decode()
    assert ">Approve</button>" in page and ">Deny</button>" in page
    assert 'Approvals <span class="badge pending">1<span class="skip"> waiting</span>' in page  # nav badge
    assert "amount" in page.lower() and "7" in page
    resp = console.post(path, {"decision": "approve"})
    assert resp.status_code == 302
    token.refresh_from_db()
    assert token.status == "approved" and token.decided_by == owner and token.decided_at
    # The agent can now execute, exactly once.
    done = api.post("/v1/test_confirm", {"amount": 7, "confirmation_token": result["confirmation_token"]},
                    headers={"Idempotency-Key": "k1"})
    assert done.status_code == 200 and done.json()["service"]["credits_charged"] == "0.000007"
    history = console.get("/console/approvals/").content.decode()
    assert owner.email in history and "used" in history
    # The decided page records when it was used and by which request (the audit trail an operator follows).
    token.refresh_from_db()
    assert token.status == "used" and token.used_request_id == done.json()["service"]["request_id"]
    page = console.get(path).content.decode()
    assert f"Used at {token.used_at:%Y-%m-%d %H:%M:%S} UTC" in page
    assert f"<code>{token.used_request_id}</code>" in page and ">Approve</button>" not in page


def test_deny_blocks_the_agent(api, console):
    token, result = _quote(api)
    console.post(f"/console/approvals/{token.pk}/", {"decision": "deny"})
    token.refresh_from_db()
    assert token.status == "denied"
    resp = api.post("/v1/test_confirm", {"amount": 7, "confirmation_token": result["confirmation_token"]},
                    headers={"Idempotency-Key": "k2"})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "confirmation_denied"


def test_other_workspace_member_gets_404_and_cannot_decide(api, stranger):
    token, _ = _quote(api)
    _, _, c = stranger
    assert c.get(f"/console/approvals/{token.pk}/").status_code == 404
    assert c.post(f"/console/approvals/{token.pk}/", {"decision": "approve"}).status_code == 404
    token.refresh_from_db()
    assert token.status == "pending" and token.decided_by is None
    assert str(token.pk) not in c.get("/console/approvals/").content.decode()


def test_plain_member_sees_but_cannot_decide(api, workspace, member_of):
    token, _ = _quote(api)
    _, c = member_of(workspace, Membership.Role.MEMBER)
    page = c.get(f"/console/approvals/{token.pk}/").content.decode()
    assert "Only owners and admins" in page and ">Approve</button>" not in page
    assert c.post(f"/console/approvals/{token.pk}/", {"decision": "approve"}).status_code == 404
    token.refresh_from_db()
    assert token.status == "pending"


def test_admin_can_decide(api, workspace, member_of):
    token, _ = _quote(api)
    admin, c = member_of(workspace, Membership.Role.ADMIN)
    assert c.post(f"/console/approvals/{token.pk}/", {"decision": "deny"}).status_code == 302
    token.refresh_from_db()
    assert token.status == "denied" and token.decided_by == admin


def test_signed_out_is_sent_to_sign_in():
    resp = Client().get("/console/approvals/00000000-0000-0000-0000-000000000000/")
    assert resp.status_code == 302 and resp["Location"].startswith("/console/auth/login/")


def test_owners_and_admins_are_emailed_when_an_approval_waits(api, owner, workspace, member_of):
    admin, _ = member_of(workspace, Membership.Role.ADMIN)
    member, _ = member_of(workspace, Membership.Role.MEMBER)
    token, result = _quote(api)
    for person in (owner, admin):
        mails = messages_to(person.email)
        assert len(mails) == 1, person.email
        assert result["approval_url"] in body(mails[0]) and "test_confirm" in mails[0]["Subject"]
    assert messages_to(member.email) == []


def test_expired_and_decided_tokens_offer_no_buttons(api, console):
    import time_machine
    from django.utils import timezone

    token, _ = _quote(api)
    with time_machine.travel(timezone.now() + services.QUOTE_TTL + timezone.timedelta(seconds=1)):
        page = console.get(f"/console/approvals/{token.pk}/").content.decode()
        assert "expired" in page and ">Approve</button>" not in page
        console.post(f"/console/approvals/{token.pk}/", {"decision": "approve"})
    token.refresh_from_db()
    assert token.status != "approved" and token.decided_by is None


def test_launch_page_shows_campaign_leads_mailboxes_and_first_step(console, workspace):
    summary = {  # the shape campaigns.services.launch_preview issues
        "action": "Launch campaign \u201cQ4 founders\u201d: real email will be sent",
        "campaign_id": "7d3c0d5e-0000-4000-8000-000000000001",
        "leads_to_contact": 42,
        "mailboxes": "ada@acme-mail.com, bob@acme-mail.com",
        "first_step_subject": "Quick question, Grace",
        "first_step_body": "Hi Grace,\nsaw Acme is hiring SDRs…",
    }
    token, _ = services.token_issue(workspace=workspace, verb="launch_campaign", params={"campaign_id": "x"},
                                    ttl=services.LAUNCH_TTL, summary=summary)
    html = console.get(f"/console/approvals/{token.pk}/").content.decode()
    assert "Launch campaign \u201cQ4 founders\u201d: real email will be sent</h1>" in html
    for text in ("Leads to contact", "42", "ada@acme-mail.com", "Quick question, Grace", "Hi Grace,<br>saw Acme"):
        assert text in html, text
    # The sandbox banner never contradicts the headline: this launch sends real email (a connected mailbox).
    assert 'data-testid="sandbox-sink"' not in html
    summary["action"] = "Launch campaign \u201cQ4 founders\u201d: sandbox mode, the email goes to the sandbox sink on this machine"
    token, _ = services.token_issue(workspace=workspace, verb="launch_campaign", params={"campaign_id": "y"},
                                    ttl=services.LAUNCH_TTL, summary=summary)
    html = console.get(f"/console/approvals/{token.pk}/").content.decode()
    assert 'data-testid="sandbox-sink"' in html and "goes to the sandbox sink" in html


def test_launch_headline_says_where_the_mail_goes(api, workspace, settings):
    """The headline issued with a launch approval never promises real email in sandbox mode (nothing leaves the
    machine there), and says it plainly when SANDBOX=0."""
    from campaigns.services import launch_consequence

    settings.SANDBOX = True
    assert "sandbox sink" in launch_consequence() and "real email" not in launch_consequence()
    settings.SANDBOX = False
    assert launch_consequence() == "real email will be sent"


def test_closed_approval_does_not_say_what_will_happen_if_you_approve(api, console):
    # Issue 14: a denied approval still read "What will happen if you approve".
    token, _ = _quote(api)
    assert b"What will happen if you approve" in console.get(f"/console/approvals/{token.pk}/").content
    console.post(f"/console/approvals/{token.pk}/", {"decision": "deny"})
    page = console.get(f"/console/approvals/{token.pk}/").content
    assert b"What will happen if you approve" not in page and b"What was asked for" in page


def test_launch_approval_email_uses_readable_labels(workspace, owner):
    # Issue 14: the mail listed raw keys ("leads_to_contact: 42").
    from tests.console.helpers import body, messages_to

    services.token_issue(workspace=workspace, verb="launch_campaign", params={"campaign_id": "x"},
                         ttl=services.LAUNCH_TTL, summary={"leads_to_contact": 42, "first_step_subject": "Hi"})
    text = body(messages_to(owner.email)[-1])
    assert "Leads to contact: 42" in text and "First step subject: Hi" in text and "leads_to_contact" not in text
