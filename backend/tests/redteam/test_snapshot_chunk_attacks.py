"""Hostile snapshot reports and records against the chunk store (issue 43).

The worker's report is written by the session's code: names that climb out of the snapshot
folder, sizes that lie and too many files are refused or measured, never trusted. A record
is read from the database, but its digests become storage keys: one that is not a digest,
or a chunk list that cannot make the file, is refused before anything is read.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import pytest

from app.runs import snapshots
from app.runs.snapshot_chunks import ChunkWriter
from app.sandbox import SNAPSHOT_DIR, SnapshotReport
from app.sandbox.hostfs import UnsafePath
from tests.support.server import LiveServer


def report(files: list[dict[str, object]]) -> SnapshotReport:
    return SnapshotReport.from_message(
        {"type": "snapshot", "changed": True, "files": files, "variables": []}
    )


@pytest.mark.parametrize(
    "name", ["../manifest.json", "../../etc/passwd", "v1.parquet/../../x", "/abs.json", "v1.pkl"]
)
def test_a_file_name_out_of_the_snapshot_folder_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a snapshot file name"):
        report([{"name": "manifest.json", "size": 2}, {"name": name, "size": 1}])


def test_too_many_files_are_refused() -> None:
    files = [{"name": f"v{i}.json", "size": 1} for i in range(1100)]
    with pytest.raises(ValueError, match="at most a thousand"):
        report([{"name": "manifest.json", "size": 2}, *files])


def _project(live: LiveServer) -> uuid.UUID:
    """A project row for the chunk rows to belong to."""
    from app.models import Project, User

    async def make() -> uuid.UUID:
        async with live.state.session_factory() as db:
            from sqlalchemy import select

            owner = (await db.scalars(select(User))).first()
            assert owner is not None
            project = Project(name=f"chunks-{uuid.uuid4().hex[:6]}", owner_id=owner.id)
            db.add(project)
            await db.commit()
            return project.id

    return live.call(make())


def test_sizes_that_lie_are_measured_not_believed(live: LiveServer, tmp_path: Path) -> None:
    folder = tmp_path / SNAPSHOT_DIR
    folder.mkdir(parents=True)
    body = b'{"version": 1, "variables": [], "unsaved": []}' + b" " * 5000
    (folder / "manifest.json").write_bytes(body)
    project_id = _project(live)
    writer = ChunkWriter(live.state.storage, live.state.session_factory, project_id)
    lying = report([{"name": "manifest.json", "size": 1}])
    record = live.call(snapshots.upload(live.state.storage, tmp_path, lying, 1 << 20, writer))
    assert record["files"] == [
        {"name": "manifest.json", "size": len(body), "chunks": [hashlib.sha256(body).hexdigest()]}
    ]
    # What it really holds is held against the limit, not what it said.
    with pytest.raises(snapshots.SnapshotTooLarge):
        live.call(snapshots.upload(live.state.storage, tmp_path, lying, 100, writer))


def test_a_linked_snapshot_file_is_refused(live: LiveServer, tmp_path: Path) -> None:
    folder = tmp_path / SNAPSHOT_DIR
    folder.mkdir(parents=True)
    secret = tmp_path.parent / f"secret-{uuid.uuid4().hex}"
    secret.write_text("not yours")
    (folder / "manifest.json").symlink_to(secret)
    writer = ChunkWriter(live.state.storage, live.state.session_factory, _project(live))
    with pytest.raises(UnsafePath):
        live.call(
            snapshots.upload(
                live.state.storage,
                tmp_path,
                report([{"name": "manifest.json", "size": 9}]),
                1 << 20,
                writer,
            )
        )


@pytest.mark.parametrize(
    "chunks",
    [
        ["../../projects/x/files/y"],  # not a digest: a key elsewhere in the bucket
        ["a" * 64, "b" * 64],  # two chunks cannot make a 10-byte file
        [],  # nor can none
        "a" * 64,  # not a list
    ],
)
def test_a_record_whose_chunks_are_not_digests_is_refused(
    live: LiveServer, tmp_path: Path, chunks: object
) -> None:
    record = {
        "format": "chunks",
        "generation": uuid.uuid4().hex,
        "bytes": 10,
        "variables": [],
        "unsaved": [],
        "files": [{"name": "manifest.json", "size": 10, "chunks": chunks}],
    }
    with pytest.raises(snapshots.SnapshotDamaged):
        live.call(
            snapshots.download(
                live.state.storage,
                tmp_path / "ws",
                tmp_path / "marker",
                uuid.uuid4(),
                record,
                uuid.uuid4(),
            )
        )
    assert not list((tmp_path / "ws").rglob("manifest.json"))
