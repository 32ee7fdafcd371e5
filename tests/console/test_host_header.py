"""Emailed links never come from the request's Host (issue 15.2): ALLOWED_HOSTS is derived from BASE_URL (plus
ALLOWED_HOSTS_EXTRA), a forged Host is a 400 that sends nothing, and every link in a sign-in mail is built
from BASE_URL even when the request came in under another allowed name."""

import json
import os
import re
import subprocess
import sys

import pytest
from django.test import Client

from tests.console.helpers import body, messages_to

pytestmark = pytest.mark.django_db


def _settings_with(env: dict) -> dict:
    code = ("import json, config.settings as s; "
            "print(json.dumps({'hosts': s.ALLOWED_HOSTS}))")
    clean = {k: v for k, v in os.environ.items() if k not in ("BASE_URL", "ALLOWED_HOSTS_EXTRA", "HOST")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_allowed_hosts_come_from_base_url_and_the_explicit_extra_list():
    hosts = _settings_with({"BASE_URL": "https://app.example.com", "ALLOWED_HOSTS_EXTRA": "lb.internal, 10.0.0.5",
                            "HOST": "0.0.0.0"})["hosts"]
    assert "*" not in hosts
    assert set(hosts) == {"app.example.com", "127.0.0.1", "localhost", "[::1]", "lb.internal", "10.0.0.5"}


@pytest.mark.parametrize("path, data", [("/console/auth/login/", {"login": "someone@example.com"}),
                                        ("/console/auth/signup/", {"email": "new@example.com"})])
def test_forged_host_is_refused_and_nothing_is_mailed(path, data):
    resp = Client().post(path, data, HTTP_HOST="evil.example")
    assert resp.status_code == 400
    assert messages_to(data.get("login") or data["email"]) == []


def _links(text: str) -> list[str]:
    return re.findall(r"https?://[^\s>\"]+", text)


def test_every_link_in_sign_in_mail_is_built_from_base_url(settings, owner):
    settings.BASE_URL = "https://console.example.com"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "internal.lb"]
    Client(HTTP_HOST="internal.lb").post("/console/auth/login/", {"login": owner.email})  # code + one-time link
    Client(HTTP_HOST="internal.lb").post("/console/auth/login/", {"login": "stranger@example.com"})  # unknown: the sign-up invitation mail
    mails = messages_to(owner.email) + messages_to("stranger@example.com")
    assert len(mails) == 2
    for msg in mails:
        text = body(msg)
        assert "internal.lb" not in text and "testserver" not in text
        links = _links(text)
        assert links and all(link.startswith("https://console.example.com/") for link in links), links
