"""The key result tables of an attempt, as the vote compares them.

At an attempt's end its worker fingerprints the DataFrames (and Series) its code assigned —
the names its steps bind: created or changed during the question — each as its shape, its
column names and a hash of its values that ignores the order of rows and columns and the
columns' names, numbers compared as floats rounded to 0…6 decimals (a hash for each). The
code runs in the attempt's worker like any step (its namespace is the attempt's own: the
attempt may have replaced pandas' functions), so what comes back is untrusted: it is
parsed with bounds (tables, columns, characters) and strict types, and anything else is
dropped. A lie can only change its own attempt's vote, as a lying answer can.

The rule (app.attempts.vote): two attempts whose answers agree are still split when a table
of the same name in both has different values at the precision their answers state
(tables only one of them made do not count: two ways of computing name their steps
differently). Tables never join answers that disagree.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_TABLES = 12
MAX_COLUMNS = 40
NAME_CHARS = 64
PLACES = tuple(range(7))  # the decimals each table is hashed at
# Bigger tables are told by their shape only (hashing them would hold the attempt up).
MAX_CELLS = 2_000_000
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_HASH = re.compile(r"[0-9]{1,20}")


@dataclass(frozen=True)
class Table:
    rows: int
    width: int
    columns: tuple[str, ...]  # the first MAX_COLUMNS names
    hashes: tuple[str, ...] | None  # by PLACES; None: too big or could not be hashed

    def same_as(self, other: Table, places: int) -> bool:
        """Whether the two hold the same values at `places` decimals (when either could
        not be hashed: the same shape)."""
        if (self.rows, self.width) != (other.rows, other.width):
            return False
        if self.hashes is None or other.hashes is None:
            return True
        at = max(0, min(places, len(PLACES) - 1))
        return self.hashes[at] == other.hashes[at]

    def record(self) -> dict[str, object]:
        return {"rows": self.rows, "width": self.width, "columns": list(self.columns)}


def assigned_names(codes: Iterable[str]) -> list[str]:
    """The names the code binds (assignments, augmented ones, `x[…] =`, loops, `with … as`,
    walrus) or changes in place (`df.drop(…, inplace=True)`, `df.insert(…)`), last bound
    last; code that does not parse gives none."""
    order: dict[str, None] = {}
    for code in codes:
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = list(node.targets)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)):
                targets = [node.target]
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                targets = [node.optional_vars]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                targets = [node.func.value] if _changes_in_place(node.func, node) else []
            for target in targets:
                for name in _bound(target):
                    order.pop(name, None)
                    order[name] = None
    names = [n for n in order if _IDENTIFIER.fullmatch(n) and not n.startswith("_")]
    return names[-MAX_TABLES:]


# DataFrame methods that change their frame in place (besides any call with inplace=True).
IN_PLACE = frozenset({"insert", "update", "pop"})


def _changes_in_place(method: ast.Attribute, call: ast.Call) -> bool:
    """`df.drop(columns="x", inplace=True)`, `df.insert(0, "k", 1)`, `df.update(other)`."""
    if method.attr in IN_PLACE:
        return True
    return any(
        k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords
    )


def _bound(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Subscript, ast.Attribute)):  # df["x"] = …, df.x = …
        return _bound(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _bound(element)]
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return []


# Runs in the attempt's worker as a step of its own (smolagents' interpreter: no dunders,
# the authorised imports). `__LOOKUPS__` becomes a lookup of each checked name.
_FINGERPRINT = """
import json as _wb_json
import numpy as _wb_np
import pandas as _wb_pd

def _wb_hash(frame):
    hashed = _wb_pd.util.hash_pandas_object(frame, index=False).to_numpy()
    ordered = _wb_pd.Series(_wb_np.sort(hashed))
    return str(int(_wb_pd.util.hash_pandas_object(ordered, index=True).to_numpy().sum()))

def _wb_table(value):
    if isinstance(value, _wb_pd.Series):
        value = value.to_frame()
    if not isinstance(value, _wb_pd.DataFrame):
        return None
    frame = value
    if not (isinstance(frame.index, _wb_pd.RangeIndex) and frame.index.name is None):
        frame = frame.reset_index()
    rows, width = frame.shape
    names = [str(c)[:__CHARS__] for c in list(frame.columns)[:__COLUMNS__]]
    if rows * max(width, 1) > __CELLS__:
        return [rows, width, names, None]
    hashes = []
    for places in __PLACES__:
        parts = []
        for i in range(width):
            column = frame.iloc[:, i]
            kinds = _wb_pd.api.types
            if kinds.is_numeric_dtype(column) and not kinds.is_bool_dtype(column):
                column = column.astype("float64").round(places) + 0.0
            parts.append(column.reset_index(drop=True))
        keys = [_wb_hash(part.to_frame()) for part in parts]
        order = sorted(range(width), key=lambda i: keys[i])
        canonical = _wb_pd.concat([parts[i] for i in order], axis=1, ignore_index=True)
        hashes.append(_wb_hash(canonical) if width else "0")
    return [rows, width, names, hashes]

_wb_found = {}
__LOOKUPS__
_wb_json.dumps(_wb_found)
"""

_LOOKUP = """try:
    _wb_value = _wb_table({name})
    if _wb_value is not None:
        _wb_found["{name}"] = _wb_value
except Exception:
    pass"""


def fingerprint_code(names: Iterable[str]) -> str:
    """The step that fingerprints these variables (only plain identifiers are kept)."""
    checked = [n for n in names if _IDENTIFIER.fullmatch(n)][:MAX_TABLES]
    lookups = "\n".join(_LOOKUP.format(name=n) for n in checked) or "pass"
    return (
        _FINGERPRINT.replace("__CHARS__", str(NAME_CHARS))
        .replace("__COLUMNS__", str(MAX_COLUMNS))
        .replace("__CELLS__", str(MAX_CELLS))
        .replace("__PLACES__", repr(PLACES))
        .replace("__LOOKUPS__", lookups)
    )


def parse(output: str | None, asked: Iterable[str]) -> dict[str, Table]:
    """The worker's fingerprints, checked: only names that were asked for, bounded
    counts and lengths, whole numbers and digit strings where they belong."""
    if not output:
        return {}
    try:
        data = json.loads(output)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    wanted = set(asked)
    found: dict[str, Table] = {}
    for name, value in list(data.items())[:MAX_TABLES]:
        if name not in wanted or not isinstance(value, list) or len(value) != 4:
            continue
        rows, width, columns, hashes = value
        if not (_count(rows) and _count(width)):
            continue
        if not isinstance(columns, list) or len(columns) > MAX_COLUMNS:
            continue
        if not all(isinstance(c, str) and len(c) <= NAME_CHARS for c in columns):
            continue
        checked: tuple[str, ...] | None = None
        if hashes is not None:
            if not isinstance(hashes, list) or len(hashes) != len(PLACES):
                continue
            if not all(isinstance(h, str) and _HASH.fullmatch(h) for h in hashes):
                continue
            checked = tuple(hashes)
        found[name] = Table(rows, width, tuple(columns), checked)
    return found


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 53
