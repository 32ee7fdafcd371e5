"""import_leads / import_signals commands and the demo seed."""

import io
import json

import pytest
from django.core.management import call_command

from leads.models import Company, IntentSignal, Person

HEADER = ("first_name,last_name,full_name,title,company_name,company_domain,industry,headcount,city,region,country,"
          "social_url,work_email,work_email_status,work_email_verified_at,mobile_phone\n")


def run(command, path):
    out, err = io.StringIO(), io.StringIO()
    call_command(command, str(path), "--no-progress", stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_import_leads_csv_reports_bad_rows_and_loads_good_ones(db, tmp_path):
    f = tmp_path / "leads.csv"
    f.write_text(HEADER + "\n".join([
        "Ada,Lovelace,,VP Sales,Acme,Acme.COM,Computer Software,120,London,England,United Kingdom,,ada@acme.com,valid,2026-01-02,",
        ",,,CTO,Acme,acme.com,,,,,,,,,,",  # line 3: no name
        "Bob,Smith,,CTO,Acme,acme.com,,many,,,,,,,,",  # line 4: headcount
        "Cy,Jones,,CFO,Acme,acme.com,,,,,,,cy@acme.com,great,,",  # line 5: status
        "Di,Moss,,CEO,Beta,beta.io,Internet,,,,,,di@beta.io,valid,yesterday,",  # line 6: date
        "Ed,Nash,,CEO,,,Internet,,,,,,,,,",  # line 7: no domain nor social url
        "Fay,Oak,,COO,Gamma,\"not a domain\",,,,,,,,,,",  # line 8: domain
        'Gus,Pym,,"Head of Sales, EMEA",Gamma,gamma.dev,Internet,"1,5",,,,,,,,',  # line 9: headcount "1,5"
        "Hal,Quo,,Head of Sales,Gamma,gamma.dev,Internet,15,Berlin,,Germany,https://linkedin.com/in/hal,,,,+4912345",
        "Ivy,Rex,,Engineer,Gamma,gamma.dev,Internet,15,Berlin,,Germany,,ivy@,valid,,",  # line 11: email
    ]) + "\n")
    out, err = run("import_leads", f)
    assert "leads: 2 rows loaded, 8 rows rejected" in out
    lines = err.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == [f"line {n}" for n in (3, 4, 5, 6, 7, 8, 9, 11)]
    assert "headcount" in lines[1] and "work_email_status" in lines[2] and "work_email_verified_at" in lines[3]
    assert Person.objects.count() == 2
    ada = Person.objects.get(first_name="Ada")
    assert ada.full_name == "Ada Lovelace" and ada.company_domain == "acme.com"
    assert ada.company.name == "Acme" and ada.company.headcount == 120 and ada.headcount == 120
    assert ada.industry_key == "computer software" and ada.work_email_verified_at.isoformat() == "2026-01-02"
    assert Company.objects.count() == 2


def test_import_is_idempotent_and_updates(db, tmp_path):
    f = tmp_path / "leads.csv"
    f.write_text(HEADER + "Ada,Lovelace,,VP Sales,Acme,acme.com,Software,120,London,,UK,,,,,\n")
    run("import_leads", f)
    run("import_leads", f)
    assert Person.objects.count() == 1 and Company.objects.count() == 1
    fp = Person.objects.get().fingerprint
    f.write_text(HEADER + "Ada,Lovelace,,CRO,Acme Inc,acme.com,Software,150,London,,UK,,,,,\n")
    run("import_leads", f)
    p = Person.objects.get()
    assert (p.fingerprint, p.title, p.title_key, p.headcount, p.company.name) == (fp, "CRO", "cro", 150, "Acme Inc")


def test_import_leads_jsonl(db, tmp_path):
    f = tmp_path / "leads.jsonl"
    rows = [
        {"full_name": "Ada Lovelace", "company_domain": "acme.com", "headcount": 120, "title": "VP Sales"},
        "not json",
        {"full_name": "Bob", "company_domain": "acme.com", "headcount": 1.5},
        ["a list"],
        {"full_name": "Cy Jones", "social_url": "https://linkedin.com/in/cy", "headcount": 10.0},
    ]
    f.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n\n")
    out, err = run("import_leads", f)
    assert "2 rows loaded, 3 rows rejected" in out
    assert [line.split(":")[0] for line in err.strip().splitlines()] == ["line 2", "line 3", "line 4"]
    assert set(Person.objects.values_list("full_name", flat=True)) == {"Ada Lovelace", "Cy Jones"}


def test_import_signals(db, tmp_path):
    f = tmp_path / "signals.csv"
    f.write_text("company_domain,signal,summary,observed_at,evidence_url\n"
                 "Acme.com,hiring,Hiring 3 AEs,2026-06-01,https://jobs.example/1\n"
                 "acme.com,gossip,x,2026-06-01,\n"
                 "acme.com,funding,Series A,,\n"
                 "acme.com,funding,Series A,2026-05-01T10:00:00Z,\n")
    out, err = run("import_signals", f)
    assert "signals: 2 rows loaded, 2 rows rejected" in out
    assert "line 3: signal" in err and "line 4: observed_at" in err
    run("import_signals", f)
    assert IntentSignal.objects.count() == 2
    assert set(IntentSignal.objects.values_list("company_domain", flat=True)) == {"acme.com"}


def test_import_missing_file_is_a_command_error(db, tmp_path):
    from django.core.management import CommandError

    with pytest.raises(CommandError):
        run("import_leads", tmp_path / "nope.csv")


def test_demo_seed_is_deterministic_and_idempotent(db, api):
    from leads import demo

    demo.seed(None, io.StringIO())
    first = list(Person.objects.order_by("fingerprint").values_list("fingerprint", flat=True))
    n_signals = IntentSignal.objects.count()
    demo.seed(None, io.StringIO())
    assert list(Person.objects.order_by("fingerprint").values_list("fingerprint", flat=True)) == first
    assert len(first) == demo.COMPANIES * demo.PEOPLE_PER_COMPANY
    assert IntentSignal.objects.count() == n_signals > 0
    # the demo data answers every verb
    r = api.post("/v1/find_leads", {"audience": "sales leaders", "titles": ["sales"], "limit": 3})
    assert len(r.json()["result"]["leads"]) == 3
    fp = r.json()["result"]["leads"][0]["fingerprint"]
    assert api.post("/v1/enrich", {"person": {"fingerprint": fp}}).status_code == 200
    domains = list(Company.objects.order_by("domain").values_list("domain", flat=True)[:100])
    r = api.post("/v1/find_intent", {"company_domains": domains})
    assert r.json()["result"]["companies_with_signals"] > 0
