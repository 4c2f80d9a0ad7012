"""Reading the code out of a model's reply, and repairing the near misses of weak models.

The agent asks for a thought, then Python between <code> and </code>. "</code>" is a stop
sequence, so a well-formed reply usually ends where its code ends, without the tag. Small
local models (Gemma 3 270M through llama.cpp, say) often write something close instead.
What `read_reply` repairs, in this order (the first that finds code wins):

1. <code> blocks, closed or not; markdown fences inside them are dropped, and text after
   an unclosed block's code that is not code ("…\\nThis prints the total.") is cut off.
2. Markdown fences instead of <code>: ``` or ~~~, tagged python, py, python3, ipython or
   tool_code (any case), or untagged when the block is Python that does something.
   Blocks with any other tag (```text, ```json, ```output) are not run. Then other tags
   around Python that does something: <code_block>, <python>, <py>, <tool_code>.
3. Bare code with no block at all: the longest run of consecutive lines that is Python
   and does something (a call, an assignment, an import, a loop…), e.g. a thought line
   followed by `print(df["price"].mean())`.
4. A reply with no code that is plainly the answer becomes `final_answer(<the reply>)`.
   "Plainly" is kept narrow, because a wrong guess ends the run with a wrong answer:
   - the step before ran code without an error, and that code printed or returned
     something;
   - the reply states what that output shows: a number in the reply (two digits or more,
     thousands separators ignored, possibly rounded) is one of the output's numbers, or
     the output is a single short line that the reply repeats as a whole word;
   - it reads as an answer, not as more work: at most ANSWER_CHARS characters, no
     question mark at its end, and no words of what comes next ("I will", "let me",
     "next", "need to", …).
   Anything else (a plan in prose, a guess before any code ran, an answer that quotes no
   figure of the output) is not repaired: the model is told it wrote no code.

Not repaired: an empty reply, and a reply without code that is not plainly the answer.
Both raise `UnreadableReply`, whose text the model reads as the step's error.
"""

from __future__ import annotations

import ast
import keyword
import re
import textwrap
from dataclasses import dataclass

CODE_OPEN = "<code>"
CODE_CLOSE = "</code>"
# The longest prose reply taken as the final answer.
ANSWER_CHARS = 1500
# Bare code is looked for in replies of at most this many lines (the search is quadratic).
BARE_CODE_LINES = 80
# An output this short, on one line, is a single value (its whole text may be the answer).
SHORT_OUTPUT_CHARS = 80
# A reply whose last this many characters it wrote before is going round in a loop.
LOOP_CHARS = 240

_PLACEHOLDERS = frozenset({"...", "pass", "# Your python code here"})
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "ipython", "tool_code", "tool-code"})

EMPTY_REPLY = (
    "The model returned nothing (no text, no code), so nothing ran. Write a short thought, "
    "then Python between "
    f"{CODE_OPEN} and {CODE_CLOSE}."
)
NO_CODE = (
    "Your reply had no code, so nothing ran. Write a short thought, then Python between "
    f"{CODE_OPEN} and {CODE_CLOSE}, for example:\n"
    f"Thought: I will look at the first rows.\n{CODE_OPEN}\nprint(df.head())\n{CODE_CLOSE}\n"
    'Once an output shows the answer, give it with final_answer("…") between '
    f"{CODE_OPEN} and {CODE_CLOSE}."
)

_CODE_TAG = re.compile(r"<code>|</code>", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[\w+.-]*)[ \t]*$")
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})[ \t]*[\w+.-]*[ \t]*$")
_OTHER_TAG = re.compile(
    r"<(code_block|codeblock|python|py|tool_code)>(.*?)(?:</\1>|(?=<\1>)|$)",
    re.IGNORECASE | re.DOTALL,
)
_FENCE_END = re.compile(r"[ \t]*(?:`{3,}|~{3,})[ \t]*$")
_CODE_CHARS = re.compile(r"[()\[\]{}=\"']")
_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:thought|final[ _]answer|answer)(?:\*\*)?\s*:\s*(?:\*\*)?", re.IGNORECASE
)
_MORE_WORK = re.compile(
    r"\b(?:I will|I'll|I am going to|I'm going to|I need to|we need to|need to|let me|"
    r"let's|let us|next|then I|now I|first,? I|to do this|I would|I can|I should)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
# Statements that do something (a bare name or constant does not).
_ACTIVE = (
    ast.Call,
    ast.Assign,
    ast.AugAssign,
    ast.AnnAssign,
    ast.Import,
    ast.ImportFrom,
    ast.For,
    ast.While,
    ast.If,
    ast.With,
    ast.Try,
    ast.FunctionDef,
    ast.ClassDef,
    ast.Delete,
)


class UnreadableReply(ValueError):
    """The reply has no code to run and is not plainly an answer (its text says what to do)."""


@dataclass(frozen=True)
class Reply:
    """What a reply asks to run.

    Attributes:
        thought: The text before the code ("Thought:" removed).
        code: The code to run.
        repair: What was not in the expected form and was repaired, None when nothing was.
    """

    thought: str
    code: str
    repair: str | None = None

    def as_expected(self) -> str:
        """The reply in the form the agent asks for (what the model reads back, so a weak
        model copies the right form from its own history)."""
        thought = f"Thought: {self.thought}\n" if self.thought else ""
        return f"{thought}{CODE_OPEN}\n{self.code}\n{CODE_CLOSE}"


def read_reply(text: str | None, last_output: str | None = None) -> Reply:
    """The code a reply asks to run, repaired where it is plain what was meant.

    Args:
        text: The model's reply.
        last_output: What the previous step's code printed and returned, when it ran
            without an error (None otherwise, or on the first step).

    Returns:
        The thought and the code, and what was repaired.

    Raises:
        UnreadableReply: The reply is empty, or has no code and is not plainly the answer.
    """
    if text is None or not text.strip():
        raise UnreadableReply(EMPTY_REPLY)
    for read in (_code_tags, _fenced, _other_tags, _bare):
        found = read(text)
        if found is not None:
            return found
    answer = plain_answer(text, last_output)
    if answer is not None:
        return Reply("", f"final_answer({answer!r})", "a prose answer without final_answer")
    raise UnreadableReply(NO_CODE)


def plain_answer(text: str, last_output: str | None) -> str | None:
    """The reply as the final answer, when it plainly is one (see the module's notes)."""
    if not last_output or not last_output.strip():
        return None
    answer = _LABEL.sub("", text.strip(), count=1).strip()
    if not answer or len(answer) > ANSWER_CHARS or answer.endswith("?"):
        return None
    if _MORE_WORK.search(answer):
        return None
    return answer if _states_output(answer, last_output) else None


def _states_output(answer: str, output: str) -> bool:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    if len(lines) == 1 and len(lines[0]) <= SHORT_OUTPUT_CHARS:
        pattern = rf"(?<!\w){re.escape(lines[0])}(?!\w)"
        if re.search(pattern, answer, re.IGNORECASE):
            return True
    found = [_number(n) for n in _NUMBER.findall(output)]
    shown = [v for v in found if v is not None]
    for said in _NUMBER.findall(answer):
        if sum(ch.isdigit() for ch in said) < 2:  # "1" or "3" matches an index by chance
            continue
        value = _number(said)
        if value is None:
            continue
        decimals = len(said.split(".", 1)[1]) if "." in said else 0
        # The output's figure, or it rounded to as many decimals as the reply gives.
        if any(abs(v - value) <= 0.5 * 10**-decimals + 1e-9 * abs(v) for v in shown):
            return True
    return False


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _code_tags(text: str) -> Reply | None:
    """<code> blocks: to their </code>, or (unclosed) to the next <code> or the end.

    Not blocks: a tag inside a sentence whose "code" is not Python (a model that repeats
    its prompt: "… one code block between <code> and </code>"), and a placeholder (`...`).
    """
    found = list(_CODE_TAG.finditer(text))
    blocks: list[str] = []
    repairs: list[str] = []
    thought: str | None = None
    for i, tag in enumerate(found):
        if tag.group(0).lower() != CODE_OPEN:
            continue
        following = found[i + 1] if i + 1 < len(found) else None
        body = text[tag.end() : following.start() if following else len(text)]
        closed = following is not None and following.group(0).lower() == CODE_CLOSE
        lines = body.split("\n")
        fenced = any(_FENCE_LINE.match(line) for line in lines)
        if fenced:
            lines = [line for line in lines if not _FENCE_LINE.match(line)]
        code = textwrap.dedent("\n".join(lines).strip("\n"))
        cut = code if closed else _without_prose_tail(code)
        in_a_sentence = text[: tag.start()].rsplit("\n", 1)[-1].strip() != ""
        if not cut.strip() or cut.strip() in _PLACEHOLDERS or (in_a_sentence and not _parses(cut)):
            continue
        if fenced:
            repairs.append("markdown fences inside <code>")
        if cut != code:
            repairs.append("text after an unclosed <code> block")
        blocks.append(cut)
        if thought is None:
            thought = _thought(text[: tag.start()])
    if not blocks:
        return None
    return Reply(thought or "", "\n\n".join(blocks), ", ".join(dict.fromkeys(repairs)) or None)


def _fenced(text: str) -> Reply | None:
    """Markdown fences (``` or ~~~) holding Python, instead of <code>."""
    lines = text.split("\n")
    blocks: list[str] = []
    fences: list[str] = []
    first: int | None = None
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if opened is None:
            i += 1
            continue
        fence, tag = opened["fence"], opened["tag"].lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= 3:
                break
            if line.rstrip().endswith(fence[0] * 3):  # print(x)```
                body.append(_FENCE_END.sub("", line))
                break
            body.append(line)
            j += 1
        code = _without_prose_tail(textwrap.dedent("\n".join(body).strip("\n")))
        wanted = tag in PYTHON_TAGS or (not tag and _parses(code) and _active(code))
        if wanted and code.strip():
            blocks.append(code)
            fences.append(f"{fence}{tag}")
            if first is None:
                first = i
        i = j + 1
    if not blocks:
        return None
    shown = ", ".join(dict.fromkeys(fences))
    return Reply(_thought("\n".join(lines[:first])), "\n\n".join(blocks), f"code fenced {shown}")


def repeats_itself(text: str) -> bool:
    """Whether a (partial) reply ends with LOOP_CHARS characters it already wrote: a small
    model in a loop, which would otherwise go on until its length limit (minutes on a CPU).
    """
    if len(text) < 2 * LOOP_CHARS:
        return False
    return text.find(text[-LOOP_CHARS:], 0, len(text) - 1) != -1


def first_block_end(text: str) -> int | None:
    """Where a (partial) reply's first fenced block of Python ends, once its closing fence's
    line is complete: what a model writes after it (imagined output, chatter) is not read,
    as "</code>", a stop sequence, ends a reply in the expected form."""
    offset = 0
    lines = text.split("\n")
    opened: re.Match[str] | None = None
    body: list[str] = []
    for line in lines[:-1]:  # the last line is not complete yet
        offset += len(line) + 1
        if opened is None:
            opened = _FENCE_OPEN.match(line)
            body = []
            continue
        fence = opened["fence"]
        if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= 3:
            tag = opened["tag"].lower()
            code = textwrap.dedent("\n".join(body))
            if (tag in PYTHON_TAGS and code.strip()) or (not tag and _active(code)):
                return offset
            opened = None
        else:
            body.append(line)
    return None


def _other_tags(text: str) -> Reply | None:
    """Python between tags other than <code> (<code_block>, <python>, <tool_code>)."""
    blocks = [
        (found.start(), found.group(1).lower(), textwrap.dedent(found.group(2)).strip("\n"))
        for found in _OTHER_TAG.finditer(text)
    ]
    code = [(start, tag, body) for start, tag, body in blocks if _parses(body) and _active(body)]
    if not code:
        return None
    tags = ", ".join(dict.fromkeys(f"<{tag}>" for _, tag, _ in code))
    return Reply(
        _thought(text[: code[0][0]]), "\n\n".join(body for _, _, body in code), f"code in {tags}"
    )


def _bare(text: str) -> Reply | None:
    """The longest run of consecutive lines that is Python doing something."""
    lines = text.split("\n")
    if len(lines) > BARE_CODE_LINES:
        return None
    best: tuple[int, int] | None = None
    for start in range(len(lines)):
        if not lines[start].strip() or lines[start][:1].isspace():
            continue
        if best is not None and len(lines) - start <= best[1] - best[0]:
            break
        for end in range(len(lines), start, -1):
            if best is not None and end - start <= best[1] - best[0]:
                break
            chunk = "\n".join(lines[start:end])
            if _parses(chunk) and _active(chunk):
                best = (start, end)
                break
    if best is None:
        return None
    code = "\n".join(lines[best[0] : best[1]]).strip("\n")
    if best[0] == 0 and best[1] == len(lines):
        return Reply("", code, "code without a block")
    return Reply(_thought("\n".join(lines[: best[0]])), code, "code without a block")


def _without_prose_tail(code: str) -> str:
    """Code that does not parse because prose follows it ("…\nThis prints the total."):
    the code alone, when what is cut off starts with a line of prose (not a keyword, no
    brackets, quotes or "="), so a real syntax error stays for the model to see."""
    if _parses(code):
        return code
    lines = code.split("\n")
    for end in range(len(lines) - 1, 0, -1):
        head = "\n".join(lines[:end]).rstrip()
        if not (head.strip() and _parses(head) and _active(head)):
            continue
        tail = next((line.strip() for line in lines[end:] if line.strip()), "")
        first_word = tail.split(" ", 1)[0].rstrip(":")
        if _CODE_CHARS.search(tail) or keyword.iskeyword(first_word) or _parses(tail):
            return code
        return head
    return code


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _active(code: str) -> bool:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(node, _ACTIVE) for node in ast.walk(tree))


def _thought(text: str) -> str:
    return _LABEL.sub("", text.strip(), count=1).strip()
