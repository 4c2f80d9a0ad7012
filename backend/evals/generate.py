"""Write the task set: the tables, tasks.jsonl (DABench's format) and solutions.jsonl.

`uv run python -m evals.generate` (from backend/) rewrites backend/evals/ in place. The
answers in tasks.jsonl come from running each reference solution on the tables, in a child
Python whose working directory holds the tables under their own names, as the workbench's
sandbox does. A test checks that the committed files are what this writes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.cli.eval_dabench import extract
from evals.catalog import SPECS
from evals.tables import build

HERE = Path(__file__).parent

# Runs every solution with `final_answer` recording its argument; prints them as JSON.
RUNNER = """
import json, sys

class Done(Exception):
    pass

answers = {}
for item in json.load(sys.stdin):
    def final_answer(value, _id=item["id"]):
        answers[_id] = str(value)
        raise Done()
    try:
        exec(item["solution"], {"final_answer": final_answer})
    except Done:
        pass
json.dump(answers, sys.stdout)
"""


def solve(tables: Path) -> dict[str, str]:
    """Each task's final answer, from its solution run on the tables."""
    items = [{"id": spec.id, "solution": spec.solution} for spec in SPECS]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        cwd=tables,
        input=json.dumps(items),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"a reference solution failed:\n{done.stderr}")
    answers: dict[str, str] = json.loads(done.stdout)
    return answers


def generate(folder: Path = HERE) -> list[Path]:
    """Write tables/, tasks.jsonl and solutions.jsonl into `folder`; the paths written."""
    tables = folder / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in build().items():
        path = tables / name
        frame.to_csv(path, index=False, lineterminator="\n", date_format="%Y-%m-%d")
        written.append(path)
    answers = solve(tables)
    tasks, solutions = [], []
    for spec in SPECS:
        tasks.append(
            {
                "id": spec.id,
                "question": spec.question,
                "concepts": list(spec.concepts),
                "constraints": spec.constraints,
                "format": spec.format,
                "file_name": spec.file_name,
                "level": spec.level,
                "answers": answer_pairs(spec.id, answers),
            }
        )
        solutions.append({"id": spec.id, "solution": spec.solution.strip() + "\n"})
    written.append(write_jsonl(folder / "tasks.jsonl", tasks))
    written.append(write_jsonl(folder / "solutions.jsonl", solutions))
    return written


def answer_pairs(task_id: str, answers: dict[str, str]) -> list[list[str]]:
    """A task's `[name, value]` pairs, from the final answer its solution gave."""
    pairs = [[name, value] for name, value in extract(answers.get(task_id)).items()]
    if not pairs:
        raise RuntimeError(f"{task_id}: its solution gave no @name[value] answer")
    return pairs


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8"
    )
    return path


def command(write: Callable[[Path], list[Path]], here: Path, doc: str) -> None:
    """A generator's command line: write the set into --out (default: its own folder)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out", type=Path, default=here, help="folder to write (default: here)")
    args = parser.parse_args()
    for path in write(args.out):
        print(path)


def main() -> None:
    command(generate, HERE, __doc__)


if __name__ == "__main__":
    main()
