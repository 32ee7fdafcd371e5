"""Deterministic synthetic lead data for `manage.py seed_demo`: companies, people and recent intent signals.

Every run produces the same people (same fingerprints) and companies; signals are dated relative to today so
find_intent always has something inside its 90-day window. Domains use the reserved `.example` TLD.
"""

import json
import random
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from leads import importer
from leads.models import IntentSignal

DEMO_EVIDENCE_PREFIX = "https://news.demo.example/"
COMPANIES = 300
PEOPLE_PER_COMPANY = 10

WORDS = ["acme", "apex", "bright", "cedar", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper",
         "kestrel", "lumen", "meridian", "nimbus", "orbit", "pioneer", "quartz", "river", "summit", "tidal",
         "umber", "vertex", "willow", "zenith"]
SUFFIXES = ["labs", "systems", "analytics", "cloud", "robotics", "health", "logistics", "energy", "works", "bank",
            "foods", "media"]
INDUSTRIES = ["Computer Software", "Information Technology and Services", "Financial Services", "Hospital & Health Care",
              "Logistics and Supply Chain", "Renewables & Environment", "Marketing and Advertising", "Food & Beverages",
              "Machinery", "Internet"]
PLACES = [("San Francisco", "California", "United States"), ("New York", "New York", "United States"),
          ("Austin", "Texas", "United States"), ("London", "England", "United Kingdom"),
          ("Manchester", "England", "United Kingdom"), ("Berlin", "Berlin", "Germany"), ("Munich", "Bavaria", "Germany"),
          ("Paris", "Ile-de-France", "France"), ("Toronto", "Ontario", "Canada"), ("Sydney", "New South Wales", "Australia"),
          ("Amsterdam", "North Holland", "Netherlands"), ("Stockholm", "Stockholm", "Sweden")]
FIRST = ["Ada", "Ben", "Chloe", "Dev", "Elena", "Farah", "Gustav", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Mateo",
         "Nora", "Omar", "Priya", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Victor", "Wen", "Yusuf", "Zoe"]
LAST = ["Adams", "Brown", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Hughes", "Ito", "Jensen", "Khan", "Lopez",
        "Müller", "Nakamura", "Okafor", "Patel", "Rossi", "Silva", "Tanaka", "Ueda", "Varga", "Wright", "Young", "Zhang"]
TITLES = ["CEO", "CTO", "VP Sales", "Head of Sales", "Sales Director", "Account Executive", "SDR Manager",
          "VP Marketing", "Head of Growth", "Marketing Manager", "CFO", "Head of Engineering", "Engineering Manager",
          "Software Engineer", "Head of Operations", "COO", "Founder", "RevOps Lead", "Procurement Manager",
          "IT Director"]
HEADCOUNTS = [8, 15, 30, 60, 120, 250, 500, 1200, 3000, 10000]
SIGNAL_TEXT = {
    "hiring": "Hiring {n} {role} roles",
    "funding": "Raised a Series {r} round",
    "news": "Announced a new {thing}",
    "job_change": "New {role} joined in the last month",
    "technology": "Started using a new {thing} platform",
}


def rows(today):
    rnd = random.Random(20240601)
    leads, signals = [], []
    for c in range(COMPANIES):
        name = f"{WORDS[c % len(WORDS)].title()} {SUFFIXES[(c // len(WORDS)) % len(SUFFIXES)].title()}"
        domain = f"{WORDS[c % len(WORDS)]}-{SUFFIXES[(c // len(WORDS)) % len(SUFFIXES)]}{c // 300 or ''}.example"
        industry = INDUSTRIES[rnd.randrange(len(INDUSTRIES))]
        headcount = HEADCOUNTS[rnd.randrange(len(HEADCOUNTS))]
        city, region, country = PLACES[rnd.randrange(len(PLACES))]
        for p in range(PEOPLE_PER_COMPANY):
            first, last = FIRST[rnd.randrange(len(FIRST))], LAST[rnd.randrange(len(LAST))]
            status = rnd.choices(["valid", "catch_all", "unknown", "invalid", ""], weights=[60, 15, 10, 5, 10])[0]
            verified = today - timedelta(days=rnd.randrange(0, 60)) if status in ("valid", "catch_all") else None
            slug = f"{first}-{last}-{c:03d}{p}".lower().replace("ü", "u")
            leads.append({
                "first_name": first, "last_name": last, "full_name": f"{first} {last}",
                "title": TITLES[rnd.randrange(len(TITLES))], "company_name": name, "company_domain": domain,
                "industry": industry, "headcount": headcount, "city": city, "region": region, "country": country,
                "social_url": f"https://www.linkedin.example/in/{slug}",
                "work_email": f"{first}.{last}@{domain}".lower().replace("ü", "u") if status else "",
                "work_email_status": status, "work_email_verified_at": verified.isoformat() if verified else "",
                "mobile_phone": f"+1555{rnd.randrange(10**6, 10**7)}" if rnd.random() < 0.3 else "",
            })
        if c % 4 == 0:  # a quarter of the companies show signals
            for _ in range(rnd.randrange(1, 4)):
                kind = rnd.choice(list(SIGNAL_TEXT))
                observed = today - timedelta(days=rnd.randrange(0, 120))  # some fall outside the 90-day window
                summary = SIGNAL_TEXT[kind].format(n=rnd.randrange(2, 12), role=rnd.choice(["sales", "engineering",
                                                   "marketing"]), r=rnd.choice("ABC"), thing=rnd.choice(["product",
                                                   "partnership", "CRM", "data warehouse"]))
                signals.append({"company_domain": domain, "signal": kind, "summary": summary,
                                "observed_at": observed.isoformat(),
                                "evidence_url": f"{DEMO_EVIDENCE_PREFIX}{domain}/{kind}/{observed.isoformat()}"})
    return leads, signals


def seed(workspace, stdout):
    today = timezone.now().date()
    leads, signals = rows(today)
    lead_report = importer.import_leads((i, row, None) for i, row in enumerate(leads, start=1))
    IntentSignal.objects.filter(evidence_url__startswith=DEMO_EVIDENCE_PREFIX).delete()
    signal_report = importer.import_signals((i, row, None) for i, row in enumerate(signals, start=1))
    # Name companies that really carry the default signals (hiring, funding) so the hint gives a hit.
    recent = (today - timedelta(days=settings.LEADS_INTENT_WINDOW_DAYS)).isoformat()
    example = sorted({s["company_domain"] for s in signals
                      if s["signal"] in ("hiring", "funding") and s["observed_at"] >= recent})[:2]
    # Request bodies that work as printed (copied into curl -d '…' or an MCP tool call).
    find_leads = {"audience": "sales leaders at software companies", "titles": ["sales"], "limit": 5}
    stdout.write(f"leads: {lead_report.loaded} demo people at {COMPANIES} companies, {signal_report.loaded} signals "
                 f"(try POST /v1/find_leads with {json.dumps(find_leads)}, "
                 f"or POST /v1/find_intent with {json.dumps({'company_domains': example})})")
