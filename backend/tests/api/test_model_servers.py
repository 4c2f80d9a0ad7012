"""A real model server's misbehaviours, as a user meets them through the API.

The scripted OpenAI-compatible server is taught what llama.cpp, Ollama or vLLM do on a bad
day (an empty 200 stream, an endless reply, a connection dropped mid-reply, no usage, a
context error); each test asks a question and checks the events, the stored run and its
steps: every limit holds, every failure reads as a sentence with its cause and its fix, a
cancelled run keeps what it did, and token counts say whether they are exact.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import litellm

from app.agent.repair import EMPTY_REPLY
from tests.api.test_plans_and_checks import agent_settings
from tests.api.test_query import ask, finished, of
from tests.conftest import Api
from tests.support.llm import (
    Disconnect,
    Empty,
    Endless,
    HttpError,
    NoUsage,
    ScriptedLLM,
    code_reply,
    final_reply,
)
from tests.support.server import LiveServer
from tests.support.sse import Event, read_into

CONTEXT_ERROR = "the request exceeds the available context size, try increasing it"


def server_of(llm: ScriptedLLM) -> str:
    return llm.api_base.removeprefix("http://").removesuffix("/v1")


def stored(api: Api, events: list[Event]) -> dict[str, Any]:
    return api.get(f"/runs/{finished(events)['run_id']}").json()


def test_a_short_api_key_is_not_redacted_out_of_every_message(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(HttpError(500, "Unexpected token in the index: expected none"))
    with agent_settings(live, LLM_API_KEY="x"):
        end = finished(ask(alice, session["id"], "Anything"))
    assert "(Unexpected token in the index: expected none)" in end["error"], end["error"]
    assert "[redacted]" not in end["error"]


def test_a_rambling_reply_stops_at_the_output_limit_and_the_step_says_so(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(Endless("and then "), final_reply("'Done.'"))
    with agent_settings(live, LLM_MAX_OUTPUT_TOKENS=200):
        events = ask(alice, session["id"], "Tell me everything")
    assert llm.requests[0]["max_tokens"] == 200
    end = finished(events)
    assert end["status"] == "succeeded"  # the model read why and went on
    errors = of(events, "step.error")
    assert [e["step"] for e in errors] == [1]
    assert errors[0]["error"].startswith(
        "The model's reply reached LLM_MAX_OUTPUT_TOKENS (200 tokens) before its code was complete"
    )
    assert "LLM_MAX_OUTPUT_TOKENS" in llm.prompts()[1]  # what the model read next
    run = stored(alice, events)
    assert run["steps"][0]["error"] == errors[0]["error"]
    assert run["steps"][0]["tokens_out"] >= 200


def test_a_reply_that_goes_on_past_the_deadline_is_cut_at_llm_timeout_seconds(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    # Pieces keep coming (so the wait between two never trips): only a total deadline ends it.
    llm.script(Endless("more ", seconds=60), final_reply("'Done.'"))
    llm.chunk_delay = 0.02
    with agent_settings(live, LLM_TIMEOUT_SECONDS=3, LLM_MAX_OUTPUT_TOKENS=1_000_000):
        events = ask(alice, session["id"], "Tell me everything")
    end = finished(events)
    assert end["status"] == "succeeded"
    errors = of(events, "step.error")
    assert [e["error"] for e in errors] == [
        "The model's reply took longer than LLM_TIMEOUT_SECONDS (3 s) and was cut off; its "
        "code did not run."
    ]
    assert stored(alice, events)["steps"][0]["thought"].startswith("more 1, more 2, ")


def test_an_empty_reply_is_a_step_error_and_the_model_is_asked_again(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(Empty(), final_reply("'42'"))
    events = ask(alice, session["id"], "The answer?")
    end = finished(events)
    assert end["status"] == "succeeded" and of(events, "final")[0]["answer"] == "42"
    assert [(e["step"], e["error"]) for e in of(events, "step.error")] == [(1, EMPTY_REPLY)]
    assert EMPTY_REPLY.startswith("The model returned nothing (no text, no code), so nothing ran.")
    step = stored(alice, events)["steps"][0]
    assert step["error"].startswith("The model returned nothing") and not step["code"]


def test_two_empty_replies_end_the_run_instead_of_looping(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(Empty(), Empty(), final_reply("'never asked'"))
    events = ask(alice, session["id"], "The answer?")
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"].startswith("The model returned nothing twice in a row (its prompt was ")
    assert "LLM_CONTEXT_TOKENS" in end["error"]
    assert len(llm.requests) == 2
    assert [e["step"] for e in of(events, "step.error")] == [1, 2]


def test_an_empty_reply_to_a_prompt_that_fills_the_context_says_it_no_longer_fits(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    # By the server's own count the prompt filled its context (its tokenizer is not ours).
    llm.script(Empty(prompt_tokens=8190), final_reply("'never asked'"))
    with agent_settings(live, LLM_CONTEXT_TOKENS=8192):
        events = ask(alice, session["id"], "Describe the data.")
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"].startswith(
        "The conversation no longer fits the model's context of 8,192 tokens."
    )
    assert len(llm.requests) == 1  # not asked again and again
    assert of(events, "step.error")[0]["error"] == end["error"]


def test_a_question_too_long_for_the_context_is_not_sent(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(final_reply("'never asked'"))
    with agent_settings(live, LLM_CONTEXT_TOKENS=1024):
        events = ask(alice, session["id"], "Describe the data. " * 300)
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"].startswith(
        "The conversation no longer fits the model's context of 1,024 tokens."
    )
    assert llm.requests == []


def test_older_outputs_are_left_out_to_keep_the_prompt_inside_the_context(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    # The prompt without outputs, by the same count the workbench makes.
    llm.script(final_reply("'warm'"))
    ask(alice, session["id"], "Print two long lists")
    bare = litellm.token_counter(model="openai/scripted", messages=llm.requests[0]["messages"])
    printing = "print(' '.join(f'{word}{{i}}' for i in range(1200)))"  # ~2,600 tokens each
    llm.script(
        code_reply(printing.format(word="alpha")),
        code_reply(printing.format(word="beta")),
        final_reply("'Both printed.'"),
    )
    # Room for the bare prompt and one output, not two.
    window = bare + 4000 + 512
    with agent_settings(live, LLM_CONTEXT_TOKENS=window, LLM_MAX_OUTPUT_TOKENS=512):
        events = ask(alice, session["id"], "Print two long lists")
    end = finished(events)
    assert end["status"] == "succeeded", end
    last = llm.prompts()[2]
    # The newest output is still there; the oldest had to go, with a word saying so.
    assert "beta1199" in last and "alpha1199" not in last
    assert f"Left out to fit the model's context of {window:,} tokens" in last
    assert "Print two long lists" in last
    # Nothing was left out while the prompt still fitted.
    assert "alpha1199" in llm.prompts()[1] and "Left out" not in llm.prompts()[1]


def test_a_context_error_from_the_server_ends_the_run_with_the_context_size(
    alice: Api, session, llm: ScriptedLLM, live: LiveServer
) -> None:  # type: ignore[no-untyped-def]
    llm.script(HttpError(400, CONTEXT_ERROR))
    with agent_settings(live, LLM_CONTEXT_TOKENS=8192):
        events = ask(alice, session["id"], "Anything")
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"].startswith(
        "The conversation no longer fits the model's context of 8,192 tokens. Start a new "
        "session or ask a narrower question"
    )
    assert len(llm.requests) == 1


def test_a_server_that_dies_mid_reply_fails_the_run_with_a_sentence_and_keeps_the_step(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(Disconnect("Thought: I will look at the sales by region"))
    events = ask(alice, session["id"], "Anything")
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"] == (
        f"The model server at {server_of(llm)} closed the connection in the middle of its "
        "reply: it may have stopped or crashed. Check that it is running, then ask again."
    )
    assert [(e["step"], e["error"]) for e in of(events, "step.error")] == [(1, end["error"])]
    step = stored(alice, events)["steps"][0]
    assert step["error"] == end["error"]
    assert "I will look at the sales by region" in (step["thought"] or "")


def test_a_cancelled_run_keeps_the_step_the_model_was_writing(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(Endless("Thought: still thinking ", seconds=60))
    llm.chunk_delay = 0.01
    events: list[Event] = []

    def follow() -> None:
        with alice.stream("POST", f"/sessions/{session['id']}/query", json={"query": "Go"}) as r:
            read_into(r, events)

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()

    # Cancel once the model has streamed a good part of its reply (pieces that queued up
    # together arrive as one event: count the text).
    def streamed() -> int:
        return sum(len(d["text"]) for d in of(events, "model.delta"))

    for _ in range(600):
        if streamed() > 300:
            break
        time.sleep(0.1)
    assert streamed() > 300, [e.event for e in events]
    run_id = events[0].data["run_id"]
    assert alice.post(f"/runs/{run_id}/cancel").status_code == 200
    reader.join(60)
    end = finished(events)
    assert end["status"] == "cancelled"
    assert end["tokens_out"] > 0 and end["tokens_in"] > 0 and end["tokens_estimated"] is True
    run = alice.get(f"/runs/{run_id}").json()
    assert run["tokens_out"] == end["tokens_out"] and run["tokens_estimated"] is True
    [step] = run["steps"]
    assert step["thought"].startswith("still thinking 1, Thought: still thinking 2, ")
    assert step["error"] == "Stopped by the user." and step["tokens_out"] > 0


def test_counts_the_server_did_not_send_are_estimated_and_say_so(
    alice: Api, session, llm: ScriptedLLM
) -> None:  # type: ignore[no-untyped-def]
    llm.script(NoUsage(final_reply("'42'")))
    events = ask(alice, session["id"], "The answer?")
    end = finished(events)
    assert end["status"] == "succeeded"
    assert end["tokens_estimated"] is True and end["tokens_in"] > 100 and end["tokens_out"] > 5
    run = stored(alice, events)
    assert run["tokens_estimated"] is True and run["tokens_in"] == end["tokens_in"]

    llm.script(final_reply("'42'"))  # this server says what it counted
    exact = finished(ask(alice, session["id"], "Again?"))
    assert exact["tokens_estimated"] is False
