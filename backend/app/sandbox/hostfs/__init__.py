"""The backend's file operations inside a workspace, which sandboxed code controls.

Anything in a workspace may have been replaced by a symlink or a hard link to a host file
between two looks at it. So every operation here starts from a descriptor of the workspace
folder and walks down with `openat` and O_NOFOLLOW: a link is refused, never followed, and
a folder swapped for a link after it was opened cannot redirect what happens inside it.
Walks of a whole tree (measuring it, removing it) go down the same way, one descriptor per
level and never a path, so a tree of any depth is walked whole.
"""

from app.sandbox.hostfs.paths import (
    IncomingFile,
    OpenedFile,
    UnsafePath,
    link_target,
    make_folder,
    move_entries,
    open_folder,
    open_regular,
    place_link,
    remove,
    rename,
    stat_file,
)
from app.sandbox.hostfs.trees import (
    MAX_OPEN_FOLDERS,
    Usage,
    file_clock_ns,
    remove_newer_than,
    remove_tree,
    usage,
)

__all__ = [
    "MAX_OPEN_FOLDERS",
    "IncomingFile",
    "OpenedFile",
    "UnsafePath",
    "Usage",
    "file_clock_ns",
    "link_target",
    "make_folder",
    "move_entries",
    "open_folder",
    "open_regular",
    "place_link",
    "remove",
    "remove_newer_than",
    "remove_tree",
    "rename",
    "stat_file",
    "usage",
]
