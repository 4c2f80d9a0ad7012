"""How the cells of a column that mixes kinds are read: numbers and amount texts as numbers,
dates and date texts as dates, one cell at a time.

One reading for every path: the preview of a file's head (pandas), its later pages and
sorts (DuckDB calls these same functions), and the agent, whose description of the file
carries this module's source (`source_for_agent`) so that its code reads each cell as the
preview shows it. So this module imports nothing of the app and only `re`, `datetime` and
pandas; a cell that cannot be read gives None (the caller keeps its text, marked).
"""

from __future__ import annotations

import datetime as dt
import inspect
import re

import numpy as np
import pandas as pd

CURRENCY = r"[€$£¥₹]|EUR|USD|GBP|CHF|JPY|INR"
_AMOUNT = re.compile(
    rf"(?P<open>\()?\s*(?P<sign>[+-])?\s*(?:{CURRENCY})?\s*(?P<sign2>[+-])?\s*"
    r"(?P<digits>\d[\d,.'\u00a0\u202f]*|[.,]\d+)\s*"
    rf"(?:{CURRENCY})?\s*(?P<percent>%)?\s*(?P<close>\))?",
    re.IGNORECASE,
)
_NUMBER = {
    ".": re.compile(r"\d{1,3}(?:[,'\u00a0\u202f]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"),
    ",": re.compile(r"\d{1,3}(?:[.'\u00a0\u202f]\d{3})+(?:,\d+)?|\d+(?:,\d+)?|,\d+"),
}
_DMY = re.compile(r"(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?")
_YMD = re.compile(
    r"(\d{4})([/-])(\d{1,2})\2(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?"
)


def number_of(value: object, decimal: str = ".") -> float | None:
    """A cell as a number: a number as it is; a text such as `€22,729.58`, `1.058,58 €`,
    `(1,200)`, `-3.5%` or `USD 12` read (percents as fractions); else None.

    Args:
        value: The cell.
        decimal: The decimal separator of the column's texts ("." or ",").
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return None if value != value else float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    found = _AMOUNT.fullmatch(text)
    if found is None or (found["open"] is None) != (found["close"] is None):
        return None
    if found["sign"] and found["sign2"]:
        return None
    digits = found["digits"]
    if not _NUMBER[decimal].fullmatch(digits):
        return None
    grouping = ",'\u00a0\u202f" if decimal == "." else ".'\u00a0\u202f"
    plain = "".join(c for c in digits if c not in grouping).replace(",", ".")
    number = float(plain)
    if found["percent"]:
        number = number / 100
    negative = found["open"] is not None or "-" in (found["sign"] or "", found["sign2"] or "")
    return -number if negative else number


def date_of(value: object, day_first: bool) -> dt.datetime | None:
    """A cell as a date (and time): a date as it is; a text such as `2025-07-31`,
    `2025/07/31`, `02/07/2025`, `02.07.2025` or `02-07-2025` (with an optional time) read,
    `day_first` deciding whether `02/07/2025` is the 2nd of July; else None."""
    if isinstance(value, pd.Timestamp):
        return None if value is pd.NaT else value.tz_localize(None).to_pydatetime()
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, str):
        return None
    text = value.strip()
    found = _YMD.fullmatch(text)
    if found is not None:
        year, month, day = int(found[1]), int(found[3]), int(found[4])
    else:
        found = _DMY.fullmatch(text)
        if found is None:
            return None
        first, second, year = int(found[1]), int(found[3]), int(found[4])
        day, month = (first, second) if day_first else (second, first)
    hour, minute, second_ = (int(found[i] or 0) for i in (5, 6, 7))
    try:
        return dt.datetime(year, month, day, hour, minute, second_)
    except ValueError:
        return None


def unit_of(text: str) -> str:
    """The currency (upper case) or `%` an amount text carries; "" for none."""
    found = re.search(rf"{CURRENCY}|%", text, re.IGNORECASE)
    return found[0].upper() if found else ""


def date_order_evidence(values: pd.Series) -> tuple[bool | None, str | None]:
    """Whether the column's day/month texts are day-first, from the first that can only be
    one way (`13/02/2025` is day-first, `02/13/2025` month-first), and that text; (None,
    None) when none settles it."""
    for value in values:
        if isinstance(value, str) and (found := _DMY.fullmatch(value.strip())):
            first, second = int(found[1]), int(found[3])
            if first > 12 >= second:
                return True, value.strip()
            if second > 12 >= first:
                return False, value.strip()
    return None, None


def read_numbers(values: pd.Series, decimal: str = ".") -> pd.Series:
    """A column read as numbers (float64); cells that cannot be read are missing."""
    return pd.to_numeric(values.map(lambda v: number_of(v, decimal)), errors="coerce").astype(
        "float64"
    )


def read_dates(values: pd.Series, day_first: bool) -> pd.Series:
    """A column read as dates (datetime64); cells that cannot be read are missing."""
    return pd.to_datetime(values.map(lambda v: date_of(v, day_first)), errors="coerce")


_DOCSTRING = re.compile(r'\n    """.*?"""', re.DOTALL)


def source_for_agent() -> str:
    """This module's reading functions as code the agent can run as they are."""
    parts = [
        "import datetime as dt\nimport re\n\nimport numpy as np\nimport pandas as pd\n",
        f"CURRENCY = {CURRENCY!r}",
        f"_AMOUNT = re.compile(\n    {_AMOUNT.pattern!r},\n    re.IGNORECASE,\n)",
        "_NUMBER = {"
        + ", ".join(f"{key!r}: re.compile({pattern.pattern!r})" for key, pattern in _NUMBER.items())
        + "}",
        f"_DMY = re.compile({_DMY.pattern!r})",
        f"_YMD = re.compile({_YMD.pattern!r})",
    ]
    for function in (number_of, date_of, read_numbers, read_dates):
        parts.append(_DOCSTRING.sub("", inspect.getsource(function), count=1))
    return "\n".join(parts)
