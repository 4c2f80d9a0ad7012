"""Saving and loading a session's variables, in the worker (the format, and what the backend
checks of a worker's report: `app/sandbox/snapshot_format.py`). Nothing here unpickles:
Parquet, .npy with allow_pickle=False and JSON only.
DataFrames: `frames.py`; plain values as tagged JSON: `values.py`.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.sandbox.snapshot_format import (
    FORMAT_VERSION,
    INTERNAL_NAMES,
    MANIFEST,
    MAX_VARIABLES,
    SNAPSHOT_DIR,
    WORKBENCH_PREFIX,
    Unsaveable,
    valid_file_name,
    valid_type_name,
)
from app.sandbox.worker.frames import SUFFIX, read_frame, write_frame
from app.sandbox.worker.querying import Helper
from app.sandbox.worker.values import decode, encode


# Saving (in the worker) ---------------------------------------------------------------------
def save(
    state: dict[str, Any],
    workspace: Path,
    max_bytes: int,
    authorized: Callable[[str], bool],
    functions: list[str] | None = None,
) -> dict[str, Any]:
    """Write the namespace's saveable variables as the workspace's new snapshot.

    The new snapshot is written beside the old one and put in its place at the end, so a
    worker that dies meanwhile leaves the old one whole.

    Args:
        state: The code's namespace.
        workspace: The workspace root (the worker's working directory).
        max_bytes: The most the snapshot may take on disk; variables beyond it are unsaved.
        authorized: Whether a module may be imported by the code (imports are saved only then).
        functions: The functions the code defined (smolagents keeps them apart from the
            namespace); they cannot be saved, and are listed as not kept.

    Returns:
        The "snapshot" reply for the backend.
    """
    folder = workspace / SNAPSHOT_DIR
    staging = folder.with_name("snapshot.new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    variables: list[dict[str, Any]] = []
    unsaved: list[dict[str, Any]] = []
    used = 0
    candidates = [
        (name, value)
        for name, value in state.items()
        if name not in INTERNAL_NAMES
        and not name.startswith(("__", WORKBENCH_PREFIX))
        and name.isidentifier()
        and not isinstance(value, Helper)  # sql() & co. come back by themselves
    ]
    # Small values first: when the budget runs out, the big ones are what is left out.
    candidates.sort(key=lambda item: estimated_bytes(item[1]))
    for number, (name, value) in enumerate(candidates[:MAX_VARIABLES]):
        file = f"v{number}"
        reason = "not_data"
        try:
            entry = _save_one(name, value, staging, file, max_bytes - used, authorized)
        except Unsaveable as exc:
            entry, reason = None, exc.reason
        except Exception:  # a value its library refuses to write (MemoryError included)
            entry = None
        if entry is None:
            for leftover in staging.glob(f"{file}.*"):
                leftover.unlink()
            unsaved.append({"name": name, "type": _type_of(value), "reason": reason})
            continue
        for written in (entry.get("file"), (entry.get("raw") or {}).get("file")):
            if written:
                used += (staging / written).stat().st_size
        variables.append(entry)
    for name, value in candidates[MAX_VARIABLES:]:
        unsaved.append({"name": name, "type": _type_of(value), "reason": "too_large"})
    for name in (functions or [])[:MAX_VARIABLES]:
        if name.isidentifier() and name not in state and not name.startswith(WORKBENCH_PREFIX):
            unsaved.append({"name": name, "type": "function", "reason": "defined_in_code"})
    order = {name: position for position, name in enumerate(state)}
    variables.sort(key=lambda entry: order[entry["name"]])  # as the code defined them
    unsaved.sort(key=lambda entry: order.get(entry["name"], len(order)))
    manifest = {"version": FORMAT_VERSION, "variables": variables, "unsaved": unsaved}
    (staging / MANIFEST).write_text(json.dumps(manifest, allow_nan=False))
    old = folder.with_name("snapshot.old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    files = [{"name": p.name, "size": p.stat().st_size} for p in sorted(folder.iterdir())]
    return {
        "type": "snapshot",
        "changed": True,
        "files": files,
        "variables": [
            {k: entry[k] for k in ("name", "kind", "type", "shape", "file") if k in entry}
            for entry in variables
        ],
        "unsaved": unsaved,
    }


def _type_of(value: Any) -> str:
    return "class" if isinstance(value, type) else valid_type_name(type(value).__name__)


def estimated_bytes(value: Any) -> int:
    """About how many bytes a value holds (its data, for frames and arrays)."""
    pandas = sys.modules.get("pandas")
    try:
        if pandas is not None and isinstance(value, pandas.DataFrame | pandas.Series):
            return int(value.memory_usage(index=True, deep=False).sum())
        nbytes = getattr(value, "nbytes", None)
        if isinstance(nbytes, int):
            return nbytes
    except Exception:
        pass
    return sys.getsizeof(value)


def _save_one(
    name: str,
    value: Any,
    folder: Path,
    file: str,
    budget: int,
    authorized: Callable[[str], bool],
) -> dict[str, Any] | None:
    entry: dict[str, Any] = {"name": name, "type": _type_of(value), "shape": []}
    if isinstance(value, type(sys)) or callable(value):
        # A module, or a function or class: kept as the import that brings it back.
        imported = _import_of(name, value)
        if imported is None or not authorized(imported[0]):
            raise Unsaveable("defined_in_code" if _defined_in_code(value) else "not_data")
        return entry | {"kind": "import", "import": imported[1]}
    pandas = sys.modules.get("pandas")
    numpy = sys.modules.get("numpy")
    if pandas is not None and isinstance(value, pandas.DataFrame):
        extra = write_frame(value, folder / f"{file}{SUFFIX}", budget)
        shape = list(value.shape)
        return entry | extra | {"kind": "frame", "file": f"{file}{SUFFIX}", "shape": shape}
    if pandas is not None and isinstance(value, pandas.Series):
        extra = write_frame(value.to_frame(name="value"), folder / f"{file}{SUFFIX}", budget)
        return (
            entry
            | extra
            | {
                "kind": "series",
                "file": f"{file}{SUFFIX}",
                "shape": [len(value)],
                "series_name": encode(value.name),
            }
        )
    if numpy is not None and isinstance(value, numpy.ndarray):
        if value.dtype.hasobject:
            raise Unsaveable()
        if value.nbytes > budget:
            raise Unsaveable("too_large")
        with open(folder / f"{file}.npy", "wb") as handle:
            numpy.save(handle, value, allow_pickle=False)
        return entry | {"kind": "array", "file": f"{file}.npy", "shape": list(value.shape)}
    if type(value).__module__.startswith("plotly.") and hasattr(value, "to_json"):
        text = value.to_json()
        return entry | _write_json(folder / f"{file}.json", text, budget) | {"kind": "plotly"}
    text = json.dumps(encode(value), allow_nan=False)
    shape = [len(value)] if isinstance(value, list | tuple | dict | set | frozenset | str) else []
    return (
        entry
        | _write_json(folder / f"{file}.json", text, budget)
        | {
            "kind": "value",
            "shape": shape if not isinstance(value, str) else [],
        }
    )


def _write_json(path: Path, text: str, budget: int) -> dict[str, Any]:
    if len(text) > budget:
        raise Unsaveable("too_large")
    path.write_text(text)
    return {"file": path.name}


def _import_of(name: str, value: Any) -> tuple[str, str] | None:
    """The module and the import statement that define `name` as `value` again."""
    if isinstance(value, type(sys)):
        module = getattr(value, "__name__", "")
        return (module, f"import {module} as {name}") if _dotted(module) else None
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(qualname, str)):
        return None
    if not (_dotted(module) and qualname.isidentifier()):
        return None
    loaded = sys.modules.get(module)
    if loaded is None or getattr(loaded, qualname, None) is not value:
        return None
    return module, f"from {module} import {qualname} as {name}"


def _defined_in_code(value: Any) -> bool:
    """A function or class the analysed code defined itself (smolagents makes closures)."""
    return isinstance(value, type) or "<locals>" in str(getattr(value, "__qualname__", ""))


def _dotted(module: str) -> bool:
    return bool(module) and all(part.isidentifier() for part in module.split("."))


# Loading (in the worker) --------------------------------------------------------------------
@dataclass
class _Loaded:
    restored: list[str] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)


def load(
    workspace: Path, state: dict[str, Any], run_import: Callable[[str], None]
) -> dict[str, Any]:
    """Define the snapshot's variables again in the code's namespace.

    Args:
        workspace: The workspace root.
        state: The code's namespace, filled here.
        run_import: Runs an import statement as the code would (its import rules apply).

    Returns:
        The "restored" reply for the backend.
    """
    folder = workspace / SNAPSHOT_DIR
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
        entries = list(manifest["variables"])
    except (OSError, ValueError, KeyError, TypeError):
        return {"type": "restored", "found": False}
    loaded = _Loaded()
    for entry in entries:
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.isidentifier():
            continue
        try:
            if entry["kind"] == "import":
                statement = str(entry["import"])
                if not re.fullmatch(r"(from [\w.]+ )?import [\w.]+ as \w+", statement):
                    raise ValueError("not an import")
                run_import(statement)
            else:
                state[name] = _load_one(folder, entry)
            loaded.restored.append(name)
        except MemoryError:
            loaded.failed.append({"name": name, "error": "out of memory while loading it"})
        except Exception as exc:
            loaded.failed.append({"name": name, "error": f"{type(exc).__name__}: {exc}"[:300]})
    return {
        "type": "restored",
        "found": True,
        "restored": loaded.restored,
        "failed": loaded.failed,
        "unsaved": manifest.get("unsaved") if isinstance(manifest.get("unsaved"), list) else [],
    }


def _load_one(folder: Path, entry: dict[str, Any]) -> Any:
    file = valid_file_name(entry["file"])
    path = folder / file
    if os.path.islink(path):
        raise ValueError("a link, not a snapshot file")
    kind = entry["kind"]
    if kind in ("frame", "series"):
        frame = read_frame(path, entry)
        if kind == "frame":
            return frame
        series = frame.iloc[:, 0]
        series.name = decode(entry.get("series_name"))
        return series
    if kind == "array":
        numpy = importlib.import_module("numpy")
        return numpy.load(path, allow_pickle=False)
    if kind == "plotly":
        figure = _typed_arrays(json.loads(path.read_text()))
        return importlib.import_module("plotly.graph_objects").Figure(figure)
    if kind == "value":
        return decode(json.loads(path.read_text()))
    raise ValueError(f"unknown kind {kind!r}")


def _typed_arrays(data: Any) -> Any:
    """Plotly's JSON writes numeric arrays as base64 ("bdata"); make them arrays again."""
    if isinstance(data, list):
        return [_typed_arrays(v) for v in data]
    if not isinstance(data, dict):
        return data
    if set(data) in ({"dtype", "bdata"}, {"dtype", "bdata", "shape"}):
        numpy = importlib.import_module("numpy")
        array = numpy.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).copy()
        if "shape" in data:
            array = array.reshape([int(n) for n in str(data["shape"]).split(",")])
        return array
    return {k: _typed_arrays(v) for k, v in data.items()}
