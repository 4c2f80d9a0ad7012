"""How the steps of a question's attempts are numbered on its one run (a run's step
numbers are unique): attempt n's step s is stored as STEP_BASE * n + s until the verdict;
then the chosen attempt's are numbered 1, 2, 3… as a single run's (app.attempts.choose).
Exports and readers of a run tell the chosen attempt's steps and artifacts by it."""

STEP_BASE = 1000


def stored_step(attempt: int, step: int) -> int:
    """The number an attempt's step is stored under until the verdict."""
    return STEP_BASE * attempt + step
