"""A job taken out of the workbench (issue 45, point 6): the zip's job.py runs as plain
Python with its parameters on the command line and its test_job.py passes pytest, and the
notebook's code runs with its `parameters` cell (papermill's tag) — each in a subprocess
outside the product, with the data file alongside."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from tests.api.conftest import SALES
from tests.api.jobs_support import CHECKS, make_job, two_questions
from tests.conftest import Api
from tests.support.llm import ScriptedLLM

OTHER = b"region,month,revenue\nEast,2026-01,10\nWest,2026-01,5.5\n"


def outside(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
    )


def test_the_exported_job_runs_and_its_tests_pass_outside_the_product(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, tmp_path: Path
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    assert job["checks"]["status"] == "ready", job["checks"]

    exported = alice.get(f"/jobs/{job['id']}/export", params={"format": "py"})
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"] == "application/zip"
    assert 'filename="Revenue.zip"' in exported.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(exported.content)) as archive:
        assert sorted(archive.namelist()) == ["job.py", "test_job.py"]
        archive.extractall(tmp_path)
    (tmp_path / "sales data.csv").write_bytes(SALES)
    (tmp_path / "other.csv").write_bytes(OTHER)

    ran = outside(tmp_path, "job.py")
    assert ran.returncode == 0, ran.stderr
    assert "answer_1: 4490.75" in ran.stdout and "answer_2: 2510.75" in ran.stdout
    given = outside(tmp_path, "job.py", "--sales_data_csv", "other.csv")
    assert given.returncode == 0, given.stderr
    assert "answer_1: 15.5" in given.stdout
    helped = outside(tmp_path, "job.py", "--help")
    assert "--sales_data_csv" in helped.stdout

    tested = outside(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_job.py")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "4 passed" in tested.stdout, tested.stdout
    # The checks guard the data outside too: a renamed column fails with the sentence.
    (tmp_path / "sales data.csv").write_bytes(SALES.replace(b"revenue", b"amount"))
    broken = outside(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_job.py")
    assert broken.returncode != 0
    assert "sales data.csv lacks the columns ['revenue']; the job reads them" in broken.stdout


def test_the_notebook_has_a_parameters_cell_and_runs(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, tmp_path: Path
) -> None:
    two_questions(alice, session["id"], llm, CHECKS)
    job = make_job(alice, session["project_id"], session["id"])
    exported = alice.get(f"/jobs/{job['id']}/export", params={"format": "ipynb"})
    assert exported.status_code == 200, exported.text
    notebook = json.loads(exported.text)
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    [parameters] = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
    assert "".join(parameters["source"]) == "sales_data_csv = 'sales data.csv'"
    # As papermill does: the given parameters in a cell after the parameters cell.
    script = ["".join(c["source"]) for c in code]
    at = script.index("".join(parameters["source"]))
    script.insert(at + 1, "sales_data_csv = 'other.csv'")
    script.append("print('answer_1 =', results['answer_1'])")
    (tmp_path / "notebook.py").write_text("\n\n".join(script))
    (tmp_path / "other.csv").write_bytes(OTHER)
    ran = outside(tmp_path, "notebook.py")
    assert ran.returncode == 0, ran.stderr
    assert "answer_1 = 15.5" in ran.stdout
    # Its checks ran too (the pinned one holds on the data the job was made from only).
    assert "All checks passed." in ran.stdout
