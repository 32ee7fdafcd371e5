"""Vendor adapters, each enabled only when its key / URL is configured (see docs/leads.md)."""
