"""`python -m app` as a newcomer starts it: it says where it is only once it listens there,
and says so plainly when no model is configured."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.services import free_port

BACKEND = Path(__file__).resolve().parents[1]


def test_the_url_is_printed_once_the_server_listens(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "DATABASE_", "REDIS_"))}
    env.update(
        DATA_DIR=str(tmp_path),
        PORT=str(port),
        HOST="127.0.0.1",
        LOG_LEVEL="info",
        ADMIN_EMAIL="admin@example.com",
        ADMIN_PASSWORD="admin-password-1",
        SECRET_KEY="startup-test-key-" + "x" * 40,
        S3_ENDPOINT="",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "app"],
        cwd=BACKEND,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "Workbench is ready on" in line:
                break
        log = "".join(lines)
        assert f"Workbench is ready on http://127.0.0.1:{port}\n" in log, log
        # At the moment the line appears, the port takes connections: no retry needed.
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        assert "NO MODEL CONFIGURED: questions are refused until LLM_MODEL is set" in log
        assert log.index("NO MODEL CONFIGURED") < log.index("Workbench is ready on")
    finally:
        process.terminate()
        process.wait(30)
