"""What a code step sees and produces: variables, files, output, charts, tables, answers."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.sandbox import ArtifactFile, SandboxLimits, SandboxWorker, StepResult, hostfs

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OUTPUT_CHARS = 2_000


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workspace")
    (folder / "file with spaces.csv").write_text("region,amount\nnorth,10\nsouth,32\n")
    return folder


@pytest.fixture(scope="module")
def worker(workspace: Path) -> Iterator[SandboxWorker]:
    with SandboxWorker(workspace, limits=SandboxLimits(output_chars=OUTPUT_CHARS)) as worker:
        worker.start()
        yield worker


def ok(worker: SandboxWorker, code: str) -> StepResult:
    result = worker.run(code)
    assert result.error is None, result.error
    return result


def only(artifacts: list[ArtifactFile], kind: str) -> list[ArtifactFile]:
    return [a for a in artifacts if a.kind == kind]


def test_variables_persist_across_steps(worker: SandboxWorker) -> None:
    ok(worker, "total = 40")
    result = ok(worker, "total += 2\ntotal")
    assert result.output == "42"
    assert not result.is_final_answer


def test_reads_workspace_files_by_their_own_names(worker: SandboxWorker) -> None:
    result = ok(worker, 'import pandas as pd\nsales = pd.read_csv("file with spaces.csv")\n')
    result = ok(worker, "sales['amount'].sum()")
    assert result.output == "42"
    assert worker.isolation in ("bubblewrap", "rlimits")


def test_prints_library_output_and_warnings_in_order(worker: SandboxWorker) -> None:
    code = (
        "import pandas as pd\nimport warnings\n"
        "print('first')\n"
        "pd.DataFrame({'a': [1, 2]}).info()\n"
        "warnings.warn('careful now')\n"
        "print('last')\n"
    )
    logs = ok(worker, code).logs
    first = logs.index("first")
    info = logs.index("RangeIndex: 2 entries")
    warning = logs.index("UserWarning: careful now")
    assert first < info < warning < logs.index("last")
    # The same warning again in a later step is shown again.
    assert "careful now" in ok(worker, "warnings.warn('careful now')").logs


def test_output_is_capped_keeping_head_and_tail(worker: SandboxWorker) -> None:
    result = ok(worker, "for i in range(3000):\n    print(f'line {i}')")
    assert len(result.logs) <= OUTPUT_CHARS
    assert result.logs.startswith("line 0\n")
    assert result.logs.rstrip().endswith("line 2999")
    assert "of output cut ...]" in result.logs


def test_display_dataframe_makes_table_and_csv(worker: SandboxWorker) -> None:
    code = (
        "import pandas as pd\nimport numpy as np\n"
        "frame = pd.DataFrame({'when': pd.to_datetime(['2024-01-02', None]),"
        " 'value': [1.5, np.nan], 'name': ['a', 'b']})\n"
        "display(frame)\n"
    )
    result = ok(worker, code)
    (table,) = only(result.artifacts, "table")
    assert table.mime == "application/json"
    assert table.name == "frame.json"  # called after the variable that holds it
    data = json.loads(table.path.read_text())
    assert data["columns"] == ["when", "value", "name"]
    assert data["row_count"] == 2
    assert data["rows"][0] == ["2024-01-02", 1.5, "a"]  # a date, not 2024-01-02T00:00:00.000
    assert data["rows"][1][:2] == [None, None]
    (csv,) = only(result.artifacts, "file")
    assert csv.name == "frame.csv"
    assert csv.path.read_text().splitlines()[0] == "when,value,name"
    assert csv.size == csv.path.stat().st_size


def test_tables_show_dates_as_dates_and_keep_only_a_meaningful_index(
    worker: SandboxWorker,
) -> None:
    code = (
        "import pandas as pd, datetime as dt\n"
        "orders = pd.DataFrame({'day': pd.to_datetime(['2023-04-01', '2023-04-02', '2023-04-03']),"
        " 'at': pd.to_datetime(['2023-04-01 09:30', '2023-04-02 00:00', None]),"
        " 'shipped': [dt.date(2023, 4, 5), None, dt.date(2023, 4, 7)],"
        " 'amount': [10.5, 20.0, 30.25]})\n"
        "big = orders[orders.amount != 20]\n"
        "by_day = orders.set_index('day')['amount']\n"
        "pivot = orders.assign(region=['n', 's', 'n']).groupby(['region', 'day']).amount.sum()\n"
        "display(big, by_day, pivot)\n"
        "display(orders.describe(), title='Summary of the orders')\n"
        "display(orders.head(1))\n"
    )
    tables = only(ok(worker, code).artifacts, "table")
    assert [t.name for t in tables] == [
        "big.json",
        "by_day.json",
        "pivot.json",
        "Summary of the orders.json",
        "table-1.json",  # no variable and no title: numbered, as before
    ]
    data = [json.loads(t.path.read_text()) for t in tables]
    # A filtered frame's leftover row numbers (0, 2) are not shown; a time only in a column
    # that has one.
    assert data[0]["columns"] == ["day", "at", "shipped", "amount"]
    assert data[0]["rows"] == [
        ["2023-04-01", "2023-04-01 09:30", "2023-04-05", 10.5],
        ["2023-04-03", None, "2023-04-07", 30.25],
    ]
    # A DatetimeIndex and a MultiIndex are data: leading columns.
    assert data[1]["columns"] == ["day", "amount"]
    assert data[1]["rows"][0] == ["2023-04-01", 10.5]
    assert data[2]["columns"] == ["region", "day", "amount"]
    assert data[2]["rows"][0] == ["n", "2023-04-01", 10.5]
    # describe()'s labels are kept, unnamed as they are.
    assert data[3]["columns"][0] == "index" and data[3]["rows"][0][0] == "count"
    assert data[4]["columns"] == ["day", "at", "shipped", "amount"]


def test_a_table_named_like_a_file_the_code_wrote_is_told_apart(worker: SandboxWorker) -> None:
    code = (
        "import pandas as pd\n"
        "sales = pd.DataFrame({'a': [1]})\nsales.to_csv('sales.csv', index=False)\n"
        "display(sales)\n"
    )
    result = ok(worker, code)
    assert [(a.kind, a.name) for a in result.artifacts] == [
        ("table", "sales (table).json"),
        ("file", "sales (table).csv"),
        ("file", "sales.csv"),
    ]


def test_display_of_other_values_prints_them(worker: SandboxWorker) -> None:
    result = ok(worker, "display('plain text', [1, 2])\nfinal_answer('\\ud800 odd')")
    assert result.logs == "plain text\n[1, 2]\n"
    assert result.artifacts == []
    assert result.output == "? odd"


def test_table_preview_is_limited_but_csv_is_full(worker: SandboxWorker) -> None:
    result = ok(worker, "import pandas as pd\ndisplay(pd.Series(range(2500), name='n'))")
    (table,) = only(result.artifacts, "table")
    data = json.loads(table.path.read_text())
    assert data["row_count"] == 2500
    assert len(data["rows"]) == 1000
    (csv,) = only(result.artifacts, "file")
    assert len(csv.path.read_text().splitlines()) == 2501


def test_plotly_show_and_display_make_figure_artifacts(worker: SandboxWorker) -> None:
    code = (
        "import plotly.express as px\nimport plotly.graph_objects as go\n"
        "fig = px.bar(x=['a', 'b'], y=[1, 2])\nfig.show()\n"
        "display(go.Figure(go.Scatter(x=[1, 2], y=[3, 4])))\n"
    )
    result = ok(worker, code)
    figures = only(result.artifacts, "plotly")
    assert [f.name for f in figures] == ["figure-1.json", "figure-2.json"]
    assert all(f.mime == "application/vnd.plotly.v1+json" for f in figures)
    traces = [json.loads(f.path.read_text())["data"][0]["type"] for f in figures]
    assert traces == ["bar", "scatter"]


def test_charts_are_named_after_their_titles(worker: SandboxWorker) -> None:
    code = (
        "import plotly.express as px\nimport matplotlib.pyplot as plt\n"
        "px.bar(x=['a'], y=[1], title='<b>Revenue</b> by region').show()\n"
        "px.bar(x=['a'], y=[1], title='Revenue by region').show()\n"
        "px.line(x=[1], y=[1], title='Sales / month: 2026?').show()\n"
        "fig, ax = plt.subplots()\nax.plot([1, 2])\nax.set_title('Trend')\nplt.show()\n"
        "plt.plot([1, 2])\nplt.suptitle('Whole figure')\nplt.show()\n"
        "plt.plot([3, 4])\nplt.show()\n"
    )
    result = ok(worker, code)
    assert [a.name for a in result.artifacts] == [
        "Revenue by region.json",
        "Revenue by region (2).json",
        "Sales - month- 2026.json",
        "Trend.png",
        "Whole figure.png",
        "figure-6.png",
    ]
    # On disk they keep plain names, whatever the titles say.
    assert all(a.path.name.startswith("figure-") for a in result.artifacts)


def test_matplotlib_show_and_open_figures_become_pngs(worker: SandboxWorker) -> None:
    code = (
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3])\nplt.show()\n"
        "plt.figure()\nplt.bar(['a'], [1])\n"  # left open: captured at the end of the step
    )
    result = ok(worker, code)
    images = only(result.artifacts, "image")
    assert len(images) == 2
    for image in images:
        assert image.mime == "image/png"
        assert image.path.read_bytes().startswith(PNG_SIGNATURE)
    assert ok(worker, "len(plt.get_fignums())").output == "0"


def test_seaborn_plot_is_captured(worker: SandboxWorker) -> None:
    code = (
        "import seaborn as sns\nimport pandas as pd\n"
        "sns.histplot(pd.DataFrame({'x': [1, 2, 2, 3]}), x='x')\n"
    )
    (image,) = ok(worker, code).artifacts
    assert image.kind == "image"
    assert image.path.read_bytes().startswith(PNG_SIGNATURE)


def test_files_written_by_code_become_artifacts(worker: SandboxWorker, workspace: Path) -> None:
    code = (
        "import pandas as pd\nimport matplotlib.pyplot as plt\n"
        "pd.DataFrame({'a': [1]}).to_csv('summary.csv', index=False)\n"
        "plt.plot([1, 2])\nplt.savefig('chart.png')\nplt.close('all')\n"
    )
    result = ok(worker, code)
    by_name = {a.name: a for a in result.artifacts}
    assert set(by_name) == {"summary.csv", "chart.png"}
    assert by_name["chart.png"].mime == "image/png"
    assert by_name["summary.csv"].kind == "file"
    assert by_name["summary.csv"].mime == "text/csv"
    assert by_name["summary.csv"].path == workspace / "summary.csv"
    assert by_name["chart.png"].kind == "image"
    assert by_name["chart.png"].path.read_bytes().startswith(PNG_SIGNATURE)
    # Files stay for later steps; unchanged ones are not reported again.
    result = ok(worker, "pd.read_csv('summary.csv')['a'].sum()")
    assert result.output == "1"
    assert result.artifacts == []


def test_files_written_carry_their_real_type(worker: SandboxWorker, workspace: Path) -> None:
    (workspace / "out").mkdir()
    code = (
        "import pandas as pd\n"
        "frame = pd.DataFrame({'a': [1, 2]})\n"
        "frame.to_excel('out/report.xlsx', index=False)\n"
        "frame.to_parquet('out/data.parquet')\n"
        "frame.to_json('out/data.json')\n"
        "frame.to_csv('out/notes.txt')\n"
        "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig('out/paper.pdf')\n"
        "plt.close('all')\n"
    )
    result = ok(worker, code)
    assert {a.name: a.mime for a in result.artifacts} == {
        "out/report.xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "out/data.parquet": "application/vnd.apache.parquet",
        "out/data.json": "application/json",
        "out/notes.txt": "text/plain",
        "out/paper.pdf": "application/pdf",
    }
    assert {a.kind for a in result.artifacts} == {"file"}


def test_a_tree_deeper_than_any_path_does_not_stop_the_steps(
    worker: SandboxWorker, workspace: Path
) -> None:
    # Code can build one (tests/redteam/test_quota_attacks.py): 2,000 levels, past
    # PATH_MAX and Python's recursion limit, with a file at the bottom.
    folder = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(2000):
            os.mkdir("d", dir_fd=folder)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
            os.close(folder)
            folder = below
        os.close(os.open("bottom.csv", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=folder))
    finally:
        os.close(folder)
    try:
        code = "import pandas as pd\npd.DataFrame({'a': [1]}).to_csv('beside.csv', index=False)"
        result = ok(worker, code)
        assert [a.name for a in result.artifacts] == ["beside.csv"]
        assert ok(worker, "print(40 + 2)").logs == "42\n"
    finally:
        hostfs.remove_tree(workspace, "d")


def test_final_answer_number_and_text(worker: SandboxWorker) -> None:
    result = ok(worker, "final_answer(42)")
    assert (result.is_final_answer, result.output) == (True, "42")
    result = ok(worker, "final_answer('North sold most.')")
    assert (result.is_final_answer, result.output) == (True, "North sold most.")


def test_final_answer_dataframe_is_a_table(worker: SandboxWorker) -> None:
    result = ok(worker, "import pandas as pd\nfinal_answer(pd.DataFrame({'a': [1], 'b': ['x']}))")
    assert result.is_final_answer
    assert result.output is not None
    assert result.output.splitlines()[:3] == ["| a | b |", "| --- | --- |", "| 1 | x |"]
    assert len(only(result.artifacts, "table")) == 1
    # Already displayed: not shown twice.
    result = ok(worker, "frame = pd.DataFrame({'a': [1]})\ndisplay(frame)\nfinal_answer(frame)")
    assert len(only(result.artifacts, "table")) == 1


def test_final_answer_chart_is_shown(worker: SandboxWorker) -> None:
    result = ok(worker, "import plotly.express as px\nfinal_answer(px.line(x=[1, 2], y=[2, 1]))")
    assert result.is_final_answer
    assert result.output == "[chart]"
    assert [a.kind for a in result.artifacts] == ["plotly"]


def test_undefined_name_is_a_name_error_with_a_hint(worker: SandboxWorker) -> None:
    ok(worker, "sales_2023 = [1, 2, 3]")
    result = worker.run("sum(sales_2024)")
    assert result.error is not None
    assert "NameError" in result.error
    assert "did you mean 'sales_2023'?" in result.error.lower()


def test_augmented_assignment_to_undefined_name_fails(worker: SandboxWorker) -> None:
    result = worker.run("never_defined_before += 5")
    assert result.error is not None
    assert "NameError" in result.error
    assert "never_defined_before" in result.error


@pytest.mark.parametrize(
    "module",
    [
        "os",
        "subprocess",
        "sys",
        "shutil",
        "pathlib",
        "socket",
        "pickle",
        "ctypes",
        "importlib",
        "builtins",
    ],
)
def test_unauthorized_imports_fail(worker: SandboxWorker, module: str) -> None:
    result = worker.run(f"import {module}")
    assert result.error is not None
    assert f"Import of {module} is not allowed" in result.error


def test_error_keeps_what_was_printed_before(worker: SandboxWorker) -> None:
    result = worker.run("print('before')\n1 / 0")
    assert result.logs == "before\n"
    assert result.error is not None
    assert "ZeroDivisionError" in result.error


def test_variables_from_the_backend(worker: SandboxWorker) -> None:
    worker.set_variables({"question_id": 7, "columns": ["a", "b"]})
    assert ok(worker, "question_id * len(columns)").output == "14"
    with pytest.raises(TypeError):
        worker.set_variables({"bad": object()})
