"""Demo data: one draft campaign (never sends until someone previews, approves and launches it). Idempotent."""

from campaigns.models import DEFAULT_WINDOW, Campaign

DEMO_NAME = "Demo outreach (draft)"


def seed(workspace, stdout=None):
    from campaigns.services import campaign_create

    if Campaign.objects.filter(workspace=workspace, name=DEMO_NAME).exists():
        return
    leads = [
        {"email": "ann.lee@acme-demo.example", "first_name": "Ann", "last_name": "Lee", "company_name": "Acme"},
        {"email": "bo.chen@globex-demo.example", "first_name": "Bo", "company_name": "Globex"},
        {"email": "info@initech-demo.example", "company_name": "Initech"},
    ]
    steps = [
        {"subject": "Quick question, {{first_name|there}}",
         "body": "Hi {{first_name|there}},\n\nDoes {{company_name|your team}} still book meetings by hand?\n\nAlex",
         "wait_days": 0},
        {"subject": None, "body": "Hi {{first_name|there}}, just bumping this up in case it got buried.\n\nAlex",
         "wait_days": 2},
    ]
    campaign = campaign_create(workspace=workspace, name=DEMO_NAME, leads=leads, steps=steps,
                               sending_window=dict(DEFAULT_WINDOW))
    if stdout is not None:
        stdout.write(f"  campaigns: draft campaign {campaign.id} with {campaign.leads_accepted} leads "
                     f"(launch it with launch_campaign)")
