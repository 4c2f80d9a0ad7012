"""The backend's file operations in a workspace that hostile code controls: links are refused."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.sandbox import hostfs


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "passwd"
    secret.parent.mkdir()
    secret.write_text("root:x:0:0\n")
    return secret


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def test_a_plain_file_opens(workspace: Path) -> None:
    (workspace / "out").mkdir()
    (workspace / "out" / "chart.png").write_bytes(b"png")
    opened = hostfs.open_regular(workspace, "out/chart.png")
    with os.fdopen(opened.fd, "rb") as handle:
        assert handle.read() == b"png"
    assert opened.size == 3


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "linked-folder", "fifo", "climb"])
def test_links_and_special_files_are_refused(workspace: Path, host_file: Path, kind: str) -> None:
    if kind == "symlink":
        (workspace / "a.csv").symlink_to(host_file)
        relative = "a.csv"
    elif kind == "hardlink":
        os.link(host_file, workspace / "a.csv")
        relative = "a.csv"
    elif kind == "linked-folder":
        (workspace / ".workbench").symlink_to(host_file.parent)
        relative = ".workbench/passwd"
    elif kind == "fifo":
        os.mkfifo(workspace / "a.csv")
        relative = "a.csv"
    else:
        relative = os.path.relpath(host_file, workspace)
    with pytest.raises(hostfs.UnsafePath):
        hostfs.open_regular(workspace, relative)


def test_writing_over_a_link_replaces_the_link_not_its_target(
    workspace: Path, host_file: Path
) -> None:
    (workspace / "sales.csv").symlink_to(host_file)
    with hostfs.IncomingFile(workspace, "sales.csv") as incoming:
        incoming.write(b"region,amount\n")
        incoming.commit()
    assert host_file.read_text() == "root:x:0:0\n"
    assert not (workspace / "sales.csv").is_symlink()
    assert (workspace / "sales.csv").read_bytes() == b"region,amount\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["sales.csv"]


def test_an_unfinished_write_leaves_nothing(workspace: Path) -> None:
    with pytest.raises(RuntimeError), hostfs.IncomingFile(workspace, "sales.csv") as incoming:
        incoming.write(b"partial")
        raise RuntimeError("storage went away")
    assert list(workspace.iterdir()) == []


def test_removing_through_a_linked_folder_touches_nothing_outside(
    workspace: Path, host_file: Path
) -> None:
    (workspace / ".workbench").symlink_to(host_file.parent)
    hostfs.remove(workspace, ".workbench/passwd")
    assert host_file.exists()


def test_usage_counts_without_following_links(workspace: Path, host_file: Path) -> None:
    (workspace / "data.bin").write_bytes(b"x" * 100_000)
    (workspace / "host").symlink_to(host_file.parent)
    used = hostfs.usage(workspace)
    assert used.files == 2
    assert 100_000 <= used.bytes < 200_000


# Trees written by hostile code: any depth, sparse files, links, modes, special files.

BACKEND_DIR = Path(__file__).resolve().parents[2]
DEEP = 10_000  # levels: ~20,000 bytes of path (PATH_MAX is 4,096), past any recursion limit


def make_deep(top: Path, depth: int, bottom_bytes: int = 1 << 20) -> None:
    """A chain of `depth` folders named "d" below `top`, a file at the bottom; built by
    descriptors, since no path can reach that deep."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        out = os.open("bottom.bin", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"x" * bottom_bytes)
        os.close(out)
    finally:
        os.close(fd)


def du_allocated(folder: Path) -> int:
    """Allocated bytes below `folder` by coreutils' du (which walks any depth), the folder's
    own blocks left out as `usage` leaves them out."""
    out = subprocess.run(["du", "-s", "-B1", str(folder)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[0]) - os.stat(folder).st_blocks * 512


def in_child(code: str, *, unprivileged: bool = False) -> None:
    """Run hostfs code in a new Python with few descriptors allowed (fewer than the tree is
    deep); `unprivileged`: as root without the right to ignore file modes, like a backend
    running as the workspace's owner."""
    prelude = (
        "import resource\nfrom pathlib import Path\nfrom app.sandbox import hostfs\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (hostfs.MAX_OPEN_FOLDERS + 32, "
        "resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
    )
    command = [sys.executable, "-c", prelude + code]
    if unprivileged and os.geteuid() == 0:
        caps = "-dac_override,-dac_read_search,-fowner"
        command = ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}", "--", *command]
    done = subprocess.run(command, cwd=BACKEND_DIR, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_tree_deeper_than_path_max_is_measured_and_removed(workspace: Path) -> None:
    make_deep(workspace, DEEP)
    used = hostfs.usage(workspace)
    assert used.complete
    assert used.files == DEEP + 1
    assert used.bytes == du_allocated(workspace)
    assert used.bytes >= DEEP * 4096 + (1 << 20)
    # Stopped early at the limit, however deep.
    assert hostfs.usage(workspace, stop_above=1 << 20).bytes > 1 << 20

    hostfs.remove_tree(workspace)
    assert not workspace.exists()
    hostfs.remove_tree(workspace)  # gone already: nothing to do


def test_a_deep_walk_holds_few_descriptors(workspace: Path) -> None:
    make_deep(workspace, DEEP)
    in_child(
        f"w = Path({str(workspace)!r})\n"
        "used = hostfs.usage(w)\n"
        f"assert used.complete and used.files == {DEEP + 1}, used\n"
        "assert hostfs.remove_newer_than(w, 0) > 0\n"
        "assert hostfs.usage(w).files == 0\n"
        "hostfs.remove_tree(w)\n"
    )
    assert not workspace.exists()


def test_a_sparse_file_is_charged_its_apparent_size(workspace: Path) -> None:
    with (workspace / "sparse.csv").open("wb") as sparse:
        sparse.seek(600 << 20)
        sparse.write(b"x")
    assert os.stat(workspace / "sparse.csv").st_blocks * 512 < 1 << 20  # holds ~nothing
    used = hostfs.usage(workspace)
    assert used.bytes >= (600 << 20) + 1
    assert hostfs.usage(workspace, stop_above=64 << 20).bytes > 64 << 20
    # Folders and other inodes are charged their blocks, a file at least what it holds.
    (workspace / "full.bin").write_bytes(b"y" * 100_000)
    assert hostfs.usage(workspace).bytes == (600 << 20) + 1 + du_allocated(workspace) - (
        os.stat(workspace / "sparse.csv").st_blocks * 512
    )


def test_hard_links_are_counted_once(workspace: Path) -> None:
    (workspace / "a").mkdir()
    (workspace / "a" / "data.bin").write_bytes(b"x" * (1 << 20))
    for number in range(5):
        os.link(workspace / "a" / "data.bin", workspace / f"link-{number}.bin")
    used = hostfs.usage(workspace)
    assert used.files == 2  # the folder, and the file under six names
    assert used.bytes == du_allocated(workspace)
    assert used.bytes < 2 << 20


def test_links_are_neither_followed_nor_charged_for_their_target(
    workspace: Path, host_file: Path
) -> None:
    (host_file.parent / "big.bin").write_bytes(b"x" * (4 << 20))
    (host_file.parent / "sub").mkdir()
    (host_file.parent / "sub" / "kept.txt").write_text("kept")
    (workspace / "host").symlink_to(host_file.parent, target_is_directory=True)
    (workspace / "big.bin").symlink_to(host_file.parent / "big.bin")
    (workspace / "deep").mkdir()
    (workspace / "deep" / "up").symlink_to("../../host", target_is_directory=True)
    assert hostfs.usage(workspace).bytes < 1 << 20

    since = time.time_ns() - 10**12  # everything counts as written since
    hostfs.remove_newer_than(workspace, since)
    hostfs.remove_tree(workspace)
    assert not workspace.exists()
    assert host_file.read_text() == "root:x:0:0\n"
    assert (host_file.parent / "sub" / "kept.txt").read_text() == "kept"
    assert (host_file.parent / "big.bin").stat().st_size == 4 << 20


def test_folders_made_unreadable_are_measured_and_removed(workspace: Path) -> None:
    locked = workspace / "locked"
    (locked / "inner").mkdir(parents=True)
    (locked / "inner" / "data.bin").write_bytes(b"x" * (2 << 20))
    (locked / "readonly").mkdir()
    (locked / "readonly" / "f.txt").write_text("x")
    make_deep(locked / "inner", 200, bottom_bytes=10)
    (locked / "readonly").chmod(0o500)
    (locked / "inner").chmod(0o000)
    locked.chmod(0o100)  # search only: not listable
    # Without the right to ignore modes, as a backend that runs as the workspace's owner.
    in_child(
        f"w = Path({str(workspace)!r})\n"
        "used = hostfs.usage(w, stop_above=64 << 20)\n"
        "assert used.complete and used.bytes > 2 << 20, used\n"
        "hostfs.remove_tree(w, 'locked')\n"
        "assert not (w / 'locked').exists()\n",
        unprivileged=True,
    )
    assert list(workspace.iterdir()) == []


def test_a_folder_the_host_may_not_open_counts_as_over_quota(workspace: Path) -> None:
    hidden = workspace / "hidden"
    hidden.mkdir()
    (hidden / "data.bin").write_bytes(b"x" * (1 << 20))
    os.chown(hidden, 65534, 65534)  # another user's: its mode cannot be given back
    hidden.chmod(0o000)
    in_child(
        f"w = Path({str(workspace)!r})\n"
        "used = hostfs.usage(w, stop_above=64 << 20)\n"
        "assert not used.complete and used.bytes > 64 << 20, used\n",
        unprivileged=True,
    )
    hidden.chmod(0o700)


def test_special_files_and_undecodable_names_are_measured_and_removed(workspace: Path) -> None:
    folder = workspace / "odd"
    folder.mkdir()
    os.mkfifo(folder / "pipe.csv")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(folder / "sock"))
    bad = os.fsencode(folder) + b"/caf\xe9-\xff.bin"
    with open(bad, "wb") as handle:
        handle.write(b"x" * 5000)
    os.mkdir(os.fsencode(folder) + b"/\xfe\xfd")
    os.symlink(b"/etc/passwd", os.fsencode(folder) + b"/\xfe\xfd/\x80")
    used = hostfs.usage(workspace)
    assert used.complete and used.files == 6
    assert used.bytes == du_allocated(workspace)
    hostfs.remove_tree(workspace, "odd")
    assert list(workspace.iterdir()) == []


def file_clock_after(folder: Path, *paths: Path) -> int:
    """A moment by the file system's own clock (coarser than time.time_ns()) later than
    every change of `paths`: when the step began."""
    newest = max(os.stat(p).st_ctime_ns for p in paths)
    clock = folder / "clock"
    while True:
        clock.touch()
        now = os.stat(clock).st_ctime_ns
        if now > newest:
            return now


def test_what_a_step_wrote_is_removed_at_any_depth_and_older_files_stay(
    workspace: Path,
) -> None:
    (workspace / "kept").mkdir()
    (workspace / "kept" / "old.csv").write_text("old")
    (workspace / "empty-before").mkdir()
    since = file_clock_after(workspace.parent, workspace / "kept", workspace / "empty-before")
    # What a step wrote: a file beside the old one, a deep tree, empty folders by the
    # thousand (they take disk too).
    (workspace / "kept" / "new.csv").write_text("new")
    make_deep(workspace, 3000)
    for number in range(2000):
        (workspace / f"empty-{number}").mkdir()

    freed = hostfs.remove_newer_than(workspace, since)
    assert freed >= (1 << 20) + 5000 * 4096
    assert sorted(p.name for p in workspace.iterdir()) == ["empty-before", "kept"]
    assert [p.name for p in (workspace / "kept").iterdir()] == ["old.csv"]


def test_files_written_after_the_file_clock_reading_are_never_older(tmp_path: Path) -> None:
    # time.time_ns() runs ahead of the coarse clock that stamps files; this reading does not.
    for i in range(2000):
        since = hostfs.file_clock_ns(tmp_path)
        path = tmp_path / f"f{i}"
        path.write_bytes(b"x")
        assert path.stat().st_mtime_ns >= since
    assert not list(tmp_path.glob(".clock-*"))
