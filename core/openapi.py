def only_public_paths(endpoints):
    """Document the public API: /v1 routes (the console, admin and health routes are not part of it)."""
    return [e for e in endpoints if e[0].startswith("/v1/")]
