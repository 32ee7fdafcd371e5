"""What keeps a live instance (SANDBOX=0) from doing what its calls promise, as /readyz names it (CONTRACT 4.14).
The apps above the API register their own check here when Django starts (their `checks` modules, imported by
their AppConfig.ready), so this layer imports none of them."""

from __future__ import annotations

from collections.abc import Callable

_checks: list[Callable[[], str | None]] = []


def register(check: Callable[[], str | None]) -> Callable[[], str | None]:
    """Add `check` (returns a problem naming its setting, or None); in the order the apps are installed."""
    if check not in _checks:
        _checks.append(check)
    return check


def live_config_problems() -> list[str]:
    """What keeps a live instance (SANDBOX=0) from doing what its calls promise, each naming its setting."""
    return [p for p in (check() for check in _checks) if p]
