"""Secrets at rest (mailbox passwords, DKIM keys): Fernet with a key from the environment.

`MAILBOX_SECRET_KEY` is a Fernet key (32 url-safe base64 bytes, `Fernet.generate_key()`); it may hold several
comma-separated keys, the first used for encryption and all tried for decryption (key rotation, MultiFernet).
When unset, a key is derived from SECRET_KEY (SHA-256), which settings only allows to be absent in sandbox mode.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, MultiFernet
from django.conf import settings


def _fernet() -> MultiFernet:
    raw = settings.MAILBOX_SECRET_KEY or ""
    keys = [k.strip() for k in raw.split(",") if k.strip()]
    if not keys:
        digest = hashlib.sha256(("mailbox-secret:" + settings.SECRET_KEY).encode()).digest()
        keys = [base64.urlsafe_b64encode(digest).decode()]
    return MultiFernet([Fernet(k.encode()) for k in keys])


def encrypt(plaintext: str) -> str:
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def decrypt(token: str) -> str:
    if not token:
        return ""
    return _fernet().decrypt(token.encode()).decode()
