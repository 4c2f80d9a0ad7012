"""A saved chart as a page anyone can open: Plotly's HTML with plotly.js inside the file.

The artifact itself is Plotly's figure JSON (what the browser app draws). Beside it `--save`
writes `<name>.html`: one file, no CDN and no network needed to open it, and its toolbar's
camera button downloads the chart as a PNG. The CLI writes no PNG itself: rendering one
takes a browser engine (Plotly's kaleido downloads Chrome), and running a browser here over
a figure that code written by a model produced is not worth the picture.
"""

from __future__ import annotations

import json
from pathlib import Path


def write_chart_page(figure_json: Path, target: Path, title: str) -> Path | None:
    """Write `target`, a standalone HTML page of the Plotly figure in `figure_json`.

    Args:
        figure_json: The downloaded artifact (Plotly's figure JSON).
        target: Where the page goes (an existing file is replaced).
        title: The page's title (the artifact's name).

    Returns:
        `target`, or None when the file is not a Plotly figure (nothing is written then).
    """
    import plotly.io as pio  # slow to import; only when a chart is saved

    try:
        figure = json.loads(figure_json.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(figure, dict) or not isinstance(figure.get("data", []), list):
        return None
    # validate=False: the figure is drawn as the browser app draws it, not re-checked by
    # plotly.py (whose version may differ from the sandbox's). Strings in the figure are
    # written as JSON with "<" escaped, so no text in it can close the script.
    page = pio.to_html(
        figure, include_plotlyjs=True, full_html=True, validate=False, default_width="100%"
    )
    # The chart fills the window (Plotly's page keeps the body's margin: a scroll bar).
    head = f"<head><title>{_escape(title)}</title><style>body {{margin: 0;}}</style>"
    page = page.replace("<head>", head, 1)
    target.write_text(page, encoding="utf-8")
    return target


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
