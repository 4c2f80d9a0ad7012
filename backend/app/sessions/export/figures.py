"""Figures that fetch nothing when an export is opened.

A notebook's plotly figures are drawn as soon as JupyterLab or VS Code opens it (plotly's
mime type is marked safe), and plotly.js loads whatever a figure points at: a layout
image's `source`, a map's `style` and its layers' tile `source`s, a choropleth's `geojson`.
A figure comes from the model's code, which may have read hostile data, so an address in
one of those places would carry data out the moment someone opens the file. Those values
are dropped unless they are inline (a `data:` URI, inline GeoJSON) or a map style's plain
name ("open-street-map"); text that merely names a URL (labels, hover text) stays.
"""

from __future__ import annotations

import re
from typing import Any

# The attributes plotly.js fetches from, wherever they sit (layout, template or trace).
FETCHED = frozenset({"source", "style", "geojson"})
_NAMED = re.compile(r"[A-Za-z0-9_-]+")


def inert_figure(value: Any) -> Any:
    """`value` (a figure's JSON) without any address plotly would fetch."""
    if isinstance(value, dict):
        return {
            key: inert_figure(item)
            for key, item in value.items()
            if not (key in FETCHED and _fetches(item))
        }
    if isinstance(value, list):
        return [inert_figure(item) for item in value]
    return value


def _fetches(value: Any) -> bool:
    if isinstance(value, str):
        return not (value.startswith("data:") or _NAMED.fullmatch(value))
    if isinstance(value, list):
        return any(_fetches(item) for item in value)
    return False
