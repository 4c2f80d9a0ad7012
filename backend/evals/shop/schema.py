"""The shop database: a made-up web shop's tables, the same on every run (a fixed seed),
written as portable SQL (DDL and INSERTs that SQLite, PostgreSQL and MariaDB all load)
and as a SQLite file built from that SQL.

Realistic on purpose: customers without an email or a birth year, customers referred by
other customers, a two-level category tree, products tagged many-to-many, orders over three
and a half years that were cancelled, are still on their way or were partly returned.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np

SEED = 20250611
FIRST_DAY, LAST_DAY = date(2022, 1, 1), date(2025, 6, 30)
# INSERT statements carry this many rows each (a few kilobytes: any server takes them).
ROWS_PER_INSERT = 200


@dataclass(frozen=True)
class Table:
    """One table: its columns as `name TYPE [constraints]`, its keys, and its rows."""

    name: str
    columns: tuple[str, ...]
    constraints: tuple[str, ...]
    rows: list[tuple[Any, ...]]

    @property
    def column_names(self) -> list[str]:
        return [c.split()[0] for c in self.columns]

    def ddl(self) -> str:
        body = ",\n  ".join(self.columns + self.constraints)
        return f"CREATE TABLE {self.name} (\n  {body}\n)"


REGIONS = ("North", "South", "East", "West", "Central", "Islands")
CATEGORY_TREE = {  # department: its categories
    "Home": ("Kitchen", "Garden", "Furniture"),
    "Electronics": ("Audio", "Computers", "Phones"),
    "Leisure": ("Sports", "Books", "Toys"),
}
PRICE_RANGE = {  # a category's list prices
    "Kitchen": (12, 90),
    "Garden": (8, 140),
    "Furniture": (60, 480),
    "Audio": (25, 320),
    "Computers": (150, 1400),
    "Phones": (120, 900),
    "Sports": (10, 160),
    "Books": (7, 45),
    "Toys": (6, 70),
}
NOUNS = {
    "Kitchen": ("Kettle", "Pan", "Knife Set", "Blender", "Toaster", "Mug Set", "Scale"),
    "Garden": ("Hose", "Rake", "Planter", "Lantern", "Pruner", "Bird Feeder"),
    "Furniture": ("Desk", "Armchair", "Bookcase", "Stool", "Side Table", "Wardrobe"),
    "Audio": ("Headphones", "Speaker", "Soundbar", "Earbuds", "Turntable"),
    "Computers": ("Laptop", "Monitor", "Keyboard", "Tablet", "Router", "Webcam"),
    "Phones": ("Smartphone", "Phone Case", "Charger", "Smartwatch"),
    "Sports": ("Yoga Mat", "Dumbbells", "Tennis Racket", "Bike Helmet", "Running Vest"),
    "Books": ("Cookbook", "Atlas", "Novel", "Field Guide", "Puzzle Book"),
    "Toys": ("Puzzle", "Robot Kit", "Kite", "Board Game", "Plush Bear"),
}
ADJECTIVES = (
    "Aurora",
    "Basalt",
    "Cedar",
    "Delta",
    "Ember",
    "Fjord",
    "Granite",
    "Harbor",
    "Indigo",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Meadow",
    "Nimbus",
    "Orchid",
    "Pioneer",
)
TAGS = ("eco", "bestseller", "gift", "premium", "new", "clearance", "handmade", "bundle")
FIRST_NAMES = (
    "Ada",
    "Ben",
    "Chloe",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kemi",
    "Liam",
    "Maya",
    "Nils",
    "Olga",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wei",
    "Ximena",
    "Yusuf",
    "Zoe",
)
LAST_NAMES = (
    "Andersen",
    "Brown",
    "Costa",
    "Dubois",
    "Eriksen",
    "Fischer",
    "Garcia",
    "Haddad",
    "Ivanova",
    "Jensen",
    "Kowalski",
    "Lopez",
    "Moreau",
    "Nakamura",
    "O'Brien",
    "Patel",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Uddin",
    "Varga",
    "Weber",
    "Young",
    "Zhang",
)
COUPONS = ("WELCOME10", "SPRING15", "SUMMER20", "LOYAL5", "BLACKFRIDAY")
RETURN_REASONS = ("damaged", "wrong item", "not as described", "changed mind")


def _day(rng: np.random.Generator, first: date, last: date) -> date:
    return first + timedelta(days=int(rng.integers(0, (last - first).days + 1)))


def _money(value: float) -> float:
    return round(float(value) + 1e-9, 2)


def build() -> list[Table]:
    """Every table, in the order they load (a table after those it refers to)."""
    rng = np.random.default_rng(SEED)
    regions = [(i, name) for i, name in enumerate(REGIONS, start=1)]

    categories: list[tuple[Any, ...]] = []
    leaf_ids: dict[str, int] = {}
    for department, leaves in CATEGORY_TREE.items():
        parent = len(categories) + 1
        categories.append((parent, department, None))
        for leaf in leaves:
            leaf_ids[leaf] = len(categories) + 1
            categories.append((leaf_ids[leaf], leaf, parent))

    products: list[tuple[Any, ...]] = []
    product_category: dict[int, str] = {}
    names: set[str] = set()
    for leaf, nouns in NOUNS.items():
        low, high = PRICE_RANGE[leaf]
        for noun in nouns:
            for adjective in rng.choice(ADJECTIVES, 2, replace=False):
                name = f"{adjective} {noun}"
                if name in names:
                    continue
                names.add(name)
                product_id = len(products) + 1
                price = _money(np.exp(rng.uniform(np.log(low), np.log(high))))
                cost = _money(price * rng.uniform(0.45, 0.75))
                launched = _day(rng, date(2020, 1, 1), date(2024, 9, 30))
                discontinued = (
                    _day(rng, max(launched + timedelta(days=120), date(2023, 1, 1)), LAST_DAY)
                    if rng.random() < 0.18
                    else None
                )
                products.append(
                    (product_id, name, leaf_ids[leaf], price, cost, launched, discontinued)
                )
                product_category[product_id] = leaf

    tags = [(i, name) for i, name in enumerate(TAGS, start=1)]
    tag_weights = np.array([0.3, 0.2, 0.35, 0.15, 0.15, 0.1, 0.08, 0.12])
    product_tags: list[tuple[Any, ...]] = []
    for product in products:
        for tag_id in sorted(int(t) for t in np.flatnonzero(rng.random(len(TAGS)) < tag_weights)):
            product_tags.append((product[0], tag_id + 1))

    customers: list[tuple[Any, ...]] = []
    region_weights = np.array([0.22, 0.18, 0.24, 0.16, 0.13, 0.07])
    for customer_id in range(1, 901):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        email = (
            None
            if rng.random() < 0.08
            else f"{first.lower()}.{last.lower().replace(chr(39), '')}{customer_id}@example.com"
        )
        signup = _day(rng, date(2021, 6, 1), date(2025, 5, 31))
        referred_by = (
            int(rng.integers(1, customer_id)) if customer_id > 20 and rng.random() < 0.2 else None
        )
        customers.append(
            (
                customer_id,
                str(first),
                str(last),
                email,
                int(rng.choice(len(REGIONS), p=region_weights / region_weights.sum())) + 1,
                "business" if rng.random() < 0.18 else "consumer",
                signup,
                None if rng.random() < 0.15 else int(rng.integers(1950, 2006)),
                referred_by,
            )
        )

    # Some customers never order; the others order at their own pace after signing up.
    activity = rng.gamma(1.2, 1.0, len(customers)) * (rng.random(len(customers)) > 0.12)
    orders: list[tuple[Any, ...]] = []
    items: list[tuple[Any, ...]] = []
    returns: list[tuple[Any, ...]] = []
    prices = {p[0]: p[3] for p in products}
    launched_on = {p[0]: p[5] for p in products}
    ended_on = {p[0]: p[6] for p in products}
    popularity = rng.pareto(1.6, len(products)) + 0.2
    raw_orders: list[tuple[date, int]] = []
    for customer, weight in zip(customers, activity, strict=True):
        start = max(customer[6], FIRST_DAY)
        if start > LAST_DAY or weight == 0:
            continue
        for _ in range(int(rng.poisson(weight * 4.5))):
            # Later days a little likelier: the shop grows.
            span = (LAST_DAY - start).days
            offset = int(span * (rng.random() ** 0.8))
            raw_orders.append((start + timedelta(days=offset), customer[0]))
    raw_orders.sort()
    for order_id, (ordered, customer_id) in enumerate(raw_orders, start=1):
        age = (LAST_DAY - ordered).days
        roll = rng.random()
        if roll < 0.06:
            status = "cancelled"
        elif age < 6:
            status = "processing" if roll < 0.5 else "shipped"
        elif age < 14 and roll < 0.4:
            status = "shipped"
        else:
            status = "delivered"
        shipped = (
            None
            if status in ("cancelled", "processing")
            else ordered + timedelta(days=int(rng.choice([0, 1, 1, 2, 2, 3, 4, 6, 9])))
        )
        channel = str(rng.choice(["web", "app", "phone"], p=[0.55, 0.35, 0.10]))
        coupon = str(rng.choice(COUPONS)) if rng.random() < 0.17 else None
        orders.append((order_id, customer_id, ordered, status, shipped, channel, coupon))

        on_sale = [
            pid
            for pid in prices
            if launched_on[pid] <= ordered and (ended_on[pid] is None or ordered < ended_on[pid])
        ]
        weights = popularity[np.array(on_sale) - 1]
        lines = min(len(on_sale), 1 + int(rng.poisson(1.4)))
        chosen = rng.choice(on_sale, lines, replace=False, p=weights / weights.sum())
        for line_no, product_id in enumerate(chosen, start=1):
            quantity = int(rng.choice([1, 1, 1, 2, 2, 3, 4]))
            off = float(rng.choice([0.0, 0.0, 0.0, 0.05, 0.1, 0.2]))
            unit_price = _money(prices[int(product_id)] * (1 - off))
            items.append((order_id, line_no, int(product_id), quantity, unit_price))
            if status == "delivered" and rng.random() < 0.045:
                reason = None if rng.random() < 0.2 else str(rng.choice(RETURN_REASONS))
                refunded = quantity if rng.random() < 0.8 else max(1, quantity - 1)
                returns.append(
                    (
                        len(returns) + 1,
                        order_id,
                        line_no,
                        shipped + timedelta(days=int(rng.integers(3, 40))),  # type: ignore[operator]
                        reason,
                        _money(refunded * unit_price),
                    )
                )

    return [
        Table(
            "regions",
            ("region_id INTEGER NOT NULL", "name VARCHAR(40) NOT NULL"),
            ("PRIMARY KEY (region_id)",),
            regions,
        ),
        Table(
            "customers",
            (
                "customer_id INTEGER NOT NULL",
                "first_name VARCHAR(40) NOT NULL",
                "last_name VARCHAR(40) NOT NULL",
                "email VARCHAR(120)",
                "region_id INTEGER NOT NULL",
                "segment VARCHAR(20) NOT NULL",
                "signup_date DATE NOT NULL",
                "birth_year INTEGER",
                "referred_by INTEGER",
            ),
            (
                "PRIMARY KEY (customer_id)",
                "FOREIGN KEY (region_id) REFERENCES regions (region_id)",
                "FOREIGN KEY (referred_by) REFERENCES customers (customer_id)",
            ),
            customers,
        ),
        Table(
            "categories",
            ("category_id INTEGER NOT NULL", "name VARCHAR(40) NOT NULL", "parent_id INTEGER"),
            (
                "PRIMARY KEY (category_id)",
                "FOREIGN KEY (parent_id) REFERENCES categories (category_id)",
            ),
            categories,
        ),
        Table(
            "products",
            (
                "product_id INTEGER NOT NULL",
                "name VARCHAR(80) NOT NULL",
                "category_id INTEGER NOT NULL",
                "list_price DECIMAL(10, 2) NOT NULL",
                "unit_cost DECIMAL(10, 2) NOT NULL",
                "launched_on DATE NOT NULL",
                "discontinued_on DATE",
            ),
            (
                "PRIMARY KEY (product_id)",
                "FOREIGN KEY (category_id) REFERENCES categories (category_id)",
            ),
            products,
        ),
        Table(
            "tags",
            ("tag_id INTEGER NOT NULL", "name VARCHAR(40) NOT NULL"),
            ("PRIMARY KEY (tag_id)",),
            tags,
        ),
        Table(
            "product_tags",
            ("product_id INTEGER NOT NULL", "tag_id INTEGER NOT NULL"),
            (
                "PRIMARY KEY (product_id, tag_id)",
                "FOREIGN KEY (product_id) REFERENCES products (product_id)",
                "FOREIGN KEY (tag_id) REFERENCES tags (tag_id)",
            ),
            product_tags,
        ),
        Table(
            "orders",
            (
                "order_id INTEGER NOT NULL",
                "customer_id INTEGER NOT NULL",
                "order_date DATE NOT NULL",
                "status VARCHAR(20) NOT NULL",
                "shipped_date DATE",
                "channel VARCHAR(20) NOT NULL",
                "coupon_code VARCHAR(20)",
            ),
            (
                "PRIMARY KEY (order_id)",
                "FOREIGN KEY (customer_id) REFERENCES customers (customer_id)",
            ),
            orders,
        ),
        Table(
            "order_items",
            (
                "order_id INTEGER NOT NULL",
                "line_no INTEGER NOT NULL",
                "product_id INTEGER NOT NULL",
                "quantity INTEGER NOT NULL",
                "unit_price DECIMAL(10, 2) NOT NULL",
            ),
            (
                "PRIMARY KEY (order_id, line_no)",
                "FOREIGN KEY (order_id) REFERENCES orders (order_id)",
                "FOREIGN KEY (product_id) REFERENCES products (product_id)",
            ),
            items,
        ),
        Table(
            "returns",
            (
                "return_id INTEGER NOT NULL",
                "order_id INTEGER NOT NULL",
                "line_no INTEGER NOT NULL",
                "returned_on DATE NOT NULL",
                "reason VARCHAR(40)",
                "refund_amount DECIMAL(10, 2) NOT NULL",
            ),
            (
                "PRIMARY KEY (return_id)",
                "FOREIGN KEY (order_id, line_no) REFERENCES order_items (order_id, line_no)",
            ),
            returns,
        ),
    ]


# -- as SQL ------------------------------------------------------------------------------------


def literal(value: Any) -> str:
    """A value as an SQL literal every one of the three databases reads the same way."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        raise TypeError("no booleans: the databases disagree on them")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, date):
        return f"'{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


def statements(tables: Sequence[Table]) -> list[str]:
    """Drop, create and fill every table: one statement an item, without the semicolon."""
    out = [f"DROP TABLE IF EXISTS {t.name}" for t in reversed(tables)]
    out += [t.ddl() for t in tables]
    for table in tables:
        head = f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES\n"
        for start in range(0, len(table.rows), ROWS_PER_INSERT):
            chunk = table.rows[start : start + ROWS_PER_INSERT]
            out.append(head + ",\n".join("(" + ", ".join(map(literal, r)) + ")" for r in chunk))
    return out


def to_sql(tables: Sequence[Table]) -> str:
    """The whole database as one SQL script (`psql -f`, `mysql <`, `sqlite3 <` load it)."""
    header = (
        "-- The shop database of backend/evals/shop, written by `python -m evals.shop.generate`.\n"
        "-- Portable: loads into PostgreSQL, MariaDB/MySQL and SQLite alike.\n"
    )
    return header + "".join(s + ";\n" for s in statements(tables))


def split(script: str) -> list[str]:
    """The statements of a script written by `to_sql` (no statement holds a `;` at a line's
    end, so that is where one ends), without comments and semicolons."""
    body = "\n".join(line for line in script.splitlines() if not line.startswith("--"))
    return [s.strip() for s in body.split(";\n") if s.strip()]


def dump(path: Path) -> list[str]:
    """A SQLite file's schema and rows as SQL text: what it holds, whatever its bytes."""
    conn = sqlite3.connect(path)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def write_sqlite(script: str, path: Path) -> bool:
    """Load the script into a SQLite file at `path`, unless the file there holds exactly that
    already (its bytes depend on the SQLite library's version); whether it was written."""
    fresh = path.with_name(f".{path.name}.new")
    fresh.unlink(missing_ok=True)
    conn = sqlite3.connect(fresh)
    try:
        conn.executescript(script)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    if path.exists() and dump(path) == dump(fresh):
        fresh.unlink()
        return False
    fresh.replace(path)
    return True
