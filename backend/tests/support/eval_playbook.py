"""How the scripted LLM plays a task set of backend/evals in `workbench eval`'s tests: each
task's reference solution, or, as a weaker model, a wrong answer to some tasks and a failed
first step on others."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.llm import code_reply


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content or "")


@dataclass(frozen=True)
class Playbook:
    """The tasks of a set, their solutions, and which tasks the weaker model gets wrong
    (`wrong`) or fails its first step on before recovering (`error_first`)."""

    tasks: list[dict[str, Any]]
    solutions: dict[str, str]
    wrong: frozenset[str]
    error_first: frozenset[str]

    @classmethod
    def of(cls, tasks: list[dict[str, Any]], solutions: Path, every: int = 6) -> Playbook:
        """The playbook of these tasks: one in `every` answered wrongly, the next one fumbled."""
        return cls(
            tasks=tasks,
            solutions={row["id"]: row["solution"] for row in read_jsonl(solutions)},
            wrong=frozenset(t["id"] for t in tasks[0::every]),
            error_first=frozenset(t["id"] for t in tasks[1::every]),
        )

    def task_of(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The task a request is about: the longest question its user messages contain."""
        asked = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        found = [t for t in self.tasks if t["question"] in asked]
        assert found, asked[-500:]
        return max(found, key=lambda t: len(t["question"]))

    def reference(self, messages: list[dict[str, Any]]) -> str:
        return code_reply(self.solutions[self.task_of(messages)["id"]])

    def fumbling(self, messages: list[dict[str, Any]]) -> str:
        task = self.task_of(messages)
        answered = any(m.get("role") == "assistant" for m in messages)
        if task["id"] in self.wrong:
            pairs = " ".join(f"@{name}[wrong]" for name, _ in task["answers"])
            return code_reply(f"final_answer({pairs!r})")
        if task["id"] in self.error_first and not answered:
            return code_reply("ratio = 1 / 0")
        return code_reply(self.solutions[task["id"]])
