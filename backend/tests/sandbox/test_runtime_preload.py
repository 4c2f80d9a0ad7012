"""What a worker finds ready: the modules of a typical run already imported by the fork
server, and bytecode for every module of its libraries in the runtime cache.

A worker cannot write bytecode (its runtime is read-only), so any module it imports
that the fork server had not is compiled from source in every session that needs it.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from app.sandbox.runtime_cache import runtime_cache

# A typical run: a CSV with a text column, a sum by group, then the run's snapshot, and
# its restore in the session's next worker.
TYPICAL_RUN = """
import io, json, sys, tempfile
from pathlib import Path
from app.sandbox.worker import session as worker
from app.sandbox.worker import snapshot
worker.preload()
before = set(sys.modules)
import pandas as pd
df = pd.read_csv(io.StringIO("region,revenue\\nNorth,1\\nSouth,2\\nNorth,3\\n"))
totals = df.groupby("region")["revenue"].sum()
workspace = Path(tempfile.mkdtemp())
snapshot.save({"df": df, "totals": totals}, workspace, 1 << 30, lambda name: True)
restored = {}
snapshot.load(workspace, restored, lambda statement: None)
assert restored["df"].equals(df), restored
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_a_typical_run_imports_nothing_the_fork_server_has_not_imported() -> None:
    done = subprocess.run(
        [sys.executable, "-c", TYPICAL_RUN],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    imported_late = json.loads(done.stdout.strip().splitlines()[-1])
    libraries = [m for m in imported_late if m.split(".")[0] in {"pandas", "pyarrow", "numpy"}]
    assert libraries == []


def _compiled(source: Path, cache_pycache: Path | None) -> bool:
    if cache_pycache is None:
        return Path(importlib.util.cache_from_source(str(source))).exists()
    tag = sys.implementation.cache_tag
    inside = cache_pycache / source.resolve().relative_to("/").parent
    return (inside / f"{source.stem}.{tag}.pyc").exists()


def test_the_runtime_cache_holds_bytecode_for_modules_nothing_imports_at_start() -> None:
    cache = runtime_cache()
    assert cache is not None
    pycache = cache.path / "pycache" if cache.pycache else None
    # Modules that pandas imports only on first use of a feature, and that the
    # cache's warm-up (importing the libraries) never loads.
    for name in ("pandas.io.formats.style_render", "pyarrow.pandas_compat"):
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None
        assert _compiled(Path(spec.origin), pycache), name
    pandas_root = Path(importlib.util.find_spec("pandas").origin).parent  # type: ignore[union-attr,arg-type]
    sources = [p for p in pandas_root.rglob("*.py") if "tests" not in p.parts]
    missing = [str(p) for p in sources if not _compiled(p, pycache)]
    assert missing == []
