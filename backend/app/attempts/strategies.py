"""How each attempt of a question is told to answer, so the attempts are independent in
fact: its own instructions, its own sampling and, where the deployment offers several
models, its own model."""

from __future__ import annotations

from dataclasses import dataclass

# Where an attempt's instructions start in its prompt (the scripted model of the tests,
# and anyone reading a prompt, finds the attempt's way by it).
MARKER = "Attempt strategy:"


@dataclass(frozen=True)
class Strategy:
    label: str  # short, shown in the stream and the run
    instruction: str  # added to the attempt's system prompt
    temperature: float


STRATEGIES: tuple[Strategy, ...] = (
    Strategy(
        "pandas",
        "Answer with pandas: load the data into DataFrames and compute the result there.",
        0.2,
    ),
    Strategy(
        "sql",
        "Answer with SQL: compute the result with DuckDB queries over the data "
        "(`import duckdb; duckdb.sql(...)` on the files or DataFrames).",
        0.5,
    ),
    Strategy(
        "cross-check",
        "Compute the result, then compute it a second, independent way (another method "
        "or library) and compare the two before you answer; say which you trust if they "
        "differ.",
        0.7,
    ),
    Strategy(
        "step-by-step",
        "First look at the data's real columns, types and a few rows; then compute the "
        "result with the simplest code that answers, printing each intermediate result.",
        0.9,
    ),
    Strategy(
        "numpy",
        "Answer with numpy and plain Python over the data's columns, avoiding pandas "
        "group-bys, so the result is computed a different way from a pandas answer.",
        1.0,
    ),
)


@dataclass(frozen=True)
class Planned:
    attempt: int  # 1…N
    strategy: Strategy
    model: str


def plan(count: int, model: str, offered: list[str]) -> list[Planned]:
    """The attempts of a question asked with `count` of them.

    Args:
        count: 1 to 5.
        model: The question's model (the first attempt's; the others' when it is the only
            one offered).
        offered: The models the deployment offers (LLM_MODELS); the attempts take turns
            through them, starting with the question's.
    """
    models = [model, *(m for m in offered if m != model)]
    return [
        Planned(n + 1, STRATEGIES[n % len(STRATEGIES)], models[n % len(models)])
        for n in range(count)
    ]


def prompt_with(prompt: str, strategy: Strategy) -> str:
    """The system prompt of an attempt: the run's, with its strategy at the end."""
    return f"{prompt}\n\n{MARKER} {strategy.label}. {strategy.instruction}\n"
