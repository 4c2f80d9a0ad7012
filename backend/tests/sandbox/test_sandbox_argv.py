"""The bubblewrap command line: mounts in an order that works wherever the runtime lives."""

from __future__ import annotations

import sys
from pathlib import Path

from app.sandbox.isolation import bwrap_argv


def test_private_tmp_is_mounted_before_the_runtime_so_a_runtime_under_tmp_stays_visible(
    tmp_path: Path,
) -> None:
    argv = bwrap_argv("/usr/bin/bwrap", (), tmp_path, None, ["python"])
    tmpfs = argv.index("/tmp", argv.index("--tmpfs"))
    runtime = argv.index(sys.prefix)  # the venv's read-only bind
    workspace = argv.index(str(tmp_path))
    assert tmpfs < runtime < workspace
    assert argv[argv.index("--remount-ro") + 1] == "/"
