"""The demo's dataset: monthly sales by region over two years, made deterministically (the
file shipped in data/ is what `make()` returns; scripts.record_demo writes it again)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

NAME = "monthly_sales.csv"
PATH = Path(__file__).parent / "data" / NAME
REGIONS = {"North": (1200, 14), "South": (950, 22), "East": (780, 9), "West": (1100, -3)}
# The months' seasonal lift, January to December (per cent).
SEASON = (-8, -10, -2, 0, 3, 5, 2, 0, 4, 6, 9, 15)


def make() -> bytes:
    """The CSV: month, region, units, revenue; each region with its own level, trend and
    the shared seasonality, and no randomness (so the recording's numbers hold)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["month", "region", "units", "revenue"])
    for year in (2024, 2025):
        for month in range(1, 13):
            for region, (level, trend) in REGIONS.items():
                months = (year - 2024) * 12 + month - 1
                units = round(
                    level * (1 + trend / 100) ** (months / 12) * (1 + SEASON[month - 1] / 100)
                )
                price = 24.5 + (months % 5) * 0.25
                writer.writerow([f"{year}-{month:02d}", region, units, f"{units * price:.2f}"])
    return out.getvalue().encode()


def content() -> bytes:
    """The shipped file's bytes."""
    return PATH.read_bytes()
