"""A job run's chart as a PNG for its alert email, drawn without a browser: matplotlib (Agg)
draws the Plotly figure's traces — bar, line and scatter (`scatter` with lines and/or
markers), pie. Any other trace (a heatmap, a map, 3-D, ...) gives no image and a sentence
saying so.

Bounded: figures over MAX_FIGURE_BYTES or MAX_POINTS points are not drawn; drawing runs in
a thread (never on the event loop), one at a time per process (_drawing), and an alert waits
at most DRAW_TIMEOUT_SECONDS for it (then: no image, and the sentence says so).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_FIGURE_BYTES = 5_000_000
MAX_POINTS = 200_000
DRAW_TIMEOUT_SECONDS = 20.0
DRAWN = ("bar", "scatter", "scattergl", "pie")
# One drawing at a time per process: a semaphore per event loop (a test runs several).
_DRAWING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _drawing() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    found = _DRAWING.get(loop)
    if found is None:
        found = _DRAWING[loop] = asyncio.Semaphore(1)
    return found


@dataclass(frozen=True)
class ChartImage:
    """A PNG (None when there is none) and, when there is none, why."""

    png: bytes | None
    note: str | None = None


class NotDrawn(Exception):
    """The figure is not one this draws (the sentence says why)."""


def _values(trace: Mapping[str, Any], key: str) -> list[Any]:
    value = trace.get(key)
    if value is None:
        return []
    if isinstance(value, Mapping):  # a typed array, as Plotly writes numpy's: {dtype, bdata}
        return _typed_array(value)
    if not isinstance(value, Sequence) or isinstance(value, str):
        return [value]
    return list(value)


def _typed_array(value: Mapping[str, Any]) -> list[Any]:
    """The values of a Plotly typed array (`{"dtype": "f8", "bdata": <base64>}`)."""
    import numpy as np  # (with matplotlib: only when an alert draws)

    dtype, data = value.get("dtype"), value.get("bdata")
    if not isinstance(dtype, str) or not isinstance(data, str) or len(data) > MAX_FIGURE_BYTES:
        raise NotDrawn("its data is in a form alert emails do not read")
    try:
        array = np.frombuffer(base64.b64decode(data, validate=True), dtype=np.dtype(dtype))
    except (ValueError, TypeError):
        raise NotDrawn("its data is in a form alert emails do not read") from None
    return array.ravel().tolist()


def _numbers(values: Sequence[Any]) -> list[float]:
    out = []
    for v in values:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(float("nan"))
    return out


def _check(figure: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    traces = figure.get("data")
    if not isinstance(traces, list) or not traces:
        raise NotDrawn("it has no traces")
    points = 0
    for trace in traces:
        if not isinstance(trace, Mapping):
            raise NotDrawn("it has a trace that is not an object")
        kind = str(trace.get("type") or "scatter")
        if kind not in DRAWN:
            raise NotDrawn(f"alert emails draw bar, line, scatter and pie charts, not {kind}")
        points += sum(len(_values(trace, k)) for k in ("x", "y", "values", "labels"))
    if points > MAX_POINTS:
        raise NotDrawn(f"it has {points:,} points, more than an email's image draws")
    return traces


def _draw_trace(axes: Any, trace: Mapping[str, Any], number: int) -> None:
    kind = str(trace.get("type") or "scatter")
    name = str(trace.get("name") or "") or None
    if kind == "pie":
        labels = [str(v) for v in _values(trace, "labels")]
        values = _numbers(_values(trace, "values"))
        axes.pie(values, labels=labels or None, autopct="%1.0f%%")
        axes.set_aspect("equal")
        return
    x, y = _values(trace, "x"), _values(trace, "y")
    if kind == "bar":
        horizontal = trace.get("orientation") == "h"
        if horizontal:
            x, y = y, x
        x = x or list(range(len(y)))
        labels = [str(v) for v in x]
        heights = _numbers(y)
        if horizontal:
            axes.barh(labels, heights, label=name)
        else:
            axes.bar(labels, heights, label=name)
        return
    x = x or list(range(len(y)))
    labels_or_numbers: list[Any] = x if all(_is_number(v) for v in x) else [str(v) for v in x]
    mode = str(trace.get("mode") or "lines")
    style = ("-" if "lines" in mode else "") + ("o" if "markers" in mode else "")
    axes.plot(labels_or_numbers, _numbers(y), style or "-", label=name)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _text(layout: Mapping[str, Any], *path: str) -> str | None:
    node: Any = layout
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    if isinstance(node, Mapping):
        node = node.get("text")
    return str(node) if node not in (None, "") else None


def draw(figure: Mapping[str, Any]) -> bytes:
    """The figure as a PNG (in the calling thread: call it through `chart_png`).

    Raises:
        NotDrawn: a trace this does not draw, or too many points.
    """
    from matplotlib.figure import Figure

    traces = _check(figure)
    found = figure.get("layout")
    layout: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    canvas = Figure(figsize=(8, 4.5), dpi=100)
    axes = canvas.subplots()
    for number, trace in enumerate(traces):
        _draw_trace(axes, trace, number)
    title = _text(layout, "title")
    if title:
        axes.set_title(title)
    for axis, setter in (("xaxis", axes.set_xlabel), ("yaxis", axes.set_ylabel)):
        label = _text(layout, axis, "title")
        if label:
            setter(label)
    if sum(1 for t in traces if t.get("name")) > 1:
        axes.legend()
    if any(len(_values(t, "x")) > 8 for t in traces if t.get("type") == "bar"):
        axes.tick_params(axis="x", labelrotation=45)
    canvas.tight_layout()
    out = io.BytesIO()
    canvas.savefig(out, format="png")
    return out.getvalue()


def _draw_bytes(data: bytes) -> bytes:
    try:
        figure = json.loads(data)
    except ValueError:
        raise NotDrawn("it is not a Plotly figure") from None
    if not isinstance(figure, Mapping):
        raise NotDrawn("it is not a Plotly figure")
    return draw(figure)


async def chart_png(data: bytes, name: str) -> ChartImage:
    """The PNG of a Plotly figure's JSON (`data`), drawn off the event loop, one at a time;
    no image and a sentence when it is not drawn. Never raises."""
    if len(data) > MAX_FIGURE_BYTES:
        return ChartImage(None, f"The chart {name} is too large to draw in an email.")
    try:
        async with _drawing():
            png = await asyncio.wait_for(asyncio.to_thread(_draw_bytes, data), DRAW_TIMEOUT_SECONDS)
    except NotDrawn as exc:
        return ChartImage(None, f"The chart {name} has no image here: {exc}.")
    except TimeoutError:
        return ChartImage(None, f"The chart {name} took too long to draw for an email.")
    except Exception as exc:  # a figure matplotlib cannot draw: the email goes without it
        return ChartImage(None, f"The chart {name} could not be drawn ({type(exc).__name__}).")
    return ChartImage(png)
