"""compose.yaml: web replicas do not fight over one fixed host port, everything that needs the schema waits for
`migrate` to complete successfully, `env_file: .env` has a committed `.env.example` without secrets that names
the live-mode settings; and, where a compose implementation is installed, `compose config` accepts the file
(no Docker daemon or image pull needed for that)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_web_replicas_publish_one_host_port_each():
    web = _compose()["services"]["web"]
    replicas = web["deploy"]["replicas"]
    assert replicas >= 2
    for spec in web["ports"]:
        published = re.sub(r"\$\{WEB_PORTS:-([^}]+)\}", r"\1", str(spec)).rsplit(":", 1)[0]
        if "-" not in published:
            pytest.fail(f"a fixed host port ({spec}) cannot be bound by {replicas} replicas")
        low, high = (int(p) for p in published.split("-"))
        assert high - low + 1 >= replicas


def test_app_services_wait_for_a_successful_migrate():
    services = _compose()["services"]
    for name in ("web", "worker", "beat"):
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}, name
    assert services["migrate"]["depends_on"] == {"db": {"condition": "service_healthy"},
                                                 "redis": {"condition": "service_healthy"}}
    assert all("healthcheck" in services[n] for n in ("db", "redis"))


def test_env_example_names_the_live_settings_and_holds_no_secret():
    assert _compose()["x-app"]["env_file"] == ".env"
    values = dict(line.split("=", 1) for line in (ROOT / ".env.example").read_text().splitlines()
                  if line and not line.startswith("#"))
    for name in ("SECRET_KEY", "MAILBOX_SECRET_KEY", "BASE_URL", "SENDING_PROVIDER", "LLM_MODELS_FILE", "EMAIL_HOST"):
        assert name in values, name
    for name in ("SECRET_KEY", "MAILBOX_SECRET_KEY", "EMAIL_HOST_PASSWORD"):
        assert values[name] == "", f"{name} must be empty in the example"
    assert values["BASE_URL"].startswith("https://")
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()


def test_compose_config_accepts_the_file(tmp_path):
    if shutil.which("docker") and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        command = ["docker", "compose", "config", "--quiet"]
    elif shutil.which("docker-compose"):
        command = ["docker-compose", "config", "--quiet"]
    else:
        pytest.skip("no compose implementation installed (docker compose or docker-compose)")
    shutil.copy(ROOT / "compose.yaml", tmp_path / "compose.yaml")
    shutil.copy(ROOT / ".env.example", tmp_path / ".env")
    out = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
