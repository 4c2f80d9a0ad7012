"""A worker's replies, read as hostile: every field checked and capped, artifact paths
checked on the host without following links, refusals turned into the step's failure,
and how a worker ended put into words for the agent.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import get_args

from app.sandbox import hostfs
from app.sandbox.interface import (
    QUESTION_CHARS,
    REFUSED_PREFIX,
    ArtifactFile,
    ArtifactKind,
    AskedAt,
    SandboxLimits,
    StepResult,
    cap_text,
    out_of_memory_advice,
)
from app.sandbox.protocol import (
    MAX_READS,
    MAX_REFUSALS,
    OUTPUT_FRAME_CHARS,
    OUTPUT_STREAM_CHARS,
    PROTOCOL_VIOLATION,
    READ_NAME_CHARS,
    REFUSAL_CHARS,
    Message,
)

logger = logging.getLogger(__name__)

RESTARTED = (
    "the sandbox was restarted and variables from earlier steps are gone — load the data again."
)
RESTARTED_WITH_SNAPSHOT = (
    "the sandbox was restarted: variables made by this question's earlier steps are gone, and "
    "those saved at the end of the last question are restored (the next step's output says "
    "which)."
)
REFUSED = (
    REFUSED_PREFIX + " ({what}). The step counts as failed even if "
    "its code caught the refusal: use only the allowed imports and functions, and do not "
    "try to work around the sandbox."
)
ARTIFACT_KINDS = frozenset(get_args(ArtifactKind))


def step_result(
    reply: Message,
    limits: SandboxLimits,
    workspace: Path,
    session_room: int | None,
    restored: str | None,
    started: float,
) -> tuple[StepResult, int | None]:
    """A worker's result as the backend keeps it: every field checked and capped (the
    worker is not trusted), a refusal turned into the step's failure.

    Args:
        reply: The worker's `result`.
        limits: The worker's limits.
        workspace: Its workspace.
        session_room: Bytes of artifacts the session may still keep (None: no limit).
        restored: What a worker started mid-run restored (the agent must know).
        started: monotonic() when the step began.

    Returns:
        The step's result, and the bytes of artifacts the session may keep after it.
    """
    cap = limits.output_chars
    logs = cap_text(_text(reply.get("logs")) or "", cap)
    if restored is not None:
        logs = f"{restored}\n{logs}"
    output, error = _text(reply.get("output")), _text(reply.get("error"))
    is_final_answer = reply.get("is_final_answer") is True
    question = _question(reply.get("question"))
    asked_at = _asked_at(reply.get("asked_at")) if question is not None else None
    artifacts, left_out, session_room = checked_artifacts(
        reply.get("artifacts"), limits, workspace, session_room
    )
    if left_out:
        logs = f"{logs}\n{left_out}" if logs else left_out
    refused = _refusals(reply.get("refused"))
    if refused:
        error = REFUSED.format(what="; ".join(refused)) + (f"\n{error}" if error else "")
        output, question, is_final_answer = None, None, False
    result = StepResult(
        output=None if output is None else cap_text(output, cap),
        is_final_answer=is_final_answer,
        question=question,
        asked_at=None if question is None else asked_at,
        logs=logs,
        error=None if error is None else cap_text(error, cap),
        artifacts=artifacts,
        duration_ms=round((time.monotonic() - started) * 1000),
        reads=_reads(reply.get("read")),
    )
    return result, session_room


def checked_artifacts(
    items: object, limits: SandboxLimits, workspace: Path, session_room: int | None
) -> tuple[list[ArtifactFile], str, int | None]:
    """Host-side check of what the worker reported: plain files inside the workspace,
    within the bytes a step may keep and the session may still keep.

    The worker is not trusted: a path must not lead out of the workspace through a
    symlink or a hard link, or the backend would upload a host file for it. The path
    is checked again, the same way, when the bytes are read (`hostfs.open_regular`).

    Returns:
        The artifacts to keep, a line for the agent about those left out (or ""), and the
        bytes the session may still keep.
    """
    artifacts: list[ArtifactFile] = []
    if not isinstance(items, list):
        return artifacts, "", session_room
    step_room = limits.artifact_mb << 20
    left_out: list[str] = []
    for item in items[: limits.max_artifacts]:
        try:
            kind, relative = item["kind"], str(item["path"])
            opened = hostfs.open_regular(workspace, relative)
        except (OSError, KeyError, TypeError, ValueError):
            opened = None
        if opened is None or kind not in ARTIFACT_KINDS:
            logger.warning("Sandbox: ignoring an invalid artifact from the worker: %r", item)
            continue
        os.close(opened.fd)
        # A file the code named with undecodable bytes comes as lone surrogates, which no
        # database column takes: they become U+FFFD.
        name = _storable(str(item["name"])[:255])
        if opened.size > step_room or (session_room is not None and opened.size > session_room):
            left_out.append(name)
            continue
        step_room -= opened.size
        if session_room is not None:
            session_room -= opened.size
        artifacts.append(
            ArtifactFile(
                kind, name, _storable(str(item["mime"])[:127]), workspace / relative, opened.size
            )
        )
    if not left_out:
        return artifacts, "", session_room
    shown = ", ".join(left_out[:5]) + (
        f" and {len(left_out) - 5} more" if len(left_out) > 5 else ""
    )
    told = (
        f"[Not kept: {shown}. A step keeps at most {limits.artifact_mb} MB of charts, "
        "tables and files (SANDBOX_ARTIFACTS_MB), and a session a limited amount in all "
        "(SESSION_ARTIFACTS_MB): write smaller files, or fewer.]"
    )
    return artifacts, told, session_room


def ending_signal(returncode: int | None, *, bubblewrap: bool) -> int | None:
    """The signal that ended a worker, if one did."""
    # Popen reports a signal as -N; bubblewrap passes a child's signal on as 128 + N.
    if returncode is not None and returncode < 0:
        return -returncode
    if returncode is not None and returncode > 128 and bubblewrap:
        return returncode - 128
    return None


def crash_message(
    returncode: int | None,
    limits: SandboxLimits,
    *,
    bubblewrap: bool,
    via_service: bool,
    restarted: str,
    stderr: str,
) -> str:
    """What the agent is told of a worker that ended during a step, from how it ended (a
    crash with no known cause is logged with the worker's last words, `stderr`)."""
    number = ending_signal(returncode, bubblewrap=bubblewrap)
    if number == signal.SIGXCPU:
        return (
            f"The worker used up its CPU time limit ({limits.cpu_seconds} s) and was "
            f"stopped; {restarted}"
        )
    if number == signal.SIGKILL:
        return (
            "The sandbox worker was killed, most likely because the step ran out of memory; "
            f"{restarted}\n{out_of_memory_advice(limits.memory_mb)}"
        )
    if returncode == PROTOCOL_VIOLATION:
        return (
            "The step's code wrote to the sandbox's own channel, which is not allowed, and "
            f"the worker was stopped; {restarted}"
        )
    if returncode is None and via_service:
        return (
            "The sandbox service stopped answering while the step ran (it stopped or was "
            f"restarted), and the worker went with it; {restarted}"
        )
    how = f"signal {signal.Signals(number).name}" if number else f"exit status {returncode}"
    if stderr.strip():
        logger.warning("Sandbox worker crashed (%s): %s", how, stderr.strip()[-2000:])
    if number == signal.SIGABRT:
        # What a native library does when an allocation fails at the memory limit (pyarrow's
        # CSV reader, for one).
        return (
            f"The sandbox worker crashed ({how}), as native libraries do when they run out of "
            f"memory; {restarted}\n{out_of_memory_advice(limits.memory_mb)}"
        )
    return f"The sandbox worker crashed ({how}); {restarted}"


def _storable(text: str) -> str:
    """The text with lone surrogates replaced (U+FFFD): valid UTF-8, as storage needs."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _text(value: object) -> str | None:
    """A text field of a worker's reply (anything else is dropped: the worker is untrusted)."""
    return value if isinstance(value, str) else None


MAX_STATEMENTS = 100_000


def failure(
    error: str, started: float, *, timed_out: bool = False, crashed: bool = False
) -> StepResult:
    """A step that did not end with a result of the worker's: `error` says why."""
    return StepResult(
        output=None,
        is_final_answer=False,
        logs="",
        error=error,
        artifacts=[],
        duration_ms=round((time.monotonic() - started) * 1000),
        timed_out=timed_out,
        crashed=crashed,
    )


def streamed_output(frame: Message, streamed: int, on_output: Callable[[str], None] | None) -> int:
    """Pass on what a running step printed (an "output" frame: the worker is untrusted, so
    its text is checked and capped, per frame and per step); how many characters went."""
    text = frame.get("text")
    if on_output is None or not isinstance(text, str) or streamed >= OUTPUT_STREAM_CHARS:
        return 0
    text = text[: min(OUTPUT_FRAME_CHARS, OUTPUT_STREAM_CHARS - streamed)]
    if text:
        on_output(text)
    return len(text)


def _refusals(value: object) -> list[str]:
    """What the worker's supervisor says the interpreter refused during the step."""
    if not isinstance(value, list):
        return []
    return [str(item)[:REFUSAL_CHARS] for item in value[:MAX_REFUSALS] if item]


def _reads(value: object) -> tuple[str, ...] | None:
    """The names the worker says the step read: strings of a file name's length, each once,
    at most MAX_READS of them (None: it did not say). The worker is untrusted: the run keeps
    only its own project files among them (`RunRepository.record_reads`)."""
    if not isinstance(value, list):
        return None
    names = (
        item
        for item in value[:MAX_READS]
        if isinstance(item, str) and 0 < len(item) <= READ_NAME_CHARS
    )
    return tuple(dict.fromkeys(names))


def _asked_at(value: object) -> AskedAt | None:
    """Where the step that asked goes on (see app/sandbox/worker/asking.py): small counts
    and a flag, or None (the worker is untrusted; the host checks them against the code)."""
    if not (isinstance(value, list) and len(value) == 4 and type(value[2]) is bool):
        return None
    counts = [value[0], value[1], value[3]]
    if not all(type(n) is int and 0 <= n <= MAX_STATEMENTS for n in counts):
        return None
    return AskedAt(statement=value[0], answered=value[1], from_start=value[2], given=value[3])


def _question(value: object) -> str | None:
    """The worker's ask_user question, as text of bounded length (the worker is untrusted)."""
    if not isinstance(value, str) or not value.strip():
        return None
    return value.strip()[:QUESTION_CHARS]
