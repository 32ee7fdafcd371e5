"""DKIM keys for sending domains: an RSA-2048 key per domain, stored Fernet-encrypted, and the DNS record that
publishes its public half. `sending.transport` signs every message from a domain that has a key (dkimpy)."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.utils import timezone

from sending import crypto

KEY_BITS = 2048


def dkim_key_generate(domain) -> None:
    """Give `domain` (a SendingDomain) a fresh key and selector unless it has one. Caller saves the row."""
    if domain.dkim_private_key_encrypted:
        return
    key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                            serialization.NoEncryption()).decode()
    domain.dkim_selector = "ob" + timezone.now().strftime("%Y%m")
    domain.dkim_private_key_encrypted = crypto.encrypt(pem)


def dkim_public_record(domain) -> str | None:
    """The TXT value to publish at `<selector>._domainkey.<domain>` (None without a key)."""
    if not domain.dkim_private_key_encrypted:
        return None
    key = serialization.load_pem_private_key(crypto.decrypt(domain.dkim_private_key_encrypted).encode(), password=None)
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "v=DKIM1; k=rsa; p=" + base64.b64encode(spki).decode()


def dns_records(domain) -> list[dict]:
    """DNS records the domain needs for authenticated sending (DKIM, plus a monitoring-only DMARC policy)."""
    records = []
    dkim_value = dkim_public_record(domain)
    if dkim_value:
        records.append({"type": "TXT", "name": f"{domain.dkim_selector}._domainkey.{domain.name}", "value": dkim_value})
    records.append({"type": "TXT", "name": f"_dmarc.{domain.name}", "value": "v=DMARC1; p=none"})
    return records
