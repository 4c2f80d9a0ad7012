"""The worker's executor: one smolagents LocalPythonExecutor for the worker's whole life
(variables persist across steps), and what each step shows: charts, tables, files and
output become artifacts and text (`capture.py`).

The worker patches a few smolagents behaviours at start-up (see `_patch_smolagents`).
"""

from __future__ import annotations

import ast
import difflib
import errno
import importlib
import math
import os
import shutil
import sys
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from smolagents import local_python_executor as lpe
from smolagents.local_python_executor import InterpreterError, LocalPythonExecutor

from app.sandbox.interface import cap_text, out_of_memory_advice
from app.sandbox.layout import BOOKKEEPING_DIR
from app.sandbox.protocol import Message
from app.sandbox.worker import snapshot
from app.sandbox.worker.asking import Asking, Question
from app.sandbox.worker.capture import (
    OutputCapture,
    StepArtifacts,
    is_frame_like,
    is_plotly_figure,
    list_workspace,
    matplotlib_figure_of,
)
from app.sandbox.worker.duckdb_setup import DuckDBSetup
from app.sandbox.worker.modules import FIRST_USE_MODULES, STARTUP_MODULES
from app.sandbox.worker.querying import Querying
from app.sandbox.worker.tables import shown_frame, table_frame

FINAL_TABLE_ROWS = 50
# Analysis code runs at a lower CPU priority than the backend: however many workers are
# busy, the backend keeps answering (health checks, streams, other users' requests).
WORKER_NICENESS = 10


def _final_answer(answer: Any = None) -> Any:
    """The worker's final_answer tool; smolagents turns the call into the end of the run."""
    return answer


def _format_cell(value: Any) -> str:
    pandas = sys.modules["pandas"]
    if value is None or value is pandas.NA or value is pandas.NaT:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else str(round(value, 6))
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: Any) -> str:
    """Render a DataFrame as a Markdown table (the first rows, with a count of the rest).

    Args:
        frame: A DataFrame with plain column labels (see tables.table_frame).

    Returns:
        The table text.
    """
    lines = [
        "| " + " | ".join(_format_cell(c) for c in frame.columns) + " |",
        "|" + "|".join(" --- " for _ in frame.columns) + "|",
    ]
    for row in frame.head(FINAL_TABLE_ROWS).itertuples(index=False, name=None):
        lines.append("| " + " | ".join(_format_cell(v) for v in row) + " |")
    if len(frame) > FINAL_TABLE_ROWS:
        lines.append(f"\n({len(frame)} rows; the first {FINAL_TABLE_ROWS} are shown)")
    return "\n".join(lines)


class _StepBoundary(Warning):
    """Never issued; its filter only marks the start of a step (see _forget_shown_warnings)."""


def _forget_shown_warnings() -> None:
    # Python shows a warning once per code location and remembers that in per-module
    # registries, which stay valid until the filter list changes. (Re-)adding a filter that
    # matches nothing changes it, so each step sees its own warnings again, in O(1).
    warnings.filterwarnings("default", category=_StepBoundary)


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    # The location would be the interpreter's own source line, which helps nobody.
    return f"{category.__name__}: {message}\n"


def _seed_matplotlib_cache() -> None:
    """Copy the prepared font list into MPLCONFIGDIR (it must stay writable for matplotlib)."""
    source = os.environ.get("WORKBENCH_MPL_CACHE")
    target = os.environ.get("MPLCONFIGDIR")
    if not source or not target or not os.path.isdir(source):
        return
    os.makedirs(target, exist_ok=True)
    for entry in os.scandir(source):
        if entry.is_file():
            shutil.copyfile(entry.path, os.path.join(target, entry.name))


def import_startup_modules() -> None:
    for name in STARTUP_MODULES:
        importlib.import_module(name)


def preload() -> None:
    """Import and patch what every worker needs (a fork server does this once for all)."""
    import_startup_modules()
    for name in FIRST_USE_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # another pandas or pyarrow: loaded on first use instead
            continue
    _patch_smolagents()
    _patch_display_hooks()


# The process's session, once created: the display hooks show to it.
_session: WorkerSession | None = None


def _show_figure(figure: Any, *args: Any, **kwargs: Any) -> None:
    if _session is not None:
        _session.display(figure)


def _show_pyplot(*args: Any, **kwargs: Any) -> None:
    if _session is not None:
        _session.capture_pyplot_figures()


def _patch_display_hooks() -> None:
    """Nothing may try to open a browser or a window: showing means "make an artifact".

    Patched before any step imports them (and before a fork server builds the executor's
    module copies), so smolagents' copies of these modules hold the patched functions.
    """
    import matplotlib.figure
    import matplotlib.pyplot
    import plotly.io

    plotly.io.show = _show_figure
    matplotlib.pyplot.show = _show_pyplot
    matplotlib.figure.Figure.show = _show_figure  # type: ignore[method-assign,assignment]


def warm_safe_modules() -> None:
    """Build the executor's safe copies of the start-up modules (see `_patch_smolagents`)
    now: a fork server does, so that no forked worker spends its first import on them."""
    for name in STARTUP_MODULES:
        lpe.get_safe_module(importlib.import_module(name), [])


class WorkerSession:
    """The executor and per-step capture of one worker process."""

    def __init__(self, config: Message, capture: OutputCapture) -> None:
        """Import the libraries, patch smolagents and create the executor.

        Args:
            config: The backend's "configure" message.
            capture: The process's output capture.
        """
        self.capture = capture
        # The workspace, held open: code may chdir elsewhere, and each step starts and ends
        # back here (a spare's folder may be renamed, so the path is not kept).
        self._home = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        self.output_chars = int(config["output_chars"])
        self.memory_mb = int(config["memory_mb"])
        self.token = uuid.uuid4().hex[:12]
        self.step_number = 0
        # Whether code ran since the last snapshot (or restore): nothing to save otherwise.
        self.changed = False
        self.max_artifacts = int(config.get("max_artifacts") or 50)
        self.step = StepArtifacts(self.workspace, self.workspace, self.max_artifacts)
        self.shown: set[int] = set()  # ids of the objects display()ed in this step
        self.asking = Asking(self.memory_mb)
        self.querying = Querying()  # sql(), tables(), columns(): attached in the runner
        self.duckdb = DuckDBSetup(self.memory_mb, int(config["disk_mb"]))
        _seed_matplotlib_cache()
        preload()
        global _session
        _session = self  # what the display hooks show to (see _patch_display_hooks)
        warnings.formatwarning = _format_warning
        self.executor = LocalPythonExecutor(
            additional_authorized_imports=list(config["authorized_imports"]),
            timeout_seconds=None,  # smolagents' timeout cannot stop code; the backend kills us
        )
        tools: dict[str, Callable[..., Any]] = {
            "final_answer": _final_answer,
            "ask_user": self.asking.ask,
            "display": self.display,
        }
        self.executor.send_tools(cast(dict[str, Any], tools))

    @property
    def workspace(self) -> Path:
        """The working directory, read afresh: a spare worker's folder is renamed to its
        session's when the session takes it (without bubblewrap the path changes)."""
        return Path.cwd()

    def display(self, *objects: Any, title: str | None = None) -> None:
        """Show objects to the user: charts and tables become artifacts, the rest is printed.

        Args:
            *objects: Plotly or matplotlib figures, DataFrames/Series, or anything else.
            title: What a table is called; without one, the variable that holds it.
        """
        for obj in objects:
            self.shown.add(id(obj))
            if is_plotly_figure(obj):
                self.step.add_plotly(obj)
            elif is_frame_like(obj):
                named = title if isinstance(title, str) and title.strip() else None
                self.step.add_table(obj, named or self._variable_of(obj))
            elif (figure := matplotlib_figure_of(obj)) is not None:
                self.step.add_matplotlib(figure)
                # Shown now: it must not come back as "still open" at the end of the step.
                sys.modules["matplotlib.pyplot"].close(figure)
            else:
                print(obj if isinstance(obj, str) else repr(obj))

    def _variable_of(self, obj: Any) -> str | None:
        """The name of a variable of the code's that holds obj (the first one made), if any:
        a table is called after it."""
        for name, value in self.executor.state.items():
            if value is obj and not name.startswith("_"):
                return str(name)
        return None

    def capture_pyplot_figures(self) -> None:
        """Save every open pyplot figure as PNG and close them all (plt.show())."""
        pyplot = sys.modules["matplotlib.pyplot"]
        for number in pyplot.get_fignums():
            try:
                self.step.add_matplotlib(pyplot.figure(number))
            except Exception as exc:  # a broken figure must not hide the step's result
                print(f"[a figure could not be saved: {type(exc).__name__}: {exc}]")
        pyplot.close("all")

    def run(self, code: str, answers: list[str] | None = None) -> Message:
        """Run one code step.

        Args:
            code: The Python code of the step.
            answers: What its ask_user calls return, in order (a step that goes on after
                the user answered: see asking.py).

        Returns:
            The "result" message for the backend.
        """
        os.fchdir(self._home)
        self.step_number += 1
        self.changed = True
        folder = self.workspace / BOOKKEEPING_DIR / "artifacts" / self.token / str(self.step_number)
        self.step = StepArtifacts(self.workspace, folder, self.max_artifacts)
        self.shown = set()
        self.asking.begin(code, [str(a) for a in answers or []], self.executor.state)
        for name, helper in self.querying.helpers().items():
            self.executor.state.setdefault(name, helper)  # unless the code took the name
        before = list_workspace(self.workspace)
        _forget_shown_warnings()
        value: Any = None
        is_final_answer = False
        error: str | None = None
        question: str | None = None
        asked_at: list[Any] | None = None
        try:
            result = self.executor(code)
            value, is_final_answer = result.output, result.is_final_answer
        except BaseException as exc:  # the code may raise SystemExit & co. too
            error = self._describe_error(exc)
        if isinstance(value, Question):  # ask_user: not an answer, a question
            asked_at = self.asking.asked(value, self.executor.state)
            question, value, is_final_answer = value.text, None, False
        os.fchdir(self._home)
        self.duckdb.after_step()
        output: str | None = None
        try:
            self.capture_pyplot_figures()
            output = self._render(value, is_final_answer)
            self.step.add_written_files(before)
            self.step.report_dropped()
        except Exception as exc:
            print(f"[the step's results could not all be saved: {type(exc).__name__}: {exc}]")
        return {
            "type": "result",
            "output": _valid_unicode(output),
            "is_final_answer": is_final_answer,
            "question": _valid_unicode(question),
            "asked_at": asked_at,
            "logs": self.capture.collect(self.output_chars),
            "error": _valid_unicode(error),
            "artifacts": self.step.items,
        }

    def snapshot(self, max_bytes: int) -> Message:
        """Save the code's variables as the workspace's snapshot (see `snapshot.save`)."""
        if not self.changed and (self.workspace / snapshot.SNAPSHOT_DIR).is_dir():
            return {"type": "snapshot", "changed": False}
        authorized = self.executor.authorized_imports
        reply = snapshot.save(
            self.executor.state,
            self.workspace,
            max_bytes,
            lambda module: lpe.check_import_authorized(module, authorized),
            functions=list(self.executor.custom_tools),
        )
        self.changed = False
        return reply

    def restore(self) -> Message:
        """Define the snapshot's variables again (a new worker, before its first step)."""

        def run_import(statement: str) -> None:
            self.executor(statement)

        reply = snapshot.load(self.workspace, self.executor.state, run_import)
        self.changed = False
        self.capture.collect(self.output_chars)  # what loading printed is nobody's output
        return reply

    def _describe_error(self, exc: BaseException) -> str:
        message = str(exc) if isinstance(exc, InterpreterError) else f"{type(exc).__name__}: {exc}"
        if _out_of_memory(exc) or _out_of_memory(exc.__context__):
            message += "\n" + out_of_memory_advice(self.memory_mb)
        return message

    def _render(self, value: Any, is_final_answer: bool) -> str | None:
        if value is None and not is_final_answer:
            return None
        # A table or chart given as the final answer is shown too, unless it already was.
        show = is_final_answer and id(value) not in self.shown
        if is_final_answer and is_frame_like(value):
            if show:
                self.display(value)
            text = markdown_table(shown_frame(table_frame(value)))
        elif is_final_answer and (
            is_plotly_figure(value) or matplotlib_figure_of(value) is not None
        ):
            if show:
                self.display(value)
            text = "[chart]"
        else:
            text = str(value)
        return cap_text(text, self.output_chars)


def _out_of_memory(exc: BaseException | None) -> bool:
    """Whether an error means the step ran out of memory: a MemoryError, an allocation
    refused by the system (ENOMEM: pandas' reader meets the limit so), pandas' C parser out
    of memory, or DuckDB's out-of-memory error."""
    if exc is None:
        return False
    if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
        return True
    kind = type(exc)
    if kind.__name__ == "OutOfMemoryException" and kind.__module__.startswith(
        ("duckdb", "_duckdb")
    ):
        return True
    return kind.__name__ == "ParserError" and "out of memory" in str(exc).lower()


def _valid_unicode(text: str | None) -> str | None:
    """Replace lone surrogates (from str() of odd objects): the backend stores this text."""
    return None if text is None else text.encode("utf-8", "replace").decode("utf-8")


def _undefined_name_error(name: str, state: dict[str, Any], tools: dict[str, Any]) -> NameError:
    known = [key for key in state if not key.startswith("_")] + list(tools)
    matches = difflib.get_close_matches(name, known, n=1)
    hint = f" Did you mean '{matches[0]}'?" if matches else ""
    return NameError(f"name '{name}' is not defined.{hint}")


def _patch_smolagents() -> None:
    """Fix smolagents quirks for the whole worker process.

    - An undefined name raises NameError with a "did you mean" hint; smolagents silently
      resolves it to the closest existing variable (`sum(sales_2024)` summed `sales_2023`).
    - `x += 5` on an undefined x raises NameError; smolagents starts from 0.
    - print() writes through to the output capture, so that prints and what libraries
      write to stdout/stderr form one stream in the order it happened.
    - Filtered "safe" module copies are cached: smolagents rebuilds one on every import
      statement (100-200 ms for scipy or sklearn, on every step).
    - DuckDB is configured for the sandbox when the code first imports it (duckdb_setup.py).

    Once per process (a forked worker inherits its fork server's patches).
    """
    if getattr(lpe, "_workbench_patched", False):
        return
    lpe._workbench_patched = True  # type: ignore[attr-defined]
    original_evaluate_name = lpe.evaluate_name
    original_evaluate_augassign = lpe.evaluate_augassign
    original_get_safe_module = lpe.get_safe_module

    def evaluate_name(
        name: ast.Name,
        state: dict[str, Any],
        static_tools: dict[str, Any],
        custom_tools: dict[str, Any],
        authorized_imports: list[str],
    ) -> Any:
        defined = (
            name.id in state
            or name.id in static_tools
            or name.id in custom_tools
            or name.id in lpe.ERRORS
        )
        if not defined:
            raise _undefined_name_error(name.id, state, {**static_tools, **custom_tools})
        return original_evaluate_name(name, state, static_tools, custom_tools, authorized_imports)

    def evaluate_augassign(
        expression: ast.AugAssign,
        state: dict[str, Any],
        static_tools: dict[str, Any],
        custom_tools: dict[str, Any],
        authorized_imports: list[str],
    ) -> Any:
        target = expression.target
        if isinstance(target, ast.Name) and target.id not in state:
            raise _undefined_name_error(target.id, state, {**static_tools, **custom_tools})
        return original_evaluate_augassign(
            expression, state, static_tools, custom_tools, authorized_imports
        )

    safe_modules: dict[str, tuple[ModuleType, int, ModuleType]] = {}

    def get_safe_module(
        raw_module: Any, authorized_imports: list[str], visited: set[int] | None = None
    ) -> Any:
        if visited is not None or not isinstance(raw_module, ModuleType):
            return original_get_safe_module(raw_module, authorized_imports, visited)
        if _session is not None:  # DuckDB, once loaded, is configured before the code has it
            _session.duckdb.prepare()
        # A module that gained attributes (a submodule imported since) gets a fresh copy.
        size = len(vars(raw_module))
        cached = safe_modules.get(raw_module.__name__)
        if cached is not None and cached[0] is raw_module and cached[1] == size:
            return cached[2]
        safe = original_get_safe_module(raw_module, authorized_imports)
        safe_modules[raw_module.__name__] = (raw_module, size, safe)
        return safe

    class StreamingPrintContainer(lpe.PrintContainer):
        def append(self, text: str) -> StreamingPrintContainer:
            sys.stdout.write(text)
            return self

        def __iadd__(self, other: Any) -> StreamingPrintContainer:
            sys.stdout.write(str(other))
            return self

    lpe.evaluate_name = evaluate_name
    lpe.evaluate_augassign = evaluate_augassign
    lpe.get_safe_module = get_safe_module
    lpe.PrintContainer = StreamingPrintContainer  # type: ignore[misc]
