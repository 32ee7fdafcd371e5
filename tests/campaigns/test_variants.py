"""Step variants, spintax and the automatic winner (CONTRACT 4.6b)."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from campaigns import templating
from tests.campaigns.conftest import ALWAYS, sink_messages
from tests.campaigns.helpers import create, launch

pytestmark = pytest.mark.django_db

VARIANT_STEP = {"variants": [{"subject": "Quick question, {{first_name|there}}", "body": "Body A"},
                             {"subject": "{{RANDOM | Idea | Thought}} for {{company_name|you}}", "body": "Body B"}],
                "wait_days": 0}


def leads(n, domain="lead.test"):
    return [{"email": f"p{i}@{domain}", "first_name": f"P{i}"} for i in range(n)]


def fields(response):
    assert response.status_code == 400, response.json()
    assert response.json()["error"]["code"] == "invalid_request"
    return response.json()["error"]["details"]["fields"]


# --- validation ---------------------------------------------------------------------------------------
def test_variant_step_is_accepted_and_stored(api):
    r = create(api, steps=[VARIANT_STEP, {"body": "Bump", "wait_days": 1}])
    assert r.status_code == 200, r.json()
    from campaigns.models import Campaign

    campaign = Campaign.objects.get(pk=r.json()["result"]["campaign_id"])
    assert campaign.steps[0] == {"variants": [{"subject": "Quick question, {{first_name|there}}", "body": "Body A"},
                                              {"subject": VARIANT_STEP["variants"][1]["subject"], "body": "Body B"}],
                                 "wait_days": 0}
    assert r.json()["result"]["auto_winner"] is None
    assert r.json()["result"]["stop_on_company_reply"] is False


@pytest.mark.parametrize("step,path,needle", [
    ({"subject": "S", "body": "B", "variants": [{"subject": "a", "body": "a"}, {"subject": "b", "body": "b"}]},
     "steps.0.subject", "either"),
    ({"variants": [{"subject": "a", "body": "a"}]}, "steps.0.variants", "2"),
    ({"variants": [{"subject": "a", "body": "a"}] * 6}, "steps.0.variants", "5"),
    ({"variants": [{"subject": "a", "body": "a"}, {"body": "b"}]}, "steps.0.variants.1.subject",
     "Every variant of the first step needs a subject"),
    ({"variants": [{"subject": "a", "body": "a"}, {"subject": "b", "body": " "}]}, "steps.0.variants.1.body", "blank"),
    ({"variants": [{"subject": "a", "body": "a"}, {"subject": "b", "body": "{{nope}}"}]},
     "steps.0.variants.1.body", "Unknown variable"),
    ({"wait_days": 0}, "steps.0.body", "required"),
])
def test_variant_rules(api, step, path, needle):
    got = fields(create(api, steps=[step]))
    assert path in got, got
    assert any(needle in m for m in got[path]), got


def test_auto_winner_rules(api):
    got = fields(create(api, auto_winner={"metric": "reply_rate", "min_sends_per_variant": 19}, steps=[VARIANT_STEP]))
    assert "auto_winner.min_sends_per_variant" in got
    got = fields(create(api, auto_winner={"metric": "opens", "min_sends_per_variant": 20}, steps=[VARIANT_STEP]))
    assert "auto_winner.metric" in got
    got = fields(create(api, auto_winner={"metric": "reply_rate", "min_sends_per_variant": 20}))
    assert "auto_winner" in got
    r = create(api, auto_winner={"metric": "reply_rate", "min_sends_per_variant": 20}, steps=[VARIANT_STEP])
    assert r.status_code == 200
    assert r.json()["result"]["auto_winner"] == {"metric": "reply_rate", "min_sends_per_variant": 20}


@pytest.mark.parametrize("subject,message", [
    ("Hi {{RANDOM | a | }}", "spintax at character 4: option 2 is empty"),
    ("Hi {{RANDOM | a | b", "spintax at character 4: unbalanced"),
    ("Hi {{RANDOM | only}}", "spintax at character 4: {{RANDOM | A | B}} needs at least two options"),
    ("x {{RANDOM | a {{RANDOM | b | c}} | d}}", "cannot be nested"),
    ("{{RANDOM | Hi {{nope}} | Hello}}", "Unknown variable(s): {{nope}}"),
])
def test_spintax_errors_name_the_step_and_position(api, subject, message):
    r = create(api, steps=[{"subject": "Fine", "body": "Fine"}, {"subject": subject, "body": "x"}])
    got = fields(r)
    assert list(got) == ["steps.1.subject"], got
    assert message.lower() in got["steps.1.subject"][0].lower(), got


def test_spintax_with_variables_is_accepted(api):
    r = create(api, steps=[{"subject": "{{RANDOM | Hi {{first_name|there}} | Hello {{city|friend}}}}",
                            "body": "{{RANDOM|A|B|C}} {{company_name}}"}])
    assert r.status_code == 200, r.json()


# --- deterministic, even assignment -------------------------------------------------------------------
def test_assignment_is_exactly_balanced_and_deterministic():
    steps = [{"variants": [{}] * k} for k in (2, 3, 5)] + [{"body": "plain"}]
    emails = [f"lead{i}@example{i % 37}.test" for i in range(10_000)]
    cid = uuid.UUID(int=42)
    first = templating.assign_variants(cid, steps, emails)
    assert first == templating.assign_variants(cid, steps, emails)  # deterministic
    for s, k in enumerate((2, 3, 5)):
        counts = Counter(row[s] for row in first)
        assert set(counts) == set(range(k))
        assert max(counts.values()) - min(counts.values()) <= 1  # exact: floor or ceil of n/k
    assert all(row[3] is None for row in first)
    # a lead's variant does not depend on the other leads' order, only on (campaign, step, lead): the stated
    # tolerance of the assignment when leads are added is the ranking's, and steps are independent
    cross = Counter((row[0], row[1]) for row in first)
    for cell in cross.values():
        assert abs(cell - 10_000 / 6) < 0.1 * 10_000 / 6  # within 10% of independence
    other = templating.assign_variants(uuid.UUID(int=43), steps, emails)
    assert sum(a[0] != b[0] for a, b in zip(first, other, strict=True)) > 4000  # another campaign, another draw


def test_assignment_through_the_api_is_even(api):
    r = create(api, leads=leads(3001), steps=[{"variants": [{"subject": f"S{i}", "body": "b"} for i in range(3)]}])
    assert r.status_code == 200
    from campaigns.models import CampaignLead

    counts = Counter(v[0] for v in CampaignLead.objects.filter(campaign_id=r.json()["result"]["campaign_id"])
                     .values_list("variants", flat=True))
    assert sorted(counts.values()) == [1000, 1000, 1001]


# --- spintax ------------------------------------------------------------------------------------------
def test_spin_is_deterministic_and_spread_within_tolerance():
    text = "{{RANDOM | a | b | c}} and {{RANDOM | x | y}}"
    n = 6000
    outs = [templating.spin(text, f"camp|lead{i}|0|None|body") for i in range(n)]
    assert outs == [templating.spin(text, f"camp|lead{i}|0|None|body") for i in range(n)]
    first = Counter(o.split(" and ")[0] for o in outs)
    second = Counter(o.split(" and ")[1] for o in outs)
    assert set(first) == {"a", "b", "c"} and set(second) == {"x", "y"}
    for counts, k in ((first, 3), (second, 2)):  # stated tolerance: every option within 10% of n/k
        for c in counts.values():
            assert abs(c - n / k) < 0.1 * n / k, counts
    # the two places are drawn independently
    pairs = Counter(outs)
    assert len(pairs) == 6


def test_spin_keeps_variables_and_fallbacks():
    text = "{{RANDOM | Hi {{first_name|there}} | Hello {{first_name|there}}}}!"
    spun = {templating.spin(text, f"s{i}") for i in range(50)}
    assert spun == {"Hi {{first_name|there}}!", "Hello {{first_name|there}}!"}
    assert templating.render("Hi {{first_name|there}}!", {"first_name": ""}) == "Hi there!"


def test_preview_samples_match_what_is_sent(api, owner, workspace, clock, settings):
    from campaigns.models import CampaignLead
    from sending.testing import make_active_mailbox
    from tests.campaigns.conftest import run_tick

    make_active_mailbox(workspace, email="alex@spin-mail.test")
    steps = [{"variants": [{"subject": "{{RANDOM | Hello | Hi | Hey}} {{first_name}}", "body": "A {{RANDOM|1|2|3}}"},
                           {"subject": "{{RANDOM | Quick | Short}} note", "body": "B {{RANDOM|x|y}}"}]}]
    cid = create(api, leads=leads(8), steps=steps, sending_window=ALWAYS).json()["result"]["campaign_id"]
    preview = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]
    samples = preview["samples"]
    assert [s["to"] for s in samples] == ["p0@lead.test", "p1@lead.test", "p2@lead.test"]
    again = api.post("/v1/launch_campaign", {"campaign_id": cid}).json()["result"]["samples"]
    assert again == samples  # the same lead always reads the same text
    assert "{{" not in "".join(s["subject"] + s["body"] for s in samples)
    assert launch(api, cid, owner).status_code == 200
    run_tick()
    sent = {m["To"].addresses[0].addr_spec: m for m in sink_messages(settings)}
    assert len(sent) == 8
    for sample in samples:
        message = sent[sample["to"]]
        assert message["Subject"] == sample["subject"]
        assert message.get_body(("plain",)).get_content().startswith(sample["body"] + "\n")
    variants = Counter(CampaignLead.objects.get(campaign_id=cid, email=to).variants[0] for to in sent)
    assert variants == Counter({0: 4, 1: 4})


# --- stats and the winner -----------------------------------------------------------------------------
def test_winner_test_rule():
    from campaigns.selectors import winner_test

    assert winner_test(sent=[20, 20], successes=[10, 0])[0] == 0
    assert winner_test(sent=[20, 20], successes=[3, 2])[0] is None  # not significant
    assert winner_test(sent=[20, 20], successes=[0, 0]) == (None, [None, 1.0])
    # three variants: the leader must beat each of the others at 0.05 / 2
    assert winner_test(sent=[50, 50, 50], successes=[2, 20, 4])[0] == 1
    assert winner_test(sent=[50, 50, 50], successes=[2, 20, 14])[0] is None


def test_stats_steps_shape_on_a_plain_campaign(api):
    cid = create(api).json()["result"]["campaign_id"]
    steps = api.get(f"/v1/campaigns/{cid}").json()["stats"]["steps"]
    assert steps == [{"step": 1, "sent": 0, "variants": [], "winner": None, "winner_chosen_at": None},
                     {"step": 2, "sent": 0, "variants": [], "winner": None, "winner_chosen_at": None}]
