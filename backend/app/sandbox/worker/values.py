"""Plain Python values as tagged JSON, for session snapshots (`snapshot.py`): `encode` gives
a JSON form that `decode` turns back into the same value. Nothing here unpickles."""

from __future__ import annotations

import base64
import datetime
import decimal
import importlib
import math
import sys
from typing import Any

from app.sandbox.snapshot_format import MAX_VALUE_DEPTH, Unsaveable


def encode(value: Any, depth: int = 0) -> Any:
    """A JSON form of a plain value that `_decode` turns back into the same value."""
    if depth > MAX_VALUE_DEPTH:
        raise Unsaveable()
    if value is None or isinstance(value, bool | str):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {"$float": repr(value)}
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        if value.dtype.hasobject or value.dtype.kind in "MmVSU":
            raise Unsaveable()
        return {"$numpy": value.dtype.str, "value": encode(value.item(), depth + 1)}
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, pandas.Timestamp):
        return {"$timestamp": value.isoformat()}
    if pandas is not None and isinstance(value, pandas.Timedelta):
        return {"$pdtimedelta": int(value.value)}
    nested = depth + 1
    if type(value) is list:
        return [encode(v, nested) for v in value]
    if type(value) is tuple:
        return {"$tuple": [encode(v, nested) for v in value]}
    if type(value) in (set, frozenset):
        return {f"${type(value).__name__}": [encode(v, nested) for v in value]}
    if type(value) is dict:
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encode(v, nested) for k, v in value.items()}
        return {"$dict": [[encode(k, nested), encode(v, nested)] for k, v in value.items()]}
    if type(value) is complex:
        return {"$complex": [encode(value.real), encode(value.imag)]}
    if type(value) is bytes:
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if type(value) is decimal.Decimal:
        return {"$decimal": str(value)}
    if type(value) is datetime.datetime:
        return {"$datetime": value.isoformat()}
    if type(value) is datetime.date:
        return {"$date": value.isoformat()}
    if type(value) is datetime.time:
        return {"$time": value.isoformat()}
    if type(value) is datetime.timedelta:
        return {"$timedelta": [value.days, value.seconds, value.microseconds]}
    raise Unsaveable()


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    tags = [k for k in data if k.startswith("$")]
    if not tags:
        return {k: decode(v) for k, v in data.items()}
    tag, payload = tags[0], data[tags[0]]
    if tag == "$float":
        return float(payload)
    if tag == "$numpy":
        numpy = importlib.import_module("numpy")
        return numpy.dtype(payload).type(decode(data["value"]))
    if tag == "$timestamp":
        return importlib.import_module("pandas").Timestamp(payload)
    if tag == "$pdtimedelta":
        return importlib.import_module("pandas").Timedelta(int(payload), unit="ns")
    if tag == "$tuple":
        return tuple(decode(v) for v in payload)
    if tag == "$set":
        return {decode(v) for v in payload}
    if tag == "$frozenset":
        return frozenset(decode(v) for v in payload)
    if tag == "$dict":
        return {decode(k): decode(v) for k, v in payload}
    if tag == "$complex":
        return complex(decode(payload[0]), decode(payload[1]))
    if tag == "$bytes":
        return base64.b64decode(payload)
    if tag == "$decimal":
        return decimal.Decimal(payload)
    if tag == "$datetime":
        return datetime.datetime.fromisoformat(payload)
    if tag == "$date":
        return datetime.date.fromisoformat(payload)
    if tag == "$time":
        return datetime.time.fromisoformat(payload)
    if tag == "$timedelta":
        return datetime.timedelta(days=payload[0], seconds=payload[1], microseconds=payload[2])
    raise ValueError(f"unknown tag {tag}")
