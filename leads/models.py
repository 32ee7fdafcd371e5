"""The local lead dataset (companies, people, intent signals) and the per-workspace enrichment cache.

The dataset is global (shared by every workspace); only the enrichment cache is per workspace. Filter columns
are stored lower-cased (`*_key`) and the company's industry and headcount are copied onto each person, so that
find_leads filters one indexed table without joins.
"""

from django.db import models


class Company(models.Model):
    domain = models.CharField(max_length=253, unique=True)  # lower-case
    name = models.CharField(max_length=300, blank=True)
    industry = models.CharField(max_length=200, blank=True)
    headcount = models.IntegerField(null=True, blank=True)
    city = models.CharField(max_length=200, blank=True)
    region = models.CharField(max_length=200, blank=True)
    country = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "companies"

    def __str__(self):
        return self.domain


COVER = ["title_key", "industry_key", "country_key", "region_key", "city_key", "headcount"]


def covering(column: str) -> list[str]:
    return [column, "id", *[c for c in COVER if c != column]]


class Person(models.Model):
    fingerprint = models.CharField(max_length=40, unique=True)  # "fp1:" + 24 hex
    first_name = models.CharField(max_length=150, blank=True)
    last_name = models.CharField(max_length=150, blank=True)
    full_name = models.CharField(max_length=300)
    title = models.CharField(max_length=300, blank=True)
    company = models.ForeignKey(Company, null=True, blank=True, on_delete=models.SET_NULL, related_name="people")
    company_name = models.CharField(max_length=300, blank=True)
    company_domain = models.CharField(max_length=253, blank=True)
    city = models.CharField(max_length=200, blank=True)
    region = models.CharField(max_length=200, blank=True)
    country = models.CharField(max_length=200, blank=True)
    social_url = models.CharField(max_length=500, blank=True)
    work_email = models.CharField(max_length=320, blank=True)
    work_email_status = models.CharField(max_length=16, blank=True)  # valid, catch_all, unknown, invalid
    work_email_verified_at = models.DateField(null=True, blank=True)
    mobile_phone = models.CharField(max_length=40, blank=True)
    # Lower-cased filter columns (find_leads), plus copies of the company's industry and headcount.
    title_key = models.CharField(max_length=300, blank=True)
    industry_key = models.CharField(max_length=200, blank=True)
    city_key = models.CharField(max_length=200, blank=True)
    region_key = models.CharField(max_length=200, blank=True)
    country_key = models.CharField(max_length=200, blank=True)
    headcount = models.IntegerField(null=True, blank=True)
    name_key = models.CharField(max_length=300, blank=True)
    social_key = models.CharField(max_length=500, blank=True)
    email_key = models.CharField(max_length=320, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Covering indexes: each filter column leads, then id (the result order), then the other filter
        # columns, so that a page and its total_found are answered from one index without touching the table.
        indexes = [
            models.Index(fields=covering("title_key"), name="leads_person_title_cov"),
            models.Index(fields=covering("industry_key"), name="leads_person_industry_cov"),
            models.Index(fields=covering("country_key"), name="leads_person_country_cov"),
            models.Index(fields=covering("region_key"), name="leads_person_region_cov"),
            models.Index(fields=covering("city_key"), name="leads_person_city_cov"),
            models.Index(fields=covering("headcount"), name="leads_person_headcount_cov"),
            models.Index(fields=["company_domain", "name_key"], name="leads_person_domain_name"),
            models.Index(fields=["social_key"], name="leads_person_social"),
            models.Index(fields=["email_key"], name="leads_person_email"),
        ]

    def __str__(self):
        return f"{self.full_name} ({self.fingerprint})"


class LeadTitle(models.Model):
    """Every distinct lower-cased title of the dataset. find_leads resolves a title fragment against this small
    table (trigram-indexed) and then filters people by title equality on an ordinary index."""

    key = models.CharField(max_length=300, unique=True)

    def __str__(self):
        return self.key


class LeadPlace(models.Model):
    """Every distinct lower-cased city, region and country of the dataset with its level, so that a `locations`
    value is matched only against the columns that hold it (one indexed equality instead of a three-way OR)."""

    key = models.CharField(max_length=200)
    level = models.CharField(max_length=8)  # city, region, country

    class Meta:
        constraints = [models.UniqueConstraint(fields=["key", "level"], name="leads_place_unique")]

    def __str__(self):
        return f"{self.level}:{self.key}"


class IntentSignal(models.Model):
    company_domain = models.CharField(max_length=253)  # lower-case
    signal = models.CharField(max_length=20)
    summary = models.TextField(blank=True)
    observed_at = models.DateField()
    evidence_url = models.CharField(max_length=1000, blank=True)
    dedupe_key = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["company_domain", "signal", "observed_at"], name="leads_signal_lookup")]

    def __str__(self):
        return f"{self.company_domain} {self.signal} {self.observed_at}"


class EnrichmentCacheEntry(models.Model):
    """A hit of enrich, cached for 90 days per workspace under every identity key of the person."""

    workspace = models.ForeignKey("accounts.Workspace", on_delete=models.CASCADE, related_name="+")
    lookup_key = models.CharField(max_length=600)  # e.g. "fp:fp1:…", "url:…", "email:…", "name:…|domain"
    want_key = models.CharField(max_length=64)  # sorted, comma-joined `want`
    result = models.JSONField()
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name_plural = "enrichment cache entries"
        constraints = [
            models.UniqueConstraint(fields=["workspace", "lookup_key", "want_key"], name="leads_cache_unique"),
        ]
