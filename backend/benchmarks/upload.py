"""Upload benchmark: a ~1 GB CSV through the HTTP API, embedded and on S3.

Prints upload throughput, the server's peak RSS growth during the upload, and the time of
the first (computed) and second (stored) preview. Targets: RSS growth <= 100 MB, preview <= 1 s.

    cd backend && uv run python -m benchmarks.upload [--size-mb 1024] [--stack embedded|s3|both]

The S3 run needs PostgreSQL and Redis on 127.0.0.1 (as the tests do) and starts SeaweedFS.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil

from tests.support import services

ADMIN = ("admin@example.com", "bench-password-1")


def make_csv(path: Path, size_mb: int) -> int:
    """Write a CSV of about size_mb MB (quoted text with commas included); its data rows."""
    rows = []
    for i in range(50_000):
        note = f'"late, {i % 7} days"' if i % 10 == 0 else f"ok {i % 13}"
        rows.append(
            f"{i},2026-{1 + i % 12:02d}-{1 + i % 28:02d},region-{i % 17},{i * 1.25:.2f},{note}\n"
        )
    block = "".join(rows).encode()
    header = b"id,date,region,amount,note\n"
    repeats = max(1, (size_mb * 1024 * 1024) // len(block))
    with path.open("wb") as out:
        out.write(header)
        for _ in range(repeats):
            out.write(block)
    return repeats * len(rows)


class RssSampler:
    def __init__(self, pid: int):
        self.process = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.01)

    def __enter__(self) -> RssSampler:
        self.peak = self.process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def start_server(env: dict[str, str], data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = services.free_port()
    env = {
        **os.environ,
        **env,
        "PORT": str(port),
        "HOST": "127.0.0.1",
        "DATA_DIR": str(data_dir),
        "ADMIN_EMAIL": ADMIN[0],
        "ADMIN_PASSWORD": ADMIN[1],
        "LOG_LEVEL": "warning",
        "MAX_UPLOAD_BYTES": str(4 * 1024**3),
    }
    log = (data_dir / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "app"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/readyz").status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"server did not start: {(data_dir / 'server.log').read_text()[-2000:]}")


def run(stack: str, csv: Path, rows: int, env: dict[str, str], work: Path) -> None:
    data_dir = work / f"data-{stack}"
    data_dir.mkdir()
    process, url = start_server(env, data_dir)
    try:
        client = httpx.Client(base_url=f"{url}/api/v1", timeout=600)
        token = client.post("/auth/login", json={"email": ADMIN[0], "password": ADMIN[1]}).json()[
            "access_token"
        ]
        client.headers["Authorization"] = f"Bearer {token}"
        project = client.post("/projects", json={"name": "bench"}).json()["id"]
        client.post(f"/projects/{project}/files", files={"file": ("warmup.csv", b"a,b\n1,2\n")})
        size = csv.stat().st_size
        with RssSampler(process.pid) as rss, csv.open("rb") as handle:
            baseline = rss.peak
            started = time.perf_counter()
            response = client.post(
                f"/projects/{project}/files", files={"file": ("big.csv", handle, "text/csv")}
            )
            elapsed = time.perf_counter() - started
        response.raise_for_status()
        file = response.json()
        assert file["size"] == size, file
        previews = []
        for _ in range(3):
            started = time.perf_counter()
            preview = client.get(f"/files/{file['id']}/preview")
            previews.append(time.perf_counter() - started)
            preview.raise_for_status()
        body = preview.json()
        print(
            f"[{stack}] {size / 1e6:,.0f} MB in {elapsed:.1f} s "
            f"= {size / 1e6 / elapsed:,.0f} MB/s; "
            f"server RSS {baseline / 1e6:,.0f} MB -> peak {rss.peak / 1e6:,.0f} MB "
            f"(growth {(rss.peak - baseline) / 1e6:,.1f} MB, target <= 100)"
        )
        print(
            f"[{stack}] preview: first {previews[0] * 1000:,.0f} ms, then median "
            f"{statistics.median(previews[1:]) * 1000:,.0f} ms (target <= 1000); "
            f"row_count {body['row_count']:,} (expected {rows:,}), {len(body['rows'])} rows, "
            f"{len(body['columns'])} columns"
        )
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--stack", choices=["embedded", "s3", "both"], default="both")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wb-bench-") as tmp:
        work = Path(tmp)
        csv = work / "big.csv"
        rows = make_csv(csv, args.size_mb)
        print(f"generated {csv.stat().st_size / 1e6:,.0f} MB CSV with {rows:,} data rows")
        if args.stack in ("embedded", "both"):
            run(
                "embedded",
                csv,
                rows,
                {"DATABASE_URL": "", "REDIS_URL": "", "S3_ENDPOINT": ""},
                work,
            )
        if args.stack in ("s3", "both"):
            seaweed_dir = work / "seaweed"
            seaweed_dir.mkdir()
            weed, s3 = services.start_seaweed(seaweed_dir)
            db_url, db_name = services.create_postgres_database()
            try:
                env = {
                    "DATABASE_URL": db_url,
                    "REDIS_URL": services.check_redis(),
                    "S3_ENDPOINT": s3.endpoint,
                    "S3_ACCESS_KEY": s3.access_key,
                    "S3_SECRET_KEY": s3.secret_key,
                    "S3_BUCKET": "bench",
                }
                run("s3", csv, rows, env, work)
            finally:
                weed.terminate()
                weed.wait(30)
                services.drop_postgres_database(db_name)


if __name__ == "__main__":
    main()
