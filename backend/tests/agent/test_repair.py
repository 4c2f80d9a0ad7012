"""Reading a reply: the expected form, the near misses that are repaired, and what is not."""

from __future__ import annotations

import pytest

from app.agent.repair import (
    EMPTY_REPLY,
    NO_CODE,
    UnreadableReply,
    first_block_end,
    plain_answer,
    read_reply,
    repeats_itself,
)

CODE = "import pandas as pd\ndf = pd.read_csv('sales.csv')\nprint(df['revenue'].sum())"
PRINTED_TOTAL = "4490.75"


def test_the_expected_form_is_read_as_it_is() -> None:
    # "</code>" is a stop sequence: the reply usually ends without it.
    for text in (
        f"Thought: Sum it.\n<code>\n{CODE}\n",
        f"Thought: Sum it.\n<code>\n{CODE}\n</code>",
    ):
        reply = read_reply(text)
        assert (reply.code, reply.thought, reply.repair) == (CODE, "Sum it.", None)
    assert reply.as_expected() == f"Thought: Sum it.\n<code>\n{CODE}\n</code>"


def test_two_code_blocks_run_as_one() -> None:
    reply = read_reply("<code>\nx = 1\n</code>\nand then\n<code>\nprint(x)\n")
    assert reply.code == "x = 1\n\nprint(x)" and reply.repair is None


@pytest.mark.parametrize(
    ("text", "repair"),
    [
        (f"Thought: Sum it.\n```py\n{CODE}\n```", "code fenced ```py"),
        (f"Thought: Sum it.\n```python\n{CODE}\n```\nThat is all.", "code fenced ```python"),
        (f"Thought: Sum it.\n```Python3\n{CODE}\n```", "code fenced ```python3"),
        (f"Thought: Sum it.\n```tool_code\n{CODE}\n```", "code fenced ```tool_code"),
        (f"Thought: Sum it.\n~~~\n{CODE}\n~~~", "code fenced ~~~"),
        (f"Thought: Sum it.\n```\n{CODE}\n```", "code fenced ```"),
        (f"Thought: Sum it.\n```python\n{CODE}", "code fenced ```python"),  # cut by a stop
        (f"Thought: Sum it.\n```python\n{CODE}```", "code fenced ```python"),
        (f"Thought: Sum it.\n<code>\n```python\n{CODE}\n```\n", "markdown fences inside <code>"),
        (
            f"Thought: Sum it.\n<code>\n{CODE}\nThis prints the total revenue.",
            "text after an unclosed <code> block",
        ),
        (f"Thought: Sum it.\n<code_block>\n{CODE}\n</code_block>", "code in <code_block>"),
        (
            f"Thought: Sum it.\n<python>\n    {CODE.replace(chr(10), chr(10) + '    ')}",
            "code in <python>",
        ),
        (f"Thought: Sum it.\n{CODE}", "code without a block"),
        (f"Sum it.\n\n{CODE}\n\nThis prints the total.", "code without a block"),
    ],
)
def test_near_misses_of_the_form_are_repaired(text: str, repair: str) -> None:
    reply = read_reply(text)
    assert reply.code == CODE and reply.repair == repair
    assert reply.thought == "Sum it."
    assert reply.as_expected() == f"Thought: Sum it.\n<code>\n{CODE}\n</code>"


def test_a_bare_code_reply_runs_whole() -> None:
    reply = read_reply(CODE)
    assert (reply.code, reply.thought, reply.repair) == (CODE, "", "code without a block")


def test_what_an_imitated_output_block_says_is_not_run() -> None:
    reply = read_reply(
        f"```python\n{CODE}\n```\nOutput:\n```\n4490.75\n```\n```text\nprint('no')\n```"
    )
    assert reply.code == CODE


def test_a_syntax_error_is_left_for_the_model_to_see() -> None:
    # Not cut down to the lines that parse: the sandbox reports the SyntaxError.
    broken = "df = pd.read_csv('sales.csv')\nprint(df.head()"
    assert read_reply(f"<code>\n{broken}\n").code == broken
    assert read_reply("<code>\nx = 1\nfor row in rows\n    print(row)\n").code == (
        "x = 1\nfor row in rows\n    print(row)"
    )


@pytest.mark.parametrize("text", ["", "   \n\n", None])
def test_an_empty_reply_is_an_error(text: str | None) -> None:
    with pytest.raises(UnreadableReply) as caught:
        read_reply(text, last_output=PRINTED_TOTAL)
    assert str(caught.value) == EMPTY_REPLY


@pytest.mark.parametrize(
    "text",
    [
        "<unused0><unused0><unused0>",
        "I think the answer is probably 42, no code needed.",
        "```\nThe answer is 42\n```",
        '```json\n{"total": 1}\n```',
        "<code>\n</code>",
        "<code>\n...\n",
        # A model repeating its prompt ("</code>", a stop sequence, ends the reply there).
        'Each step: write "Thought:", then one code block between <code> and ',
        "End your answer with mistake = <code>...",
        "Yes",
    ],
)
def test_a_reply_without_code_is_an_error_that_says_what_to_write(text: str) -> None:
    with pytest.raises(UnreadableReply) as caught:
        read_reply(text)
    assert str(caught.value) == NO_CODE
    assert "<code>" in NO_CODE and "</code>" in NO_CODE and "final_answer(" in NO_CODE


# A prose answer without final_answer ----------------------------------------------------
@pytest.mark.parametrize(
    ("text", "last_output", "answer"),
    [
        ("The total revenue is 4,490.75.", "4490.75", "The total revenue is 4,490.75."),
        ("Total revenue: about 4,491.", "4490.75", "Total revenue: about 4,491."),
        ("Final answer: 4490.8", "region\nNorth 2510.75\nTotal 4490.75", "4490.8"),
        ("**Answer:** North sells the most.", "North", "North sells the most."),
        ("North", "North", "North"),
    ],
)
def test_a_prose_reply_stating_the_last_output_is_the_final_answer(
    text: str, last_output: str, answer: str
) -> None:
    assert plain_answer(text, last_output) == answer
    reply = read_reply(text, last_output=last_output)
    assert reply.code == f"final_answer({answer!r})"
    assert reply.repair == "a prose answer without final_answer"


@pytest.mark.parametrize(
    ("text", "last_output"),
    [
        ("The total revenue is 4,490.75.", None),  # no code ran before: a guess
        ("The total revenue is 4,490.75.", ""),  # the code showed nothing
        ("The total revenue is 5,000.", "4490.75"),  # not what the output says
        ("The answer is 3.", "0  North\n1  South\n2  East\n3  West"),  # one digit: an index?
        ("I will now check the total of 4490.75 by region.", "4490.75"),  # more work
        ("Let me look at 4490.75 more closely.", "4490.75"),
        ("Next, split 4490.75 by month.", "4490.75"),
        ("Is the total 4490.75?", "4490.75"),  # a question, not an answer
        ("The region is Northwest.", "North"),  # not the whole word
        ("x" * 1500 + " 4490.75", "4490.75"),  # too long to be a short answer
    ],
)
def test_a_prose_reply_is_not_taken_as_the_answer_unless_plainly(
    text: str, last_output: str | None
) -> None:
    assert plain_answer(text, last_output) is None
    with pytest.raises(UnreadableReply):
        read_reply(text, last_output=last_output)


# Where a streamed reply ends ----------------------------------------------------------
def test_a_reply_ends_where_its_first_fenced_block_of_code_ends() -> None:
    head = f"Thought: Sum it.\n```python\n{CODE}\n```\n"
    assert first_block_end(head + "Output:\n4490.75\nThe total is") == len(head)
    assert first_block_end(f"Thought: Sum it.\n~~~\n{CODE}\n~~~\nmore") is not None
    assert first_block_end(f"```\n{CODE}\n```\n") == len(f"```\n{CODE}\n```\n")


def test_a_reply_goes_on_while_no_block_of_code_has_ended() -> None:
    assert first_block_end(f"Thought: Sum it.\n```python\n{CODE}\n") is None
    assert first_block_end(f"```python\n{CODE}\n```") is None  # the fence's line goes on
    assert first_block_end("```text\nsome notes\n```\n") is None
    assert first_block_end("```\nThe answer is 42\n```\n") is None
    assert first_block_end(f"<code>\n{CODE}\n") is None  # "</code>" stops the server


def test_a_reply_going_round_in_a_loop_is_noticed() -> None:
    line = "<data-description>\nI did a review of data analytics in Python for my project.\n"
    assert repeats_itself(line * 8)
    assert repeats_itself("a" * 600)
    assert not repeats_itself(line)
    prose = " ".join(f"Revenue in month {m} was {1000 + 37 * m} units." for m in range(40))
    assert not repeats_itself(f"Thought: Look.\n<code>\n{CODE}\nprint(df.describe())\n{prose}")


def test_inline_code_tags_around_python_are_a_block() -> None:
    reply = read_reply("Thought: Look first. <code>print(df.shape)</code>")
    assert (reply.code, reply.thought, reply.repair) == ("print(df.shape)", "Look first.", None)
