"""`check --deploy`: the LLM model file must not route live calls to the built-in echo upstream."""

from __future__ import annotations

from django.core.checks import Error, Tags, register

from api import readiness
from llmproxy.catalog import config_problem

readiness.register(config_problem)  # /readyz names it too


@register(Tags.security, deploy=True)
def llm_models_file(app_configs=None, **kwargs):
    problem = config_problem()
    if problem:
        return [Error(problem + ".", hint="Set LLM_MODELS_FILE to a JSON file of real upstreams (docs/llm.md).",
                      id="llmproxy.E001")]
    return []
