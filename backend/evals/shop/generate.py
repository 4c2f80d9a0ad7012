"""Write the shop task set: shop.sql, shop.db, tasks.jsonl and solutions.jsonl.

`uv run python -m evals.shop.generate` (from backend/) rewrites backend/evals/shop/ in
place. The answers in tasks.jsonl come from running each reference solution with a `sql()`
that queries shop.db, the SQLite file loaded from shop.sql; a test runs the same solutions
on the script loaded into MariaDB and PostgreSQL and checks that they answer alike, and
another that the committed files are what this writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from evals.generate import answer_pairs, command, write_jsonl
from evals.shop.catalog import SOURCE, SPECS, Spec
from evals.shop.schema import build, to_sql, write_sqlite

HERE = Path(__file__).parent
Query = Callable[[str], pd.DataFrame]


class _Done(Exception):
    pass


def solve(query: Query, specs: tuple[Spec, ...] = SPECS) -> dict[str, str]:
    """Each task's final answer, from its solution run with `sql()` answered by `query`.

    Raises:
        RuntimeError: a solution failed or asked another source than the shop.
    """
    answers: dict[str, str] = {}
    for spec in specs:

        def sql(text: str, source: str | None = None, **_: Any) -> pd.DataFrame:
            if source != SOURCE:
                raise RuntimeError(f"asks for source {source!r}, not {SOURCE!r}")
            return query(text)

        def final_answer(value: Any, _id: str = spec.id) -> None:
            answers[_id] = str(value)
            raise _Done()

        try:
            exec(spec.solution, {"sql": sql, "final_answer": final_answer})
        except _Done:
            continue
        except Exception as exc:
            raise RuntimeError(f"{spec.id}: its solution failed: {exc!r}") from exc
        raise RuntimeError(f"{spec.id}: its solution gave no final answer")
    return answers


def sqlite_query(path: Path) -> tuple[Query, Callable[[], None]]:
    """A `query` over a SQLite file (opened read-only) and how to close it."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def query(text: str) -> pd.DataFrame:
        return pd.read_sql_query(text, conn)

    return query, conn.close


def check_ties(query: Query, specs: tuple[Spec, ...] = SPECS) -> None:
    """Refuse a "which is the most" question whose answer would depend on breaking a tie."""
    for spec in specs:
        if spec.check is None:
            continue
        values = [round(float(v), 6) for v in query(spec.check).iloc[: spec.top + 1, 1]]
        if len(set(values)) < len(values):
            raise RuntimeError(f"{spec.id}: a tie among the first {spec.top + 1}: {values}")


def generate(folder: Path = HERE) -> list[Path]:
    """Write shop.sql, shop.db, tasks.jsonl and solutions.jsonl into `folder`; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "shop.sql"
    script.write_text(to_sql(build()), encoding="utf-8")
    database = folder / "shop.db"
    write_sqlite(script.read_text(encoding="utf-8"), database)
    query, close = sqlite_query(database)
    try:
        check_ties(query)
        answers = solve(query)
    finally:
        close()
    tasks = [
        {
            "id": spec.id,
            "question": spec.question,
            "concepts": list(spec.concepts),
            "constraints": spec.constraints,
            "format": spec.format,
            "source": SOURCE,
            "level": spec.level,
            "answers": answer_pairs(spec.id, answers),
        }
        for spec in SPECS
    ]
    solutions = [{"id": spec.id, "solution": spec.solution.strip() + "\n"} for spec in SPECS]
    return [
        script,
        database,
        write_jsonl(folder / "tasks.jsonl", tasks),
        write_jsonl(folder / "solutions.jsonl", solutions),
    ]


def main() -> None:
    command(generate, HERE, __doc__)


if __name__ == "__main__":
    main()
