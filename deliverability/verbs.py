"""GET /v1/domains (CONTRACT 4.13): each sending domain's DNS checks, blocklist listings and health state."""

from __future__ import annotations

from rest_framework import serializers

from core.verbs import Outcome, Verb, register
from deliverability import selectors
from sending.models import DNS_CHECK_RESULTS, HEALTH_REASONS, HEALTH_STATES

CHECK = DNS_CHECK_RESULTS


class ChecksOut(serializers.Serializer):
    spf = serializers.ChoiceField(choices=CHECK, allow_null=True,
                                  help_text="One SPF record that authorizes the sending path.")
    dkim = serializers.ChoiceField(choices=CHECK, allow_null=True,
                                   help_text="The selector's record carries the key the service signs with.")
    dmarc = serializers.ChoiceField(choices=CHECK, allow_null=True, help_text="One v=DMARC1 record with a policy.")
    mx = serializers.ChoiceField(choices=CHECK, allow_null=True, help_text="MX records that accept mail.")


class DomainOut(serializers.Serializer):
    domain = serializers.CharField()
    state = serializers.ChoiceField(choices=HEALTH_STATES)
    reasons = serializers.ListField(child=serializers.ChoiceField(choices=HEALTH_REASONS))
    checks = ChecksOut(help_text="null: not checked yet.")
    blocklists = serializers.ListField(child=serializers.CharField(), help_text="Zones listing the domain.")
    checked_at = serializers.DateTimeField(allow_null=True)
    changed_at = serializers.DateTimeField(allow_null=True)
    mailbox_ids = serializers.ListField(child=serializers.CharField())


class DomainListOut(serializers.Serializer):
    domains = DomainOut(many=True)


def run_list_domains(ctx) -> Outcome:
    return Outcome(result={"domains": [selectors.domain_render(d)
                                       for d in selectors.domains_list(workspace=ctx.workspace)]})


list_domains = register(Verb(
    name="list_domains", path="/v1/domains", method="GET", run=run_list_domains, input=None,
    output=DomainListOut, envelope=False, record=False, tags=("state",),
    summary="The workspace's sending domains: DNS authentication, blocklists and health",
    description=("Free. `checks` (spf, dkim, dmarc, mx: pass, fail or missing; null before the first check), "
                 "`blocklists` (the DELIVERABILITY_DNSBL_ZONES zones listing the domain), `state` healthy, warning "
                 "or paused with `reasons` (docs/deliverability.md). A paused domain pauses its mailboxes; only an "
                 "owner or admin resumes it, on the console's Deliverability page."),
))
