"""Forwarded headers are believed only from the configured proxies (FORWARDED_ALLOW_IPS, default loopback), in
every start command: a client cannot pick its own address for the per-address rate limits."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.core.test_serve import free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[2]


def test_start_commands_trust_only_the_configured_proxies():
    from core.management.commands.serve import child_commands
    from tests.production_shape import procfile

    web = child_commands()["web"]
    assert "--proxy-headers" in web and web[web.index("--forwarded-allow-ips") + 1] == "127.0.0.1"
    line = procfile()["web"]
    assert "'*'" not in line and '--forwarded-allow-ips "${FORWARDED_ALLOW_IPS:-127.0.0.1}"' in line
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "FORWARDED_ALLOW_IPS=127.0.0.1" in dockerfile and "--forwarded-allow-ips" not in dockerfile


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="serve is tested on Linux")
@pytest.mark.parametrize("trusted, codes", [("10.255.255.1", [201, 429]), ("127.0.0.1", [201, 201])],
                         ids=["untrusted-peer", "trusted-proxy"])
def test_a_forwarded_address_counts_only_from_a_trusted_proxy(tmp_path, trusted, codes):
    """Two registrations (limit 1 a minute per address) from 127.0.0.1, each claiming another X-Forwarded-For:
    one bucket when the peer is not a trusted proxy, two when it is."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update(DATA_DIR=str(tmp_path / "data"), PORT=str(port), SANDBOX_SMTP_PORT="0", SANDBOX="1",
               FORWARDED_ALLOW_IPS=trusted, OAUTH_REGISTRATIONS_PER_MINUTE="1")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
    proc = subprocess.Popen([sys.executable, "manage.py", "serve", "--only", "web"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.log_path = os.devnull
    try:
        wait_healthy(port, proc)
        body = {"client_name": "x", "redirect_uris": ["http://127.0.0.1:1/cb"], "token_endpoint_auth_method": "none"}
        got = [httpx.post(f"http://127.0.0.1:{port}/oauth/register", json=body, timeout=30,
                          headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code for i in (1, 2)]
        assert got == codes
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
