"""Reading task sets and scoring answers as InfiAgent-DABench does, and the command's refusals
of input it cannot use (no server needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from app.cli.eval_dabench import (
    Match,
    TaskFileError,
    equal,
    extract,
    load_tasks,
    prompt,
    score,
)
from app.cli.evaluate import eval_command
from tests.support.services import free_port

# DABench's own examples (da-dev-questions.jsonl and da-dev-labels.jsonl, ids 0, 6 and 11).
FARE = {
    "id": 0,
    "question": "Calculate the mean fare paid by the passengers.",
    "concepts": ["Summary Statistics"],
    "constraints": "Calculate the mean fare using Python's built-in statistics module or "
    "appropriate statistical method in pandas. Rounding off the answer to two decimal places.",
    "format": '@mean_fare[mean_fare_value] where "mean_fare_value" is a floating-point number '
    "rounded to two decimal places.",
    "file_name": "test_ave.csv",
    "level": "easy",
}
AGE_GROUPS = {
    "id": 6,
    "question": "Calculate the mean fare for each age group.",
    "constraints": "Make sure to round the mean fare of each group to 2 decimal places.",
    "format": "@mean_fare_child[mean_fare], @mean_fare_teenager[mean_fare], "
    "@mean_fare_adult[mean_fare], @mean_fare_elderly[mean_fare]",
    "file_name": "test_ave.csv",
}
LABELS = [
    {"id": 0, "common_answers": [["mean_fare", "34.65"]]},
    {
        "id": 6,
        "common_answers": [
            ["mean_fare_elderly", "43.47"],
            ["mean_fare_teenager", "31.98"],
            ["mean_fare_child", "31.09"],
            ["mean_fare_adult", "35.17"],
        ],
    },
]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def dabench(tmp_path: Path) -> tuple[Path, Path]:
    questions = write_jsonl(tmp_path / "da-dev-questions.jsonl", [FARE, AGE_GROUPS])
    labels = write_jsonl(tmp_path / "da-dev-labels.jsonl", LABELS)
    return questions, labels


# -- answers -----------------------------------------------------------------------------------


def test_answers_are_found_anywhere_in_the_response_and_the_last_of_a_name_wins() -> None:
    response = (
        "The mean fare is 34.65.\n\n@mean_fare[34.00] (first try)\n"
        "Corrected: @mean_fare[34.65], @is_normal[no] @note[two words]"
    )
    assert extract(response) == {"mean_fare": "34.65", "is_normal": "no", "note": "two words"}
    assert extract("no answers here: mean_fare[1] @ [2]") == {}
    assert extract(None) == {}


@pytest.mark.parametrize(
    ("given", "expected", "right"),
    [
        ("34.65", "34.65", True),
        ("34.650", "34.65", True),  # the same number
        ("0.0", "0.0000", True),
        ("139", "139", True),
        ("34.6523", "34.65", False),  # DABench wants it rounded as the format says
        ("34.66", "34.65", False),
        ("no", "no", True),
        ("No", "no", False),  # text is compared exactly
        (" no", "no", False),
        ("1, 2018, 88.32", "1, 2018, 88.32", True),
        ("", "", True),
        (None, "34.65", False),  # not answered
        ("n/a", "34.65", False),
    ],
)
def test_dabench_matching(given: str | None, expected: str, right: bool) -> None:
    assert equal(given, expected, Match.dabench) is right


@pytest.mark.parametrize(
    ("given", "expected", "right"),
    [
        ("34.6523", "34.65", True),  # rounded to the label's two decimals
        ("34.655", "34.66", True),  # half up
        ("34.644", "34.65", False),
        ("36.4", "36", True),
        ("139.0", "139", True),
        ("0.9997", "1.0", True),
        ("-0.0449", "-0.04", True),
        ("1e-5", "0.0000", True),
        ("West ", "west", True),  # text in any case, spaces trimmed
        ("not normal", "normal", False),
        (None, "1.0", False),
        ("abc", "1.0", False),
    ],
)
def test_rounded_matching(given: str | None, expected: str, right: bool) -> None:
    assert equal(given, expected, Match.rounded) is right


def test_a_task_is_right_only_when_every_answer_is(dabench: tuple[Path, Path]) -> None:
    _, groups = load_tasks(*dabench)
    # MetaGPT's DABench example answer for task 6: all four right, in another order.
    response = (
        "@mean_fare_child[31.09], @mean_fare_teenager[31.98], "
        "@mean_fare_adult[35.17], @mean_fare_elderly[43.47]"
    )
    assert score(groups, response).correct

    partial = score(groups, "@mean_fare_child[31.09] @mean_fare_adult[35.2]")
    assert not partial.correct and partial.sub_correct == 1
    assert partial.given == {
        "mean_fare_elderly": None,
        "mean_fare_teenager": None,
        "mean_fare_child": "31.09",
        "mean_fare_adult": "35.2",
    }
    assert not score(groups, None).correct


# -- task files --------------------------------------------------------------------------------


def test_dabench_questions_take_their_answers_from_the_labels(dabench: tuple[Path, Path]) -> None:
    fare, groups = load_tasks(*dabench)

    assert fare.id == "0" and fare.raw_id == 0
    assert fare.expected == {"mean_fare": "34.65"}
    assert fare.files == ("test_ave.csv",)
    assert len(groups.answers) == 4


def test_the_prompt_has_the_question_constraints_format_and_file(
    dabench: tuple[Path, Path],
) -> None:
    fare, groups = load_tasks(*dabench)
    text = prompt(fare)

    for part in (FARE["question"], FARE["constraints"], FARE["format"], '"test_ave.csv"'):
        assert str(part) in text
    assert "@mean_fare[...]" in text
    assert "@mean_fare_elderly[...] @mean_fare_teenager[...]" in prompt(groups)


def test_answers_in_the_task_itself_need_no_labels(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "tasks.jsonl", [{**FARE, "id": "fare", "answers": [["mean_fare", 34.65]]}]
    )
    (task,) = load_tasks(path)
    assert task.expected == {"mean_fare": "34.65"}


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"id": 1, "question": "q", "answers": [["a", "1"]]}', "{oops"], "line 2: not JSON"),
        (['{"id": 1, "answers": [["a", "1"]]}'], "line 1: 'question' is missing"),
        (['{"question": "q", "answers": [["a", "1"]]}'], "line 1: 'id' is missing"),
        (["[1, 2]"], "line 1: expected a JSON object"),
        (
            [
                '{"id": 1, "question": "q", "answers": [["a", "1"]]}',
                "",
                '{"id": 1, "question": "r", "answers": [["a", "1"]]}',
            ],
            "line 3: id 1 is used on line 1 already",
        ),
        (['{"id": 1, "question": "q"}'], "line 1: task 1 has no answers"),
        (['{"id": 1, "question": "q", "answers": [["a"]]}'], "line 1: answers must be"),
        (['{"id": 1, "question": "q", "answers": []}'], "line 1: answers must be"),
        (['{"id": 1, "question": "q", "answers": [["a b", "1"]]}'], "is not a word"),
        (['{"id": 1, "question": "q", "answers": [["a", "1"]], "file_name": 3}'], "file_name"),
        ([""], "no tasks in it"),
    ],
)
def test_a_bad_task_file_names_the_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TaskFileError, match=message):
        load_tasks(path)


# -- the command refuses what it cannot use ----------------------------------------------------


def invoke(*args: str, url: str = "http://127.0.0.1:9") -> tuple[int, str]:
    app = typer.Typer()
    app.callback()(lambda: None)
    app.command("eval")(eval_command)
    env = {"WORKBENCH_URL": url, "WORKBENCH_TOKEN": "wb_test", "COLUMNS": "200"}
    result = CliRunner().invoke(app, ["eval", *args], env=env)
    return result.exit_code, result.output


def test_a_bad_line_stops_the_command_before_anything_runs(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({**FARE, "answers": [["mean_fare", "1"]]}) + "\n{oops\n")

    code, output = invoke(str(path), "--report", str(tmp_path / "r"))

    assert code == 2
    assert "line 2: not JSON" in output
    assert not (tmp_path / "r").exists()


def test_missing_tables_are_named(dabench: tuple[Path, Path], tmp_path: Path) -> None:
    questions, labels = dabench
    code, output = invoke(str(questions), "--labels", str(labels), "--tables", str(tmp_path))

    assert code == 2
    assert "Missing table files" in output and "test_ave.csv" in output


def test_an_unreachable_server_is_an_error(dabench: tuple[Path, Path], tmp_path: Path) -> None:
    questions, labels = dabench
    (tmp_path / "test_ave.csv").write_text("Fare\n1\n")
    url = f"http://127.0.0.1:{free_port()}"

    code, output = invoke(
        str(questions), "--labels", str(labels), "--report", str(tmp_path / "r"), url=url
    )

    assert code == 1
    assert "Cannot" in output and url in output
