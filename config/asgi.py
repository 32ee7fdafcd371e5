"""One ASGI callable: `/mcp` (and its OAuth metadata) to the MCP app, everything else to Django.

The MCP app's session manager must be started by the ASGI lifespan, so this function runs the lifespan
of the MCP app (when there is one) and answers the server's lifespan messages itself.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_app = get_asgi_application()


def _load_mcp_app():
    # Imported after Django is set up (get_asgi_application above). A broken MCP module fails loudly at
    # startup instead of silently serving no /mcp.
    from mcpserver.app import build_asgi_app

    return build_asgi_app()


mcp_app = _load_mcp_app()


def _is_mcp_path(path: str) -> bool:
    return path == "/mcp" or path.startswith("/mcp/") or path.startswith("/.well-known/oauth-protected-resource")


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        if mcp_app is not None:
            await mcp_app(scope, receive, send)
            return
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if mcp_app is not None and scope["type"] == "http" and _is_mcp_path(scope.get("path", "")):
        await mcp_app(scope, receive, send)
        return
    await django_app(scope, receive, send)
