"""Debian's headless Chromium for the browser tests (never a browser download): where it is,
how to launch it through playwright, and a script that records Content-Security-Policy
violations on a page.

A test module uses :func:`launched_browser` in a module-scoped fixture. Without chromium the
tests are skipped with a reason locally; under ``CI=true`` a missing browser is a failure,
since CI installs it with apt."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
IN_CI = os.environ.get("CI", "").lower() == "true"

WATCH_SCRIPT = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__violations.push(event.violatedDirective + ' ' + event.blockedURI);
});
"""
"""An init script: each blocked request or script lands in ``window.__violations``."""


def launched_browser() -> Iterator[Any]:
    """Debian's chromium, headless, launched by playwright (skipped, or failed under CI, when
    it is missing); closed when the generator is."""
    if not Path(CHROMIUM).exists():
        message = f"Debian's chromium is not installed ({CHROMIUM} missing)"
        if IN_CI:
            pytest.fail(f"{message}; CI must install it (apt install chromium)")
        pytest.skip(message)
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()
