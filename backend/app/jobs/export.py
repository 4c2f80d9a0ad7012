"""A job taken out of the workbench: a zip of `job.py` (runnable as `python job.py --param
value`, its parameters an argparse command line) and `test_job.py` (its checks for
`pytest`, with the fixtures `params` and `results`), or a notebook whose parameters cell is
tagged `parameters` (papermill's convention). Queries on sources read their URL from the
environment (WORKBENCH_SOURCE_<NAME>_URL); files are read from the working directory."""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any, Literal

import nbformat

from app.jobs.driver import PINNED_TEST, test_names
from app.models.jobs import Job

ExportFormat = Literal["py", "ipynb"]
MEDIA_TYPES = {"py": "application/zip", "ipynb": "application/x-ipynb+json"}

PRELUDE = '''import argparse
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import pandas as pd

try:  # charts print as JSON instead of opening a browser
    import plotly.io

    plotly.io.renderers.default = "json"
except ImportError:
    pass

try:
    display  # noqa: B018 (Jupyter has it)
except NameError:

    def display(*objects, title=None):
        """Show tables and values (print them)."""
        for obj in objects:
            print(obj.to_string() if hasattr(obj, "to_string") else obj)


def sql(query, source=None, into=None):
    """A query on a source, its SQLAlchemy URL in WORKBENCH_SOURCE_<NAME>_URL."""
    import sqlalchemy

    variable = "WORKBENCH_SOURCE_" + re.sub(r"\\W", "_", (source or "default").upper()) + "_URL"
    if variable not in os.environ:
        raise SystemExit(f"Set {variable} to the source's database URL to run this query.")
    engine = sqlalchemy.create_engine(os.environ[variable])
    with engine.connect() as connection:
        frame = pd.read_sql(sqlalchemy.text(query), connection)
    if into:
        frame.to_parquet(into)
        return into
    return frame
'''

MAIN = """

def _typed(default):
    if isinstance(default, bool):
        return lambda text: text.lower() in ("1", "true", "yes")
    if isinstance(default, (int, float)):
        return type(default)
    return str


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    for name, default in PARAMS.items():
        parser.add_argument("--" + name, default=default, type=_typed(default),
                            help=f"default: {default!r}")
    results = run(vars(parser.parse_args(argv)))
    for name, value in results.items():
        if hasattr(value, "to_plotly_json"):
            value = "(a chart)"
        elif hasattr(value, "to_string"):
            value = "\\n" + value.to_string()
        print(f"{name}: {value}")


if __name__ == "__main__":
    main()
"""

FIXTURES = """import pytest

import job


@pytest.fixture(scope="module")
def params():
    return dict(job.PARAMS)


@pytest.fixture(scope="module")
def results(params):
    return job.run(params)


"""


def _doc(job: Job) -> str:
    names = ", ".join(f"--{p['name']}" for p in job.params) or "none"
    return (
        f'"""{job.name}: a Workbench job, exported.\n\n'
        f"Run it with `python job.py` (parameters: {names}); check it with `pytest`.\n"
        'Files are read from the working directory."""\n\n'
    )


def script_file(job: Job) -> str:
    return _doc(job) + "import re\n" + PRELUDE + "\n\n" + job.code + MAIN


def tests_file(job: Job) -> str:
    return FIXTURES + (job.tests or "def test_nothing_to_check():\n    pass\n")


def file_name(job: Job, format: ExportFormat) -> str:
    base = re.sub(r"[^\w.-]+", "-", job.name).strip("-") or "job"
    return f"{base}.zip" if format == "py" else f"{base}.ipynb"


def render(job: Job, format: ExportFormat) -> bytes:
    if format == "py":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("job.py", script_file(job))
            archive.writestr("test_job.py", tests_file(job))
        return out.getvalue()
    return notebook(job).encode()


def notebook(job: Job) -> str:
    """The job as a notebook: its parameters cell (tagged `parameters`), the script, a run,
    and its checks run as plain calls (all but the pinned one)."""
    nb = nbformat.v4.new_notebook()
    defaults = "\n".join(f"{p['name']} = {p['default']!r}" for p in job.params)
    call = ", ".join(f"{p['name']!r}: {p['name']}" for p in job.params)
    parameters = nbformat.v4.new_code_cell(defaults or "# (no parameters)")
    parameters.metadata["tags"] = ["parameters"]
    checks = _check_calls(job.tests)
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# {job.name}\n\nA Workbench job, exported."),
        parameters,
        nbformat.v4.new_code_cell("import re\n" + PRELUDE),
        nbformat.v4.new_code_cell(job.code),
        nbformat.v4.new_code_cell(f"params = {{{call}}}\nresults = run(params)\nresults"),
    ]
    if checks:
        nb.cells.append(nbformat.v4.new_code_cell(job.tests + "\n\n" + checks))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    text: str = nbformat.writes(nb)
    json.loads(text)
    return text


def _check_calls(tests: str) -> str:
    if not tests.strip():
        return ""
    inputs, outputs = test_names(tests)
    # The pinned test holds on the data the job was made from only (test_job.py has it).
    outputs = [name for name in outputs if name != PINNED_TEST]
    calls: list[Any] = [f"{n}(params)" for n in inputs] + [f"{n}(params, results)" for n in outputs]
    return "\n".join(calls) + '\nprint("All checks passed.")'
