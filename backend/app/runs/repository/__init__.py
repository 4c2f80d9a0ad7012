"""The runs' repository: every statement on runs, their steps, artifacts and stored events.

- `lifecycle`: what running a question does (RunRepository; each unit of work with a
  database session of its own, so a run holds no connection while it waits).
- `endings`: how a run ends (its outcome, its wait for the user, the runs no replica runs),
  the part of RunRepository that ends runs.
- `history`: reading a session's runs and artifacts for the API (with the request's session,
  the owner checked).
- `usage`: what runs spent, by session and by project.
"""

from app.runs.repository.lifecycle import RunCreated, RunRepository

__all__ = ["RunCreated", "RunRepository"]
