"""A weak model, end to end: replies that miss the code format, through the real API.

Small local models (Gemma 3 270M on llama.cpp) rarely write their code between <code> and
</code>. What a user must see: a near miss runs as if it were well formed; a reply with no
code is a step error the model reads at its next step; a prose reply that plainly states
the last output is the answer; and a model that never writes code ends in a failed run
that says so, after its last step (see app.agent.repair for what is repaired).
"""

from __future__ import annotations

from typing import Any

import pytest

from app.agent.repair import EMPTY_REPLY, NO_CODE
from tests.api.test_query import READ, ask, finished, names, of
from tests.conftest import Api
from tests.support.llm import ScriptedLLM, code_reply, final_reply

TOTAL = f"{READ}\nprint(df['revenue'].sum())"
ANSWER = "Total revenue is 4490.75."


def run_of(api: Api, events: list[Any]) -> dict[str, Any]:
    return dict(api.get(f"/runs/{events[0].data['run_id']}").json())


@pytest.mark.parametrize(
    "reply",
    [
        f"Thought: Sum the revenue.\n```py\n{TOTAL}\n```",
        f"Thought: Sum the revenue.\n```python\n{TOTAL}\n```\nThis prints the total.",
        f"Thought: Sum the revenue.\n~~~\n{TOTAL}\n~~~",
        f"Thought: Sum the revenue.\n```\n{TOTAL}\n```",
        f"Thought: Sum the revenue.\n```tool_code\n{TOTAL}\n```",
        f"Thought: Sum the revenue.\n<code>\n{TOTAL}\nThis prints the total revenue.",
        f"Thought: Sum the revenue.\n{TOTAL}",
        f"Thought: Sum the revenue.\n<code_block>\n{TOTAL}\n</code_block>",
    ],
    ids=[
        "py",
        "python",
        "tilde",
        "untagged",
        "tool_code",
        "unclosed-code-tag",
        "bare",
        "code_block",
    ],
)
def test_code_in_a_near_miss_of_the_format_runs(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, reply: str
) -> None:
    llm.script(reply, final_reply(repr(ANSWER)))
    events = ask(alice, session["id"], "Total revenue?")

    assert finished(events)["status"] == "succeeded"
    assert of(events, "step.error") == []
    assert of(events, "step.code")[0]["code"] == TOTAL
    assert "4490.75" in of(events, "step.output")[0]["output"]
    assert of(events, "final")[0]["answer"] == ANSWER
    streamed = "".join(d["text"] for d in of(events, "model.delta") if d["step"] == 1)
    # The user saw what the model wrote (up to the end of its code).
    assert reply.startswith(streamed) and TOTAL in streamed
    # The model reads its reply back in the expected form, which it tends to copy.
    assert f"Thought: Sum the revenue.\n<code>\n{TOTAL}\n</code>" in llm.prompts()[1]

    run = run_of(alice, events)
    assert run["status"] == "succeeded" and run["final_answer"] == ANSWER
    assert run["steps"][0]["code"] == TOTAL and run["steps"][0]["error"] is None
    assert run["steps"][0]["thought"] == "Sum the revenue."


def test_a_reply_without_code_is_a_step_error_the_model_reads(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script("I would sum the revenue column.", code_reply(TOTAL), final_reply(repr(ANSWER)))
    events = ask(alice, session["id"], "Total revenue?")

    assert [(e["step"], e["error"]) for e in of(events, "step.error")] == [(1, NO_CODE)]
    assert NO_CODE in llm.prompts()[1]
    assert finished(events)["status"] == "succeeded"
    assert of(events, "final")[0]["answer"] == ANSWER
    run = run_of(alice, events)
    assert [(s["index"], s["error"]) for s in run["steps"]] == [(1, NO_CODE), (2, None), (3, None)]
    assert run["steps"][0]["code"] is None


def test_a_model_that_never_writes_code_fails_clearly_at_max_steps(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(*["Sure! Revenue is important for any business."] * 6)
    events = ask(alice, session["id"], "Total revenue?")

    assert [e["error"] for e in of(events, "step.error")] == [NO_CODE] * 4
    assert len(llm.requests) == 4  # one call a step, no extra free-form answer
    assert "final" not in names(events)
    end = finished(events)
    assert end["status"] == "failed"
    assert end["error"] == (
        "The agent used all 4 steps without reaching an answer: the model wrote no code "
        "that could run in any of them (its replies were empty or had no code block). It "
        "may be too small to follow the agent's format; try a larger model."
    )
    run = run_of(alice, events)
    assert run["status"] == "failed" and run["error"] == end["error"]
    assert [s["error"] for s in run["steps"]] == [NO_CODE] * 4
    # The session takes the next question.
    llm.script(final_reply("'ok'"))
    assert finished(ask(alice, session["id"], "Again?"))["status"] == "succeeded"


def test_max_steps_after_some_code_counts_the_replies_without_code(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(code_reply(TOTAL), "Hmm.", code_reply("print(df.shape)"), "")
    end = finished(ask(alice, session["id"], "Total revenue?"))
    assert end["status"] == "failed"
    assert end["error"] == (
        "The agent used all 4 steps without reaching an answer (2 of its replies had no "
        "code). Ask a narrower question, or ask it to continue."
    )


def test_empty_and_garbage_replies_are_step_errors(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(
        "", "<unused0><unused0>\n\n\n<unused0>", code_reply(TOTAL), final_reply(repr(ANSWER))
    )
    events = ask(alice, session["id"], "Total revenue?")
    assert [(e["step"], e["error"]) for e in of(events, "step.error")] == [
        (1, EMPTY_REPLY),
        (2, NO_CODE),
    ]
    assert EMPTY_REPLY in llm.prompts()[1] and NO_CODE in llm.prompts()[2]
    assert finished(events)["status"] == "succeeded"
    assert of(events, "final")[0]["answer"] == ANSWER


# A prose answer without final_answer ---------------------------------------------------
def test_a_prose_reply_stating_the_last_output_is_the_final_answer(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    llm.script(code_reply(TOTAL), "The total revenue is 4,490.75.")
    events = ask(alice, session["id"], "Total revenue?")

    assert of(events, "step.error") == []
    assert of(events, "final")[0]["answer"] == "The total revenue is 4,490.75."
    assert finished(events)["status"] == "succeeded"
    assert len(llm.requests) == 2
    run = run_of(alice, events)
    assert run["final_answer"] == "The total revenue is 4,490.75."
    assert run["steps"][1]["code"] == "final_answer('The total revenue is 4,490.75.')"


@pytest.mark.parametrize(
    "replies",
    [
        # Before any code ran: a guess.
        ["The total revenue is 4,490.75.", code_reply(TOTAL)],
        # After code, but announcing more work.
        [code_reply(TOTAL), "I will now split the total of 4490.75 by region."],
        # After code, but not what its output says.
        [code_reply(TOTAL), "The total revenue is about 5,000."],
        # After code that failed.
        [code_reply(f"{READ}\nprint(df['revenu'].sum())"), "The total revenue is 4,490.75."],
    ],
    ids=["before-code", "more-work", "not-the-output", "after-an-error"],
)
def test_a_prose_reply_that_is_not_plainly_the_answer_is_a_step_error(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM, replies: list[str]
) -> None:
    llm.script(*replies, final_reply(repr(ANSWER)))
    events = ask(alice, session["id"], "Total revenue?")

    prose_step = 1 if replies[0].startswith("The total") else 2
    errors = {e["step"]: e["error"] for e in of(events, "step.error")}
    assert errors[prose_step] == NO_CODE
    assert NO_CODE in llm.prompts()[prose_step]
    assert finished(events)["status"] == "succeeded"
    assert of(events, "final")[0]["answer"] == ANSWER


def test_a_reply_ends_with_its_first_fenced_block_of_code(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    chatter = "Output:\n4490.75\n" + "The total is 4490.75 and so on and on.\n" * 200 + "THE END"
    llm.script(
        f"Thought: Sum the revenue.\n```python\n{TOTAL}\n```\n{chatter}", final_reply(repr(ANSWER))
    )
    events = ask(alice, session["id"], "Total revenue?")

    streamed = "".join(d["text"] for d in of(events, "model.delta") if d["step"] == 1)
    assert streamed.startswith(f"Thought: Sum the revenue.\n```python\n{TOTAL}\n```\n")
    assert "THE END" not in streamed and len(streamed) < 300
    assert of(events, "step.code")[0]["code"] == TOTAL
    assert finished(events)["status"] == "succeeded"
    assert "and so on" not in llm.prompts()[1]


def test_the_model_reads_back_only_the_start_of_a_long_reply_without_code(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    garbage = "".join(f"<unused{i}> soup {i * 7919 % 1009}\n" for i in range(300)) + "THE END"
    llm.script(garbage, final_reply(repr(ANSWER)))
    events = ask(alice, session["id"], "Total revenue?")

    assert [e["error"] for e in of(events, "step.error")] == [NO_CODE]
    streamed = "".join(d["text"] for d in of(events, "model.delta") if d["step"] == 1)
    assert streamed == garbage  # the user saw all of it
    assert "THE END" not in llm.prompts()[1] and garbage[:1000] in llm.prompts()[1]
    assert finished(events)["status"] == "succeeded"


def test_a_reply_going_round_in_a_loop_is_cut_short(
    alice: Api, session: dict[str, Any], llm: ScriptedLLM
) -> None:
    loop = "<data-description>\nI did a review of data analytics in Python.\n" * 300
    llm.script(loop, code_reply(TOTAL), final_reply(repr(ANSWER)))
    events = ask(alice, session["id"], "Total revenue?")

    streamed = "".join(d["text"] for d in of(events, "model.delta") if d["step"] == 1)
    assert loop.startswith(streamed) and len(streamed) < 1000
    assert [(e["step"], e["error"]) for e in of(events, "step.error")] == [(1, NO_CODE)]
    assert finished(events)["status"] == "succeeded"
    assert of(events, "final")[0]["answer"] == ANSWER
