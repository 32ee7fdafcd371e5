"""The production checklist (`manage.py check --deploy`) and /readyz name every missing or unsafe live-mode
setting (CONTRACT 4.14): SANDBOX, SECRET_KEY, MAILBOX_SECRET_KEY, SENDING_PROVIDER, an LLM_MODELS_FILE on the echo
upstream, a BASE_URL that is not https, DEBUG, ALLOWED_HOSTS; live mode without its secrets refuses to start,
naming them all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DROP = ("SANDBOX", "SECRET_KEY", "MAILBOX_SECRET_KEY", "SENDING_PROVIDER", "LLM_MODELS_FILE", "BASE_URL", "DJANGO_DEBUG",
        "REDIS_URL", "DATABASE_URL", "EMAIL_HOST", "HOST", "ALLOWED_HOSTS_EXTRA")


def _manage(tmp_path, env: dict, *args) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in DROP}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**clean, "DATA_DIR": str(tmp_path), **env})


def test_live_mode_without_its_secrets_refuses_to_start_naming_both(tmp_path):
    out = _manage(tmp_path, {"SANDBOX": "0"}, "check", "--deploy")
    assert out.returncode != 0
    assert "requires SECRET_KEY and MAILBOX_SECRET_KEY" in out.stderr and "check --deploy" in out.stderr


def test_check_deploy_names_every_unsafe_live_setting(tmp_path):
    out = _manage(tmp_path, {"SANDBOX": "0", "SECRET_KEY": "k" * 64, "MAILBOX_SECRET_KEY": "x",
                             "BASE_URL": "http://localhost:8000", "DJANGO_DEBUG": "1", "HOST": "*"},
                  "check", "--deploy")
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    for needle in ("sending.E001", "SENDING_PROVIDER is unset", "llmproxy.E001", "LLM_MODELS_FILE",
                   "core.E104", "BASE_URL (http://localhost:8000) is not https", "core.E105", "core.E106",
                   "DJANGO_DEBUG", "core.E107", "ALLOWED_HOSTS", "core.W108", "REDIS_URL", "core.W109",
                   "core.W110", "EMAIL_HOST"):
        assert needle in text, needle


def test_check_deploy_in_sandbox_names_sandbox_and_the_development_secrets(tmp_path):
    out = _manage(tmp_path, {}, "check", "--deploy")
    text = out.stdout + out.stderr
    assert out.returncode != 0
    for needle in ("core.E101", "SANDBOX=1", "core.E102", "SECRET_KEY", "core.E103", "MAILBOX_SECRET_KEY", "core.E104"):
        assert needle in text, needle


def test_check_deploy_passes_a_complete_live_configuration(tmp_path):
    models = tmp_path / "models.json"
    models.write_text(json.dumps([{"id": "v/m", "upstream_base_url": "https://llm.example.com/v1",
                                   "upstream_model": "m", "api_key_env": "V_KEY", "credits_per_1k_tokens": "1"}]))
    out = _manage(tmp_path, {"SANDBOX": "0", "SECRET_KEY": "k" * 64, "MAILBOX_SECRET_KEY": "x",
                             "BASE_URL": "https://app.example.com", "SENDING_PROVIDER": "namecheap",
                             "LLM_MODELS_FILE": str(models), "REDIS_URL": "redis://127.0.0.1:6379/1",
                             "DATABASE_URL": "postgres://u@127.0.0.1:5432/prod", "EMAIL_HOST": "smtp.example.com"},
                  "check", "--deploy", "--fail-level", "ERROR")
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "core." not in text and "sending.E" not in text and "llmproxy.E" not in text, text


@pytest.mark.django_db
def test_readyz_names_the_live_misconfiguration(client, settings):
    settings.SANDBOX = True
    body = client.get("/readyz").json()
    assert body["status"] == "ok" and body["checks"]["configuration"] == "ok"
    settings.SANDBOX = False
    settings.SENDING_PROVIDER = ""
    r = client.get("/readyz")
    body = r.json()
    assert r.status_code == 200 and body["status"] == "degraded", body
    assert body["checks"]["database"] == "ok"
    assert "SENDING_PROVIDER is unset" in body["checks"]["configuration"]
    assert "LLM_MODELS_FILE" in body["checks"]["configuration"]
