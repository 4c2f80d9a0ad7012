"""What a cell runs, and how the agent reads it afterwards: pure text, no I/O.

An SQL cell becomes the Python an agent would write for it (`sql(...)` on the source,
through the same read-only path; its result kept as a variable and shown as a table), so
the worker, the step's record and the exports treat it as any other step.
"""

from __future__ import annotations

import ast
import keyword
import re
from typing import Any

# `-- into: monthly` names the variable an SQL cell's result is kept in.
_INTO = re.compile(r"^\s*--\s*into\s*:\s*(\S+)\s*$", re.IGNORECASE | re.MULTILINE)
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# What of a cell's output the agent's history keeps (the prompt caps it again).
HISTORY_OUTPUT_CHARS = 2000
LANGUAGE_NAMES = {"python": "Python", "sql": "SQL"}


class BadCell(ValueError):
    """The cell cannot run as written (the sentence says why)."""


def into_name(sql: str) -> str | None:
    """The variable the SQL asks its result be kept in (`-- into: name`), if it names one.

    Raises:
        BadCell: It names something that is not a plain Python name.
    """
    found = _INTO.search(sql)
    if found is None:
        return None
    name = found.group(1)
    if not _IDENTIFIER.match(name) or keyword.iskeyword(name) or name.startswith("__"):
        raise BadCell(f"`-- into: {name}` does not name a variable: use letters, digits and _.")
    return name


def python_for_sql(sql: str, source: str, variable: str) -> str:
    """The code an SQL cell runs: the query on `source` through `sql()`, kept as
    `variable`, shown as a table, and said where it is kept."""
    query = sql.strip()
    literal = f'"""{query}"""' if '"""' not in query and "\\" not in query else repr(query)
    if literal.endswith('""""'):  # a query ending in a quote cannot close a triple quote
        literal = repr(query)
    return (
        f"{variable} = sql({literal}, source={source!r})\n"
        f"display({variable})\n"
        f'print(f"{{len({variable}):,}} rows, kept as {variable}")'
    )


# What a Python cell keeps its last expression's value in, to show it (a name the display
# helper never calls a table after: it skips names that start with "_").
ECHO_VARIABLE = "_cell_value"


def echo_last_expression(code: str) -> str:
    """The code a Python cell runs: as written, but, as a notebook does, the value of a last
    line that is an expression is shown (display(): a table for a DataFrame, a chart for a
    figure, the repr otherwise) unless it is None or the line ends with `;`. Code that does
    not parse is left as it is (running it reports the error)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return code
    last = tree.body[-1]
    if last.end_lineno is None or last.end_col_offset is None:
        return code
    lines = code.splitlines(keepends=True)
    after = lines[last.end_lineno - 1][last.end_col_offset :]
    if after.lstrip().startswith(";"):
        return code
    expression = ast.get_source_segment(code, last.value)
    if expression is None:
        return code
    before = "".join(lines[: last.lineno - 1]) + lines[last.lineno - 1][: last.col_offset]
    if before and not before.endswith("\n"):
        before += "\n"
    return (
        f"{before}{ECHO_VARIABLE} = (\n{expression}\n)\n"
        f"if {ECHO_VARIABLE} is not None:\n    display({ECHO_VARIABLE})\n"
        f"del {ECHO_VARIABLE}\n"
    )


def history_turn(query: str, answer: str | None, cell: dict[str, Any] | None) -> tuple[str, str]:
    """A run as the agent's history shows it: a question and its answer, or a cell the
    user ran (its code, where an SQL cell's result is kept) and what it printed."""
    if cell is None:
        return query, answer or ""
    language = LANGUAGE_NAMES.get(str(cell.get("language")), "Python")
    said = f"(The user ran a {language} cell"
    if cell.get("source"):
        said += f" on source {cell['source']}"
    if cell.get("variable"):
        said += f", its result kept in the variable {cell['variable']}"
    output = str(cell.get("output") or "")[-HISTORY_OUTPUT_CHARS:]
    return f"{said}:)\n{query}", f"(Its output:)\n{output}" if output else "(It printed nothing.)"


def cell_heading(cell: dict[str, Any]) -> str:
    """What a cell is called where a question's text would stand (exports)."""
    language = LANGUAGE_NAMES.get(str(cell.get("language")), "Python")
    if cell.get("source"):
        return f"{language} cell on {cell['source']}"
    return f"{language} cell"
