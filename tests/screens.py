"""Screenshots from the browser tests: evidence of what a person sees, written next to the test's files. A
screenshot is not an assertion: Chromium now and then refuses one ("Unable to capture screenshot", seen in CI
on a full-page capture under load), so a refused capture is retried, then taken of the viewport only, then
left out with a warning, never failing the test whose assertions passed."""

from __future__ import annotations

import time
import warnings


def shot(page, path, *, full_page: bool = False) -> None:
    from playwright.sync_api import Error

    attempts = [full_page, full_page, False] if full_page else [False, False]
    for i, whole in enumerate(attempts):
        try:
            page.screenshot(path=str(path), full_page=whole)
            return
        except Error as exc:
            last = exc
            time.sleep(0.2 * (i + 1))
    warnings.warn(f"screenshot {path} not taken: {last}", stacklevel=2)
