"""https only for the API: with an https BASE_URL, `/v1/*` and `/mcp` over plain http answer 403
`https_required` (CONTRACT 2), never a redirect (the redirected request would already have carried the key).

The request's scheme is the one Django sees: the SECURE_PROXY_SSL_HEADER header when that setting names one
(a TLS-terminating proxy's X-Forwarded-Proto), else the ASGI scope's scheme (which the ASGI server may itself
take from trusted proxy headers: uvicorn's --proxy-headers / --forwarded-allow-ips). config.asgi applies it to
every door (MCP, the LLM and verb fast doors, Django); core.middleware applies it inside Django too.
"""

from __future__ import annotations

from django.conf import settings


def api_path(path: str) -> bool:
    return path in ("/v1", "/mcp") or path.startswith(("/v1/", "/mcp/"))


def https_only() -> bool:
    return settings.BASE_URL.startswith("https://")


def scope_is_secure(scope) -> bool:
    """Django's HttpRequest.is_secure() for an ASGI scope."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        header, secure_value = proxy
        wanted = header.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")
        values = [v for k, v in scope.get("headers", ()) if k.lower() == wanted]
        if values:
            return values[0].decode("latin-1").split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") in ("https", "wss")


def refuses_scope(scope) -> bool:
    """True when this HTTP request must be answered 403 https_required."""
    return https_only() and api_path(scope.get("path", "")) and not scope_is_secure(scope)


def refuses_request(request) -> bool:
    """The same rule for a Django request."""
    return https_only() and api_path(request.path) and not request.is_secure()
