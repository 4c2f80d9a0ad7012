"""Session snapshots: the variables of a session, saved by its worker and restored by the next.

At the end of every run the worker writes what it can of the code's variables into the
workspace's snapshot folder: DataFrames and Series as Parquet, numpy arrays as .npy, plotly
figures as their JSON, plain Python values as tagged JSON, and imported modules (and
functions or classes imported from them) as the import to repeat. Anything else (a
function the code defined, a fitted model, an open figure) is listed as not saved. A worker
started for the session later (after an eviction, a crash, a restart or on another
replica) loads the folder back, inside its sandbox, before the next step.

Nothing here unpickles: Parquet, .npy with allow_pickle=False and JSON only, so a snapshot
is data, whoever wrote it. The folder sits in the workspace, which the session's code
controls; a tampered snapshot can only spoil that same session's variables.

This module is the format both sides share: the names, the limits, and the validation of
what a worker reports (`SnapshotReport`, `RestoreReport`), which the backend reads as
hostile. Saving and loading run in the worker (`app/sandbox/worker/snapshot.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.sandbox.layout import BOOKKEEPING_DIR

SNAPSHOT_DIR = f"{BOOKKEEPING_DIR}/snapshot"
MANIFEST = "manifest.json"
FORMAT_VERSION = 1
# Names smolagents keeps in the code's namespace for itself.
INTERNAL_NAMES = frozenset({"_print_outputs", "_operations_count"})
# Names the workbench's own steps bind in the namespace (an attempt's tables fingerprinted,
# app.attempts.tables): never saved.
WORKBENCH_PREFIX = "_wb_"
# A Parquet file is written this many bytes of the frame at a time (bounded extra memory).
CHUNK_BYTES = 64 << 20
MAX_VALUE_DEPTH = 64
MAX_NAME_CHARS = 100
MAX_TYPE_CHARS = 60
MAX_VARIABLES = 1000
KINDS = ("frame", "series", "array", "plotly", "value", "import")
FILE_NAME = re.compile(r"v[0-9]{1,4}\.(parquet|raw|npy|json)")
TYPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


REASONS = ("not_data", "too_large", "defined_in_code")


class Unsaveable(Exception):
    """This value cannot be written as data; `reason` is one of REASONS."""

    def __init__(self, reason: str = "not_data") -> None:
        super().__init__(reason)
        self.reason = reason


# What crosses to the backend ----------------------------------------------------------------
@dataclass(frozen=True)
class SavedVariable:
    """A variable in a snapshot, as the backend records it and the prompt lists it.

    Attributes:
        name: The variable's name.
        kind: One of KINDS.
        type: Its type's name ("DataFrame", "int", "module"…).
        shape: Rows and columns of a table, the shape of an array, the length of a sequence.
        file: The snapshot file that holds it ("" for an import).
    """

    name: str
    kind: str
    type: str
    shape: tuple[int, ...] = ()
    file: str = ""

    def describe(self) -> str:
        """`name` with its type and size, e.g. "df (DataFrame, 1,000 rows, 5 columns)"."""
        size = ""
        if self.kind == "frame" and len(self.shape) == 2:
            size = f", {self.shape[0]:,} rows, {self.shape[1]:,} columns"
        elif self.kind == "series" and self.shape:
            size = f", {self.shape[0]:,} values"
        elif self.kind == "array":
            size = f", shape {tuple(self.shape)}"
        elif self.kind == "value" and self.shape:
            size = f", {self.shape[0]:,} items"
        return f"{self.name} ({self.type}{size})"


@dataclass(frozen=True)
class UnsavedVariable:
    """A variable the snapshot could not keep: its type, and why (one of REASONS)."""

    name: str
    type: str
    reason: str = "not_data"

    def describe(self) -> str:
        """`name` with why it was not kept, e.g. "model (LinearRegression)"."""
        if self.reason == "too_large":
            return f"{self.name} ({self.type}, too large to keep)"
        if self.reason == "defined_in_code":
            return f"{self.name} (a {self.type} defined in the code)"
        return f"{self.name} ({self.type})"


@dataclass(frozen=True)
class SnapshotReport:
    """What a worker saved at the end of a run.

    Attributes:
        changed: False when nothing ran since the last snapshot (the folder is unchanged).
        variables: What was saved.
        unsaved: What could not be (its type says why).
        files: The folder's files (the manifest included) with their sizes.
    """

    changed: bool
    variables: tuple[SavedVariable, ...] = ()
    unsaved: tuple[UnsavedVariable, ...] = ()
    files: tuple[tuple[str, int], ...] = ()

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files)

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> SnapshotReport:
        """Validate a worker's reply (the worker is not trusted).

        Raises:
            ValueError: The reply is malformed.
        """
        if message.get("type") != "snapshot":
            raise ValueError(f"not a snapshot reply: {message.get('type')!r}")
        if not message.get("changed"):
            return cls(changed=False)
        files = tuple(
            (valid_file_name(item["name"], allow_manifest=True), _count(item["size"]))
            for item in _items(message.get("files"))
        )
        names = {name for name, _ in files}
        if MANIFEST not in names:
            raise ValueError("a snapshot without its manifest")
        variables = tuple(_saved_variable(item, names) for item in _items(message.get("variables")))
        return cls(True, variables, _unsaved(message.get("unsaved")), files)

    def record(self) -> dict[str, Any]:
        """The JSON the backend stores (see `from_record`)."""
        return {
            "variables": [
                {"name": v.name, "kind": v.kind, "type": v.type, "shape": list(v.shape)}
                | ({"file": v.file} if v.file else {})
                for v in self.variables
            ],
            "unsaved": [{"name": u.name, "type": u.type, "reason": u.reason} for u in self.unsaved],
            "files": [{"name": name, "size": size} for name, size in self.files],
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> SnapshotReport:
        """Read back what `record` stored (validated again: it came from a worker once)."""
        return cls.from_message({"type": "snapshot", "changed": True, **record})


@dataclass(frozen=True)
class RestoreReport:
    """What a new worker restored from the session's snapshot.

    Attributes:
        restored: Names defined again.
        failed: Names saved but not restored, with the reason (for the logs).
        unsaved: What the snapshot could not keep in the first place.
        error: Why nothing could be restored (the worker died loading it, say).
    """

    restored: tuple[str, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()
    unsaved: tuple[UnsavedVariable, ...] = ()
    error: str | None = None

    @classmethod
    def from_message(cls, message: dict[str, Any]) -> RestoreReport | None:
        """Validate a worker's reply; None when it found no snapshot.

        Raises:
            ValueError: The reply is malformed.
        """
        if message.get("type") == "failed":
            return cls(error=str(message.get("error") or "")[:300] or "it failed")
        if message.get("type") != "restored":
            raise ValueError(f"not a restore reply: {message.get('type')!r}")
        if not message.get("found"):
            return None
        restored = tuple(_variable_name(name) for name in _items(message.get("restored")))
        failed = tuple(
            (_variable_name(item["name"]), str(item.get("error") or "")[:300])
            for item in _items(message.get("failed"))
        )
        return cls(restored, failed, _unsaved(message.get("unsaved")))

    @property
    def lost(self) -> list[str]:
        """What the code had and no longer has, described."""
        return [u.describe() for u in self.unsaved] + [
            f"{name} (could not be loaded)" for name, _ in self.failed
        ]

    def note(self) -> str:
        """Tell the agent (and the user, in the step's output) what a new sandbox has."""
        lines = ["[A new sandbox was started for this session."]
        if self.error:
            lines.append(
                f"The variables saved at the end of the last question could not be "
                f"loaded ({self.error}); load the data again."
            )
        if self.restored:
            lines.append(
                "Restored from the end of the last question: " + ", ".join(self.restored) + "."
            )
        if self.lost:
            lines.append("Not kept: " + ", ".join(self.lost) + "; compute them again if needed.")
        return " ".join(lines) + "]"


def _unsaved(items: Any) -> tuple[UnsavedVariable, ...]:
    return tuple(
        UnsavedVariable(
            _variable_name(item["name"]),
            valid_type_name(item["type"]),
            item.get("reason") if item.get("reason") in REASONS else "not_data",
        )
        for item in _items(items)
    )


def _items(value: Any) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_VARIABLES + 1:
        raise ValueError("expected a list of at most a thousand entries")
    return value


def _count(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def _variable_name(value: Any) -> str:
    if not isinstance(value, str) or not value.isidentifier() or len(value) > MAX_NAME_CHARS:
        raise ValueError(f"not a variable name: {value!r}")
    return value


def valid_type_name(value: Any) -> str:
    if not isinstance(value, str) or not TYPE_NAME.fullmatch(value[:MAX_TYPE_CHARS]):
        return "object"
    return value[:MAX_TYPE_CHARS]


def valid_file_name(value: Any, allow_manifest: bool = False) -> str:
    if not isinstance(value, str) or not (
        FILE_NAME.fullmatch(value) or (allow_manifest and value == MANIFEST)
    ):
        raise ValueError(f"not a snapshot file name: {value!r}")
    return value


def _saved_variable(item: Any, files: set[str]) -> SavedVariable:
    if not isinstance(item, dict) or item.get("kind") not in KINDS:
        raise ValueError(f"not a saved variable: {item!r}")
    shape = _items(item.get("shape"))[:4]
    file = "" if item["kind"] == "import" else valid_file_name(item.get("file"))
    if file and file not in files:
        raise ValueError(f"a variable in a file the snapshot does not have: {file}")
    return SavedVariable(
        _variable_name(item["name"]),
        str(item["kind"]),
        valid_type_name(item.get("type")),
        tuple(_count(n) for n in shape),
        file,
    )
