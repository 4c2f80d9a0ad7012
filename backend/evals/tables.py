"""The task set's tables: small, made-up, and the same on every run (a fixed seed)."""

from __future__ import annotations

import numpy as np
import pandas as pd

SEED = 20250101


def sales(rng: np.random.Generator) -> pd.DataFrame:
    """480 orders of 2025: when, where, what, how many and for how much."""
    n = 480
    days = np.sort(rng.integers(0, 365, n))
    products = np.array(["Widget", "Gadget", "Gizmo", "Doohickey"])
    base = {"Widget": 12.5, "Gadget": 24.0, "Gizmo": 7.75, "Doohickey": 39.9}
    product = rng.choice(products, n, p=[0.35, 0.25, 0.25, 0.15])
    unit_price = np.round([base[p] * rng.uniform(0.9, 1.1) for p in product], 2)
    units = rng.integers(1, 21, n)
    discount = rng.choice([0.0, 0.05, 0.1, 0.2], n, p=[0.55, 0.2, 0.15, 0.1])
    return pd.DataFrame(
        {
            "order_id": np.arange(1001, 1001 + n),
            "date": pd.Timestamp("2025-01-01") + pd.to_timedelta(days, unit="D"),
            "region": rng.choice(["North", "South", "East", "West"], n, p=[0.3, 0.2, 0.3, 0.2]),
            "product": product,
            "channel": rng.choice(["online", "store"], n, p=[0.6, 0.4]),
            "units": units,
            "unit_price": unit_price,
            "discount": discount,
            "revenue": np.round(units * unit_price * (1 - discount), 2),
        }
    )


def employees(rng: np.random.Generator) -> pd.DataFrame:
    """300 employees: department, hiring date, pay, age; some bonuses are not known."""
    n = 300
    departments = ["Engineering", "Sales", "Marketing", "Finance", "HR"]
    department = rng.choice(departments, n, p=[0.34, 0.26, 0.16, 0.14, 0.10])
    base = {"Engineering": 78000, "Sales": 56000, "Marketing": 60000, "Finance": 70000, "HR": 52000}
    age = rng.integers(22, 64, n)
    salary = np.round(
        [
            base[d] + (a - 22) * 650 + rng.normal(0, 9000)
            for d, a in zip(department, age, strict=True)
        ],
        2,
    )
    hired = pd.Timestamp("2008-01-01") + pd.to_timedelta(rng.integers(0, 6210, n), unit="D")
    bonus = np.round(salary * rng.uniform(0.02, 0.15, n), 2)
    bonus[rng.random(n) < 0.1] = np.nan
    remote_share = {"Engineering": 0.55, "Sales": 0.2, "Marketing": 0.4, "Finance": 0.3, "HR": 0.25}
    return pd.DataFrame(
        {
            "employee_id": [f"E{i:04d}" for i in range(1, n + 1)],
            "department": department,
            "hire_date": hired,
            "age": age,
            "gender": rng.choice(["F", "M"], n),
            "salary": salary,
            "bonus": bonus,
            "performance": rng.choice([1, 2, 3, 4, 5], n, p=[0.05, 0.15, 0.4, 0.28, 0.12]),
            "remote": np.where(rng.random(n) < [remote_share[d] for d in department], "yes", "no"),
        }
    )


def weather(rng: np.random.Generator) -> pd.DataFrame:
    """Daily weather of three cities, January to June 2024; a few humidity readings missing."""
    dates = pd.date_range("2024-01-01", "2024-06-30", freq="D")
    climate = {  # mean high in January, rise by June, chance of rain, mean humidity
        "Oslo": (0.0, 20.0, 0.45, 78.0),
        "Madrid": (10.0, 20.0, 0.2, 55.0),
        "Cairo": (19.0, 16.0, 0.04, 48.0),
    }
    frames = []
    season = np.linspace(0, 1, len(dates))
    for city, (january, rise, rain_chance, humidity) in climate.items():
        temp_max = np.round(january + rise * season + rng.normal(0, 2.5, len(dates)), 1)
        temp_min = np.round(temp_max - rng.uniform(4, 14, len(dates)), 1)
        rainy = rng.random(len(dates)) < rain_chance
        rain = np.where(rainy, np.round(rng.exponential(5.0, len(dates)) + 0.1, 1), 0.0)
        humid = np.round(np.clip(humidity + 12 * rainy + rng.normal(0, 8, len(dates)), 15, 100), 1)
        frames.append(
            pd.DataFrame(
                {
                    "date": dates,
                    "city": city,
                    "temp_max": temp_max,
                    "temp_min": temp_min,
                    "precipitation_mm": rain,
                    "humidity": humid,
                    "wind_kmh": np.round(rng.gamma(4.0, 3.0 + 2 * rainy), 1),
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)
    table.loc[rng.choice(len(table), 12, replace=False), "humidity"] = np.nan
    return table


def build() -> dict[str, pd.DataFrame]:
    """Every table, by file name."""
    rng = np.random.default_rng(SEED)
    return {
        "sales.csv": sales(rng),
        "employees.csv": employees(rng),
        "weather.csv": weather(rng),
    }
