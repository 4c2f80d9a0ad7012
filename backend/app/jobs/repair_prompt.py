"""What the model is asked when it repairs a job whose run failed, and what is kept of its
reply: the whole new script (it must still define `PARAMS` and `run(params)`), the tests
when they changed (test functions only, as app.jobs.checks_prompt keeps them), a note."""

from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from app.jobs import checks_prompt, driver

# The request's system prompt starts with this: it tells it apart from the agent's.
REPAIR_MARKER = "[workbench:job-repair]"
CODE_CHARS = 20_000
COLUMNS_CHARS = 6000
NOTE_CHARS = 500
_BLOCK = re.compile(r"```(?:python|py)?[ \t]*([A-Za-z_]*)[ \t]*\n(.*?)```", re.DOTALL)
_NOTE = re.compile(r"^\s*NOTE:\s*(.+)$", re.MULTILINE)

_env = Environment(
    loader=FileSystemLoader(Path(__file__).resolve().parents[1] / "agent" / "prompts"),
    undefined=StrictUndefined,
    autoescape=False,
)


@dataclass
class Proposal:
    code: str
    tests: str | None  # None: the tests stay
    note: str


class Unusable(Exception):
    """The reply holds no script that could replace the job's (the sentence says why)."""


def messages(
    code: str, tests: str, reason: str, columns: dict[str, Any], failures: list[str]
) -> list[dict[str, str]]:
    text = _env.get_template("job_repair.j2").render(
        marker=REPAIR_MARKER,
        code=code[:CODE_CHARS],
        tests=tests[:CODE_CHARS],
        reason=reason,
        columns=json.dumps(columns, default=str)[:COLUMNS_CHARS],
        failures="\n".join(f"- {f}" for f in failures),
    )
    return [
        {"role": "system", "content": text},
        {"role": "user", "content": "Repair the job."},
    ]


def proposal_of(reply: str) -> Proposal:
    """The script, tests and note of a reply.

    Raises:
        Unusable: no script block, one that does not parse, or one without `run(params)`.
    """
    code: str | None = None
    tests: str | None = None
    for label, body in _BLOCK.findall(reply):
        if label == "tests":
            tests = body
        elif code is None:
            code = body
    if code is None:
        raise Unusable("The reply had no script (a ```python job block).")
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise Unusable(
            f"The proposed script does not parse: {exc.msg} (line {exc.lineno})."
        ) from None
    names = {
        n.name if isinstance(n, ast.FunctionDef) else getattr(n.targets[0], "id", "")
        for n in tree.body
        if isinstance(n, ast.FunctionDef) or (isinstance(n, ast.Assign) and len(n.targets) == 1)
    }
    if "run" not in names or "PARAMS" not in names:
        raise Unusable("The proposed script must keep `PARAMS` and `def run(params)`.")
    kept_tests = None
    if tests is not None:
        kept_tests = checks_prompt.tests_of(tests)
        if not kept_tests:
            raise Unusable("The proposed tests had no test functions (def test_...(params)).")
    found = _NOTE.search(reply)
    note = found.group(1).strip()[:NOTE_CHARS] if found else "The model gave no note."
    return Proposal(code.strip() + "\n", kept_tests, note)


def without_pinned(tests: str) -> str:
    """The tests but the one pinning the results on the data the job was made from."""
    if not tests.strip():
        return ""
    try:
        tree = ast.parse(tests)
    except SyntaxError:
        return tests
    kept = [
        n
        for n in tree.body
        if not (isinstance(n, ast.FunctionDef) and n.name == driver.PINNED_TEST)
    ]
    return ast.unparse(ast.Module(body=kept, type_ignores=[])) + "\n"


def diff(old_code: str, new_code: str, old_tests: str, new_tests: str) -> str:
    """The unified diff of the script (job.py) and the tests (test_job.py)."""
    parts: list[str] = []
    for name, old, new in (("job.py", old_code, new_code), ("test_job.py", old_tests, new_tests)):
        parts += difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{name}",
            f"b/{name}",
        )
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)


# What runs in the sandbox to show the model today's inputs: each file parameter's columns
# and dtypes, a few rows (read as the script reads it).
PROBE = """
import json as job_json
job_seen = {}
job_params = dict(PARAMS)
job_params.update(JOB_OVERRIDES)
for job_name in JOB_FILE_PARAMS:
    job_path = str(job_params[job_name])
    try:
        if job_path.lower().endswith((".xlsx", ".xls")):
            job_frame = pd.read_excel(job_path)
        elif job_path.lower().endswith(".parquet"):
            job_frame = pd.read_parquet(job_path)
        elif job_path.lower().endswith(".json"):
            job_frame = pd.read_json(job_path)
        else:
            job_frame = pd.read_csv(job_path)
        job_seen[job_path] = {
            "columns": {str(c): str(t) for c, t in job_frame.dtypes.items()},
            "rows": int(len(job_frame)),
            "head": job_json.loads(job_frame.head(3).to_json(orient="records", date_format="iso")),
        }
    except Exception as job_exc:
        job_seen[job_path] = {"error": str(job_exc)}
print(PROBE_MARKER + job_json.dumps(job_seen, default=str))
"""
PROBE_MARKER = "@@workbench-job-inputs@@"


def probe(code: str, params: list[dict[str, Any]], overrides: dict[str, Any]) -> str:
    """The code that prints today's inputs (see PROBE)."""
    files = [p["name"] for p in params if p["kind"] == "file"]
    head = [
        "import pandas as pd",
        code,
        f"PROBE_MARKER = {PROBE_MARKER!r}",
        f"JOB_OVERRIDES = {overrides!r}",
        f"JOB_FILE_PARAMS = {files!r}",
    ]
    return "\n".join(head) + "\n" + PROBE


def probed(output: str) -> dict[str, Any]:
    at = output.rfind(PROBE_MARKER)
    if at < 0:
        return {}
    try:
        found = json.loads(output[at + len(PROBE_MARKER) :].split("\n", 1)[0])
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
