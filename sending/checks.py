"""`check --deploy`: the sending provider live mode buys capacity from (core/checks.py has the rest)."""

from __future__ import annotations

from django.core.checks import Error, Tags, register

from api import readiness
from sending.providers import config_problem

readiness.register(config_problem)  # /readyz names it too


@register(Tags.security, deploy=True)
def sending_provider(app_configs=None, **kwargs):
    problem = config_problem()
    if problem:
        return [Error(problem + ".", hint="Set SENDING_PROVIDER (docs/sending.md, Providers).", id="sending.E001")]
    return []
