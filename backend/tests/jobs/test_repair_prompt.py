"""What is kept of a repair's reply: a whole script with PARAMS and run(params), test
functions only (code at the top level of the tests is left out), a note; and the diff."""

from __future__ import annotations

import pytest

from app.jobs.repair_prompt import Unusable, diff, proposal_of, without_pinned

SCRIPT = "import pandas as pd\n\nPARAMS = {'f': 'a.csv'}\n\n\ndef run(params):\n    return {}\n"


def test_a_reply_gives_its_script_tests_and_note() -> None:
    reply = (
        "NOTE: The column was renamed.\n"
        f"```python job\n{SCRIPT}```\n"
        "```python tests\nimport os\nos.system('x')\n\n\ndef test_a(params):\n    assert 1\n```"
    )
    found = proposal_of(reply)
    assert found.code == SCRIPT and found.note == "The column was renamed."
    assert found.tests is not None and "def test_a(params)" in found.tests
    assert "os.system" not in found.tests  # nothing that runs on import
    assert proposal_of(f"```python job\n{SCRIPT}```").tests is None


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("NOTE: nothing.", "no script"),
        ("```python job\ndef run(:\n```", "does not parse"),
        ("```python job\nPARAMS = {}\n```", "must keep `PARAMS` and `def run(params)`"),
        (f"```python job\n{SCRIPT}```\n```python tests\nx = 1\n```", "no test functions"),
    ],
)
def test_unusable_replies_say_why(reply: str, why: str) -> None:
    with pytest.raises(Unusable, match=why.replace("(", r"\(").replace(")", r"\)")):
        proposal_of(reply)


def test_the_pinned_test_is_left_out_and_the_diff_names_both_files() -> None:
    tests = (
        "def test_a(params):\n    assert 1\n\n\n"
        "def test_results_pinned(params, results):\n    assert 0\n"
    )
    kept = without_pinned(tests)
    assert "test_a" in kept and "test_results_pinned" not in kept
    shown = diff(SCRIPT, SCRIPT.replace("a.csv", "b.csv"), tests, kept)
    assert "-PARAMS = {'f': 'a.csv'}" in shown and "+PARAMS = {'f': 'b.csv'}" in shown
    assert "+++ b/job.py" in shown and "--- a/test_job.py" in shown
