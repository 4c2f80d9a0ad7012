"""The backend's file operations in a workspace that hostile code controls: links are refused."""

from __future__ import annotations

import os
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
