"""Vendor adapters, each enabled only when its key / URL is configured (see docs/leads.md).

- people search: Apollo (`apollo`, APOLLO_API_KEY)
- person enrichment: Hunter Email Finder (`hunter`, HUNTER_API_KEY)
- hiring intent: Greenhouse Job Board API (`greenhouse`, GREENHOUSE_BOARDS_URL)
"""

from leads.providers import apollo, greenhouse, hunter  # noqa: F401 - importing registers them
