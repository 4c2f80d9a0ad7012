"""Inside the worker: capture of printed output and of the charts, tables and files a step makes.

Nothing here imports pandas, matplotlib or plotly at module level: objects are recognised
through `sys.modules`, so a library the worker has not loaded is simply never matched.
"""

from __future__ import annotations

import io
import json
import mimetypes
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from app.sandbox.interface import PLOTLY_MIME, cap_text, join_head_tail
from app.sandbox.layout import BOOKKEEPING_DIR
from app.sandbox.worker.tables import shown_frame, table_frame

# Hidden folder of the workspace for the worker's own files; never reported as written.
IMAGE_MIMES = {
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
}
# Types the system's mime table may not know (the sandbox has no /etc/mime.types).
FILE_MIMES = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".json": "application/json",
    ".parquet": "application/vnd.apache.parquet",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xls": "application/vnd.ms-excel",
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".zip": "application/zip",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
TABLE_PREVIEW_ROWS = 1000
# A loop that writes thousands of files should not flood the session with artifacts.
MAX_WRITTEN_FILES = 50
# How many folders deep the files a step wrote are looked for.
MAX_LISTED_DEPTH = 32

WorkspaceListing = dict[str, tuple[int, int]]


class _FdWriter(io.TextIOBase):
    """sys.stdout/sys.stderr replacement that writes straight to a file descriptor.

    Unbuffered on purpose: Python-level writes and what C code writes to the same fd then
    land in the capture in the order they happened.
    """

    encoding = "utf-8"

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def write(self, text: str) -> int:
        view = memoryview(text.encode("utf-8", "replace"))
        while view:
            view = view[os.write(self._fd, view) :]
        return len(text)


class OutputCapture:
    """Points fds 1 and 2, sys.stdout and sys.stderr at one append-only scratch file."""

    def __init__(self, scratch_dir: str) -> None:
        """Create the scratch file and redirect the process's output into it.

        Args:
            scratch_dir: A private writable folder (the sandbox's /tmp).
        """
        handle, path = tempfile.mkstemp(prefix="output-", dir=scratch_dir)
        # O_APPEND: after each step truncates the file, writes start again at offset 0.
        self._fd = os.open(path, os.O_RDWR | os.O_APPEND)
        os.close(handle)
        os.unlink(path)
        os.dup2(self._fd, 1)
        os.dup2(self._fd, 2)
        sys.stdout = _FdWriter(1)
        sys.stderr = _FdWriter(2)

    @property
    def output_fd(self) -> int:
        """The scratch file (the supervisor reads what a running step printed from it)."""
        return self._fd

    def collect(self, limit: int) -> str:
        """Return what was written since the last call (capped) and start afresh.

        Args:
            limit: Maximum number of characters to return.

        Returns:
            The captured text, head and tail kept when it was longer than `limit`.
        """
        size = os.fstat(self._fd).st_size
        if size <= 4 * limit:
            text = cap_text(os.pread(self._fd, size, 0).decode("utf-8", "replace"), limit)
        else:
            # Reading gigabytes of output to keep 20 000 characters would be wasteful.
            window = 2 * limit
            head = os.pread(self._fd, window, 0).decode("utf-8", "replace")
            tail = os.pread(self._fd, window, size - window).decode("utf-8", "replace")
            text = join_head_tail(
                head,
                tail,
                limit,
                lambda kept: f"about {max(size - kept, 0)} bytes",
            )
        os.ftruncate(self._fd, 0)
        return text


def list_workspace(root: Path) -> WorkspaceListing:
    """List the regular files under the workspace with their size and modification time.

    The code may have built a tree deeper than any path can spell (PATH_MAX) or Python can
    recurse into; the walk keeps a list instead of recursing, and goes no deeper than
    MAX_LISTED_DEPTH folders: a file below that is not reported as written.

    Args:
        root: The workspace folder.

    Returns:
        Workspace-relative POSIX path -> (size, mtime_ns), the bookkeeping folder left out.
    """
    listing: WorkspaceListing = {}
    folders = [(root, "", 0)]
    while folders:
        folder, prefix, depth = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            relative = f"{prefix}{entry.name}"
            if relative == BOOKKEEPING_DIR:
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode) and depth < MAX_LISTED_DEPTH:
                folders.append((Path(entry.path), f"{relative}/", depth + 1))
            elif stat.S_ISREG(info.st_mode):
                listing[relative] = (info.st_size, info.st_mtime_ns)
    return listing


def _module_attr(module: str, name: str) -> Any:
    """A class from a library only if the library is loaded (None otherwise)."""
    loaded = sys.modules.get(module)
    return getattr(loaded, name, None) if loaded is not None else None


def _instance_of(obj: Any, module: str, name: str) -> bool:
    cls = _module_attr(module, name)
    return cls is not None and isinstance(obj, cls)


def is_plotly_figure(obj: Any) -> bool:
    """Whether obj is a plotly figure."""
    return _instance_of(obj, "plotly.basedatatypes", "BaseFigure")


def is_frame_like(obj: Any) -> bool:
    """Whether obj is a pandas DataFrame, Series or Styler."""
    return (
        _instance_of(obj, "pandas", "DataFrame")
        or _instance_of(obj, "pandas", "Series")
        or _instance_of(obj, "pandas.io.formats.style", "Styler")
    )


def matplotlib_figure_of(obj: Any) -> Any:
    """The matplotlib Figure behind obj (a Figure, Axes, or seaborn grid), or None."""
    figure_cls = _module_attr("matplotlib.figure", "Figure")
    if figure_cls is None:
        return None
    if isinstance(obj, figure_cls):
        return obj
    for attribute in ("figure", "fig"):
        candidate = getattr(obj, attribute, None)
        if isinstance(candidate, figure_cls):
            return candidate
    return None


# Plotly titles may carry HTML tags (<b>, <br>); names keep the words only.
_TITLE_TAGS = re.compile(r"<[^>]{0,200}>")
_UNSAFE_NAME = re.compile(r'[\x00-\x1f/\\:*?"<>|]+')


def plotly_title(figure: Any) -> str | None:
    """The title text of a plotly figure, if it has one."""
    try:
        text = figure.layout.title.text
    except AttributeError:
        return None
    return str(text) if text else None


def matplotlib_title(figure: Any) -> str | None:
    """A matplotlib figure's suptitle, else its first axes' title, if any."""
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        return str(suptitle.get_text())
    for axes in getattr(figure, "axes", []):
        if axes.get_title():
            return str(axes.get_title())
    return None


class StepArtifacts:
    """Collects the artifacts of one step into a folder under the workspace's bookkeeping dir."""

    def __init__(self, workspace: Path, folder: Path, max_items: int = 50) -> None:
        """Start an empty collection.

        Args:
            workspace: The workspace root (artifact paths are reported relative to it).
            folder: Where this step's files go (created on first use).
            max_items: Artifacts one step may make; later ones are counted, not saved.
        """
        self.workspace = workspace
        self.folder = folder
        self.max_items = max_items
        self.items: list[dict[str, Any]] = []
        self.dropped = 0
        self._counters: dict[str, int] = {}

    def _full(self, needed: int = 1) -> bool:
        if len(self.items) + needed > self.max_items:
            self.dropped += 1
            return True
        return False

    def report_dropped(self) -> None:
        """Say in the step's output how many results were not kept."""
        if self.dropped:
            print(
                f"[{self.dropped} more charts, tables or files were not kept: a step keeps "
                f"at most {self.max_items}]"
            )

    def _next_name(self, stem: str) -> str:
        self._counters[stem] = self._counters.get(stem, 0) + 1
        return f"{stem}-{self._counters[stem]}"

    def _add(self, kind: str, name: str, mime: str, path: Path) -> None:
        self.items.append(
            {
                "kind": kind,
                "name": name,
                "mime": mime,
                "path": path.relative_to(self.workspace).as_posix(),
                "size": path.stat().st_size,
            }
        )

    def _new_file(self, name: str) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        return self.folder / name

    def _titled(self, stem: str, title: str | None, suffix: str) -> tuple[str, str]:
        """The file name on disk (stem-N) and the name the user sees: the chart's or
        table's title when it has one (made unique within the step), else the same stem-N."""
        file_name = f"{self._next_name(stem)}{suffix}"
        cleaned = " ".join(_TITLE_TAGS.sub(" ", title or "").split())
        cleaned = _UNSAFE_NAME.sub("-", cleaned).strip(" .-")[:80]
        if not cleaned:
            return file_name, file_name
        shown = f"{cleaned}{suffix}"
        taken = {item["name"] for item in self.items}
        number = 2
        while shown in taken:
            shown = f"{cleaned} ({number}){suffix}"
            number += 1
        return file_name, shown

    def add_plotly(self, figure: Any) -> str:
        """Save a plotly figure as figure JSON, named after its title; returns that name."""
        if self._full():
            return ""
        file_name, name = self._titled("figure", plotly_title(figure), ".json")
        path = self._new_file(file_name)
        path.write_text(figure.to_json(), encoding="utf-8")
        self._add("plotly", name, PLOTLY_MIME, path)
        return name

    def add_matplotlib(self, figure: Any) -> str:
        """Save a matplotlib figure as PNG, named after its title; returns that name."""
        if self._full():
            return ""
        file_name, name = self._titled("figure", matplotlib_title(figure), ".png")
        path = self._new_file(file_name)
        figure.savefig(path, format="png", bbox_inches="tight")
        self._add("image", name, "image/png", path)
        return name

    def add_table(self, obj: Any, name: str | None = None) -> str:
        """Save a DataFrame/Series as a JSON preview table plus the full data as CSV.

        Args:
            obj: A DataFrame, Series or Styler.
            name: What the table is called (the code's variable, or a title the code gave);
                without one, `table-N`.

        Returns:
            The display name of the table artifact.
        """
        if self._full(2):
            return ""
        frame = table_frame(obj)
        if not name:  # numbered among the step's unnamed tables only
            name = "table-" + self._next_name("untitled table").rsplit("-", 1)[1]
        file_name, shown = self._titled("table", name, ".json")
        stem = shown.removesuffix(".json")
        # to_json turns NaN/NaT into null; dates were made text by shown_frame.
        rows = json.loads(
            shown_frame(frame.head(TABLE_PREVIEW_ROWS)).to_json(
                orient="values", date_format="iso", default_handler=str
            )
        )
        table = {"columns": list(frame.columns), "rows": rows, "row_count": len(frame)}
        table_path = self._new_file(file_name)
        table_path.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
        self._add("table", shown, "application/json", table_path)
        csv_path = self._new_file(file_name.removesuffix(".json") + ".csv")
        frame.to_csv(csv_path, index=False)
        self._add("file", f"{stem}.csv", "text/csv", csv_path)
        return shown

    def _rename_tables_named_like(self, written: set[str]) -> None:
        """A table and its CSV go by `name.json` and `name.csv`; when the code also wrote a
        `name.csv` (`df.to_csv('sales.csv'); display(df)` is common), the table becomes
        `name (table)`, so that each name means one thing and the pair stays a pair."""
        for table, companion in zip(self.items, self.items[1:], strict=False):
            stem = str(table["name"]).removesuffix(".json")
            if table["kind"] != "table" or companion["name"] != f"{stem}.csv":
                continue
            if companion["name"] in written:
                table["name"], companion["name"] = f"{stem} (table).json", f"{stem} (table).csv"

    def add_written_files(self, before: WorkspaceListing) -> None:
        """Report the files the step created or changed in the workspace.

        Args:
            before: The workspace listing taken when the step started.
        """
        after = list_workspace(self.workspace)
        changed = sorted(path for path, info in after.items() if before.get(path) != info)
        room = max(0, min(MAX_WRITTEN_FILES, self.max_items - len(self.items)))
        self._rename_tables_named_like(set(changed[:room]))
        for relative in changed[:room]:
            suffix = Path(relative).suffix.lower()
            if suffix in IMAGE_MIMES:
                kind, mime = "image", IMAGE_MIMES[suffix]
            else:
                kind = "file"
                mime = FILE_MIMES.get(suffix) or (
                    mimetypes.guess_type(relative)[0] or "application/octet-stream"
                )
            self.items.append(
                {
                    "kind": kind,
                    "name": relative,
                    "mime": mime,
                    "path": relative,
                    "size": after[relative][0],
                }
            )
        if len(changed) > room:
            print(
                f"[{len(changed)} files were written; only the first {room} are shown as results]"
            )
