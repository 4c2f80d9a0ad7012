"""Debian's chromium, headless, as the tests' browser: a page's DOM once its scripts ran."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

CHROMIUM = [
    "/usr/bin/chromium",
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Every host name fails to resolve: only the loopback address itself is reachable.
OFFLINE = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"


def dump_dom(
    url: str, *, budget_seconds: int = 20, timeout: float = 180, flags: Sequence[str] = ()
) -> str:
    """The DOM of `url` (http:// or file://) after up to `budget_seconds` of the page's
    virtual time (its scripts and timers), as chromium prints it.

    Args:
        timeout: What a hang is (chromium ends sooner): not a timing the test checks.
        flags: More of chromium's switches (OFFLINE, a --user-data-dir…).
    """
    command = [*CHROMIUM, *flags, f"--virtual-time-budget={budget_seconds * 1000}", "--dump-dom"]
    done = subprocess.run(
        [*command, url], capture_output=True, text=True, timeout=timeout, check=True
    )
    return done.stdout
