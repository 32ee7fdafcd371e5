"""Helpers for campaign tests."""

import uuid

from accounts import services as accounts


def campaign_body(**over):
    body = {
        "name": "Q3 outreach",
        "leads": [
            {"email": "Ann@Acme.test", "first_name": "Ann", "company_name": "Acme", "custom": {"city": "Oslo"}},
            {"email": "bob@beta.test", "last_name": "Stone"},
        ],
        "steps": [
            {"subject": "Hi {{first_name|there}}", "body": "Hello {{first_name|there}} at {{company_name|your team}}",
             "wait_days": 0},
            {"body": "Following up, {{first_name|friend}}.", "wait_days": 2},
        ],
    }
    body.update(over)
    return body


def create(api, key=None, **over):
    key = key or f"k-{uuid.uuid4()}"
    return api.post("/v1/campaigns", campaign_body(**over), headers={"Idempotency-Key": key})


def approve(plaintext, user):
    token = accounts.token_lookup(plaintext=plaintext)
    accounts.token_approve(token=token, user=user)
    return token


def launch(api, campaign_id, owner, key="launch-1"):
    """Preview, approve as the owner, launch. Returns the launch response."""
    preview = api.post("/v1/launch_campaign", {"campaign_id": campaign_id})
    assert preview.status_code == 200, preview.json()
    token = preview.json()["result"]["confirmation_token"]
    approve(token, owner)
    return api.post("/v1/launch_campaign", {"campaign_id": campaign_id, "confirmation_token": token},
                    headers={"Idempotency-Key": key})
