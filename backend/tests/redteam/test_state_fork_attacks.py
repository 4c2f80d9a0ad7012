"""The session's snapshot copied into an attempt's space (app.runs.state_fork.copy_snapshot),
and the chosen attempt's moved back into the session's folder (move_snapshot): code wrote
those folders, so the host follows no link, never takes a file linked elsewhere or one
unlike the record, and each space gets copies of its own (an attempt writing its snapshot
in place cannot reach the session's nor a sibling's)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.runs.state_fork import copy_snapshot, move_snapshot
from app.sandbox import SNAPSHOT_DIR

MANIFEST_TEXT = json.dumps({"version": 1, "variables": []})


def snapshot_in(workspace: Path, files: dict[str, bytes]) -> dict[str, object]:
    """A snapshot folder with these files (and a manifest), and its record."""
    folder = workspace / SNAPSHOT_DIR
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(MANIFEST_TEXT)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    sizes = {"manifest.json": len(MANIFEST_TEXT), **{n: len(d) for n, d in files.items()}}
    return {
        "generation": "g1",
        "variables": [],
        "unsaved": [],
        "files": [{"name": n, "size": s} for n, s in sizes.items()],
    }


def test_each_space_gets_copies_of_its_own(tmp_path: Path) -> None:
    session = tmp_path / "session"
    record = snapshot_in(session, {"v0.parquet": b"x" * 1000})
    spaces = [tmp_path / "a", tmp_path / "b"]
    for space in spaces:
        assert copy_snapshot(session, space, record)
    original = session / SNAPSHOT_DIR / "v0.parquet"
    copies = [space / SNAPSHOT_DIR / "v0.parquet" for space in spaces]
    assert [c.read_bytes() for c in copies] == [b"x" * 1000] * 2
    inodes = {original.stat().st_ino, *(c.stat().st_ino for c in copies)}
    assert len(inodes) == 3  # no hard link between them
    # Attempt A writes its copy in place (as hostile code in its sandbox could).
    with copies[0].open("r+b") as handle:
        handle.write(b"EVIL")
    assert original.read_bytes() == b"x" * 1000
    assert copies[1].read_bytes() == b"x" * 1000


def test_a_linked_snapshot_file_is_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"host secret")
    session = tmp_path / "session"
    record = snapshot_in(session, {})
    files: list[dict[str, object]] = record["files"]  # type: ignore[assignment]
    for name, plant in (("v1.parquet", os.link), ("v2.parquet", os.symlink)):
        plant(secret, session / SNAPSHOT_DIR / name)
        listed = {**record, "files": [*files, {"name": name, "size": len(b"host secret")}]}
        space = tmp_path / f"space-{name}"
        assert not copy_snapshot(session, space, listed)
        assert not (space / SNAPSHOT_DIR).exists()
        assert not any(b"host secret" in p.read_bytes() for p in space.rglob("*") if p.is_file()), (
            name
        )


def test_a_snapshot_folder_that_is_a_link_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    record = snapshot_in(elsewhere, {"v0.parquet": b"host bytes"})
    session = tmp_path / "session"
    (session / SNAPSHOT_DIR).parent.mkdir(parents=True)
    os.symlink(elsewhere / SNAPSHOT_DIR, session / SNAPSHOT_DIR)
    space = tmp_path / "space"
    assert not copy_snapshot(session, space, record)
    assert not (space / SNAPSHOT_DIR).exists()


def test_a_snapshot_unlike_its_record_is_not_copied(tmp_path: Path) -> None:
    # The code changed the session's saved files after they were stored: the space
    # fetches the stored snapshot instead (the sizes differ from the record).
    session = tmp_path / "session"
    record = snapshot_in(session, {"v0.parquet": b"x" * 1000})
    (session / SNAPSHOT_DIR / "v0.parquet").write_bytes(b"changed")
    space = tmp_path / "space"
    assert not copy_snapshot(session, space, record)
    assert not (space / SNAPSHOT_DIR).exists()


def test_the_chosen_snapshot_is_moved_whole_into_the_session(tmp_path: Path) -> None:
    space, session = tmp_path / "space", tmp_path / "session"
    record = snapshot_in(space, {"v0.parquet": b"p" * 10, "v0.raw": b"r" * 64})
    snapshot_in(session, {"v0.parquet": b"old"})
    assert move_snapshot(space, session, record)
    assert (session / SNAPSHOT_DIR / "v0.raw").read_bytes() == b"r" * 64
    assert (session / SNAPSHOT_DIR / "v0.parquet").read_bytes() == b"p" * 10
    assert not (space / SNAPSHOT_DIR).exists()


@pytest.mark.parametrize("plant", ["hard link", "symlink", "extra file", "folder link"])
def test_a_chosen_snapshot_with_planted_entries_is_not_moved(tmp_path: Path, plant: str) -> None:
    """The attempt's code wrote its space: a file linked to the host, a link, a file the
    record does not list, or the folder itself a link never reach the session's folder
    (which keeps what it had; its next run fetches the stored snapshot)."""
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"host secret")
    space, session = tmp_path / "space", tmp_path / "session"
    files = {"v0.parquet": b"p" * 10}
    if plant == "folder link":
        elsewhere = tmp_path / "elsewhere"
        record = snapshot_in(elsewhere, files)
        (space / SNAPSHOT_DIR).parent.mkdir(parents=True)
        os.symlink(elsewhere / SNAPSHOT_DIR, space / SNAPSHOT_DIR)
    else:
        record = snapshot_in(space, files)
        planted = space / SNAPSHOT_DIR / "v1.parquet"
        if plant == "hard link":
            os.link(secret, planted)
        elif plant == "symlink":
            os.symlink(secret, planted)
        else:
            planted.write_bytes(b"unlisted")
        if plant != "extra file":
            listed = record["files"]
            record = {**record, "files": [*listed, {"name": "v1.parquet", "size": 11}]}  # type: ignore[list-item]
    snapshot_in(session, {"v0.parquet": b"old"})
    assert not move_snapshot(space, session, record)
    assert (session / SNAPSHOT_DIR / "v0.parquet").read_bytes() == b"old"
    assert not any(b"host secret" in p.read_bytes() for p in session.rglob("*") if p.is_file()), (
        plant
    )
    assert secret.read_bytes() == b"host secret"
