"""Agent benchmark: the whole stack with a scripted LLM that answers instantly.

Prints (medians on this machine): time from POST to the first event; per-step overhead of
the stack (model time ~0, trivial code); a cold session's first step (sandbox start plus
imports) against one that finds a spare worker ready and against a warm one; and prompt
tokens of a 3-step run against smolagents' default CodeAgent on the same task and replies
(tokens counted with LiteLLM's gpt-4o tokenizer).
Targets: first event <= 100 ms, per-step overhead <= 25 ms, cold start <= 1.5 s, prompt
tokens <= the default CodeAgent's.

    cd backend && uv run python -m benchmarks.agent [--runs 15]

With --observability: instead, the backend's CPU per 3-step run with metrics and traces on
against off, backends side by side (benchmarks/observability.py).
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import litellm
from rich.console import Console
from smolagents import CodeAgent, LiteLLMModel
from smolagents.models import ChatMessage, MessageRole
from smolagents.monitoring import AgentLogger, LogLevel

from app.runs.sandboxes import SandboxPool
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, reset_state, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer
from tests.support.sse import read_events

SALES = b"region,month,revenue\n" + b"".join(
    f"{r},2026-{m:02d},{100 + 7 * m + (r == 'South') * 13}\n".encode()
    for m in range(1, 13)
    for r in ("North", "South", "East")
)
THREE_STEPS = [
    code_reply(
        "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df.head())", "Look at the data."
    ),
    code_reply("totals = df.groupby('region')['revenue'].sum()\nprint(totals)", "Sum by region."),
    final_reply("'South sells most.'"),
]
TASK = "Which region sells most?"


def timed_run(api: Api, session_id: str, query: str) -> dict[str, Any]:
    """Client-side times (seconds from POST) of the events of one run."""
    started = time.perf_counter()
    times: dict[str, list[float]] = {}
    with api.stream("POST", f"/sessions/{session_id}/query", json={"query": query}) as response:
        for event in read_events(response):
            if event is None:
                continue
            times.setdefault(event.event, []).append(time.perf_counter() - started)
            if event.event == "run.finished":
                assert event.data["status"] == "succeeded", event.data
                break
    return times


def new_session(api: Api, project_id: str) -> str:
    return str(api.post(f"/projects/{project_id}/sessions", json={}).json()["id"])


def prompt_tokens(requests: list[dict[str, Any]]) -> int:
    return sum(litellm.token_counter(model="gpt-4o", messages=r["messages"]) for r in requests)


def litellm_call_times(llm: ScriptedLLM, calls: int = 30) -> list[float]:
    """One model call as the agent makes it (streaming through LiteLLM), with a step's prompt."""
    model = LiteLLMModel(
        "openai/scripted",
        api_base=llm.api_base,
        api_key="x",
        flatten_messages_as_text=True,
        retry=False,
        max_retries=0,
    )
    prompt = [
        ChatMessage(role=MessageRole.SYSTEM, content=[{"type": "text", "text": "x" * 6000}]),
        ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": TASK}]),
    ]
    times = []
    for _ in range(calls):
        llm.script(code_reply("z = 1"))
        started = time.perf_counter()
        for _delta in model.generate_stream(prompt, stop_sequences=["</code>"]):
            pass
        times.append(time.perf_counter() - started)
    return times


def default_agent_tokens(llm: ScriptedLLM, workdir: Path) -> int:
    """The same task and replies through smolagents' default CodeAgent and prompts."""
    llm.script(*THREE_STEPS)
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        agent = CodeAgent(
            tools=[],
            model=LiteLLMModel("openai/scripted", api_base=llm.api_base, api_key="x"),
            additional_authorized_imports=["pandas", "numpy"],
            logger=AgentLogger(LogLevel.OFF, console=Console(file=io.StringIO())),
        )
        agent.run(TASK)
    finally:
        os.chdir(cwd)
    return prompt_tokens(llm.requests)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--observability",
        action="store_true",
        help="instead: backend CPU per run with metrics and traces on against off (--runs "
        "sequential runs a round, --rounds rounds)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="with --observability")
    args = parser.parse_args()
    if args.observability:
        observability_overhead(args.runs, args.rounds)
        return
    llm = ScriptedLLM().start()
    with tempfile.TemporaryDirectory(prefix="wb-agent-bench-") as tmp:
        work = Path(tmp)
        live = LiveServer(
            stack_settings(
                "embedded",
                work / "data",
                LLM_API_BASE=llm.api_base,
                SANDBOX_STEP_TIMEOUT_SECONDS=60,
                AGENT_MAX_STEPS=20,
            )
        ).start()
        try:
            live.call(reset_state(live))
            api = Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD)
            project = api.project()["id"]
            api.upload(project, "sales.csv", SALES)

            first_event, cold, warm, one_step, eleven_steps = [], [], [], [], []
            for _ in range(args.runs):
                session = new_session(api, project)
                llm.script(code_reply("x = 1\nprint(x)"), final_reply("'ok'"))
                times = timed_run(api, session, "cold")
                first_event.append(times["run.started"][0])
                cold.append(times["step.output"][0])  # POST -> first output, new sandbox
                llm.script(code_reply("y = 2\nprint(y)"), final_reply("'ok'"))
                times = timed_run(api, session, "warm")
                warm.append(times["step.output"][0])  # the same in a session with a worker
                first_event.append(times["run.started"][0])

                llm.script(final_reply("'ok'"))
                one_step.append(timed_run(api, session, "one step")["run.finished"][0])
                llm.script(*[code_reply(f"z{i} = {i}") for i in range(10)], final_reply("'ok'"))
                eleven_steps.append(timed_run(api, session, "eleven steps")["run.finished"][0])
            live.call(live.state.sandboxes.stop_all())

            # New sessions again, each finding a spare worker ready (SANDBOX_SPARE_WORKERS).
            pool, spare = live.state.sandboxes, []
            live.call(pool.keep_spares(1))
            for _ in range(args.runs):
                _wait_for_spare(pool)
                session = new_session(api, project)
                llm.script(code_reply("x = 1\nprint(x)"), final_reply("'ok'"))
                spare.append(timed_run(api, session, "on a spare")["step.output"][0])
            live.call(pool.keep_spares(0))
            live.call(pool.stop_all())

            model_call = litellm_call_times(llm)
            session = new_session(api, project)
            llm.script(*THREE_STEPS)
            timed_run(api, session, TASK)
            ours = prompt_tokens(llm.requests)
            (work / "sales.csv").write_bytes(SALES)
            theirs = default_agent_tokens(llm, work)
        finally:
            live.stop()
            llm.stop()

    per_step = [(b - a) / 10 for a, b in zip(one_step, eleven_steps, strict=True)]
    call = statistics.median(model_call)
    overhead = [p - call for p in per_step]
    print(f"POST -> first event (run.started): {_ms(first_event)} (target <= 100 ms)")
    print(f"time per step, whole stack (11-step minus 1-step run, / 10): {_ms(per_step)}")
    print(f"  of which the model call (LiteLLM streaming from the local server): {_ms(model_call)}")
    print(f"  overhead of the stack without the model call: {_ms(overhead)} (target <= 25 ms)")
    print(f"cold session, POST -> first code output: {_ms(cold)} (target <= 1.5 s)")
    print(f"new session on a spare worker, POST -> first code output: {_ms(spare)}")
    print(f"warm session, POST -> first code output: {_ms(warm)}")
    print(
        f"prompt tokens of a 3-step run: workbench {ours:,} vs default CodeAgent {theirs:,} "
        f"({ours / theirs:.0%}; target <= 100%, ours carries the workspace description)"
    )


def observability_overhead(runs: int, rounds: int) -> None:
    """3-step runs one after another in warm sessions, on the embedded stack."""
    from benchmarks import load
    from benchmarks.observability import compare

    async def sequential(url: str, tokens: list[tuple[str, str]]) -> int:
        async with load.client_for(url, 1) as client:
            sessions = await load.new_sessions(client, tokens, len(tokens))
            done = 0
            for i in range(runs):
                token, session = sessions[i % len(sessions)]
                done += (await load.one_run(client, token, session))["status"] == "succeeded"
        return done

    llm = ScriptedLLM(responder=load.responder(0.0), record=False).start()
    try:
        with tempfile.TemporaryDirectory(prefix="wb-agent-observability-") as tmp:
            compare(
                Path(tmp),
                lambda _: load.backend_env(llm.api_base, Path(tmp) / "data"),
                sequential,
                rounds,
                f"{runs} sequential 3-step runs a round, embedded stack, instant model",
            )
    finally:
        llm.stop()


def _wait_for_spare(pool: SandboxPool) -> None:
    deadline = time.monotonic() + 120
    while pool.spares < 1:
        if time.monotonic() > deadline:
            raise RuntimeError("no spare sandbox worker became ready")
        time.sleep(0.05)


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
    return f"median {statistics.median(values) * 1000:,.1f} ms, p90 {p90 * 1000:,.1f} ms"


if __name__ == "__main__":
    main()
