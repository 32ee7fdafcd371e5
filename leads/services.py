"""find_leads, enrich and find_intent: the waterfalls over the providers, the hit/miss rules and the charges.

Each `*_run(ctx, **validated)` is the `run` of a verb in leads/verbs.py and returns an `Outcome` whose charge
is exact; the pipeline (api.pipeline.execute) holds, settles and renders the envelope.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from billing import services as billing
from core import errors
from core.money import credits, format_credits
from core.verbs import Outcome
from leads.identity import full_name_of, norm_domain, norm_email, norm_social, norm_text
from leads.models import EnrichmentCacheEntry
from leads.providers import (
    Contact,
    IntentQuery,
    PersonQuery,
    ProviderError,
    SearchQuery,
    waterfall,
)

logger = logging.getLogger("leads")

FIND_LEADS_PRICE = credits("0.2")
ENRICH_PRICE = credits("5")
INTENT_SIGNAL_COMPANY_PRICE = credits("10")
INTENT_SCAN_PRICE = credits("0.5")
DEFAULT_SIGNALS = ("hiring", "funding")
HIT_EMAIL_STATUSES = ("valid", "catch_all", "unknown")


def _unavailable(capability: str, failures: list[str]) -> errors.DomainError:
    return errors.ProviderUnavailable(details={"capability": capability, "failed_providers": failures})


def _failed(provider, exc: Exception, failures: list[str]) -> None:
    logger.warning("provider %s failed (%s): %s", provider.name,
                   "permanent" if getattr(exc, "permanent", False) else "transient", exc)
    failures.append(provider.name)


# --- find_leads -----------------------------------------------------------------------------------
def _filters_hash(query: SearchQuery) -> str:
    basis = json.dumps([query.titles, query.industries, query.locations, query.headcount_min, query.headcount_max],
                       separators=(",", ":"))
    return hashlib.sha256(basis.encode()).hexdigest()[:16]


def cursor_encode(provider: str, after: str, query: SearchQuery) -> str:
    raw = json.dumps({"v": 1, "p": provider, "a": after, "q": _filters_hash(query)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def cursor_decode(cursor: str, query: SearchQuery) -> tuple[str, str]:
    bad = errors.InvalidRequest(details={"fields": {"cursor": ["Not a cursor from a previous find_leads call "
                                                                 "with the same filters."]}})
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        provider, after, qhash = data["p"], data["a"], data["q"]
    except Exception as exc:  # noqa: BLE001 - any garbage is the same 400
        raise bad from exc
    if data.get("v") != 1 or not isinstance(provider, str) or not isinstance(after, str) or qhash != _filters_hash(query):
        raise bad
    return provider, after


def _lead_out(lead) -> dict:
    return {
        "fingerprint": lead.fingerprint,
        "full_name": lead.full_name,
        "title": lead.title,
        "company_name": lead.company_name,
        "company_domain": lead.company_domain,
        "work_email": None,  # always masked: reveal with enrich
        "social_url": lead.social_url,
        "location": lead.location,
    }


def find_leads_run(ctx, *, audience, titles=(), industries=(), locations=(), company_headcount=None, limit=25,
                   cursor=None) -> Outcome:
    headcount = company_headcount or {}
    query = SearchQuery(
        titles=sorted({norm_text(t) for t in titles if norm_text(t)}),
        industries=sorted({norm_text(i) for i in industries if norm_text(i)}),
        locations=sorted({norm_text(x) for x in locations if norm_text(x)}),
        headcount_min=headcount.get("min"), headcount_max=headcount.get("max"), limit=limit, audience=audience,
    )
    providers = waterfall("search")
    if cursor:
        name, query.after = cursor_decode(cursor, query)
        providers = [p for p in providers if p.name == name]
    failures: list[str] = []
    answered = None
    for provider in providers:
        if not provider.can_answer(query):
            continue
        try:
            page = provider.search(query)
        except ProviderError as exc:
            _failed(provider, exc, failures)
            continue
        answered = (provider, page)
        if page.leads:
            break
    if answered is None:
        raise _unavailable("search", failures)
    provider, page = answered
    leads = page.leads[:limit]
    result = {
        "leads": [_lead_out(lead) for lead in leads],
        "total_found": page.total_found,
        "next_cursor": cursor_encode(provider.name, page.next_after, query) if page.next_after and leads else None,
    }
    return Outcome(result=result, charge=FIND_LEADS_PRICE * len(leads))


# --- enrich ---------------------------------------------------------------------------------------
def person_query(person: dict, want) -> PersonQuery:
    return PersonQuery(
        fingerprint=(person.get("fingerprint") or "").strip(),
        full_name=(person.get("full_name") or "").strip(),
        first_name=(person.get("first_name") or "").strip(),
        last_name=(person.get("last_name") or "").strip(),
        company_domain=norm_domain(person.get("company_domain")),
        social_url=(person.get("social_url") or "").strip(),
        email=norm_email(person.get("email")),
        want=tuple(want),
    )


def identity_keys(*, fingerprint="", social_url="", email="", full_name="", first_name="", last_name="",
                  company_domain="") -> list[str]:
    keys = []
    if fingerprint:
        keys.append(f"fp:{fingerprint}")
    if social_url and norm_social(social_url):
        keys.append(f"url:{norm_social(social_url)}")
    if email:
        keys.append(f"email:{norm_email(email)}")
    name = norm_text(full_name_of(full_name, first_name, last_name))
    if name and company_domain:
        keys.append(f"name:{name}|{norm_domain(company_domain)}")
    return keys


def want_key(want) -> str:
    return ",".join(sorted(set(want)))


def cache_lookup(*, workspace, query: PersonQuery) -> dict | None:
    keys = identity_keys(fingerprint=query.fingerprint, social_url=query.social_url, email=query.email,
                         full_name=query.full_name, first_name=query.first_name, last_name=query.last_name,
                         company_domain=query.company_domain)
    if not keys:
        return None
    since = timezone.now() - timedelta(days=settings.LEADS_ENRICH_CACHE_DAYS)
    entry = (EnrichmentCacheEntry.objects.filter(workspace=workspace, lookup_key__in=keys,
                                                 want_key=want_key(query.want), created_at__gte=since)
             .order_by("-created_at").first())
    return entry.result if entry else None


def cache_store(*, workspace, query: PersonQuery, contact: Contact, result: dict) -> None:
    keys = set(identity_keys(fingerprint=query.fingerprint, social_url=query.social_url, email=query.email,
                             full_name=query.full_name, first_name=query.first_name, last_name=query.last_name,
                             company_domain=query.company_domain))
    keys |= set(identity_keys(fingerprint=contact.fingerprint, social_url=contact.social_url,
                              email=contact.work_email, full_name=contact.full_name, first_name=contact.first_name,
                              last_name=contact.last_name, company_domain=contact.company_domain))
    now = timezone.now()
    wk = want_key(query.want)
    for key in sorted(keys):
        try:
            with transaction.atomic():
                EnrichmentCacheEntry.objects.update_or_create(
                    workspace=workspace, lookup_key=key[:600], want_key=wk,
                    defaults={"result": result, "created_at": now},
                )
        except IntegrityError:  # a concurrent call cached the same key first: its entry is as good
            pass


# Our own verifier's statuses (leads.verification) as enrich statuses. Conservative: a risky address is not
# called valid, and an address our verifier found invalid is not returned at all (the call is then a miss).
VERIFIER_TO_ENRICH = {"valid": "valid", "catch_all_valid": "catch_all", "catch_all_unknown": "catch_all",
                      "risky": "unknown", "invalid": "not_found"}


def email_status(contact: Contact) -> str:
    """The address's status: the newest conclusive verification within 30 days, whether the data source's or
    this service's own (verify_email results are stored and reused); `unknown` when neither is fresh."""
    from leads.verification.selectors import latest_verification

    fresh = timedelta(days=settings.LEADS_EMAIL_FRESH_DAYS)
    verified = contact.work_email_verified_at
    ours = latest_verification(email=contact.work_email, max_age=fresh) if contact.work_email else None
    if ours is not None and (verified is None or ours.checked_at.date() >= verified):
        return VERIFIER_TO_ENRICH.get(ours.status, "unknown")
    status = contact.work_email_status or "unknown"
    if status not in ("valid", "catch_all"):
        return status
    if verified is None or verified < timezone.now().date() - fresh:
        return "unknown"
    return status


def contact_result(contact: Contact, want) -> tuple[dict, bool]:
    """The `contact` object for `want`, and whether it is a hit (at least one item asked for is returned)."""
    out: dict = {"fingerprint": contact.fingerprint or None, "title": contact.title}
    hit = False
    if "work_email" in want:
        status = email_status(contact) if contact.work_email else "not_found"
        if contact.work_email and status in HIT_EMAIL_STATUSES:
            out["work_email"], out["work_email_status"] = contact.work_email, status
            hit = True
        else:
            out["work_email"], out["work_email_status"] = None, "not_found"
    if "mobile_phone" in want:
        out["mobile_phone"] = contact.mobile_phone or None
        hit = hit or bool(contact.mobile_phone)
    if "profile" in want:
        location = ", ".join(p for p in (contact.city, contact.region, contact.country) if p)
        out.update({
            "full_name": contact.full_name, "first_name": contact.first_name, "last_name": contact.last_name,
            "company_name": contact.company_name, "company_domain": contact.company_domain,
            "social_url": contact.social_url, "location": location,
        })
        hit = hit or bool(contact.full_name)
    return out, hit


def enrich_max_charge(ctx, data: dict) -> int:
    """Runs before any provider: a cached repeat holds nothing; otherwise max_credits must cover the price."""
    query = person_query(data["person"], data.get("want") or ["work_email"])
    cached = cache_lookup(workspace=ctx.workspace, query=query)
    ctx.extra["enrich_cached"] = cached
    if cached is not None:
        return 0
    ceiling = data.get("max_credits")
    if ceiling is not None and ceiling < ENRICH_PRICE:
        raise errors.SpendCeilingExceeded(
            f"max_credits is {format_credits(ceiling)}; an enrich hit costs {format_credits(ENRICH_PRICE)}.",
            details={"price": format_credits(ENRICH_PRICE), "max_credits": format_credits(ceiling)},
        )
    return ENRICH_PRICE


def enrich_run(ctx, *, person, want=None, max_credits=None) -> Outcome:
    want = list(dict.fromkeys(want or ["work_email"]))
    cached = ctx.extra.get("enrich_cached")
    if cached is not None:
        return Outcome(result={**cached, "from_cache": True}, charge=0)
    query = person_query(person, want)
    failures: list[str] = []
    answered = False
    for provider in waterfall("enrich"):
        if not provider.can_answer(query):
            continue
        try:
            contact = provider.enrich(query)
        except ProviderError as exc:
            _failed(provider, exc, failures)
            continue
        answered = True
        if contact is None:
            continue
        out, hit = contact_result(contact, want)
        if hit:
            result = {"outcome": "hit", "contact": out, "from_cache": False}
            cache_store(workspace=ctx.workspace, query=query, contact=contact, result=result)
            return Outcome(result=result, charge=ENRICH_PRICE)
    if not answered:
        raise _unavailable("enrich", failures)
    return Outcome(result={"outcome": "miss", "contact": None, "from_cache": False}, charge=0)


# --- find_intent ----------------------------------------------------------------------------------
def intent_price(*, scanned: int, with_signals: int) -> int:
    """10 per company with at least one signal plus 0.5 per other company scanned; no signal at all is free."""
    if with_signals == 0:
        return 0
    return INTENT_SIGNAL_COMPANY_PRICE * with_signals + INTENT_SCAN_PRICE * (scanned - with_signals)


def find_intent_run(ctx, *, company_domains, signals=None) -> Outcome:
    domains = list(dict.fromkeys(norm_domain(d) for d in company_domains))
    wanted = list(dict.fromkeys(signals or DEFAULT_SIGNALS))
    today = timezone.now().date()
    query = IntentQuery(company_domains=domains, signals=wanted,
                        since=today - timedelta(days=settings.LEADS_INTENT_WINDOW_DAYS))
    failures: list[str] = []
    answered = False
    found: dict[tuple, object] = {}
    for provider in waterfall("intent"):
        if not provider.can_answer(query):
            continue
        sub = IntentQuery(company_domains=domains, since=query.since,
                          signals=[s for s in wanted if s in provider.signal_types])
        try:
            rows = provider.find(sub)
        except ProviderError as exc:
            _failed(provider, exc, failures)
            continue
        answered = True
        for s in rows:
            domain = norm_domain(s.company_domain)
            if domain not in domains or s.signal not in sub.signals or s.observed_at < query.since:
                continue
            found.setdefault((domain, s.signal, s.observed_at, s.summary, s.evidence_url or ""), s)
    if not answered:
        raise _unavailable("intent", failures)
    order = {d: i for i, d in enumerate(domains)}
    items = sorted(found.items(), key=lambda kv: (order[kv[0][0]], -kv[0][2].toordinal(), kv[0][1], kv[0][3]))
    out = []
    for (domain, signal, observed_at, summary, evidence_url), _s in items:
        row = {"company_domain": domain, "signal": signal, "summary": summary,
               "observed_at": observed_at.isoformat()}
        if evidence_url:
            row["evidence_url"] = evidence_url
        out.append(row)
    with_signals = len({row["company_domain"] for row in out})
    charge = intent_price(scanned=len(domains), with_signals=with_signals)
    if charge:
        # The price is known only now: hold it exactly (402 insufficient_credits if short); the pipeline settles.
        ctx.hold = billing.hold_place(workspace=ctx.workspace, amount=charge, request_id=ctx.request_id,
                                      api_key=ctx.api_key)
    result = {"signals": out, "companies_scanned": len(domains), "companies_with_signals": with_signals}
    return Outcome(result=result, charge=charge)
