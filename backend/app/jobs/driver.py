"""What a job run executes in the sandbox, and what it reports back.

The code sent to the job's worker is the script, its tests, and a few lines that: run the
checks on the inputs (tests taking `params`), and stop with their sentences if one fails;
else run `run(params)` and the checks on the outputs (tests taking `params, results`); and
print one line, the
report (REPORT_MARKER then JSON: checks, results in brief, the queries' digests). The
tables and charts the job's code shows become the run's artifacts, as a question's do. The
report is the last thing printed, so the output cap (head and tail kept) keeps it.

Tests are plain pytest functions (`def test_x(params)` / `def test_x(params, results)`,
asserts with a message); in the sandbox they are called as written, in an export pytest
calls them (app.jobs.export gives them the fixtures `params` and `results`).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from typing import Any

REPORT_MARKER = "@@workbench-job-report@@"
PINNED_TEST = "test_results_pinned"
# Rows of a table a run keeps in its results (the whole table is the run's artifact).
PREVIEW_ROWS = 20

_DRIVER = """
import json
job_report = {"checks": [], "results": {}, "queries": {}, "error": None}


def job_check(name, test, args):
    # (no `return` inside `try`: smolagents' return is an exception `except` would catch)
    message = None
    try:
        test(*args)
    except AssertionError as exc:
        message = str(exc) or ("The check " + name + " failed.")
    except Exception as exc:
        message = "The check " + name + " could not run: " + str(exc)
    passed = message is None
    job_report["checks"].append({"name": name, "passed": passed, "message": message or ""})
    return passed


def job_brief(value):
    if hasattr(value, "to_plotly_json"):
        return {"kind": "chart", "value": None}
    if hasattr(value, "to_frame") and hasattr(value, "name"):
        value = value.to_frame()
    if hasattr(value, "to_json") and hasattr(value, "columns"):
        head = json.loads(value.head(PREVIEW_ROWS).to_json(orient="split", date_format="iso"))
        return {
            "kind": "table",
            "value": {"columns": [str(c) for c in value.columns], "rows": head["data"],
                      "row_count": int(len(value))},
        }
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:
        value = value.item()
    return {"kind": "value", "value": json.loads(json.dumps(value, default=str))}


job_params = dict(PARAMS)
job_params.update(JOB_OVERRIDES)
for job_name in JOB_QUERY_PARAMS:
    job_frame = sql(job_params[job_name], source=JOB_QUERY_SOURCES[job_name])
    job_digest = pd.util.hash_pandas_object(job_frame, index=False).sum()
    job_report["queries"][job_name] = str(int(job_digest))
job_inputs_ok = True
for job_name, job_test in JOB_INPUT_TESTS:
    job_inputs_ok = job_check(job_name, job_test, (job_params,)) and job_inputs_ok
job_same = JOB_LAST_QUERIES is not None and job_report["queries"] == JOB_LAST_QUERIES
if job_same:
    job_report["error"] = "same inputs"
elif job_inputs_ok or not JOB_GATE:
    job_results = run(job_params)
    for job_name, job_test in JOB_OUTPUT_TESTS:
        job_check(job_name, job_test, (job_params, job_results))
    for job_name in job_results:
        job_report["results"][job_name] = job_brief(job_results[job_name])
print(REPORT_MARKER + json.dumps(job_report, default=str))
"""


@dataclass
class Report:
    checks: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    queries: dict[str, str] = field(default_factory=dict)
    same_inputs: bool = False

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if not c["passed"]]


def test_names(tests: str) -> tuple[list[str], list[str]]:
    """The tests' names: those over the inputs (one argument) and over the outputs (two)."""
    inputs: list[str] = []
    outputs: list[str] = []
    for node in ast.parse(tests).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            (inputs if len(node.args.args) == 1 else outputs).append(node.name)
    return inputs, outputs


def driver(
    code: str,
    tests: str,
    overrides: dict[str, Any],
    query_sources: dict[str, str | None],
    *,
    pinned: bool,
    last_queries: dict[str, str] | None,
    gate: bool = True,
) -> str:
    """The code a job run sends to the sandbox.

    Args:
        code: The job's script.
        tests: Its tests.
        overrides: Parameters given for this run (the rest: the script's defaults).
        query_sources: Each query parameter's source name.
        pinned: Whether the pinned test runs (only on the data the job was made from).
        last_queries: The last run's queries' digests (equal ones, files unchanged too:
            the run stops before running the job and says so); None to run regardless.
    """
    inputs, outputs = test_names(tests)
    if not pinned:
        outputs = [name for name in outputs if name != PINNED_TEST]
    head = [
        "import pandas as pd",
        code,
        tests,
        f"REPORT_MARKER = {REPORT_MARKER!r}",
        f"PREVIEW_ROWS = {PREVIEW_ROWS}",
        f"JOB_OVERRIDES = {overrides!r}",
        f"JOB_QUERY_PARAMS = {sorted(query_sources)!r}",
        f"JOB_QUERY_SOURCES = {query_sources!r}",
        f"JOB_LAST_QUERIES = {last_queries!r}",
        f"JOB_GATE = {gate!r}",
        f"JOB_INPUT_TESTS = [{', '.join(f'({n!r}, {n})' for n in inputs)}]",
        f"JOB_OUTPUT_TESTS = [{', '.join(f'({n!r}, {n})' for n in outputs)}]",
    ]
    return "\n".join(head) + "\n" + _DRIVER


def report_of(output: str) -> Report | None:
    """The report a driver printed, or None when it printed none (the code failed)."""
    at = output.rfind(REPORT_MARKER)
    if at < 0:
        return None
    line = output[at + len(REPORT_MARKER) :].split("\n", 1)[0]
    try:
        data = json.loads(line)
    except ValueError:
        return None
    return Report(
        checks=list(data.get("checks") or []),
        results=dict(data.get("results") or {}),
        queries=dict(data.get("queries") or {}),
        same_inputs=data.get("error") == "same inputs",
    )


def pinned_test(results: dict[str, Any]) -> str:
    """The test that pins the job's values on the data it was made from."""
    lines = [f"def {PINNED_TEST}(params, results):"]
    pinned = 0
    for name, brief in results.items():
        if brief.get("kind") != "value":
            continue
        value = brief.get("value")
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            lines.append(
                f"    assert abs(float(results[{name!r}]) - {float(value)!r}) <= 1e-6 * max(1.0, "
                f"abs({float(value)!r})), ({name!r} + ' is ' + str(results[{name!r}]) + "
                f"'; on the data the job was made from it was {value!r}')"
            )
        else:
            lines.append(
                f"    assert str(results[{name!r}]) == {str(value)!r}, ({name!r} + ' is ' + "
                f"str(results[{name!r}]) + '; on the data the job was made from it was ' + "
                f"{str(value)!r})"
            )
        pinned += 1
    if not pinned:
        return ""
    return "\n".join(lines) + "\n"
