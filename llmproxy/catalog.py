"""The model allowlist (CONTRACT 4.9): `LLM_MODELS_FILE`, a JSON list of
`{"id", "upstream_base_url", "upstream_model", "api_key_env", "credits_per_1k_tokens"}`, plus the optional
`"completion_cap_param"`: the request field that caps the completion when the client sent none, `max_tokens`
(default, what OpenAI-compatible servers accept) or `max_completion_tokens` (OpenAI's reasoning models).

Requests go to `{upstream_base_url}/chat/completions` with `Authorization: Bearer $<api_key_env>`.
`upstream_base_url` may be `sandbox://echo`: the built-in echo upstream (llmproxy.echo), reached through an
in-process HTTP transport, so the sandbox needs no network and no vendor key.
The file is read once per process (and again when its path or modification time changes).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.money import InvalidCreditString, parse_credits

SANDBOX_ECHO = "sandbox://echo"


@dataclass(frozen=True)
class Model:
    id: str
    upstream_base_url: str
    upstream_model: str
    api_key_env: str
    price_per_1k_micros: int  # micro-credits per 1,000 tokens (prompt + completion)
    completion_cap_param: str = "max_tokens"

    @property
    def chat_url(self) -> str:
        return f"{self.upstream_base_url.rstrip('/')}/chat/completions"

    @property
    def is_echo(self) -> bool:
        return self.upstream_base_url.rstrip("/") == SANDBOX_ECHO

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None

    def charge_for(self, tokens: int) -> int:
        """Exact to the token: micro-credits, rounded up to the next micro-credit."""
        return -(-max(0, tokens) * self.price_per_1k_micros // 1000)


def parse_models(entries) -> dict[str, Model]:
    if not isinstance(entries, list):
        raise ImproperlyConfigured("LLM_MODELS_FILE must hold a JSON list of model objects")
    models: dict[str, Model] = {}
    for i, entry in enumerate(entries):
        where = f"LLM_MODELS_FILE entry {i}"
        if not isinstance(entry, dict):
            raise ImproperlyConfigured(f"{where} is not an object")
        missing = [k for k in ("id", "upstream_base_url", "upstream_model", "credits_per_1k_tokens") if not entry.get(k)]
        if missing:
            raise ImproperlyConfigured(f"{where} lacks {', '.join(missing)}")
        try:
            price = parse_credits(str(entry["credits_per_1k_tokens"]))
        except InvalidCreditString as exc:
            raise ImproperlyConfigured(f"{where}: credits_per_1k_tokens {exc}") from exc
        model_id = str(entry["id"])
        if model_id in models:
            raise ImproperlyConfigured(f"{where}: duplicate id {model_id!r}")
        base = str(entry["upstream_base_url"]).rstrip("/")
        if not (base.startswith(("http://", "https://")) or base == SANDBOX_ECHO):
            raise ImproperlyConfigured(f"{where}: upstream_base_url must be http(s):// or {SANDBOX_ECHO}")
        cap_param = str(entry.get("completion_cap_param") or "max_tokens")
        if cap_param not in ("max_tokens", "max_completion_tokens"):
            raise ImproperlyConfigured(f"{where}: completion_cap_param must be max_tokens or max_completion_tokens")
        models[model_id] = Model(
            id=model_id, upstream_base_url=base, upstream_model=str(entry["upstream_model"]),
            api_key_env=str(entry.get("api_key_env") or ""), price_per_1k_micros=price, completion_cap_param=cap_param,
        )
    return models


_lock = threading.Lock()
_cache: tuple[str, float, float, dict[str, Model]] | None = None  # path, mtime, when last checked, models

# The file's modification time is looked at most this often (seconds): a stat on every call was a sixth of the
# LLM door's Python time per call, spent before the provider request could leave.
RECHECK_SECONDS = 1.0


def models() -> dict[str, Model]:
    """The allowlist, id -> Model: the file is parsed again when its path changes, or within RECHECK_SECONDS of a
    change of its modification time."""
    global _cache
    path = str(settings.LLM_MODELS_FILE)
    now = time.monotonic()
    cached = _cache
    if cached is not None and cached[0] == path and now - cached[2] < RECHECK_SECONDS:
        return cached[3]
    try:
        mtime = os.stat(path).st_mtime
    except OSError as exc:
        raise ImproperlyConfigured(f"LLM_MODELS_FILE {path} cannot be read: {exc}") from exc
    if cached is not None and cached[0] == path and cached[1] == mtime:
        _cache = (path, mtime, now, cached[3])
        return cached[3]
    with _lock:
        with open(path, encoding="utf-8") as fh:
            loaded = parse_models(json.load(fh))
        _cache = (path, mtime, now, loaded)
        return loaded


def live_problem(model: Model) -> str | None:
    """Why `model` may not be called in this mode: the built-in echo upstream answers only in sandbox mode
    (CONTRACT 4.14: live mode never reaches it, and never charges for it)."""
    if model.is_echo and not settings.SANDBOX:
        return (f"Model {model.id} answers from the built-in echo upstream ({SANDBOX_ECHO}), which serves sandbox mode "
                "only; with SANDBOX=0 point LLM_MODELS_FILE at a file of real upstreams")
    return None


def config_problem() -> str | None:
    """What is wrong with LLM_MODELS_FILE in this mode, naming the setting (for /readyz and `check --deploy`)."""
    try:
        loaded = models()
    except Exception as exc:  # noqa: BLE001 - reported, not raised: the caller lists every problem
        return str(exc)
    echo = sorted(m.id for m in loaded.values() if m.is_echo)
    if echo and not settings.SANDBOX:
        return (f"LLM_MODELS_FILE ({settings.LLM_MODELS_FILE}) lists models on the built-in echo upstream "
                f"({', '.join(echo)}); they serve sandbox mode only and are refused with SANDBOX=0")
    return None


def model_get(model_id) -> Model | None:
    if not isinstance(model_id, str):
        return None
    return models().get(model_id)
