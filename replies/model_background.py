"""The reply model built beside a starting service: `python -m replies.model_background` (what `make run` runs
next to `manage.py serve`) builds the model only if it is missing, like `python -m replies.model`, and keeps a
marker beside it while it builds (its process id). A worker that would need the model meanwhile sees `waiting()`
and leaves the reply unclassified for the sweeper, instead of building a second copy inside the worker."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from replies import model


def building_path(path: Path | None = None) -> Path:
    return (path or model.model_path()).with_suffix(".building")


def build_running(path: Path | None = None) -> bool:
    """Whether a background build of this model is under way (its marker names a live process)."""
    try:
        pid = int(building_path(path).read_text().strip() or 0)
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def waiting() -> bool:
    """True while this process has no model loaded, none is cached for these sources, and a background build
    of it runs: classification should wait for it."""
    if model._model is not None:
        return False
    path = model.model_path()
    return not path.exists() and build_running(path)


def main(argv: list[str]) -> int:
    path = model.model_path()
    if path.exists():
        return model.main(argv)  # says it is up to date
    marker = building_path(path)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(os.getpid()))
    try:
        return model.main(argv)
    finally:
        with contextlib.suppress(OSError):
            marker.unlink()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
