"""The workspace's disk quota (SANDBOX_DISK_MB) is for what the code writes: the project's
files copied in are given, not charged, so a file larger than the quota is answerable;
yet they cannot cover a flood, and the code still stops at the quota beside them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.api.test_query import ask, finished
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import Event

QUOTA_MB = 16
WRITE = (
    "import numpy as np\nfor i in range({n}):\n"
    "    np.zeros(4 << 20, dtype=np.uint8).tofile(f'{name}-{{i}}.bin')\n"
)


@pytest.fixture
def small_quota(llm: ScriptedLLM, tmp_path: Path) -> Iterator[Api]:
    settings = stack_settings(
        "embedded",
        tmp_path / "data",
        LLM_API_BASE=llm.api_base,
        SANDBOX_DISK_MB=QUOTA_MB,
        MAX_UPLOAD_BYTES=64 << 20,
        SANDBOX_STEP_TIMEOUT_SECONDS=120,
    )
    live = LiveServer(settings).start()
    try:
        with Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as api:
            yield api
    finally:
        live.stop()


def step_errors(events: list[Event]) -> list[str]:
    return [str(e.data["error"]) for e in events if e.event == "step.error"]


def test_a_file_bigger_than_the_quota_is_read_and_the_quota_still_holds(
    small_quota: Api, llm: ScriptedLLM
) -> None:
    api = small_quota
    project = api.project("Big")
    big = b"a,b\n" + b"1,2\n" * (6 << 20)  # 24 MB: half again the quota
    assert api.upload(project["id"], "big.csv", big).status_code == 201
    session = api.post(f"/projects/{project['id']}/sessions", json={}).json()

    llm.script(
        code_reply(
            "import pandas as pd\nprint('rows', len(pd.read_csv('big.csv')))\n"
            + WRITE.format(n=2, name="mine")
        ),
        final_reply("'read it'"),
    )
    read = ask(api, session["id"], "How big is it?")
    assert step_errors(read) == [] and finished(read)["status"] == "succeeded"
    assert any(e.event == "step.output" and f"rows {6 << 20}" in e.data["output"] for e in read)

    llm.script(code_reply(WRITE.format(n=4, name="more")), final_reply("'wrote'"))
    flood = ask(api, session["id"], "Write more")
    assert any(
        f"over its disk quota ({QUOTA_MB} MB, SANDBOX_DISK_MB)" in error
        for error in step_errors(flood)
    ), step_errors(flood)


def test_the_variables_beside_a_file_bigger_than_the_quota_are_kept(
    small_quota: Api, llm: ScriptedLLM
) -> None:
    """The session's snapshot is written, and restored by its next worker, within the quota
    the code has: the given file takes none of it."""
    api = small_quota
    project = api.project("Big")
    big = b"a,b\n" + b"1,2\n" * (6 << 20)  # 24 MB: half again the quota
    assert api.upload(project["id"], "big.csv", big).status_code == 201
    session = api.post(f"/projects/{project['id']}/sessions", json={}).json()
    llm.script(
        code_reply("import pandas as pd\nsmall = pd.DataFrame({'n': range(1000), 'm': 1})"),
        final_reply("'kept'"),
    )
    assert finished(ask(api, session["id"], "Keep some numbers"))["status"] == "succeeded"

    live = api.live
    assert isinstance(live, LiveServer)
    live.call(live.state.sandboxes.stop_all())  # the next question starts a new worker
    llm.script(code_reply("print('total', small['n'].sum())"), final_reply("'499500'"))
    events = ask(api, session["id"], "Their total?")
    assert step_errors(events) == [] and finished(events)["status"] == "succeeded"
    assert any(e.event == "step.output" and "total 499500" in e.data["output"] for e in events)
    prompt = str(llm.requests[0]["messages"][0]["content"])
    assert "small (DataFrame, 1,000 rows, 2 columns)" in prompt, prompt
