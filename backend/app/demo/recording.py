"""The demo's recorded session (data/recording.json, written by scripts.record_demo): read
and given fresh ids, so every user's copy is their own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

PATH = Path(__file__).parent / "data" / "recording.json"


def load(session_id: uuid.UUID, run_id: uuid.UUID) -> tuple[dict[str, Any], dict[str, uuid.UUID]]:
    """The recording with the recorded session's, run's and artifacts' ids replaced by new
    ones (everywhere: the events' data and the artifacts' urls too).

    Returns:
        The recording, and the new id of each recorded artifact, by its new id's text.
    """
    text = PATH.read_text(encoding="utf-8")
    recorded = json.loads(text)
    run = recorded["run"]
    fresh = {run["session_id"]: session_id, run["id"]: run_id}
    for artifact in run["artifacts"]:
        fresh[artifact["id"]] = uuid.uuid4()
    for old, new in fresh.items():
        text = text.replace(old, str(new))
    return json.loads(text), {str(new): new for new in fresh.values()}
