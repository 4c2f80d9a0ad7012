"""What a step prints reaches the backend while the step runs (issue 24, point 11), within
bounds whatever the code prints; the step's result still carries all of it.

Speed-independent: each step waits for a file that the test writes only once the output
it waits for has arrived, so a step cannot end before its output streamed (if streaming
broke, the step would run into its time limit and the test fail).
"""

from __future__ import annotations

from app.runs.translator import _unsent
from app.sandbox import SandboxWorker
from app.sandbox.protocol import OUTPUT_FRAME_CHARS, OUTPUT_STREAM_CHARS

WAIT_FOR_GO = (
    "import time\nimport pandas as pd\n"
    "{before}\n"
    "while True:\n"
    "    try:\n"
    "        pd.read_csv('go.csv')\n"
    "        break\n"
    "    except FileNotFoundError:\n"
    "        time.sleep(0.05)\n"
    "print('second')"
)


def go(worker: SandboxWorker) -> None:
    (worker.workspace / "go.csv").write_text("a\n1\n")


def test_what_a_step_prints_arrives_while_it_runs(worker: SandboxWorker) -> None:
    pieces: list[str] = []

    def on_output(text: str) -> None:
        pieces.append(text)
        if "first" in "".join(pieces):
            go(worker)

    code = WAIT_FOR_GO.format(before="print('first')")
    result = worker.run(code, on_output=on_output)
    (worker.workspace / "go.csv").unlink()
    assert result.error is None
    assert "".join(pieces) == "first\n"  # while it ran: what it printed before waiting
    assert result.logs == "first\nsecond\n"  # the result has all of it


def test_a_flood_of_output_streams_within_bounds(worker: SandboxWorker) -> None:
    pieces: list[str] = []

    def on_output(text: str) -> None:
        pieces.append(text)
        if sum(map(len, pieces)) >= OUTPUT_STREAM_CHARS:
            go(worker)

    code = WAIT_FOR_GO.format(before="for i in range(20000):\n    print('x' * 99)")
    result = worker.run(code, on_output=on_output)
    (worker.workspace / "go.csv").unlink()
    assert result.error is None
    assert sum(map(len, pieces)) == OUTPUT_STREAM_CHARS
    assert max(map(len, pieces)) <= OUTPUT_FRAME_CHARS
    assert "".join(pieces) == ("x" * 99 + "\n") * (OUTPUT_STREAM_CHARS // 100)
    assert result.logs.endswith("second\n")  # capped head and tail, as before


def test_the_rest_of_the_output_follows_what_was_sent() -> None:
    assert _unsent("first\nsecond\n", "first\n") == "second\n"
    assert _unsent("first\n", "") == "first\n"
    # Logs that do not go on from what was sent (capped, or a restarted worker): all of
    # them, on a line of their own.
    assert _unsent("[restored]\nfirst\n", "first\n") == "\n[restored]\nfirst\n"


def test_a_step_that_prints_nothing_sends_nothing(worker: SandboxWorker) -> None:
    pieces: list[str] = []
    result = worker.run("x = 1", on_output=pieces.append)
    assert result.error is None and pieces == [] and result.logs == ""
