"""The user's side of a run that asks: answers to the agent's questions, code reviews.

On a terminal these are prompts (and $EDITOR for an edit). When stdin is not a terminal
(a script, a pipe, `--json` under a program), they are read as lines from it:

- a question's answer is the next non-empty line;
- a review is one line: `approve` (or `a`, `y`), `reject` (or `r`, `n`) optionally followed
  by feedback on the same line (`reject use the net column`), or `edit` (or `e`) followed by
  the new code on the next lines, up to a line holding only `EOF` (or the end of input).

The end of input means no answer: the run keeps waiting, and the command says how to
answer it later.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

import click
from rich.prompt import Prompt
from rich.text import Text

from app.cli.output import err
from app.cli.stream import code_block

END_OF_CODE = "EOF"
APPROVE = {"a", "approve", "y", "yes"}
REJECT = {"r", "reject", "n", "no"}
EDIT = {"e", "edit"}


@dataclass(frozen=True)
class Decision:
    """A review's outcome, as POST /runs/{id}/approval takes it."""

    decision: str
    code: str | None = None
    feedback: str | None = None


class Replies:
    """Where answers come from (see the module's docstring).

    Args:
        stream: The input to read (stdin by default).
        echo: Show the question or code with the prompt (when nothing else shows it, as
            with `--json`).
    """

    def __init__(self, stream: TextIO | None = None, *, echo: bool = False):
        self.stream = stream or sys.stdin
        self.interactive = self.stream.isatty()
        self.echo = echo

    def answer(self, question: str) -> str | None:
        """The user's answer to the agent's question, or None if there is none."""
        if not self.interactive:
            return self._line()
        if self.echo:
            err.print(Text(f"? {question}", style="bold"))
        while True:
            try:
                text = err.input("[bold]Your answer:[/] ").strip()
            except EOFError:
                return None
            if text:
                return text

    def review(self, step: int, code: str) -> Decision | None:
        """The user's decision on a step's code, or None if there is none."""
        if not self.interactive:
            return self._review_lines()
        if self.echo:
            err.print(Text(f"Step {step} waits for your review:", style="bold"))
            err.print(code_block(code, err))
        while True:
            try:
                choice = Prompt.ask(
                    "Run it? (a)pprove, (e)dit, (r)eject",
                    console=err,
                    choices=["a", "e", "r"],
                    default="a",
                    show_choices=False,
                )
                if choice == "a":
                    return Decision("approve")
                if choice == "r":
                    feedback = Prompt.ask(
                        "What should the agent do instead? (Enter to say nothing)",
                        console=err,
                        default="",
                        show_default=False,
                    ).strip()
                    return Decision("reject", feedback=feedback or None)
            except EOFError:
                return None
            edited = click.edit(code, extension=".py", require_save=True)
            if edited is None or not edited.strip() or edited.strip() == code.strip():
                err.print(Text("The code is unchanged.", style="yellow"))
                continue
            return Decision("edit", code=edited)

    # -- from lines ------------------------------------------------------------------------

    def _line(self) -> str | None:
        """The next non-empty line, or None at the end of input."""
        while True:
            line = self.stream.readline()
            if not line:
                return None
            if line.strip():
                return line.strip()

    def _review_lines(self) -> Decision | None:
        while True:
            line = self._line()
            if line is None:
                return None
            word, _, rest = line.partition(" ")
            word = word.lower().rstrip(":")
            if word in APPROVE:
                return Decision("approve")
            if word in REJECT:
                return Decision("reject", feedback=rest.strip() or None)
            if word in EDIT:
                code = self._code()
                if code.strip():
                    return Decision("edit", code=code)
                err.print("An edit needs the new code, on the lines after `edit`, up to `EOF`.")
                continue
            err.print(f'Expected "approve", "edit" or "reject" on stdin, not "{line}".')

    def _code(self) -> str:
        lines: list[str] = []
        while True:
            line = self.stream.readline()
            if not line or line.rstrip("\r\n") == END_OF_CODE:
                return "".join(lines)
            lines.append(line)
