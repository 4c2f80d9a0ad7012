"""Loaded by the server process that preview children fork from (see preview_process).

That process lives as long as the backend and holds its environment, secrets included.
Like the backend itself (main.forbid_reading_own_memory), it must not be readable by other
processes of the same user, such as analysis code in a sandbox without its own process
namespace; its children inherit the setting. Then it imports the readers once for all
(DuckDB starts no thread on import: forking after it is safe).
"""

from __future__ import annotations

import ctypes
import sys

if sys.platform == "linux":
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0

import app.files.preview.paging  # DuckDB, for pages of the whole table
import app.files.preview.whole_kinds  # the whole file's decision of column kinds
import app.files.profile  # noqa: F401  (and app.files.preview, which it uses)
