"""An alert email's chart (app.jobs.chart_image): a Plotly figure's bar, line, scatter and pie
traces drawn as a PNG without a browser (lists and Plotly's typed arrays alike); any other
kind, too many points or what is not a figure gives no image and a sentence."""

from __future__ import annotations

import asyncio
import io
import json

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import pytest
from PIL import Image

from app.jobs.chart_image import MAX_POINTS, chart_png

SALES = pd.DataFrame({"region": ["North", "South", "West"], "revenue": [2510.75, 1980.0, 700.5]})


def _png(figure: go.Figure) -> tuple[bytes | None, str | None]:
    image = asyncio.run(chart_png(figure.to_json().encode(), "fig"))
    return image.png, image.note


@pytest.mark.parametrize(
    "figure",
    [
        px.bar(SALES, x="region", y="revenue", title="Revenue"),  # typed arrays
        px.bar(SALES, x="revenue", y="region", orientation="h"),
        px.line(SALES, x="region", y="revenue"),
        px.scatter(SALES, x="revenue", y="revenue"),
        px.pie(SALES, names="region", values="revenue"),
        go.Figure([go.Scatter(x=[1, 2, 3], y=[3, 1, 2], mode="lines+markers", name="a")]),
    ],
    ids=["bar", "barh", "line", "scatter", "pie", "lists"],
)
def test_the_kinds_drawn_give_a_png(figure: go.Figure) -> None:
    png, note = _png(figure)
    assert note is None and png is not None
    with Image.open(io.BytesIO(png)) as drawn:
        assert drawn.format == "PNG" and drawn.size == (800, 450)
        # Something was drawn: more than the white page and its axes.
        assert len(drawn.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 20


def test_what_is_not_drawn_says_why() -> None:
    heatmap = _png(go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])))
    assert heatmap == (
        None,
        "The chart fig has no image here: alert emails draw bar, line, "
        "scatter and pie charts, not heatmap.",
    )
    many = go.Figure(go.Scatter(x=list(range(MAX_POINTS)), y=list(range(MAX_POINTS))))
    png, note = _png(many)
    assert png is None and note is not None and "more than an email's image draws" in note
    broken = asyncio.run(chart_png(b"{not json", "fig"))
    assert broken.png is None and "not a Plotly figure" in (broken.note or "")
    empty = asyncio.run(chart_png(json.dumps({"data": []}).encode(), "fig"))
    assert empty.png is None and "no traces" in (empty.note or "")
