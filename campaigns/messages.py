"""Building one campaign email: variables, threading headers, one-click unsubscribe, text + HTML parts."""

from __future__ import annotations

import html
import uuid
from email.message import EmailMessage
from urllib.parse import quote

from django.conf import settings
from django.core import signing

from campaigns import headers, templating
from campaigns.models import Campaign, CampaignLead, SentMessage

UNSUBSCRIBE_SALT = "campaigns.unsubscribe"


def unsubscribe_token(lead: CampaignLead) -> str:
    """A signed, URL- and subject-safe token naming the lead (no expiry: an old email's link keeps working)."""
    return signing.Signer(salt=UNSUBSCRIBE_SALT).sign(str(lead.pk)).replace(":", ".")


def unsubscribe_lead_pk(token: str) -> int | None:
    """The lead id a token names, or None when the signature does not verify."""
    try:
        value = signing.Signer(salt=UNSUBSCRIBE_SALT).unsign((token or "").strip().replace(".", ":", 1))
        return int(value)
    except (signing.BadSignature, ValueError):
        return None


def unsubscribe_url(lead: CampaignLead) -> str:
    return f"{settings.BASE_URL}/u/{unsubscribe_token(lead)}"


def unsubscribe_mailto(lead: CampaignLead, mailbox_email: str) -> str:
    """Mail to the sending mailbox with this subject unsubscribes (replies ingestion calls
    `campaigns.services.unsubscribe_by_mailto`)."""
    return f"mailto:{mailbox_email}?subject={quote('unsubscribe ' + unsubscribe_token(lead))}"


def new_message_id(domain: str) -> str:
    return f"{uuid.uuid4().hex}@{domain}"


def variant_for(lead: CampaignLead, campaign: Campaign, step_index: int, sent: dict | None = None) -> int | None:
    """The variant this lead gets (or got) at this step: the one it was sent (`sent`: step -> variant), else the
    step's chosen winner, else its own assignment; None for a step without variants."""
    step = campaign.steps[step_index]
    if not templating.step_variant_count(step):
        return None
    if sent and sent.get(step_index) is not None:
        return sent[step_index]
    winner = (campaign.winners or {}).get(str(step_index))
    if winner is not None:
        return int(winner["variant"])
    assigned = (lead.variants or [])[step_index] if step_index < len(lead.variants or []) else None
    return int(assigned) if assigned is not None else 0


def _texts(lead: CampaignLead, campaign: Campaign, step_index: int, sent: dict) -> list[dict]:
    """Subject and body templates of steps 0..step_index as this lead gets them (variant chosen, spintax spun:
    the same lead always reads the same text in the same place)."""
    out = []
    for i in range(step_index + 1):
        variant = variant_for(lead, campaign, i, sent)
        text = templating.step_text(campaign.steps[i], variant)
        seed = f"{campaign.pk}|{lead.email}|{i}|{variant}"
        out.append({"variant": variant,
                    "subject": templating.spin(text["subject"] or "", f"{seed}|subject"),
                    "body": templating.spin(text["body"], f"{seed}|body")})
    return out


def render_step(lead: CampaignLead, campaign: Campaign, step_index: int) -> dict:
    """Subject, text body, threading ids and the variant of this lead's step (no side effects)."""
    values = templating.lead_values(email=lead.email, first_name=lead.first_name, last_name=lead.last_name,
                                    company_name=lead.company_name, custom=lead.custom)
    earlier = [] if step_index == 0 else list(
        SentMessage.objects.filter(campaign_lead=lead, state=SentMessage.State.SENT, step_index__lt=step_index)
        .order_by("step_index"))
    texts = _texts(lead, campaign, step_index, {m.step_index: m.variant for m in earlier})
    # the thread this step belongs to opens at the latest step (up to this one) whose text has a subject
    root = max(i for i in range(step_index + 1) if texts[i]["subject"].strip())
    root_subject = templating.render(texts[root]["subject"], values).strip()
    if root == step_index:
        subject, in_reply_to, references = root_subject, "", []
    else:
        subject = root_subject if root_subject.lower().startswith("re:") else f"Re: {root_subject}"
        references = [m.message_id for m in earlier if m.step_index >= root]
        in_reply_to = references[-1] if references else ""
    return {"subject": subject, "body": templating.render(texts[step_index]["body"], values).strip(),
            "in_reply_to": in_reply_to, "references": references, "variant": texts[step_index]["variant"]}


def render_text(lead: CampaignLead, campaign: Campaign, step_index: int, variant: int | None) -> dict:
    """One step's own subject and body for this lead and variant (spintax spun, variables filled; no threading):
    what the console shows side by side for each variant."""
    values = templating.lead_values(email=lead.email, first_name=lead.first_name, last_name=lead.last_name,
                                    company_name=lead.company_name, custom=lead.custom)
    text = templating.step_text(campaign.steps[step_index], variant)
    seed = f"{campaign.pk}|{lead.email}|{step_index}|{variant}"
    return {"subject": templating.render(templating.spin(text["subject"] or "", f"{seed}|subject"), values).strip(),
            "body": templating.render(templating.spin(text["body"], f"{seed}|body"), values).strip()}


def sample_first_message(lead: CampaignLead, campaign: Campaign) -> dict:
    """The first message as this lead will get it (the launch preview's `samples`)."""
    rendered = render_step(lead, campaign, 0)
    return {"to": lead.email, "variant": rendered["variant"], "subject": rendered["subject"],
            "body": rendered["body"]}


def _html(body: str, url: str) -> str:
    paragraphs = [p for p in body.replace("\r\n", "\n").split("\n\n") if p.strip()]
    inner = "\n".join(f"<p>{html.escape(p).replace(chr(10), '<br>')}</p>" for p in paragraphs)
    return (
        "<!doctype html>\n<html><body style=\"font-family:sans-serif;font-size:14px;line-height:1.5\">\n"
        f"{inner}\n<p style=\"font-size:12px;color:#777;margin-top:2em\">If you would rather not hear from me, "
        f"<a href=\"{html.escape(url)}\">unsubscribe</a>.</p>\n</body></html>\n"
    )


def _mailbox_name(mailbox) -> str:
    return mailbox.display_name or " ".join(p for p in (mailbox.first_name, mailbox.last_name) if p)


MIME_HEADERS = ["MIME-Version", "Content-Type"]


def build_message(*, lead: CampaignLead, campaign: Campaign, mailbox, rendered: dict, message_id: str) -> EmailMessage:
    """The message to send. Every header comes from `campaigns.headers.campaign_headers` (checked there) and
    is stored verbatim; the serialized header block is checked again (`headers.check_serialized`) before the
    message is handed over. Raises `headers.UnsafeHeader` (the sender stops the lead as `invalid_message`)."""
    url = unsubscribe_url(lead)
    name = " ".join(" ".join(p for p in (lead.first_name, lead.last_name) if p).split())
    fields = headers.campaign_headers(
        from_name=_mailbox_name(mailbox), from_email=mailbox.email, to_name=name, to_email=lead.email,
        subject=rendered["subject"], message_id=message_id, in_reply_to=rendered["in_reply_to"],
        references=rendered["references"], unsubscribe_urls=[url, unsubscribe_mailto(lead, mailbox.email)])
    msg = EmailMessage(policy=headers.POLICY)
    for field_name, value in fields:
        msg.set_raw(field_name, value)
    text = f"{rendered['body']}\n\n--\nIf you would rather not hear from me, unsubscribe: {url}\n"
    msg.set_content(text)
    msg.add_alternative(_html(rendered["body"], url), subtype="html")
    for part in msg.iter_parts():
        del part["MIME-Version"]  # the top level carries it; add_alternative also gives the html part one
    headers.check_serialized(msg.as_bytes(), [n for n, _ in fields] + MIME_HEADERS)
    return msg
